#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "TempDir.h"
#include "fuselens/db/Layout.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/Writer.h"

using namespace fuselens::db;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string error_of(const std::string& path) {
  try {
    Reader reader(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

void make_capture(const std::string& path) {
  RunInfo run;
  run.command_line = {"x"};
  auto w = Writer::create(path, run);
  w.finalize({EndReason::Exited, 0, std::nullopt, 1});
}

void raw_exec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
}

}  // namespace

TEST(Reader, RefusesAMissingFile) {
  const auto message = error_of("/nonexistent/capture.sqlite");
  EXPECT_NE(message.find("no such file"), std::string::npos) << message;
}

TEST(Reader, RefusesAnEmptyFile) {
  fuselens::test::TempDir dir;
  std::ofstream(dir.file("empty.sqlite")).close();
  EXPECT_NE(error_of(dir.file("empty.sqlite")).find("empty"), std::string::npos);
}

TEST(Reader, RefusesAFileThatIsNotSqlite) {
  fuselens::test::TempDir dir;
  std::ofstream(dir.file("text.sqlite")) << std::string(4096, 'x');
  EXPECT_NE(error_of(dir.file("text.sqlite")).find("not a FuseLens capture"), std::string::npos);
}

TEST(Reader, RefusesAnotherProgramsDatabase) {
  fuselens::test::TempDir dir;
  raw_exec(dir.file("other.sqlite"), "CREATE TABLE t(x); INSERT INTO t VALUES(1);");
  EXPECT_NE(error_of(dir.file("other.sqlite")).find("not a FuseLens capture"), std::string::npos);
}

TEST(Reader, RefusesANewerSchemaNamingBothVersions) {
  fuselens::test::TempDir dir;
  const auto path = dir.file("new.sqlite");
  make_capture(path);
  raw_exec(path, "PRAGMA user_version = " + std::to_string(kSchemaVersion + 1));
  const auto message = error_of(path);
  EXPECT_NE(message.find("schema version " + std::to_string(kSchemaVersion + 1)), std::string::npos)
      << message;
  EXPECT_NE(message.find("up to version " + std::to_string(kSchemaVersion)), std::string::npos)
      << message;
}

TEST(Reader, RefusesACaptureWithoutItsRunRow) {
  fuselens::test::TempDir dir;
  const auto path = dir.file("norun.sqlite");
  make_capture(path);
  raw_exec(path, "DELETE FROM run");
  EXPECT_NE(error_of(path).find("no run record"), std::string::npos);
}

TEST(Reader, RefusesATruncatedCapture) {
  fuselens::test::TempDir dir;
  const auto path = dir.file("cut.sqlite");
  make_capture(path);
  std::filesystem::resize_file(path, 1000);
  EXPECT_FALSE(error_of(path).empty());
}

TEST(Reader, NeverChangesTheFile) {
  fuselens::test::TempDir dir;
  const auto path = dir.file("a.sqlite");
  make_capture(path);
  const auto before = slurp(path);
  std::filesystem::permissions(path, std::filesystem::perms::owner_read);
  {
    Reader reader(path);
    reader.run();
    reader.processes();
    reader.devices();
    EXPECT_EQ(reader.gpu_record_count(), 0);
  }
  EXPECT_EQ(slurp(path), before);
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
}

TEST(Reader, ReadsVersionOneCapturesWithoutTheirLaterTables) {
  // The committed H100 captures were written with schema version 1.
  Reader reader(std::string(FUSELENS_TEST_DATA_DIR) + "/fusion_bench_schema_v1.sqlite");
  EXPECT_EQ(reader.schema_version(), 1);
  EXPECT_TRUE(reader.has_table("kernel"));
  EXPECT_FALSE(reader.has_table("cct_node"));
  EXPECT_GT(reader.query_int("SELECT COUNT(*) FROM kernel"), 0);
}

TEST(Reader, ReadsVersionTwoCapturesWithoutKernelArguments) {
  // Version 3 added kernel_arg; the committed version-2 captures lack it and still read.
  Reader reader(std::string(FUSELENS_TEST_DATA_DIR) + "/fusion_bench.sqlite");
  EXPECT_EQ(reader.schema_version(), 2);
  EXPECT_TRUE(reader.has_table("api_context"));
  EXPECT_FALSE(reader.has_table("kernel_arg"));
}

// prof-run killed (SIGKILL) while its workload wrote: the capture is left in WAL mode, its -wal and
// -shm files beside it, its run row never finalized. It still opens, read-only, with every
// committed record, and says it was not finalized.
TEST(Reader, OpensACaptureWhoseWritersWereKilledMidRun) {
  fuselens::test::TempDir dir;
  const auto path = dir.file("killed.sqlite");
  RunInfo run;
  run.command_line = {"x"};
  { Writer::create(path, run); }
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    try {
      auto* w = new Writer(Writer::open(path));  // never closed: the process dies holding it
      ProcessInfo process;
      process.pid = static_cast<std::uint32_t>(::getpid());
      process.executable = "victim";
      w->write_process(process);
      RecordBatch batch;
      for (std::uint32_t i = 0; i < 25; ++i) {
        KernelRecord k;
        k.pid = process.pid;
        k.start_ns = 100 + i;
        k.end_ns = 200 + i;
        k.correlation_id = i;
        k.mangled_name = "victim_kernel";
        batch.kernels.push_back(k);
      }
      w->write(batch);
    } catch (...) {
      ::_exit(1);
    }
    ::kill(::getpid(), SIGKILL);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  ASSERT_TRUE(std::filesystem::exists(path + "-wal"));  // the state a killed writer leaves
  const auto before = slurp(path);
  Reader reader(path);
  const RunSummary summary = reader.run();
  EXPECT_EQ(summary.end.reason, EndReason::NotFinalized);
  EXPECT_EQ(summary.end.end_utc_ns, 0u);
  EXPECT_EQ(summary.cuda_processes, 1);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM kernel"), 25);
  ASSERT_EQ(reader.processes().size(), 1u);
  EXPECT_FALSE(reader.processes()[0].end_utc_ns.has_value());  // its collector never flushed
  EXPECT_EQ(slurp(path), before);  // read, not repaired
}

namespace {

std::string prepare_error(const Reader& reader, const std::string& sql) {
  try {
    reader.prepare(sql);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// TimestampCheck::DeferLargeTables: the kernel and api_call checks run where a statement first
// reads those tables' times, whoever prepares it (an SQLite authorizer watches the reads), not
// when it reads only names, ids or counts; once failed, every later read of their times fails.
TEST(Reader, DeferredTimestampChecksRunWhereTheTimesAreRead) {
  fuselens::test::TempDir dir;
  const std::string full = dir.file("damaged.sqlite"), lean = dir.file("lean.sqlite");
  {
    std::ofstream(full, std::ios::binary)
        << slurp(std::string(FUSELENS_TEST_DATA_DIR) + "/step_loop.sqlite");
  }
  convert_to_lean(full, lean);
  raw_exec(full, "UPDATE kernel SET end_ns = start_ns - 1 WHERE id = 7");
  raw_exec(lean, "UPDATE kernel_lean SET duration_ns = -5 WHERE id = 7");
  for (const std::string& path : {full, lean}) {
    EXPECT_NE(error_of(path).find("implausible timestamp: kernel row 7"), std::string::npos)
        << path;
    const Reader reader(path, TimestampCheck::DeferLargeTables);
    EXPECT_GT(reader.query_int("SELECT COUNT(*) FROM kernel"), 0) << path;
    EXPECT_EQ(prepare_error(reader, "SELECT short_name_id, correlation_id FROM kernel"), "")
        << path;
    EXPECT_EQ(prepare_error(reader, "SELECT start_ns, end_ns FROM api_call"), "") << path;
    EXPECT_TRUE(reader.deferred_check_failure().empty()) << path;
    const std::string first = prepare_error(reader, "SELECT SUM(end_ns - start_ns) FROM kernel");
    EXPECT_NE(first.find("implausible timestamp: kernel row 7"), std::string::npos)
        << path << ": " << first;
    EXPECT_EQ(reader.deferred_check_failure(), first) << path;
    EXPECT_EQ(prepare_error(
                  reader, "SELECT k.start_ns FROM api_call a JOIN kernel k USING (correlation_id)"),
              first)
        << path;
    EXPECT_THROW(reader.query_int("SELECT MAX(end_ns) FROM kernel"), Error) << path;
  }
  // A plausible capture: the deferred check runs once and passes.
  const Reader good(std::string(FUSELENS_TEST_DATA_DIR) + "/step_loop.sqlite",
                    TimestampCheck::DeferLargeTables);
  EXPECT_GT(good.query_int("SELECT MAX(end_ns) FROM kernel"), 0);
  EXPECT_TRUE(good.deferred_check_failure().empty());
}

// Reader::twin: a second reader of the same file for another thread. It counts the timestamp
// checks its original ran as run (the file is damaged after the original checked it: the twin
// does not look again); take_checks brings a check the twin ran, or its failure, back. A window's
// reader has none (its views belong to its connection).
TEST(Reader, ATwinSharesTheChecksRunAndBringsItsOwnBack) {
  fuselens::test::TempDir dir;
  const std::string path = dir.file("damaged.sqlite"), good = dir.file("good.sqlite");
  for (const std::string& p : {path, good}) {
    std::ofstream(p, std::ios::binary)
        << slurp(std::string(FUSELENS_TEST_DATA_DIR) + "/step_loop.sqlite");
  }
  raw_exec(path, "UPDATE kernel SET end_ns = start_ns - 1 WHERE id = 7");
  const Reader reader(path, TimestampCheck::DeferLargeTables);
  const Reader twin = reader.twin();
  EXPECT_EQ(twin.path(), reader.path());
  EXPECT_EQ(twin.query_int("SELECT COUNT(*) FROM kernel"),
            reader.query_int("SELECT COUNT(*) FROM kernel"));
  const std::string failure = prepare_error(twin, "SELECT SUM(end_ns - start_ns) FROM kernel");
  EXPECT_NE(failure.find("implausible timestamp: kernel row 7"), std::string::npos) << failure;
  EXPECT_TRUE(reader.deferred_check_failure().empty());
  reader.take_checks(twin);
  EXPECT_EQ(reader.deferred_check_failure(), failure);
  EXPECT_THROW(reader.query_int("SELECT MAX(end_ns) FROM kernel"), Error);
  // Repaired on disk: a twin made after the failure still fails (the failure is kept).
  raw_exec(path, "UPDATE kernel SET end_ns = start_ns + 1 WHERE id = 7");
  EXPECT_EQ(prepare_error(reader.twin(), "SELECT MAX(start_ns) FROM kernel"), failure);

  // Checked at its opening, then damaged: the twin counts the check as run.
  const Reader checked(good);
  raw_exec(good, "UPDATE kernel SET end_ns = start_ns - 1 WHERE id = 7");
  EXPECT_EQ(prepare_error(checked.twin(), "SELECT MAX(end_ns) FROM kernel"), "");
  EXPECT_NE(prepare_error(Reader(good, TimestampCheck::DeferLargeTables),
                          "SELECT MAX(end_ns) FROM kernel"),
            "");

  Reader windowed(path);
  windowed.restrict_to({{0, 1}});
  EXPECT_THROW(windowed.twin(), Error);
}
