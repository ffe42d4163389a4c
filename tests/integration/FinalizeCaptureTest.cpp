// prof-run's finalization (tools/prof-run/FinalizeCapture.h) without a GPU: the results it
// stores when the run ends, computed at once on connections of their own, equal those the stores
// compute one after another (the order prof-run used before: summary aggregates, steps, cct and
// flags, the timeline's level of detail).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <string>

#include "FinalizeCapture.h"
#include "TempDir.h"
#include "fuselens/db/ActivityCursors.h"
#include "fuselens/db/CaptureIndexes.h"
#include "fuselens/db/Layout.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/Sqlite.h"
#include "fuselens/db/Writer.h"
#include "steps/Steps.h"
#include "store/AnalysisStore.h"
#include "summary/SummaryStore.h"
#include "timeline/TimelineLod.h"

namespace db = fuselens::db;
namespace fs = std::filesystem;

namespace {

const db::RunEnd kEnd{db::EndReason::Exited, 0, std::nullopt, 5};

// Every row of every table of the capture, table by table in name order, rows in rowid (or key)
// order, as text.
std::string dump(const std::string& path) {
  db::Connection c(path, db::Connection::Mode::ReadOnly);
  std::string out;
  auto tables = c.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
      "ORDER BY name");
  while (tables.step()) {
    const std::string table = tables.text(0);
    out += "== " + table + '\n';
    sqlite3_stmt* rows = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(c.handle(), ("SELECT * FROM main.\"" + table + '"').c_str(), -1,
                                 &rows, nullptr),
              SQLITE_OK);
    while (sqlite3_step(rows) == SQLITE_ROW) {
      for (int i = 0; i < sqlite3_column_count(rows); ++i) {
        const unsigned char* text = sqlite3_column_text(rows, i);
        out += text ? reinterpret_cast<const char*>(text) : "NULL";
        out += '|';
      }
      out += '\n';
    }
    sqlite3_finalize(rows);
  }
  return out;
}

// What prof-run stored before its results were computed at once, one store after another.
void finalize_one_after_another(const std::string& path) {
  {
    db::Connection c(path, db::Connection::Mode::ReadWrite);
    db::finalize_capture(c, kEnd);
  }
  fuselens::analyzer::store_summary_aggregates(path);
  {
    db::Reader reader(db::Connection(path, db::Connection::Mode::ReadWrite),
                      db::TimestampCheck::DeferLargeTables);
    fuselens::analyzer::store_steps(reader);
    if (reader.gpu_record_count() > fuselens::analyzer::kMaxStoredAnalysisRecords) {
      fuselens::analyzer::store_bounded_analyses(reader);
    } else {
      fuselens::analyzer::store_analyses(reader);
    }
  }
  fuselens::analyzer::store_timeline_lod(path);
}

void expect_same_results(const std::string& original, const fuselens::test::TempDir& dir) {
  const std::string a = dir.file("one_after_another.sqlite");
  const std::string b = dir.file("at_once.sqlite");
  fs::copy_file(original, a);
  fs::copy_file(original, b);
  finalize_one_after_another(a);
  ASSERT_TRUE(fuselens::tools::finalize_capture(b, kEnd, /*metrics=*/false));
  const std::string at_once = dump(b);
  EXPECT_NE(at_once.find("== stored_analysis\n"), std::string::npos);
  EXPECT_EQ(at_once, dump(a));
}

}  // namespace

// A real PyTorch training capture: NVTX steps, calling contexts, cct and flags stored.
TEST(FinalizeCapture, ResultsComputedAtOnceEqualThoseStoredOneAfterAnother) {
  fuselens::test::TempDir dir;
  expect_same_results(std::string(FUSELENS_TEST_DATA_DIR) + "/train_steps.sqlite", dir);
}

// The same capture without its indexes: prof-run builds them while it computes the results (on
// other connections, the summary's aggregates once their indexes are built), and the capture
// ends with every index, out of WAL mode.
TEST(FinalizeCapture, ResultsComputedWhileTheIndexesAreBuiltEqualThoseAfterThem) {
  fuselens::test::TempDir dir;
  const std::string original = dir.file("no_indexes.sqlite");
  fs::copy_file(std::string(FUSELENS_TEST_DATA_DIR) + "/train_steps.sqlite", original);
  {
    db::Connection c(original, db::Connection::Mode::ReadWrite);
    ASSERT_EQ(static_cast<std::size_t>(db::drop_capture_indexes(c)), db::capture_index_count());
  }
  expect_same_results(original, dir);
  const std::string b = dir.file("at_once.sqlite");
  db::Connection c(b, db::Connection::Mode::ReadOnly);
  EXPECT_EQ(static_cast<std::size_t>(
                c.query_int("SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND sql IS "
                            "NOT NULL")),
            db::capture_index_count());
  auto mode = c.prepare("PRAGMA journal_mode");
  ASSERT_TRUE(mode.step());
  EXPECT_EQ(mode.text(0), "delete");
  EXPECT_FALSE(fs::exists(b + "-wal"));
}

namespace {

// Enough launches for the timeline's level of detail (kLodMinItems), written in `layout` as the
// collector does (indexes kept while writing), not finalized; with `swapped`, launch 1000's
// kernel and call written after launch 1001's (as two streams' or threads' buffers interleave).
void write_launches(const std::string& path, db::TraceLayout layout, bool swapped = false) {
  auto w = db::Writer::create(path, db::RunInfo{}, layout, db::IndexBuild::WhileWriting);
  db::RecordBatch b;
  const std::int64_t launches = fuselens::analyzer::kLodMinItems / 2 + 1000;
  for (std::int64_t n = 1; n <= launches; ++n) {
    const std::int64_t i = !swapped || (n != 1000 && n != 1001) ? n : 2001 - n;
    db::KernelRecord k;
    k.pid = 7;
    k.correlation_id = static_cast<std::uint32_t>(i);
    k.start_ns = 1'000'000 + 2000ull * static_cast<std::uint64_t>(i);
    k.end_ns = k.start_ns + 700 + static_cast<std::uint64_t>(i % 13) * 50;
    k.stream_id = 7;
    k.mangled_name = "_Z6kernelILi" + std::to_string(i % 4) + "EEvv";  // a step of 4 kernels
    b.kernels.push_back(k);
    db::ApiCallRecord a;
    a.pid = 7;
    a.tid = 7;
    a.name = "cudaLaunchKernel";
    a.correlation_id = k.correlation_id;
    a.start_ns = k.start_ns - 900;
    a.end_ns = k.start_ns - 200;
    b.api_calls.push_back(a);
  }
  w.write(b);
}

}  // namespace

TEST(FinalizeCapture, ALevelOfDetailIsStoredTheSameToo) {
  fuselens::test::TempDir dir;
  const std::string path = dir.file("launches.sqlite");
  write_launches(path, db::TraceLayout::Full);
  expect_same_results(path, dir);
  db::Reader reader(dir.file("at_once.sqlite"));
  EXPECT_GT(reader.query_int("SELECT COUNT(*) FROM timeline_lod"), 0);
}

// A lean capture's kernel and api_call are views without indexes (Layout.h): the summary's
// aggregates, which wait for api_by_correlation and the name indexes, run all the same, and the
// results equal those stored one after another.
TEST(FinalizeCapture, ALeanCaptureStoresTheSameResultsWithoutItsViewsIndexes) {
  fuselens::test::TempDir dir;
  const std::string path = dir.file("lean.sqlite");
  write_launches(path, db::TraceLayout::Lean);
  expect_same_results(path, dir);
  db::Reader reader(dir.file("at_once.sqlite"));
  EXPECT_GT(reader.query_int("SELECT COUNT(*) FROM summary_duration"), 0);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = "
                             "'api_by_correlation'"),
            0);
}

// Written out of correlation order, a lean capture's results that read its kernels and calls by
// id (Reader::read_lean_by_id) find it out and are computed again with SQLite sorting: the same
// results as stored one after another (which read them sorted), none missing.
TEST(FinalizeCapture, ALeanCaptureWrittenOutOfOrderStoresTheSameResults) {
  fuselens::test::TempDir dir;
  const std::string path = dir.file("lean.sqlite");
  write_launches(path, db::TraceLayout::Lean, /*swapped=*/true);
  {
    db::Reader reader(path);
    reader.read_lean_by_id(true);
    auto calls = db::api_calls_by_start(reader);
    EXPECT_THROW(while (calls.next()){}, db::OrderBroken);
  }
  expect_same_results(path, dir);
  const std::string stored = dir.file("at_once.sqlite");
  for (const char* analysis : {"flags", "nvtx_ranges", "extent"}) {
    db::Connection c(stored, db::Connection::Mode::ReadOnly);
    auto s = c.prepare("SELECT COUNT(*) FROM stored_analysis WHERE analysis = ?");
    s.bind(1, analysis);
    ASSERT_TRUE(s.step());
    EXPECT_EQ(s.int64(0), 1) << analysis;
  }
}

namespace {

// The body of the stored result `analysis`, or "" when none is stored.
std::string stored_body(const std::string& path, const std::string& analysis) {
  db::Connection c(path, db::Connection::Mode::ReadOnly);
  auto s = c.prepare("SELECT body FROM stored_analysis WHERE analysis = ?");
  s.bind(1, analysis);
  return s.step() ? s.text(0) : std::string();
}

}  // namespace

// Above the record bound (kMaxStoredAnalysisRecords; here lowered to one record) cct is stored
// only when its groups stream, and flags when the memory allows (analyzer::flags_fit): then the
// same flags result as under the bound; else none, and one line says why.
TEST(FinalizeCapture, FlagsAreStoredAboveTheRecordBoundWhenTheMemoryAllows) {
  fuselens::test::TempDir dir;
  const std::string original = std::string(FUSELENS_TEST_DATA_DIR) + "/train_steps.sqlite";
  const std::string under = dir.file("under.sqlite"), above = dir.file("above.sqlite"),
                    short_of_memory = dir.file("short.sqlite");
  for (const auto& p : {under, above, short_of_memory}) fs::copy_file(original, p);
  ASSERT_TRUE(fuselens::tools::finalize_capture(under, kEnd, false));
  ASSERT_TRUE(fuselens::tools::finalize_capture(above, kEnd, false, {1, std::int64_t{1} << 40}));
  testing::internal::CaptureStderr();
  ASSERT_TRUE(fuselens::tools::finalize_capture(short_of_memory, kEnd, false, {1, 1 << 20}));
  const std::string said = testing::internal::GetCapturedStderr();
  const std::string flags = stored_body(under, "flags");
  EXPECT_NE(flags.find("\"hits\""), std::string::npos);
  EXPECT_TRUE(stored_body(above, "flags") == flags);
  EXPECT_TRUE(stored_body(short_of_memory, "flags").empty());
  EXPECT_FALSE(stored_body(short_of_memory, "extent").empty());
  EXPECT_NE(said.find("flags results not stored: "), std::string::npos) << said;
  EXPECT_NE(said.find("GPU records, more than 1, and flags would hold about "), std::string::npos)
      << said;
  EXPECT_NE(said.find(" MB where 1.049 MB are available (they will read every row)\n"),
            std::string::npos)
      << said;
}

// The kernel and api_call timestamps are checked once, by one reader whose twins the results
// read through (FinalizeCapture.cpp, kTimesChecked): a capture with an implausible kernel time
// stores none of the results that read kernels, each saying why in the check's words (naming the
// row), and still ends with its indexes and its run's end.
TEST(FinalizeCapture, AnImplausibleKernelTimeStopsEachResultWithTheChecksMessage) {
  fuselens::test::TempDir dir;
  const std::string path = dir.file("damaged.sqlite");
  write_launches(path, db::TraceLayout::Full);
  {
    db::Connection c(path, db::Connection::Mode::ReadWrite);
    c.exec("UPDATE kernel SET end_ns = start_ns - 1 WHERE rowid = 77");
  }
  testing::internal::CaptureStderr();
  fuselens::tools::finalize_capture(path, kEnd, /*metrics=*/false);
  const std::string said = testing::internal::GetCapturedStderr();
  const std::string check = "holds an implausible timestamp: kernel row 77 has start_ns ";
  for (const char* result : {"summary aggregates not stored", "cct results not stored",
                             "timeline level of detail not stored"}) {
    const auto at = said.find(result);
    ASSERT_NE(at, std::string::npos) << result << '\n' << said;
    EXPECT_NE(said.substr(at, said.find('\n', at) - at).find(check), std::string::npos)
        << result << '\n'
        << said;
  }
  db::Connection c(path, db::Connection::Mode::ReadOnly);
  EXPECT_EQ(static_cast<std::size_t>(c.query_int(
                "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")),
            db::capture_index_count());
  EXPECT_EQ(c.query_int("SELECT end_reason FROM run"), static_cast<int>(kEnd.reason));
  EXPECT_EQ(c.query_int("SELECT COUNT(*) FROM stored_analysis WHERE analysis = 'cct'"), 0);
}

// Above the record bound a lean capture's cct is stored too (its groups stream: SQLite's sorter
// orders the lean views by correlation id), the same as under the bound (in memory).
TEST(FinalizeCapture, ALeanCapturesCctIsStoredAboveTheRecordBoundToo) {
  fuselens::test::TempDir dir;
  const std::string under = dir.file("under.sqlite"), above = dir.file("above.sqlite");
  const std::string original = std::string(FUSELENS_TEST_DATA_DIR) + "/step_loop.sqlite";
  db::convert_to_lean(original, under);
  fs::copy_file(under, above);
  ASSERT_TRUE(fuselens::tools::finalize_capture(under, kEnd, false));
  testing::internal::CaptureStderr();
  ASSERT_TRUE(fuselens::tools::finalize_capture(above, kEnd, false, {1, std::int64_t{1} << 40}));
  const std::string said = testing::internal::GetCapturedStderr();
  const std::string cct = stored_body(under, "cct");
  EXPECT_NE(cct.find("\"label\":\"<gpu kernel> "), std::string::npos) << cct.substr(0, 200);
  EXPECT_TRUE(stored_body(above, "cct") == cct);
  EXPECT_EQ(said.find("cct results not stored"), std::string::npos) << said;
}
