// TimelineWidget: level of detail (every item is drawn or merged, and a zoomed-out repaint draws
// a bounded number of shapes), zoom and pan from the keyboard, selection by click, and the
// Timeline page's details with the launch context and the calling context (the frames of the
// H100 capture of workloads/cct_paths, whose call paths are known: main > a > b > launch).

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QClipboard>
#include <QLabel>
#include <QPainter>
#include <QTableView>
#include <QtTest>

#include <filesystem>

#include "CaptureData.h"
#include "GuiTestSupport.h"
#include "models/CallPathModel.h"
#include "views/TimelinePage.h"
#include "views/TimelineWidget.h"

using namespace fuselens;
using namespace fuselens::gui;

class TestTimelineWidget : public QObject {
  Q_OBJECT

 private:
  std::string syntheticPath_ =
      (std::filesystem::temp_directory_path() / "tst_timelinewidget.sqlite").string();
  CaptureDataPtr synthetic_;

  // The Function column of every row of the page's calling context, outermost first.
  static QStringList functions(const TimelinePage& page) {
    QStringList out;
    const auto* model = page.callPathModel();
    for (int r = 0; r < model->rowCount(); ++r) {
      out << model->index(r, CallPathModel::Function).data().toString();
    }
    return out;
  }
  // True when `wanted` appear in `frames` in this order (other frames may come between).
  static bool inOrder(const QStringList& frames, const QStringList& wanted) {
    qsizetype at = 0;
    for (const auto& w : wanted) {
      at = frames.indexOf(w, at);
      if (at < 0) return false;
      ++at;
    }
    return true;
  }

  static std::size_t rowsOf(const analyzer::Timeline& t) {
    std::size_t n = 0;
    for (const auto& lane : t.lanes) n += lane.rows.size();
    return n;
  }

 private Q_SLOTS:
  void initTestCase() {
    test::writeSyntheticCapture(syntheticPath_, 200000, 2);
    synthetic_ = loadCapture(QString::fromStdString(syntheticPath_));
  }
  void cleanupTestCase() { std::filesystem::remove(syntheticPath_); }

  void zoomedOutPaintMergesSubPixelItems() {
    TimelineWidget widget;
    widget.resize(1000, 600);
    widget.setCapture(synthetic_);
    QImage image(widget.size(), QImage::Format_ARGB32_Premultiplied);
    QPainter painter(&image);
    widget.paintTimeline(painter, image.rect());
    painter.end();
    const auto& t = synthetic_->timeline;
    const auto& stats = widget.lastPaintStats();
    // Every item is either drawn or stands in a merged block; counters draw one shape each, and
    // the step lane one item per step.
    QVERIFY(widget.stepLaneItemCount() > 0);
    QCOMPARE(
        static_cast<std::size_t>(stats.items + stats.mergedItems),
        t.item_count() + t.counters.size() + static_cast<std::size_t>(widget.stepLaneItemCount()));
    QVERIFY(stats.mergedItems > 190000);
    // Bounded by the pixels, not by the items.
    QVERIFY2(stats.items + stats.blocks < static_cast<std::int64_t>(2 * 1000 * rowsOf(t)),
             qPrintable(QStringLiteral("%1 shapes").arg(stats.items + stats.blocks)));
  }

  void zoomedInDrawsItemsOneByOne() {
    TimelineWidget widget;
    widget.resize(1000, 600);
    widget.setCapture(synthetic_);
    const double start = static_cast<double>(synthetic_->timeline.begin_ns) + 50'000'000;
    widget.setView(start, start + 100'000);  // 100 µs: about 33 kernels of 2 µs
    QImage image(widget.size(), QImage::Format_ARGB32_Premultiplied);
    QPainter painter(&image);
    widget.paintTimeline(painter, image.rect());
    QCOMPARE(widget.lastPaintStats().blocks, 0);
    QVERIFY(widget.lastPaintStats().items >= 33);
  }

  void keyboardZoomsAndPans() {
    TimelineWidget widget;
    widget.resize(1000, 600);
    widget.setCapture(synthetic_);
    widget.show();
    QVERIFY(QTest::qWaitForWindowExposed(&widget));
    const double span = widget.viewEnd() - widget.viewStart();
    QTest::keyClick(&widget, Qt::Key_Plus);
    QCOMPARE(widget.viewEnd() - widget.viewStart(), span / 2);
    const double before = widget.viewStart();
    QTest::keyClick(&widget, Qt::Key_Right);
    QVERIFY(widget.viewStart() > before);
    QTest::keyClick(&widget, Qt::Key_Minus);
    QTest::keyClick(&widget, Qt::Key_Home);
    QCOMPARE(widget.viewEnd() - widget.viewStart(), span);
  }

  void clickSelectsAndPageShowsLaunchContext() {
    TimelinePage page;
    page.resize(1200, 800);
    page.setCaptures(synthetic_, {synthetic_});
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    TimelineWidget* widget = page.timelineWidget();
    const auto& kernel = synthetic_->timeline.lanes[0].rows[0].items[5000];
    widget->reveal(kernel.start_ns, kernel.end_ns);
    const double x = widget->xForTime(static_cast<double>(kernel.start_ns + kernel.end_ns) / 2);
    // The GPU lanes start below the step lane.
    const int stepLane =
        widget->stepLaneItemCount() > 0 ? TimelineWidget::kRowHeight + TimelineWidget::kLaneGap : 0;
    const QPoint at(static_cast<int>(x),
                    TimelineWidget::kRulerHeight + stepLane + TimelineWidget::kRowHeight / 2);
    QCOMPARE(widget->itemAt(at), &kernel);
    QTest::mouseClick(widget, Qt::LeftButton, {}, at);
    QCOMPARE(widget->selectedItem(), &kernel);
    const QString details = page.detailsText();
    QVERIFY2(details.contains(QStringLiteral("Launched by cudaLaunchKernel")), qPrintable(details));
    QVERIFY2(details.contains(QStringLiteral("step/")), qPrintable(details));
    QVERIFY(details.contains(QStringLiteral("grid (128, 1, 1)")));
    // The synthetic capture was written without calling contexts: the page says so (once the
    // loader's lookup is back).
    QTRY_VERIFY2_WITH_TIMEOUT(!page.callPathStatus().contains(QStringLiteral("reading")),
                              qPrintable(page.callPathStatus()), 30000);
    QCOMPARE(page.callPathModel()->rowCount(), 0);
    QVERIFY2(page.callPathStatus().contains(QStringLiteral("No calling context recorded")),
             qPrintable(page.callPathStatus()));
    QVERIFY2(page.callPathStatus().contains(QStringLiteral("'context' trace group")),
             qPrintable(page.callPathStatus()));
  }

  void selectingAKernelShowsItsCallingContext() {
    auto capture = loadCapture(QStringLiteral(FUSELENS_TEST_DATA_DIR "/cct_paths.sqlite"));
    TimelinePage page;
    page.resize(1400, 900);
    page.setCaptures(capture, {capture});
    QAbstractItemModelTester tester(page.callPathModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    QVERIFY(page.callPathStatus().contains(QStringLiteral("select a kernel")));

    // The first path_kernel: main > a > b > the launch stub, the CUDA stack hidden.
    QVERIFY(page.revealKernel(QStringLiteral("path_kernel"), capture->timeline.begin_ns));
    QTRY_VERIFY_WITH_TIMEOUT(page.callPathModel()->rowCount() > 0, 30000);  // the loader's lookup
    const QStringList frames = functions(page);
    QVERIFY2(
        inOrder(frames, {QStringLiteral("main"), QStringLiteral("(anonymous namespace)::a(float*)"),
                         QStringLiteral("(anonymous namespace)::b(float*)")}),
        qPrintable(frames.join(QStringLiteral(" > "))));
    QVERIFY2(frames.last().startsWith(QStringLiteral("__device_stub_")), qPrintable(frames.last()));
    for (const auto& f : frames)
      QVERIFY2(!f.contains(QStringLiteral("cudaLaunchKernel")), qPrintable(f));
    const auto* model = page.callPathModel();
    const int b =
        static_cast<int>(frames.indexOf(QStringLiteral("(anonymous namespace)::b(float*)")));
    QCOMPARE(model->index(b, CallPathModel::Source).data().toString(),
             QStringLiteral("cct_paths.cu:22"));
    QCOMPARE(model->index(b, CallPathModel::Module).data().toString(), QStringLiteral("cct_paths"));
    QCOMPARE(model->index(0, CallPathModel::Depth).data().toString(), QStringLiteral("1"));
    const QString status = page.callPathStatus();
    QVERIFY2(status.contains(QStringLiteral("%1 frames").arg(frames.size())), qPrintable(status));
    QVERIFY2(status.contains(QStringLiteral("CUDA/collector frames hidden")), qPrintable(status));

    // Ctrl+C in the frame list copies the whole path as the analyzer labels it.
    auto* view = page.findChild<QTableView*>(QStringLiteral("callPathView"));
    QVERIFY(view);
    view->setFocus();
    QApplication::clipboard()->clear();
    QTest::keyClick(view, Qt::Key_C, Qt::ControlModifier);
    const QString copied = QApplication::clipboard()->text();
    QCOMPARE(copied, model->pathText());
    QVERIFY2(copied.contains(
                 QStringLiteral("(anonymous namespace)::b(float*) [cct_paths.cu:22]  (cct_paths)")),
             qPrintable(copied));
    QCOMPARE(copied.count(QLatin1Char('\n')), frames.size() - 1);

    // Its launching API call has the same calling context.
    const auto context =
        analyzer::launch_context(capture->timeline, *page.timelineWidget()->selectedItem());
    QVERIFY(context.call != nullptr);
    page.timelineWidget()->select(context.call);
    QTRY_COMPARE_WITH_TIMEOUT(functions(page), frames, 30000);

    // The copy from d(): main > d.
    const analyzer::TimelineItem* copy = nullptr;
    for (const auto& lane : capture->timeline.lanes) {
      for (const auto& item : lane.rows[0].items) {
        if (item.kind == analyzer::TimelineItemKind::Memcpy) copy = &item;
      }
    }
    QVERIFY(copy);
    page.timelineWidget()->select(copy);
    QTRY_VERIFY_WITH_TIMEOUT(page.callPathModel()->rowCount() > 0, 30000);
    QVERIFY2(inOrder(functions(page),
                     {QStringLiteral("main"), QStringLiteral("(anonymous namespace)::d(float*)")}),
             qPrintable(functions(page).join(QStringLiteral(" > "))));

    // Nothing selected: the frames go, the hint comes back.
    page.timelineWidget()->select(nullptr);
    QCOMPARE(page.callPathModel()->rowCount(), 0);
    QVERIFY(page.callPathStatus().contains(QStringLiteral("select a kernel")));
  }

  void schemaVersion1CaptureHasNoCallingContext() {
    auto capture =
        loadCapture(QStringLiteral(FUSELENS_TEST_DATA_DIR "/fusion_bench_schema_v1.sqlite"));
    TimelinePage page;
    page.setCaptures(capture, {capture});
    QVERIFY(page.showLongestKernel());
    QTRY_VERIFY_WITH_TIMEOUT(!page.callPathStatus().contains(QStringLiteral("reading")), 30000);
    QCOMPARE(page.callPathModel()->rowCount(), 0);
    QVERIFY2(page.callPathStatus().contains(QStringLiteral("No calling context recorded")) &&
                 page.callPathStatus().contains(QStringLiteral("schema version 1")),
             qPrintable(page.callPathStatus()));
  }

  void revealKernelFindsTheFirstInstance() {
    auto capture = loadCapture(QStringLiteral(FUSELENS_TEST_DATA_DIR "/fusion_bench.sqlite"));
    TimelinePage page;
    page.resize(1200, 800);
    page.setCaptures(capture, {capture});
    const auto& t = capture->timeline;
    const QString name = QString::fromStdString(t.names[t.lanes[0].rows[0].items[10].name]);
    QVERIFY(page.revealKernel(name, t.begin_ns));
    QVERIFY(page.timelineWidget()->selectedItem() != nullptr);
    QCOMPARE(QString::fromStdString(t.names[page.timelineWidget()->selectedItem()->name]), name);
    QVERIFY(!page.revealKernel(QStringLiteral("no_such_kernel"), t.begin_ns));
  }
};

QTEST_MAIN(TestTimelineWidget)
#include "tst_timelinewidget.moc"
