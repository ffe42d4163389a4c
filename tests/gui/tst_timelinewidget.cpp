// TimelineWidget: level of detail (every item is drawn or merged, and a zoomed-out repaint draws
// a bounded number of shapes), zoom and pan from the keyboard, selection by click, and the
// Timeline page's details with the launch context.

#include <QPainter>
#include <QtTest>

#include <filesystem>

#include "CaptureData.h"
#include "GuiTestSupport.h"
#include "views/TimelinePage.h"
#include "views/TimelineWidget.h"

using namespace fuselens;
using namespace fuselens::gui;

class TestTimelineWidget : public QObject {
  Q_OBJECT

 private:
  std::string syntheticPath_ = (std::filesystem::temp_directory_path() / "tst_timelinewidget.sqlite").string();
  CaptureDataPtr synthetic_;

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
    // Every item is either drawn or stands in a merged block; counters draw one shape each.
    QCOMPARE(static_cast<std::size_t>(stats.items + stats.mergedItems), t.item_count() + t.counters.size());
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
    const QPoint at(static_cast<int>(x), TimelineWidget::kRulerHeight + TimelineWidget::kRowHeight / 2);
    QCOMPARE(widget->itemAt(at), &kernel);
    QTest::mouseClick(widget, Qt::LeftButton, {}, at);
    QCOMPARE(widget->selectedItem(), &kernel);
    const QString details = page.detailsText();
    QVERIFY2(details.contains(QStringLiteral("Launched by cudaLaunchKernel")), qPrintable(details));
    QVERIFY2(details.contains(QStringLiteral("step/")), qPrintable(details));
    QVERIFY(details.contains(QStringLiteral("grid (128, 1, 1)")));
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
