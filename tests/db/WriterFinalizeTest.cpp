// Writer::finalize / finalize_capture: its progress steps, leaving WAL mode before the indexes,
// and a finalize killed midway leaving the capture as last committed.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "TempDir.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/Sqlite.h"
#include "fuselens/db/Writer.h"

using namespace fuselens::db;

namespace {

// A capture of `kernels` kernels with their launch calls, written and closed, not finalized.
void write_capture(const std::string& path, int kernels) {
  auto w = Writer::create(path, RunInfo{});
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

}  // namespace

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
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // A tiny page cache makes SQLite write pages of the unfinished transaction into the file
    // before the kill, the case a rollback must undo.
    try {
      Connection connection(path, Connection::Mode::ReadWrite);
      connection.exec("PRAGMA cache_size = 4");
      finalize_capture(connection, {EndReason::Exited, 0, std::nullopt, 5},
                       [](const FinalizeProgress& p) {
                         if (p.step == "index api_by_name") ::_exit(9);
                       });
    } catch (...) {
    }
    ::_exit(3);  // finalize ended without reaching the step: the test fails below
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 9);
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
