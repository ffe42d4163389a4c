// The timeline's stored level of detail (issue 21; analyzer/timeline/TimelineLod.h,
// TimelineWidget's "Stored level of detail"): on a capture written through db::Writer with the
// level of detail stored, the widget drawing the stored buckets reports the same busy coverage as
// the widget drawing the rows; a window loaded when zoomed in lists exactly the kernels and calls
// of the window; a stale or damaged stored table (NULLs, wrong types, wrong sizes, counts that do
// not add up, a view in its place, an older schema) is refused in one line and the timeline is
// loaded from the rows as before.

#include <QPainter>
#include <QtTest>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "CaptureData.h"
#include "TempDir.h"
#include "fuselens/db/Layout.h"
#include "fuselens/db/Sqlite.h"
#include "fuselens/db/Writer.h"
#include "timeline/TimelineLod.h"
#include "views/TimelineWidget.h"

using namespace fuselens;
using namespace fuselens::gui;

namespace {

constexpr std::int64_t kT0 = 5'000'000;
constexpr std::uint32_t kPid = 11, kTid = 12;

struct Written {
  std::int64_t start, end;
  std::uint32_t stream;  ///< 0 for API calls
};

/// Pseudo-random but fixed: kernels of 50 ns to 20 us on two streams with gaps of 0 to 30 us, each
/// launched by a cudaLaunchKernel call, some calls with a nested driver call.
std::vector<Written> writeCapture(const std::string& path, std::vector<Written>& calls) {
  db::RecordBatch batch;
  std::vector<Written> kernels;
  std::uint64_t seed = 12345;
  const auto next = [&](std::uint64_t mod) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::int64_t>((seed >> 33) % mod);
  };
  std::int64_t host = kT0;
  std::int64_t gpu[2] = {kT0 + 1000, kT0 + 1500};
  std::uint32_t correlation = 1;
  for (int i = 0; i < 3000; ++i) {
    const std::uint32_t s = static_cast<std::uint32_t>(i % 2);
    db::ApiCallRecord a;
    a.pid = kPid;
    a.tid = kTid;
    a.name = "cudaLaunchKernel";
    a.start_ns = static_cast<std::uint64_t>(host);
    a.end_ns = static_cast<std::uint64_t>(host + 800 + next(400));
    a.correlation_id = correlation;
    batch.api_calls.push_back(a);
    calls.push_back({host, static_cast<std::int64_t>(a.end_ns), 0});
    if (i % 5 == 0) {  // a driver call inside it: depth 1
      db::ApiCallRecord d = a;
      d.name = "cuLaunchKernel";
      d.domain = db::ApiDomain::Driver;
      d.start_ns = a.start_ns + 100;
      d.end_ns = a.start_ns + 500;
      batch.api_calls.push_back(d);
      calls.push_back({host + 100, host + 500, 0});
    }
    const std::int64_t start = std::max(gpu[s], host + 2000) + next(30'000);
    const std::int64_t end = start + 50 + next(20'000);
    gpu[s] = end;
    db::KernelRecord k;
    k.pid = kPid;
    k.stream_id = 7 + s;
    k.correlation_id = correlation++;
    k.start_ns = static_cast<std::uint64_t>(start);
    k.end_ns = static_cast<std::uint64_t>(end);
    k.mangled_name = i % 3 == 0 ? "gemm" : "relu";
    batch.kernels.push_back(k);
    kernels.push_back({start, end, 7 + s});
    host = static_cast<std::int64_t>(a.end_ns) + 200 + next(15'000);
  }
  db::RunInfo run;
  run.command_line = {"timeline-lod"};
  auto writer = db::Writer::create(path, run);
  db::ProcessInfo p;
  p.pid = kPid;
  writer.write_process(p);
  writer.write(batch);
  writer.finalize({});
  return kernels;
}

int laneIndex(const analyzer::Timeline& t, analyzer::LaneKind kind, std::uint32_t stream) {
  for (std::size_t i = 0; i < t.lanes.size(); ++i) {
    if (t.lanes[i].kind == kind &&
        (kind != analyzer::LaneKind::Gpu || t.lanes[i].stream_id == stream))
      return static_cast<int>(i);
  }
  return -1;
}

std::shared_ptr<CaptureData> openWithTimeline(const std::string& path) {
  auto data = openCapture(QString::fromStdString(path));
  loadAnalysis(Analysis::Timeline, *data);
  return data;
}

void exec(const std::string& path, const std::string& sql) {
  db::Connection c(path, db::Connection::Mode::ReadWrite);
  c.exec(sql);
}

/// Replaces timeline_lod by a copy without its constraints, so that a test can store what a
/// hostile file may hold (NULLs, text) in it.
constexpr const char* kUnconstrained =
    "CREATE TABLE lod_copy AS SELECT * FROM timeline_lod; DROP TABLE timeline_lod; "
    "ALTER TABLE lod_copy RENAME TO timeline_lod;";

}  // namespace

class TestTimelineLod : public QObject {
  Q_OBJECT

 private:
  test::TempDir dir_;
  std::string path_;
  std::vector<Written> kernels_, calls_;

  /// A fresh copy of the capture with its level of detail stored.
  std::string copy(const char* name) {
    const auto to = dir_.file(name);
    QFile::remove(QString::fromStdString(to));
    QFile::copy(QString::fromStdString(path_), QString::fromStdString(to));
    return to;
  }

 private Q_SLOTS:
  void initTestCase() {
    path_ = dir_.file("lod.sqlite");
    kernels_ = writeCapture(path_, calls_);
    // Small enough to be loaded whole: by default nothing is stored.
    const auto small = copy("small.sqlite");
    analyzer::store_timeline_lod(small);
    std::string why;
    QVERIFY(!analyzer::load_timeline_lod(db::Reader(small), &why));
    QVERIFY2(QString::fromStdString(why).contains("empty"), why.c_str());
    analyzer::store_timeline_lod(path_, /*min_items=*/0);
  }

  void storedLevelOfDetailIsUsed() {
    const auto data = openWithTimeline(path_);
    QVERIFY2(data->timelineLod, qPrintable(data->timelineLodNote));
    QVERIFY(data->error(Analysis::Timeline).isEmpty());
    // Lanes only: no kernel or call loaded; their counts are in the stored rows.
    std::int64_t gpu = 0, api = 0;
    for (const auto& r : data->timelineLod->rows) {
      (r.kind == analyzer::LaneKind::Gpu ? gpu : api) += r.item_count;
    }
    QCOMPARE(gpu, static_cast<std::int64_t>(kernels_.size()));
    QCOMPARE(api, static_cast<std::int64_t>(calls_.size()));
    for (const auto& lane : data->timeline.lanes) QCOMPARE(lane.item_count(), std::size_t{0});
    // The same lanes, rows and span as the whole timeline.
    const auto full = analyzer::load_timeline(*data->capture->open_reader());
    QCOMPARE(data->timeline.lanes.size(), full.lanes.size());
    for (std::size_t l = 0; l < full.lanes.size(); ++l) {
      QCOMPARE(data->timeline.lanes[l].title, full.lanes[l].title);
      QCOMPARE(data->timeline.lanes[l].rows.size(), full.lanes[l].rows.size());
    }
    QCOMPARE(data->timeline.begin_ns, full.begin_ns);
    QCOMPARE(data->timeline.end_ns, full.end_ns);
  }

  void bucketsAndRowsReportTheSameCoverage() {
    const auto lodData = openWithTimeline(path_);
    QVERIFY(lodData->timelineLod);
    auto rowData = std::make_shared<CaptureData>();
    rowData->capture = lodData->capture;
    rowData->timeline = analyzer::load_timeline(*lodData->capture->open_reader());

    TimelineWidget lodWidget, rowWidget;
    for (auto* w : {&lodWidget, &rowWidget}) w->resize(1000, 600);
    lodWidget.setWindowItemLimit(0);  // always the stored buckets
    lodWidget.setCapture(lodData);
    rowWidget.setCapture(rowData);
    const auto& lod = *lodData->timelineLod;
    const std::int64_t finest = lod.rows.front().levels.front().bucket_ns;
    const int width = static_cast<int>(rowWidget.coverage(0).size());  // the time area's
    QVERIFY(width > 100);

    // Columns of exactly 8 finest buckets from the first bucket's start: level 1, no partial
    // bucket, so the two must agree exactly. Then columns of 5.37 buckets: partial buckets are
    // taken in proportion, off by at most two buckets' share of a column.
    for (const double bucketsPerColumn : {8.0, 5.37}) {
      const double span = bucketsPerColumn * static_cast<double>(finest) * width;
      for (auto* w : {&lodWidget, &rowWidget}) {
        w->setView(static_cast<double>(lod.begin_ns), static_cast<double>(lod.begin_ns) + span);
      }
      QVERIFY(lodWidget.drawsLevelOfDetail());
      const double tolerance = bucketsPerColumn == 8.0 ? 1e-12 : 2.0 / bucketsPerColumn + 1e-9;
      int compared = 0, partial = 0;
      for (const auto kind : {analyzer::LaneKind::Gpu, analyzer::LaneKind::Api}) {
        for (const std::uint32_t stream : {7U, 8U}) {
          const int lane = laneIndex(rowData->timeline, kind, stream);
          QVERIFY(lane >= 0);
          const auto rows = rowData->timeline.lanes[static_cast<std::size_t>(lane)].rows.size();
          for (int r = 0; r < static_cast<int>(rows); ++r) {
            const auto a = lodWidget.coverage(lane, r), b = rowWidget.coverage(lane, r);
            QCOMPARE(a.size(), b.size());
            for (std::size_t c = 0; c < a.size(); ++c) {
              if (std::abs(a[c] - b[c]) > tolerance) {
                QFAIL(qPrintable(QStringLiteral("lane %1 row %2 column %3: buckets %4, rows %5")
                                     .arg(lane)
                                     .arg(r)
                                     .arg(c)
                                     .arg(a[c])
                                     .arg(b[c])));
              }
              partial += b[c] > 0 && b[c] < 1;
              ++compared;
            }
          }
        }
      }
      QVERIFY(compared > 0);
      QVERIFY(partial > 10);  // columns neither idle nor full: the comparison means something
    }
    // What is drawn: bars from the buckets, no item loaded.
    QImage image(lodWidget.size(), QImage::Format_ARGB32_Premultiplied);
    QPainter p(&image);
    lodWidget.paintTimeline(p, image.rect());
    QVERIFY(lodWidget.lastPaintStats().lodColumns > 0);
    QCOMPARE(lodWidget.lastPaintStats().items, std::int64_t{0});  // nothing loaded to draw
  }

  void zoomedInWindowListsExactlyItsItems() {
    const auto data = openWithTimeline(path_);
    QVERIFY(data->timelineLod);
    TimelineWidget widget;
    widget.resize(1000, 600);
    widget.setWindowItemLimit(400);  // a 3000-kernel capture: zoomed in, a few hundred items
    widget.setCapture(data);
    QVERIFY(widget.drawsLevelOfDetail());  // zoomed out: every item, more than the limit
    const auto begin = data->timeline.begin_ns, end = data->timeline.end_ns;
    for (const double at : {0.1, 0.5, 0.93}) {
      const double mid = static_cast<double>(begin) + at * static_cast<double>(end - begin);
      widget.setView(mid, mid + 5e5);
      QVERIFY(!widget.drawsLevelOfDetail());
      const auto [t0, t1] = widget.loadedWindow();
      QVERIFY(t0 <= static_cast<std::int64_t>(mid) && static_cast<std::int64_t>(mid + 5e5) < t1);
      const auto& t = *widget.timeline();
      // The kernels loaded, per stream, against those written that overlap [t0, t1).
      for (const std::uint32_t stream : {7U, 8U}) {
        std::vector<std::pair<std::int64_t, std::int64_t>> expected, loaded;
        for (const auto& k : kernels_) {
          if (k.stream == stream && k.start < t1 && k.end >= t0)
            expected.push_back({k.start, k.end});
        }
        const int lane = laneIndex(t, analyzer::LaneKind::Gpu, stream);
        QVERIFY(lane >= 0);
        for (const auto& item : t.lanes[static_cast<std::size_t>(lane)].rows[0].items) {
          loaded.push_back({item.start_ns, item.end_ns});
        }
        std::sort(expected.begin(), expected.end());
        QVERIFY(!expected.empty());
        QCOMPARE(loaded, expected);
      }
      std::vector<std::pair<std::int64_t, std::int64_t>> expected, loaded;
      for (const auto& c : calls_) {
        if (c.start < t1 && c.end >= t0) expected.push_back({c.start, c.end});
      }
      const int api = laneIndex(t, analyzer::LaneKind::Api, 0);
      QVERIFY(api >= 0);
      for (const auto& row : t.lanes[static_cast<std::size_t>(api)].rows) {
        for (const auto& item : row.items) loaded.push_back({item.start_ns, item.end_ns});
      }
      std::sort(expected.begin(), expected.end());
      std::sort(loaded.begin(), loaded.end());
      QCOMPARE(loaded, expected);
      // Each kernel's details are its own (the launch call of the same correlation id).
      for (const auto& lane : t.lanes) {
        for (const auto& item :
             lane.rows.empty() ? std::vector<analyzer::TimelineItem>{} : lane.rows[0].items) {
          if (item.kind != analyzer::TimelineItemKind::Kernel) continue;
          const auto context = analyzer::launch_context(t, item);
          if (context.call) QVERIFY(context.call->start_ns < item.start_ns);
        }
      }
    }
    // Back to a window seen before: from the cache, not read again.
    const int loads = widget.windowLoads();
    const double mid = static_cast<double>(begin) + 0.1 * static_cast<double>(end - begin);
    widget.zoomAll();
    QVERIFY(widget.drawsLevelOfDetail());
    widget.setView(mid, mid + 5e5);
    QVERIFY(!widget.drawsLevelOfDetail());
    QCOMPARE(widget.windowLoads(), loads);
  }

  void damagedOrStaleLevelOfDetailFallsBackInOneLine_data() {
    QTest::addColumn<QString>("sql");
    QTest::addColumn<QString>("reason");
    QTest::newRow("stale") << "UPDATE timeline_lod_source SET max_id = max_id - 1 "
                              "WHERE table_name = 'kernel'"
                           << "stale";
    QTest::newRow("NULL blob") << QString::fromLatin1(kUnconstrained) +
                                      "UPDATE timeline_lod SET busy = NULL WHERE level = 1"
                               << "busy is not a blob";
    QTest::newRow("NULL integer") << QString::fromLatin1(kUnconstrained) +
                                         "UPDATE timeline_lod SET bucket_ns = NULL"
                                  << "bucket_ns is not an integer";
    QTest::newRow("text integer") << "UPDATE timeline_lod SET begin_ns = 'soon'"
                                  << "begin_ns is not an integer";
    QTest::newRow("real integer") << "UPDATE timeline_lod SET item_count = 1.5"
                                  << "item_count is not an integer";
    QTest::newRow("short blob") << "UPDATE timeline_lod SET busy = x'0102' WHERE level = 2"
                                << "not a whole number of int64";
    QTest::newRow("blob sizes differ") << "UPDATE timeline_lod SET starts = x'' WHERE level = 0"
                                       << "different bucket counts";
    QTest::newRow("counts do not add up") << "UPDATE timeline_lod SET item_count = item_count + 1"
                                          << "do not add up";
    QTest::newRow("huge count") << "UPDATE timeline_lod SET item_count = 9223372036854775807"
                                << "2^48 items";
    QTest::newRow("negative time") << "UPDATE timeline_lod SET begin_ns = -5"
                                   << "[0, 2^62)";
    QTest::newRow("zero bucket") << "UPDATE timeline_lod SET bucket_ns = 0"
                                 << "not positive";
    QTest::newRow("level missing") << "DELETE FROM timeline_lod WHERE level = 1"
                                   << "levels";
    QTest::newRow("source missing") << "DELETE FROM timeline_lod_source WHERE table_name = 'memset'"
                                    << "lacks memset";
    QTest::newRow("text max_id") << "UPDATE timeline_lod_source SET max_id = 'x'"
                                 << "not an integer";
    QTest::newRow("empty") << "DELETE FROM timeline_lod"
                           << "empty";
    QTest::newRow("older schema") << "DROP TABLE timeline_lod; DROP TABLE timeline_lod_source; "
                                     "PRAGMA user_version = 9"
                                  << "schema version 9";
  }

  void damagedOrStaleLevelOfDetailFallsBackInOneLine() {
    QFETCH(QString, sql);
    QFETCH(QString, reason);
    const auto path = copy("damaged.sqlite");
    exec(path, sql.toStdString());
    {
      const db::Reader reader(path);
      std::string why;
      QVERIFY(!analyzer::load_timeline_lod(reader, &why));
      QVERIFY2(QString::fromStdString(why).contains(reason), why.c_str());
      QVERIFY(why.find('\n') == std::string::npos);
    }
    const auto data = openWithTimeline(path);
    QVERIFY(!data->timelineLod);
    QVERIFY2(data->timelineLodNote.contains(reason), qPrintable(data->timelineLodNote));
    QVERIFY(data->error(Analysis::Timeline).isEmpty());
    // Every item, from the rows: the widget draws them as before.
    QCOMPARE(static_cast<std::size_t>(data->timeline.item_count()),
             kernels_.size() + calls_.size());
    TimelineWidget widget;
    widget.resize(800, 400);
    widget.setCapture(data);
    QVERIFY(!widget.drawsLevelOfDetail());
  }

  void viewInPlaceOfTheTableIsRefusedInOneLine() {
    const auto path = copy("view.sqlite");
    exec(path, "DROP TABLE timeline_lod; CREATE VIEW timeline_lod AS SELECT 0 AS lane_kind");
    try {
      openWithTimeline(path);
      QFAIL("a capture holding a view it does not define was opened");
    } catch (const db::Error& e) {
      const std::string what = e.what();
      QVERIFY2(what.find("timeline_lod") != std::string::npos, e.what());
      QVERIFY(what.find('\n') == std::string::npos);
    }
    // load_timeline_lod alone (a reader that let it through) says it has no tables.
  }

  void storingRefusesOlderCaptures() {
    const auto path = copy("old.sqlite");
    exec(path, "DROP TABLE timeline_lod; DROP TABLE timeline_lod_source; PRAGMA user_version = 8");
    QVERIFY_THROWS_EXCEPTION(db::Error, analyzer::store_timeline_lod(path, 0));
    // A version-9 capture gets the tables and version 10.
    exec(path, "PRAGMA user_version = 9");
    analyzer::store_timeline_lod(path, 0);
    const db::Reader reader(path);
    QCOMPARE(reader.schema_version(), 10);
    QVERIFY(analyzer::load_timeline_lod(reader));
  }

  // A lean capture (prof-analyze convert --layout lean, db/Layout.h): kernel and api_call are
  // views over the lean tables. The level of detail stored from them is the full capture's, its
  // source ids are those of the lean rows, and a kernel added to kernel_lean makes it stale.
  void leanCaptureGivesTheSameLevelOfDetail() {
    const auto lean = dir_.file("lean.sqlite");
    QFile::remove(QString::fromStdString(lean));
    db::convert_to_lean(path_, lean);
    exec(lean, "DELETE FROM timeline_lod; DELETE FROM timeline_lod_source");
    analyzer::store_timeline_lod(lean, 0);
    std::string why;
    const auto full = analyzer::load_timeline_lod(db::Reader(path_), &why);
    QVERIFY2(full, why.c_str());
    {
      const db::Reader reader(lean);
      QVERIFY(reader.lean());
      const auto stored = analyzer::load_timeline_lod(reader, &why);
      QVERIFY2(stored, why.c_str());
      QCOMPARE(stored->begin_ns, full->begin_ns);
      QCOMPARE(stored->rows.size(), full->rows.size());
      for (std::size_t r = 0; r < full->rows.size(); ++r) {
        const auto &a = stored->rows[r], &b = full->rows[r];
        QCOMPARE(a.item_count, b.item_count);
        QCOMPARE(a.first_ns, b.first_ns);
        QCOMPARE(a.last_ns, b.last_ns);
        QCOMPARE(a.levels.size(), b.levels.size());
        for (std::size_t l = 0; l < b.levels.size(); ++l) {
          QVERIFY(a.levels[l].busy_before == b.levels[l].busy_before);
          QVERIFY(a.levels[l].starts_before == b.levels[l].starts_before);
        }
      }
    }
    exec(lean,
         "INSERT INTO kernel_lean SELECT id + 1000000, config_id, correlation_delta - 1000000, "
         "start_ns, duration_ns, graph_id, graph_node_id FROM kernel_lean ORDER BY id DESC "
         "LIMIT 1");
    QVERIFY(!analyzer::load_timeline_lod(db::Reader(lean), &why));
    QVERIFY2(QString::fromStdString(why).contains("stale"), why.c_str());
  }

  // synthetic_capture --store-aggregates and prof-run store the analyses' results before the
  // level of detail; on a version-9 capture that adds every version-10 table (schema.sql) and
  // keeps version 9, so the level of detail stored next must be used with the version unchanged.
  void levelOfDetailOfAVersion9CaptureWithTheTablesIsUsed() {
    const auto path = copy("v9.sqlite");
    exec(path, "PRAGMA user_version = 9");
    analyzer::store_timeline_lod(path, 0);
    const db::Reader reader(path);
    QCOMPARE(reader.schema_version(), 9);
    QVERIFY(analyzer::has_timeline_lod(reader));
    std::string why;
    QVERIFY2(analyzer::load_timeline_lod(reader, &why), why.c_str());
  }
};

QTEST_MAIN(TestTimelineLod)
#include "tst_timelinelod.moc"
