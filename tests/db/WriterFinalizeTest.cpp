// Writer::finalize / finalize_capture: its progress steps, leaving WAL mode before the indexes,
// and a finalize killed midway leaving the capture as last committed.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "TempDir.h"
#include "fuselens/db/CaptureIndexes.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/Sqlite.h"
#include "fuselens/db/Writer.h"

using namespace fuselens::db;

namespace {

// A capture of `kernels` kernels with their launch calls, written and closed, not finalized.
void write_capture(const std::string& path, int kernels,
                   IndexBuild indexes = IndexBuild::AtFinalize,
                   TraceLayout layout = TraceLayout::Full) {
  auto w = Writer::create(path, RunInfo{}, layout, indexes);
  RecordBatch b;
  for (int i = 1; i <= kernels; ++i) {
    KernelRecord k;
    k.pid = 7;
    k.correlation_id = static_cast<std::uint32_t>(i);
    k.start_ns = 1000ull * static_cast<std::uint64_t>(i);
    k.end_ns = k.start_ns + 500;
    k.stream_id = static_cast<std::uint32_t>(i % 4);
    k.mangled_name = "_Z1kILi" + std::to_string(i % 50) + "EEvv";
    b.kernels.push_back(k);
    ApiCallRecord a;
    a.pid = 7;
    a.tid = 7;
    a.name = "cudaLaunchKernel";
    a.correlation_id = k.correlation_id;
    a.start_ns = k.start_ns - 300;
    a.end_ns = k.start_ns - 100;
    b.api_calls.push_back(a);
  }
  w.write(b);
}

// The capture's indexes (by name), as sqlite_master lists them.
std::vector<std::string> index_names(const std::string& path) {
  Connection db(path, Connection::Mode::ReadOnly);
  auto query = db.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name");
  std::vector<std::string> names;
  while (query.step()) names.push_back(query.text(0));
  return names;
}

// Runs `body` in a child process and returns its exit status (-1 when it did not exit): `body`
// ends the child itself (_exit) where the test means to kill it; returning or throwing gives 3.
int exit_status_of_child(const std::function<void()>& body) {
  const pid_t child = ::fork();
  if (child < 0) return -1;
  if (child == 0) {
    try {
      body();
    } catch (...) {
    }
    ::_exit(3);
  }
  int status = 0;
  if (::waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// Every row of every index of the capture, read through the index (INDEXED BY), as text.
std::string index_contents(const std::string& path) {
  Connection db(path, Connection::Mode::ReadOnly);
  std::string out;
  for (std::size_t i = 0; i < capture_index_count(); ++i) {
    const IndexDefinition& index = capture_index(i);
    const std::string sql = index.sql;
    const std::string columns = sql.substr(sql.find('(') + 1, sql.rfind(')') - sql.find('(') - 1);
    auto rows = db.prepare("SELECT rowid, " + columns + " FROM " + index.table + " INDEXED BY " +
                           index.name + " ORDER BY " + columns + ", rowid");
    const auto column_count = 2 + std::count(columns.begin(), columns.end(), ',');
    out += index.name + std::string(":");
    while (rows.step()) {
      for (int c = 0; c < column_count; ++c) out += " " + rows.text(c);
      out += ';';
    }
    out += '\n';
  }
  return out;
}

}  // namespace

// prof-run's captures keep their indexes while the collector writes (CaptureIndexes.h): they
// exist from creation, every write keeps them, finalize builds none (its index steps find them)
// and the capture ends with the same indexes holding the same entries as one indexed at the end.
TEST(WriterFinalize, IndexesKeptWhileWritingEqualThoseBuiltAtTheEnd) {
  fuselens::test::TempDir dir;
  const auto live = dir.file("live.sqlite");
  const auto end = dir.file("end.sqlite");
  { Writer::create(live, RunInfo{}, TraceLayout::Full, IndexBuild::WhileWriting); }
  EXPECT_EQ(index_names(live).size(), capture_index_count());
  std::filesystem::remove(live);
  write_capture(live, 3000, IndexBuild::WhileWriting);
  write_capture(end, 3000, IndexBuild::AtFinalize);
  EXPECT_EQ(index_names(live).size(), capture_index_count());
  EXPECT_TRUE(index_names(end).empty());
  for (const auto& path : {live, end}) {
    Writer::open(path).finalize({EndReason::Exited, 0, std::nullopt, 5});
  }
  EXPECT_EQ(index_names(live), index_names(end));
  const std::string contents = index_contents(live);
  EXPECT_NE(contents.find("kernel_by_name: "), std::string::npos);  // rows, not empty indexes
  EXPECT_EQ(contents, index_contents(end));
  Connection db(live, Connection::Mode::ReadOnly);
  auto check = db.prepare("PRAGMA integrity_check");
  ASSERT_TRUE(check.step());
  EXPECT_EQ(check.text(0), "ok");
}

// A writer that falls behind drops the live indexes (CaptureWriter); finalize builds them again.
// A lean capture's kernel and api_call are views: none of theirs is created, the others are.
TEST(WriterFinalize, DroppedLiveIndexesAreBuiltAtTheEndAndLeanViewsHaveNone) {
  fuselens::test::TempDir dir;
  const auto path = dir.file("a.sqlite");
  write_capture(path, 500, IndexBuild::WhileWriting);
  {
    auto w = Writer::open(path);
    EXPECT_EQ(w.drop_indexes(), static_cast<int>(capture_index_count()));
    EXPECT_EQ(w.drop_indexes(), 0);
    RecordBatch b;
    KernelRecord k;
    k.pid = 7;
    k.correlation_id = 9999;
    k.start_ns = 10'000'000;
    k.end_ns = 10'000'500;
    k.mangled_name = "_Z4lastv";
    b.kernels.push_back(k);
    w.write(b);  // the writer's statements go on after the schema changed
    EXPECT_TRUE(index_names(path).empty());
    w.finalize({EndReason::Exited, 0, std::nullopt, 5});
  }
  EXPECT_EQ(index_names(path).size(), capture_index_count());
  Reader reader(path);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM kernel INDEXED BY kernel_by_name"), 501);

  const auto lean = dir.file("lean.sqlite");
  write_capture(lean, 100, IndexBuild::WhileWriting, TraceLayout::Lean);
  const auto names = index_names(lean);
  for (const char* full_only : {"kernel_by_correlation", "kernel_by_start", "kernel_by_name",
                                "api_by_correlation", "api_by_name", "api_by_thread"}) {
    EXPECT_EQ(std::count(names.begin(), names.end(), full_only), 0) << full_only;
  }
  EXPECT_EQ(std::count(names.begin(), names.end(), "nvtx_by_thread"), 1);
  Writer::open(lean).finalize({EndReason::Exited, 0, std::nullopt, 5});
  EXPECT_EQ(Reader(lean).query_int("SELECT COUNT(*) FROM kernel"), 100);
}

TEST(WriterFinalize, ReportsEachStepInOrderAndLeavesWalBeforeTheIndexes) {
  fuselens::test::TempDir dir;
  const auto path = dir.file("a.sqlite");
  write_capture(path, 100);
  std::vector<std::string> steps;
  std::vector<int> numbers;
  int total = 0;
  bool wal_during_indexes = false;
  Writer::open(path).finalize(
      {EndReason::Exited, 0, std::nullopt, 5}, [&](const FinalizeProgress& p) {
        steps.emplace_back(p.step);
        numbers.push_back(p.number);
        total = p.steps;
        if (steps.back().rfind("index ", 0) == 0 && std::filesystem::exists(path + "-wal"))
          wal_during_indexes = true;
      });
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(static_cast<int>(steps.size()), total);
  for (std::size_t i = 0; i < numbers.size(); ++i) EXPECT_EQ(numbers[i], static_cast<int>(i) + 1);
  EXPECT_EQ(steps.front(), "checkpoint");
  EXPECT_EQ(steps.back(), "journal");
  // One step per index, and every index the capture ends with had its step.
  Reader reader(path);
  auto indexes = reader.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name");
  int count = 0;
  while (indexes.step()) {
    ++count;
    EXPECT_NE(std::find(steps.begin(), steps.end(), "index " + indexes.text(0)), steps.end())
        << indexes.text(0);
  }
  EXPECT_EQ(count, static_cast<int>(std::count_if(steps.begin(), steps.end(), [](const auto& s) {
              return s.rfind("index ", 0) == 0;
            })));
  EXPECT_FALSE(wal_during_indexes);  // the index pages went to the file once
  EXPECT_EQ(reader.run().end.reason, EndReason::Exited);
}

TEST(WriterFinalize, FinalizeKilledMidwayLeavesTheCaptureAsLastCommitted) {
  fuselens::test::TempDir dir;
  const auto path = dir.file("a.sqlite");
  constexpr int kKernels = 20000;
  write_capture(path, kKernels);
  // A tiny page cache makes SQLite write pages of the unfinished transaction into the file
  // before the kill, the case a rollback must undo. 3: finalize ended without reaching the step.
  ASSERT_EQ(exit_status_of_child([&] {
              Connection connection(path, Connection::Mode::ReadWrite);
              connection.exec("PRAGMA cache_size = 4");
              finalize_capture(connection, {EndReason::Exited, 0, std::nullopt, 5},
                               [](const FinalizeProgress& p) {
                                 if (p.step == "index api_by_name") ::_exit(9);
                               });
            }),
            9);
  {
    Reader reader(path);  // the hot journal is rolled back on open (writable folder)
    EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM kernel"), kKernels);
    EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM api_call"), kKernels);
    EXPECT_EQ(reader.run().end.reason, EndReason::NotFinalized);
    EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND "
                               "name = 'kernel_by_correlation'"),
              0);
    auto check = reader.prepare("PRAGMA integrity_check");
    ASSERT_TRUE(check.step());
    EXPECT_EQ(check.text(0), "ok");
  }
  // Finalizing again completes it.
  Connection connection(path, Connection::Mode::ReadWrite);
  finalize_capture(connection, {EndReason::Exited, 0, std::nullopt, 5});
  Reader reader(path);
  EXPECT_EQ(reader.run().end.reason, EndReason::Exited);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM kernel"), kKernels);
}

// prof-run's finalization in parts (begin_finalize, the indexes one transaction each,
// end_finalize): a reader opened between two index builds reads every row and sees the run not
// finalized; killed after two indexes, the capture keeps them, every record and the run not
// finalized; finished, it is one file with every index and the run's end.
TEST(WriterFinalize, AFinalizationInPartsWritesTheRunsEndLast) {
  fuselens::test::TempDir dir;
  const auto path = dir.file("a.sqlite");
  constexpr int kKernels = 20000;
  write_capture(path, kKernels);
  ASSERT_EQ(exit_status_of_child([&] {
              Connection connection(path, Connection::Mode::ReadWrite);
              begin_finalize(connection);
              for (std::size_t i = 0; i < 2; ++i) {
                in_transaction(connection,
                               [&] { create_capture_index(connection, capture_index(i)); });
                Reader reader(path);  // beside the writer (WAL mode)
                if (reader.query_int("SELECT COUNT(*) FROM kernel") != kKernels ||
                    reader.run().end.reason != EndReason::NotFinalized) {
                  ::_exit(4);
                }
              }
              ::_exit(9);  // killed after two indexes
            }),
            9);
  {
    Reader reader(path);
    EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM kernel"), kKernels);
    EXPECT_EQ(reader.run().end.reason, EndReason::NotFinalized);
    const auto names = index_names(path);
    EXPECT_EQ(std::count(names.begin(), names.end(), capture_index(0).name), 1);
    EXPECT_EQ(std::count(names.begin(), names.end(), capture_index(1).name), 1);
    EXPECT_EQ(std::count(names.begin(), names.end(), capture_index(2).name), 0);
    auto check = reader.prepare("PRAGMA integrity_check");
    ASSERT_TRUE(check.step());
    EXPECT_EQ(check.text(0), "ok");
  }
  {
    Connection connection(path, Connection::Mode::ReadWrite);
    begin_finalize(connection);
    for (std::size_t i = 0; i < capture_index_count(); ++i) {
      in_transaction(connection, [&] { create_capture_index(connection, capture_index(i)); });
    }
    end_finalize(connection, {EndReason::Exited, 0, std::nullopt, 5});
    auto mode = connection.prepare("PRAGMA journal_mode");
    ASSERT_TRUE(mode.step());
    EXPECT_EQ(mode.text(0), "delete");
  }
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  EXPECT_EQ(index_names(path).size(), capture_index_count());
  Reader reader(path);
  EXPECT_EQ(reader.run().end.reason, EndReason::Exited);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM kernel"), kKernels);
}
