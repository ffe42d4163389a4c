// "Show in timeline" from every table of the main window (Summary's kernels, memory operations,
// API and NVTX tables, Calling Context, Roofline, Compare, Flags) on the committed H100 capture
// tests/data/fusion_bench.sqlite: the action (and a double click) shows the Timeline page with the
// row's item selected, in view, and it is the first instance that starts inside the capture's
// window, found here by scanning the timeline's rows (or the first at or after the finding's
// first instance, for Flags).

#include <QAction>
#include <QSettings>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTableView>
#include <QTreeView>
#include <QtTest>

#include <limits>
#include <optional>

#include "CaptureData.h"
#include "CaptureLoader.h"
#include "Format.h"
#include "MainWindow.h"
#include "TimelineSearch.h"
#include "models/CompareModel.h"
#include "models/FlagsModel.h"
#include "models/RooflineModel.h"
#include "views/CallingContextPage.h"
#include "views/ComparePage.h"
#include "views/FlagsPage.h"
#include "views/RooflinePage.h"
#include "views/SummaryPage.h"
#include "views/TimelinePage.h"
#include "views/TimelineSearchBar.h"
#include "views/TimelineWidget.h"

using namespace fuselens;
using namespace fuselens::gui;
using analyzer::TimelineItem;
using analyzer::TimelineItemKind;

namespace {

QString capture(const char* name) {
  return QStringLiteral(FUSELENS_TEST_DATA_DIR "/") + QString::fromLatin1(name);
}

/// The item of `kind` named `name` (a kernel by its short or demangled name) that starts first
/// at or after `fromNs`, else inside the capture's window, else anywhere (what a jump selects).
const TimelineItem* expectedFirst(const CaptureData& data, const QString& name,
                                  TimelineItemKind kind,
                                  std::optional<std::int64_t> fromNs = std::nullopt) {
  const auto& t = data.timeline;
  const TimelineItem* inside = nullptr;
  const TimelineItem* any = nullptr;
  const auto earlier = [](const TimelineItem* a, const TimelineItem& b) {
    return !a || b.start_ns < a->start_ns;
  };
  for (const auto& lane : t.lanes) {
    for (const auto& row : lane.rows) {
      for (const auto& item : row.items) {
        const bool kinds = item.kind == kind || (kind == TimelineItemKind::Memcpy &&
                                                 item.kind == TimelineItemKind::Memset);
        if (!kinds) continue;
        bool named = toQString(t.names[item.name]).compare(name, Qt::CaseInsensitive) == 0;
        if (!named && item.kind == TimelineItemKind::Kernel) {
          named = toQString(t.names[t.kernels[item.detail].demangled_name])
                      .compare(name, Qt::CaseInsensitive) == 0;
        }
        if (!named) continue;
        if (earlier(any, item)) any = &item;
        const bool fits = fromNs ? item.start_ns >= *fromNs
                                 : (!data.window || data.window->contains(item.start_ns));
        if (fits && earlier(inside, item)) inside = &item;
      }
    }
  }
  return inside ? inside : any;
}

bool waitForLoads(MainWindow& window) {
  if (window.pendingLoads() == 0) return true;
  QSignalSpy spy(&window, &MainWindow::loadsFinished);
  return spy.wait(120000) || window.pendingLoads() == 0;
}

QAction* jumpAction(QAbstractItemView* view) {
  for (QAction* a : view->actions()) {
    if (a->objectName() == QStringLiteral("showInTimeline")) return a;
  }
  return nullptr;
}

}  // namespace

class TestTimelineJumps : public QObject {
  Q_OBJECT

 private:
  MainWindow* window_ = nullptr;
  CaptureDataPtr data_;

  /// Makes row `row` of `view` current and triggers its "Show in timeline"; then checks the
  /// Timeline page shows `expected`.
  void jump(QAbstractItemView* view, int row, const TimelineItem* expected) {
    QVERIFY(expected != nullptr);
    TimelineWidget* widget = window_->timelinePage()->timelineWidget();
    widget->select(nullptr);
    QTabWidget* tabs = qobject_cast<QTabWidget*>(window_->centralWidget());
    QVERIFY(tabs);
    view->setCurrentIndex(view->model()->index(row, 0, view->rootIndex()));
    QAction* action = jumpAction(view);
    QVERIFY(action != nullptr);
    QVERIFY(action->isEnabled());
    action->trigger();
    QCOMPARE(tabs->currentWidget(), window_->timelinePage());
    QTRY_COMPARE(widget->selectedItem(), expected);
    QVERIFY(widget->viewStart() <= static_cast<double>(expected->start_ns));
    QVERIFY(widget->viewEnd() >= static_cast<double>(expected->end_ns));
    QVERIFY(window_->timelinePage()->searchBar()->currentMatch() >= 0);
  }

  QString sourceText(QAbstractItemView* view, int row, int column) {
    return view->model()->index(row, column).data(TableModel::RawRole).toString();
  }

 private Q_SLOTS:
  void initTestCase() {
    QSettings().clear();
    window_ = new MainWindow;
    window_->setErrorDialogsEnabled(false);
    window_->resize(1500, 940);
    window_->show();
    QVERIFY(QTest::qWaitForWindowExposed(window_));
    window_->openFiles({capture("fusion_bench.sqlite")});
    QTRY_VERIFY_WITH_TIMEOUT(window_->currentCapture() != nullptr, 30000);
    QVERIFY(waitForLoads(*window_));
    data_ = window_->currentCapture();
    QVERIFY(data_->has(Analysis::Timeline) && data_->has(Analysis::Summary));
    QVERIFY(data_->window != nullptr);
  }
  void cleanupTestCase() { delete window_; }

  void summaryTablesJump() {
    SummaryPage* page = window_->summaryPage();
    window_->showPage(page);
    const auto table = [&](const char* name) {
      return page->findChild<QTableView*>(QString::fromLatin1(name));
    };
    // Kernels (demangled names), rows 0 and the last.
    QTableView* kernels = table("Kernels");
    QVERIFY(kernels && kernels->model()->rowCount() > 1);
    for (int row : {0, kernels->model()->rowCount() - 1}) {
      window_->showPage(page);
      const QString name = sourceText(kernels, row, kernels->model()->columnCount() - 1);
      jump(kernels, row, expectedFirst(*data_, name, TimelineItemKind::Kernel));
    }
    // API calls and NVTX ranges.
    QTableView* api = table("CUDA API");
    window_->showPage(page);
    jump(api, 0,
         expectedFirst(*data_, sourceText(api, 0, api->model()->columnCount() - 1),
                       TimelineItemKind::Api));
    QTableView* nvtx = table("NVTX ranges");
    window_->showPage(page);
    jump(nvtx, 0,
         expectedFirst(*data_, sourceText(nvtx, 0, nvtx->model()->columnCount() - 1),
                       TimelineItemKind::Nvtx));
    // Memory operations: "[CUDA memcpy Host-to-Device]" is "Memcpy Host-to-Device" there.
    QTableView* memory = table("Memory operations");
    if (memory->model()->rowCount() > 0) {
      window_->showPage(page);
      const QString name = sourceText(memory, 0, memory->model()->columnCount() - 1);
      jump(memory, 0, expectedFirst(*data_, timelineCopyName(name), TimelineItemKind::Memcpy));
    }
    // Device memory rows name no item: no action.
    QCOMPARE(jumpAction(table("Device memory")), nullptr);
  }

  void doubleClickJumps() {
    SummaryPage* page = window_->summaryPage();
    window_->showPage(page);
    QTableView* kernels = page->findChild<QTableView*>(QStringLiteral("Kernels"));
    const int row = 1;
    const QString name = sourceText(kernels, row, kernels->model()->columnCount() - 1);
    const TimelineItem* expected = expectedFirst(*data_, name, TimelineItemKind::Kernel);
    window_->timelinePage()->timelineWidget()->select(nullptr);
    const QModelIndex index = kernels->model()->index(row, 0);
    kernels->scrollTo(index);
    const QPoint at = kernels->visualRect(index).center();
    // A double click is a press, release, then a double-click event.
    QTest::mouseClick(kernels->viewport(), Qt::LeftButton, {}, at);
    QTest::mouseDClick(kernels->viewport(), Qt::LeftButton, {}, at);
    QTRY_COMPARE(window_->timelinePage()->timelineWidget()->selectedItem(), expected);
  }

  void callingContextJumps() {
    auto* page =
        qobject_cast<CallingContextPage*>(window_->page(QStringLiteral("calling-context")));
    QVERIFY(page);
    window_->showPage(page);
    QTRY_VERIFY_WITH_TIMEOUT(!page->busy(), 60000);
    const auto& report = page->model()->report();
    QVERIFY2(report.available, report.unavailable_reason.c_str());
    // A "<gpu kernel> NAME" row: that kernel.
    int kernelRow = -1;
    for (std::size_t r = 0; r < report.rows.size() && kernelRow < 0; ++r) {
      if (report.rows[r].kind == analyzer::CctRow::Kind::GpuOperation &&
          report.rows[r].label.rfind("<gpu kernel> ", 0) == 0) {
        kernelRow = static_cast<int>(r);
      }
    }
    QVERIFY(kernelRow > 0);
    const TimelineTarget target = cctTimelineTarget(report, kernelRow);
    QCOMPARE(target.query.text,
             toQString(report.rows[static_cast<std::size_t>(kernelRow)].label).mid(13));
    // Through the tree: the proxy index of that row, made current.
    QTreeView* tree = page->tree();
    auto* proxy = qobject_cast<QSortFilterProxyModel*>(tree->model());
    QModelIndex source;
    {
      // The model's index of report row `kernelRow`: walk down from the root by positions.
      std::vector<int> path;
      for (int r = kernelRow; r > 0; r = report.rows[static_cast<std::size_t>(r)].parent)
        path.push_back(r);
      for (auto it = path.rbegin(); it != path.rend(); ++it) {
        const auto& siblings =
            report.rows[static_cast<std::size_t>(report.rows[static_cast<std::size_t>(*it)].parent)]
                .children;
        const int position =
            static_cast<int>(std::find(siblings.begin(), siblings.end(), *it) - siblings.begin());
        source = page->model()->index(position, 0, source);
      }
    }
    QVERIFY(source.isValid());
    QCOMPARE(static_cast<int>(source.internalId()), kernelRow);
    const QModelIndex index = proxy->mapFromSource(source);
    tree->setCurrentIndex(index);
    QAction* action = jumpAction(tree);
    QVERIFY(action && action->isEnabled());
    action->trigger();
    TimelineWidget* widget = window_->timelinePage()->timelineWidget();
    QTRY_COMPARE(widget->selectedItem(),
                 expectedFirst(*data_, target.query.text, TimelineItemKind::Kernel));
    // A frame above it jumps to the heaviest operation below it: a valid kernel target.
    const int parent = report.rows[static_cast<std::size_t>(kernelRow)].parent;
    QVERIFY(cctTimelineTarget(report, parent).valid());
    QVERIFY(!cctTimelineTarget(report, -1).valid());
    QVERIFY(!cctTimelineTarget(report, static_cast<int>(report.rows.size())).valid());
  }

  void rooflineJumps() {
    auto* page = qobject_cast<RooflinePage*>(window_->page(QStringLiteral("roofline")));
    QVERIFY(page);
    window_->showPage(page);
    QTRY_VERIFY_WITH_TIMEOUT(!page->busy() && page->model()->rowCount() > 0, 60000);
    auto* table = page->findChild<QTableView*>(QStringLiteral("rooflineTable"));
    QVERIFY(table);
    auto* proxy = qobject_cast<QSortFilterProxyModel*>(table->model());
    const RooflinePoint& point = page->model()->rowAt(proxy->mapToSource(proxy->index(0, 0)).row());
    jump(table, 0,
         expectedFirst(*data_, toQString(point.name),
                       point.isRange ? TimelineItemKind::Nvtx : TimelineItemKind::Kernel));
  }

  void compareJumps() {
    ComparePage* page = window_->comparePage();
    window_->showPage(page);
    QTRY_VERIFY_WITH_TIMEOUT(!page->busy() && page->entryModel()->rowCount() > 0, 60000);
    QTableView* entries = page->entryView();
    auto* proxy = qobject_cast<QSortFilterProxyModel*>(entries->model());
    const auto& entry = page->entryModel()->rowAt(proxy->mapToSource(proxy->index(0, 0)).row());
    QVERIFY(entry.baseline.has_value());
    jump(entries, 0,
         expectedFirst(*data_, toQString(entry.baseline->name), TimelineItemKind::Nvtx));
  }

  void flagsJumpFromTheFindingsFirstInstance() {
    FlagsPage* page = window_->flagsPage();
    window_->showPage(page);
    QTableView* table = page->findChild<QTableView*>(QStringLiteral("flagsTable"));
    QVERIFY(table);
    if (table->model()->rowCount() == 0) QSKIP("fusion_bench.sqlite has no findings");
    auto* proxy = qobject_cast<QSortFilterProxyModel*>(table->model());
    for (int row = 0; row < table->model()->rowCount(); ++row) {
      const auto& hit = page->model()->rowAt(proxy->mapToSource(proxy->index(row, 0)).row());
      QString subject = toQString(hit.subject);
      if (subject.contains(QStringLiteral(" -> ")))
        subject = subject.left(subject.indexOf(QStringLiteral(" -> ")));
      const TimelineItem* kernel =
          expectedFirst(*data_, subject, TimelineItemKind::Kernel, hit.first_ns);
      if (!kernel) continue;  // a finding about something else
      window_->showPage(page);
      jump(table, row, kernel);
      return;
    }
    QSKIP("no finding of fusion_bench.sqlite names a kernel");
  }

  void compareKernelDiffJumpsToBaselineKernels() {
    // Two captures: the kernel diff's rows of kernels the current capture (the baseline) has
    // jump; kernels only in the candidate do not.
    window_->openFiles({capture("pytorch_mlp.sqlite")});
    QTRY_COMPARE_WITH_TIMEOUT(window_->captures().size(), 2, 30000);
    QVERIFY(waitForLoads(*window_));
    QCOMPARE(window_->currentCapture(), data_);
    ComparePage* page = window_->comparePage();
    window_->showPage(page);
    QTRY_VERIFY_WITH_TIMEOUT(!page->busy(), 60000);
    page->compareWith(window_->captures().back());
    QTRY_VERIFY_WITH_TIMEOUT(!page->busy() && page->kernelDiffModel()->rowCount() > 0, 60000);
    QTableView* diff = page->kernelView();
    auto* proxy = qobject_cast<QSortFilterProxyModel*>(diff->model());
    int inBaseline = -1, onlyCandidate = -1;
    for (int row = 0; row < proxy->rowCount(); ++row) {
      const auto& r =
          page->kernelDiffModel()->rowAt(proxy->mapToSource(proxy->index(row, 0)).row());
      if (r.baseline_count > 0 && inBaseline < 0) inBaseline = row;
      if (r.baseline_count == 0 && onlyCandidate < 0) onlyCandidate = row;
    }
    QVERIFY(inBaseline >= 0);
    if (onlyCandidate >= 0) {
      diff->setCurrentIndex(proxy->index(onlyCandidate, 0));
      QVERIFY(!jumpAction(diff)->isEnabled());
    }
    const auto& row =
        page->kernelDiffModel()->rowAt(proxy->mapToSource(proxy->index(inBaseline, 0)).row());
    window_->showPage(page);
    jump(diff, inBaseline, expectedFirst(*data_, toQString(row.name), TimelineItemKind::Kernel));
  }

  // Last: changes the window. A window over the second half of the capture: the jump selects
  // the first instance inside it, not the capture's first.
  void jumpsChooseTheFirstInstanceInTheWindow() {
    const auto& w = *data_->window;
    const std::int64_t half = w.capture_start_ns + w.captured_ns / 2;
    const QString window =
        window_->timelinePage()->timeWindow(half, w.capture_start_ns + w.captured_ns);
    QSignalSpy changed(window_->loader(), &CaptureLoader::windowChanged);
    QVERIFY(window_->setWindow(window));
    QVERIFY(changed.wait(60000));
    QVERIFY(waitForLoads(*window_));
    QVERIFY(data_->window && !data_->window->whole);
    SummaryPage* page = window_->summaryPage();
    window_->showPage(page);
    QTableView* kernels = page->findChild<QTableView*>(QStringLiteral("Kernels"));
    QVERIFY(kernels->model()->rowCount() > 0);
    const QString name = sourceText(kernels, 0, kernels->model()->columnCount() - 1);
    const TimelineItem* inWindow = expectedFirst(*data_, name, TimelineItemKind::Kernel);
    const TimelineItem* first = expectedFirst(*data_, name, TimelineItemKind::Kernel,
                                              std::numeric_limits<std::int64_t>::min());
    QVERIFY(inWindow && first);
    QVERIFY2(inWindow->start_ns >= half && first->start_ns < half,
             "the kernel runs in both halves of the capture");
    jump(kernels, 0, inWindow);
  }
};

QTEST_MAIN(TestTimelineJumps)
#include "tst_timelinejumps.moc"
