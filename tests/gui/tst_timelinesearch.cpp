// The timeline's search (TimelineSearch.h, the Timeline page's TimelineSearchBar) on the committed
// H100 capture tests/data/fusion_bench.sqlite: the number of matches by kernel, NVTX range and API
// name equals what analyzer::summarize counts for the names the query matches (read from the
// capture, whole and unwindowed, as the timeline is), next / previous step through the matches in
// time order and wrap round, each match is zoomed to, scrolled into view and selected, and the
// field's keys (typing, Return, Shift+Return) drive it.

#include <QCheckBox>
#include <QLineEdit>
#include <QRegularExpression>
#include <QtTest>

#include "CaptureData.h"
#include "Format.h"
#include "TimelineSearch.h"
#include "fuselens/db/Reader.h"
#include "summary/Summary.h"
#include "views/TimelinePage.h"
#include "views/TimelineSearchBar.h"
#include "views/TimelineWidget.h"

using namespace fuselens;
using namespace fuselens::gui;

namespace {

QString capture(const char* name) {
  return QStringLiteral(FUSELENS_TEST_DATA_DIR "/") + QString::fromLatin1(name);
}

/// Summed instances of the rows of `rows` whose name `matches`.
template <typename Rows, typename Match>
std::int64_t instances(const Rows& rows, Match matches) {
  std::int64_t n = 0;
  for (const auto& r : rows) {
    if (matches(toQString(r.name))) n += r.stats.count;
  }
  return n;
}

TimelineQuery query(const QString& text, unsigned kinds,
                    TimelineQuery::Mode mode = TimelineQuery::Mode::Substring) {
  TimelineQuery q;
  q.text = text;
  q.kinds = kinds;
  q.mode = mode;
  return q;
}

}  // namespace

class TestTimelineSearch : public QObject {
  Q_OBJECT

 private:
  CaptureDataPtr bench_;
  analyzer::Summary whole_;  ///< the whole capture's summary (demangled kernel names)

  /// A page showing bench_, shown and laid out.
  static void showPage(TimelinePage& page, const CaptureDataPtr& data) {
    page.resize(1400, 900);
    page.setCaptures(data, {data});
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
  }

  /// The item the page selected is match `index` of its search, in view and in a visible row.
  static void checkShown(TimelinePage& page, int index) {
    TimelineSearchBar* bar = page.searchBar();
    TimelineWidget* widget = page.timelineWidget();
    QCOMPARE(bar->currentMatch(), index);
    const TimelineMatch& m = bar->matches()->matches[static_cast<std::size_t>(index)];
    const analyzer::TimelineItem* item = widget->selectedItem();
    QVERIFY(item != nullptr);
    QCOMPARE(item, itemOf(*widget->timeline(), m));
    QVERIFY(widget->viewStart() <= static_cast<double>(item->start_ns));
    QVERIFY(widget->viewEnd() >= static_cast<double>(item->end_ns));
    const int y = widget->rowCenterY(static_cast<int>(m.lane), static_cast<int>(m.row));
    QVERIFY2(y > TimelineWidget::kRulerHeight && y < widget->height(),
             qPrintable(QStringLiteral("row at y %1 of %2").arg(y).arg(widget->height())));
    QCOMPARE(bar->countText(),
             QStringLiteral("%1 of %2").arg(index + 1).arg(bar->matches()->matches.size()));
  }

 private Q_SLOTS:
  void initTestCase() {
    bench_ = loadCapture(capture("fusion_bench.sqlite"));
    QVERIFY2(bench_->analysisErrors.isEmpty(), qPrintable(bench_->analysisErrors));
    whole_ = analyzer::summarize(db::Reader(bench_->path.toStdString()));
    QVERIFY(!whole_.kernels.empty());
    QVERIFY(!whole_.nvtx.empty());
    QVERIFY(!whole_.api.empty());
  }

  void countsEqualTheSummaryOfTheMatchedNames() {
    const auto& t = bench_->timeline;
    // Kernels: a word of the busiest kernel's name, in upper case (the search ignores case).
    const QString top = toQString(whole_.kernels.front().name);
    const QString word = top.section(QRegularExpression(QStringLiteral("[^A-Za-z0-9_]+")), 1, 1,
                                     QString::SectionSkipEmpty);
    QVERIFY2(word.size() >= 3, qPrintable(top));
    const auto contains = [](const QString& text) {
      return [text](const QString& name) { return name.contains(text, Qt::CaseInsensitive); };
    };
    const auto kernels = searchTimeline(t, query(word.toUpper(), SearchKernels));
    QCOMPARE(static_cast<std::int64_t>(kernels.matches.size()),
             instances(whole_.kernels, contains(word)));
    QVERIFY(!kernels.matches.empty());
    // The whole name of one kernel: its instances.
    const auto one = searchTimeline(t, query(top, SearchKernels, TimelineQuery::Mode::WholeName));
    QCOMPARE(static_cast<std::int64_t>(one.matches.size()), whole_.kernels.front().stats.count);

    // NVTX ranges: the first segment of a range name ("gemm" of "gemm/fused/M64").
    const QString range = toQString(whole_.nvtx.front().name).section(QLatin1Char('/'), 0, 0);
    const auto ranges = searchTimeline(t, query(range, SearchRanges));
    QCOMPARE(static_cast<std::int64_t>(ranges.matches.size()),
             instances(whole_.nvtx, contains(range)));
    QVERIFY(!ranges.matches.empty());

    // API calls by a regular expression.
    const QString pattern = QStringLiteral("^cuda(LaunchKernel|Memcpy)");
    const QRegularExpression regex(pattern, QRegularExpression::CaseInsensitiveOption);
    const auto api = searchTimeline(t, query(pattern, SearchApi, TimelineQuery::Mode::Regex));
    QCOMPARE(static_cast<std::int64_t>(api.matches.size()),
             instances(whole_.api, [&](const QString& n) { return regex.match(n).hasMatch(); }));
    QVERIFY(!api.matches.empty());

    // Every kind at once is the sum of the kinds; the matches are in time order.
    const auto all = searchTimeline(t, query(word, SearchNamed));
    const auto alone = [&](unsigned kind) {
      return searchTimeline(t, query(word, kind)).matches.size();
    };
    QCOMPARE(all.matches.size(), alone(SearchKernels) + alone(SearchRanges) + alone(SearchApi));
    for (std::size_t i = 1; i < all.matches.size(); ++i) {
      QVERIFY(all.matches[i - 1].start_ns <= all.matches[i].start_ns);
    }
  }

  void nothingMatchesAnEmptyTextOrABadRegex() {
    const auto& t = bench_->timeline;
    QVERIFY(searchTimeline(t, query(QString(), SearchAll)).matches.empty());
    const auto bad = searchTimeline(
        t, query(QStringLiteral("(unclosed"), SearchAll, TimelineQuery::Mode::Regex));
    QVERIFY(bad.matches.empty());
    QVERIFY2(bad.error.startsWith(QStringLiteral("invalid regular expression")),
             qPrintable(bad.error));
    QVERIFY(
        searchTimeline(t, query(QStringLiteral("no such name at all"), SearchAll)).matches.empty());
    // A match of another timeline addresses no item.
    QCOMPARE(itemOf(t, TimelineMatch{0, 0, 1u << 30, 0, 0}), nullptr);
  }

  void handMadeTimelineMergesRowsAndSurvivesBadIndices() {
    // Five rows in three lanes, each sorted by start, with interleaved times and ties; items
    // whose name or detail index points nowhere (a damaged timeline) match nothing.
    analyzer::Timeline t;
    t.names = {"step", "Kern_A", "other"};
    t.kernels.resize(1);
    t.kernels[0].demangled_name = 7;  // out of range
    const auto item = [](std::int64_t start, std::uint32_t name, analyzer::TimelineItemKind kind,
                         std::uint32_t detail = 0) {
      return analyzer::TimelineItem{start, start + 5, name, detail, kind};
    };
    using K = analyzer::TimelineItemKind;
    const std::vector<std::vector<std::vector<analyzer::TimelineItem>>> lanes = {
        {{item(10, 1, K::Kernel), item(30, 1, K::Kernel, 99), item(50, 42, K::Kernel)}},
        {{item(10, 0, K::Nvtx), item(40, 1, K::Nvtx)}, {item(20, 1, K::Nvtx)}},
        {{item(5, 1, K::Api), item(45, 2, K::Api)}, {item(30, 1, K::Api)}}};
    for (const auto& rows : lanes) {
      analyzer::TimelineLane lane;
      for (const auto& items : rows) {
        analyzer::TimelineRow row;
        row.items = items;
        lane.rows.push_back(row);
      }
      t.lanes.push_back(lane);
    }
    const auto found = searchTimeline(t, query(QStringLiteral("kern_a"), SearchAll));
    // Every item named "Kern_A" (index 1), whatever its kind; not the one named 42.
    std::vector<std::int64_t> starts;
    for (const auto& m : found.matches) {
      QCOMPARE(itemOf(t, m)->name, 1u);
      starts.push_back(m.start_ns);
    }
    QCOMPARE(starts, (std::vector<std::int64_t>{5, 10, 20, 30, 30, 40}));
    // The tie at 30 is ordered by lane: the kernel (lane 0) first, the API call (lane 2) next.
    QCOMPARE(found.matches[3].lane, 0u);
    QCOMPARE(found.matches[4].lane, 2u);
    QCOMPARE(found.drawnNames, (std::vector<char>{0, 1, 0}));
    QCOMPARE(searchTimeline(t, query(QStringLiteral("kern_a"), SearchApi)).matches.size(),
             std::size_t{2});
    QVERIFY(searchTimeline(t, query(QStringLiteral("zzz"), SearchAll)).matches.empty());
  }

  void pageCountsAndStepsThroughMatches() {
    TimelinePage page;
    showPage(page, bench_);
    TimelineSearchBar* bar = page.searchBar();
    const QString top = toQString(whole_.kernels.front().name);
    bar->search(query(top, SearchKernels, TimelineQuery::Mode::WholeName));
    QTRY_VERIFY(!bar->busy());
    QVERIFY(bar->matches() != nullptr);
    const int n = static_cast<int>(bar->matches()->matches.size());
    QCOMPARE(static_cast<std::int64_t>(n), whole_.kernels.front().stats.count);
    QVERIFY2(n >= 3, "the busiest kernel runs several times");
    QCOMPARE(bar->countText(), QStringLiteral("%1 matches").arg(n));
    QCOMPARE(bar->currentMatch(), -1);
    // The other matches are outlined: the matched names are marked.
    const auto& highlighted = page.timelineWidget()->highlightedNames();
    QVERIFY(std::find(highlighted.begin(), highlighted.end(), 1) != highlighted.end());

    // From the whole capture's view the first step goes to the first match; then in order.
    page.timelineWidget()->zoomAll();
    bar->next();
    checkShown(page, 0);
    for (int i = 1; i < n; ++i) {
      bar->next();
      checkShown(page, i);
    }
    bar->next();  // wraps round
    checkShown(page, 0);
    bar->previous();  // and back
    checkShown(page, n - 1);
    bar->previous();
    checkShown(page, n - 2);
    // The details below the timeline show the selected kernel.
    QVERIFY(!page.detailsText().isEmpty());
  }

  void fieldKeysSearchAndStep() {
    TimelinePage page;
    showPage(page, bench_);
    TimelineSearchBar* bar = page.searchBar();
    QLineEdit* field = bar->field();
    const QString range = toQString(whole_.nvtx.front().name);
    field->setFocus();
    QTest::keyClicks(field, range);
    // Typing searches after a pause (no match chosen yet).
    QTRY_VERIFY(bar->matches() != nullptr && !bar->busy());
    const auto expected = searchTimeline(bench_->timeline, bar->query());
    QCOMPARE(bar->matches()->matches.size(), expected.matches.size());
    QVERIFY(!expected.matches.empty());
    QCOMPARE(bar->currentMatch(), -1);
    page.timelineWidget()->zoomAll();
    QTest::keyClick(field, Qt::Key_Return);
    checkShown(page, 0);
    QTest::keyClick(field, Qt::Key_Return, Qt::ShiftModifier);
    checkShown(page, static_cast<int>(expected.matches.size()) - 1);
    // A regular expression that does not compile says why.
    bar->search(query(QStringLiteral("[a-"), SearchAll, TimelineQuery::Mode::Regex));
    QTRY_VERIFY(!bar->busy());
    QVERIFY2(bar->countText().startsWith(QStringLiteral("invalid regular expression")),
             qPrintable(bar->countText()));
    // Return with changed fields searches first, then goes to the first match after the view.
    field->clear();
    QTest::keyClicks(field, range);
    QTest::keyClick(field, Qt::Key_Return);
    QTRY_VERIFY(bar->currentMatch() >= 0);
  }

  void aPendingSearchRunsOnceTheTimelineIsIn() {
    // A capture whose timeline is not loaded yet: the target waits, then is shown.
    auto opened = openCapture(capture("fusion_bench.sqlite"));
    TimelinePage page;
    showPage(page, opened);
    const QString top = toQString(whole_.kernels.front().name);
    page.showInTimeline(timelineTarget(top, SearchKernels));
    QVERIFY(page.searchBar()->busy());
    QCOMPARE(page.searchBar()->countText(), QStringLiteral("waiting for the timeline…"));
    loadAnalysis(Analysis::Timeline, *opened);
    page.analysisLoaded(opened, Analysis::Timeline);
    QTRY_VERIFY(page.timelineWidget()->selectedItem() != nullptr);
    const auto* item = page.timelineWidget()->selectedItem();
    QCOMPARE(item->kind, analyzer::TimelineItemKind::Kernel);
    QCOMPARE(
        toQString(opened->timeline.names[opened->timeline.kernels[item->detail].demangled_name]),
        top);
  }

  void aTargetNotOnTheTimelineSaysSo() {
    TimelinePage page;
    showPage(page, bench_);
    page.showInTimeline(timelineTarget(QStringLiteral("no_such_kernel"), SearchKernels));
    QTRY_VERIFY(!page.searchBar()->busy());
    QCOMPARE(page.searchBar()->countText(), QStringLiteral("not on the timeline"));
    QCOMPARE(page.timelineWidget()->selectedItem(), nullptr);
  }
};

QTEST_MAIN(TestTimelineSearch)
#include "tst_timelinesearch.moc"
