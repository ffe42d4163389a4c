// Issue #9, bad and hostile input: every prof-analyze command on every kind of bad database gives one
// clear error line and exit status 1, never a crash, and never changes the file; a read-only capture
// is analyzed without being written. Files are made from the real H100 capture in tests/data.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "Subprocess.h"
#include "TempDir.h"

using fuselens::test::Result;
using fuselens::test::run;
using fuselens::test::slurp;
using fuselens::test::TempDir;

namespace {

const std::string kCapture = std::string(FUSELENS_TEST_DATA_DIR) + "/fusion_bench.sqlite";

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// The commands, each with its arguments for one capture `f` (and an output path under `dir`).
std::vector<std::vector<std::string>> commands(const std::string& f, const TempDir& dir) {
  return {
      {"summary", f},
      {"summary", f, "--format", "json"},
      {"cct", f},
      {"cct", f, "--view", "flat"},
      {"flags", f},
      {"roofline", f},
      {"compare", f, "--baseline", "*/unfused/*", "--candidate", "*/fused/*"},
      {"compare", f, kCapture},
      {"export", f, "--format", "html", "-o", dir.file("out.html")},
      {"export", f, "--format", "chrome-trace", "-o", dir.file("out.json")},
  };
}

Result analyze(std::vector<std::string> args) {
  args.insert(args.begin(), PROF_ANALYZE_PATH);
  return run(args);
}

// What every command must do with a file it cannot read: status 1, one "prof-analyze: error:" line,
// no output file left behind, the input unchanged.
void expect_rejected(const std::string& path, const std::string& what) {
  TempDir out;
  const std::string before = slurp(path);
  for (const auto& args : commands(path, out)) {
    const Result r = analyze(args);
    const std::string cmd = what + ": prof-analyze " + args[0] + " " + (args.size() > 2 ? args[2] : "");
    EXPECT_EQ(r.status, 1) << cmd << "\n" << r.err;
    ASSERT_EQ(r.err_lines().size(), 1u) << cmd << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("prof-analyze: error: ", 0), 0u) << cmd << "\n" << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(out.file("out.html"))) << what;
  EXPECT_FALSE(std::filesystem::exists(out.file("out.json"))) << what;
  EXPECT_EQ(slurp(path), before) << what << ": the file was changed";
}

TEST(HostileInput, EmptyFile) {
  TempDir dir;
  write_file(dir.file("empty.sqlite"), "");
  expect_rejected(dir.file("empty.sqlite"), "empty file");
}

TEST(HostileInput, TruncatedCapture) {
  TempDir dir;
  const std::string real = slurp(kCapture);
  ASSERT_GT(real.size(), 8192u);
  for (std::size_t keep : {std::size_t{100}, std::size_t{4096}, real.size() / 2}) {
    const auto path = dir.file("truncated" + std::to_string(keep) + ".sqlite");
    write_file(path, real.substr(0, keep));
    expect_rejected(path, "truncated to " + std::to_string(keep) + " bytes");
  }
}

TEST(HostileInput, SqliteDatabaseOfAnotherProgram) {
  TempDir dir;
  const auto path = dir.file("other.sqlite");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE kernel(x); INSERT INTO kernel VALUES (1);", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  expect_rejected(path, "another program's database");
}

TEST(HostileInput, NewerSchema) {
  TempDir dir;
  const auto path = dir.file("newer.sqlite");
  write_file(path, slurp(kCapture));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version = 999", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  expect_rejected(path, "schema version 999");
}

TEST(HostileInput, DirectoryInsteadOfFile) {
  TempDir dir;
  std::filesystem::create_directory(dir.file("capture.sqlite"));
  TempDir out;
  for (const auto& args : commands(dir.file("capture.sqlite"), out)) {
    const Result r = analyze(args);
    EXPECT_EQ(r.status, 1) << args[0] << "\n" << r.err;
    EXPECT_EQ(r.err_lines().size(), 1u) << args[0] << "\n" << r.err;
  }
}

// Random bytes overwritten inside the real capture (past the 100-byte header, which the other
// tests cover). SQLite detects most such damage; where it does not (a damaged string, a free page)
// the command may succeed: what must never happen is a crash, a partial output passed off as whole,
// more than one error line, or a change to the file.
TEST(HostileInput, CaptureCorruptedAtRandomBytes) {
  TempDir dir;
  const std::string real = slurp(kCapture);
  int rejected = 0, accepted = 0;
  for (unsigned seed = 1; seed <= 12; ++seed) {
    std::mt19937 rng(seed);
    std::string bytes = real;
    std::uniform_int_distribution<std::size_t> where(100, bytes.size() - 1);
    std::uniform_int_distribution<int> value(0, 255);
    for (int i = 0; i < 32; ++i) bytes[where(rng)] = static_cast<char>(value(rng));
    const auto path = dir.file("corrupt" + std::to_string(seed) + ".sqlite");
    write_file(path, bytes);
    TempDir out;
    for (const auto& args : commands(path, out)) {
      const Result r = analyze(args);
      const std::string cmd = "seed " + std::to_string(seed) + ": prof-analyze " + args[0];
      ASSERT_TRUE(r.status == 0 || r.status == 1) << cmd << " exited " << r.status << "\n" << r.err;
      if (r.status == 1) {
        ++rejected;
        EXPECT_EQ(r.err_lines().size(), 1u) << cmd << "\n" << r.err;
        EXPECT_EQ(r.err.rfind("prof-analyze: error: ", 0), 0u) << cmd << "\n" << r.err;
      } else {
        ++accepted;
      }
    }
    EXPECT_EQ(slurp(path), bytes) << "seed " << seed << ": the file was changed";
  }
  EXPECT_GT(rejected, 0) << "32 random bytes in each of 12 copies should be detected somewhere";
  RecordProperty("rejected", rejected);
  RecordProperty("accepted", accepted);
}

TEST(HostileInput, ReadOnlyCaptureIsAnalyzedAndLeftAlone) {
  TempDir dir;
  const auto path = dir.file("readonly.sqlite");
  write_file(path, slurp(kCapture));
  ASSERT_EQ(::chmod(path.c_str(), 0444), 0);
  const auto before = std::filesystem::last_write_time(path);
  TempDir out;
  for (const auto& args : commands(path, out)) {
    const Result r = analyze(args);
    EXPECT_EQ(r.status, 0) << args[0] << "\n" << r.err;
  }
  EXPECT_EQ(slurp(path), slurp(kCapture));
  EXPECT_EQ(std::filesystem::last_write_time(path), before);
  // SQLite must not have left a journal or WAL beside it either.
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  EXPECT_FALSE(std::filesystem::exists(path + "-journal"));
}

// Timestamps are checked when a capture is opened (db::check_timestamps): a time before 0, an end
// before its start, or a time at or past 2^62 ns, in any timed table, is refused with one line that
// names the table and the row, instead of yielding absurd figures or overflowing time arithmetic.
TEST(HostileInput, ImplausibleTimestamps) {
  const std::string cases[][2] = {
      {"UPDATE kernel SET end_ns = start_ns - 1 WHERE id = (SELECT MIN(id) FROM kernel)", "kernel row"},
      {"UPDATE kernel SET start_ns = -5 WHERE id = (SELECT MAX(id) FROM kernel)", "kernel row"},
      {"UPDATE kernel SET end_ns = 4611686018427387904 WHERE id = 7", "kernel row 7"},
      {"UPDATE api_call SET start_ns = -9223372036854775807 WHERE id = 3", "api_call row 3"},
      {"UPDATE memcpy SET end_ns = 9223372036854775807 WHERE id = (SELECT MIN(id) FROM memcpy)", "memcpy row"},
      {"UPDATE nvtx_range SET end_ns = start_ns - 1000 WHERE id = 2", "nvtx_range row 2"},
      {"UPDATE memory_event SET timestamp_ns = -1 WHERE id = 1", "memory_event row 1"},
      {"UPDATE kernel SET start_ns = 'soon' WHERE id = 5", "kernel row 5"},
  };
  TempDir dir;
  int n = 0;
  for (const auto& [sql, names] : cases) {
    const auto path = dir.file("implausible" + std::to_string(++n) + ".sqlite");
    write_file(path, slurp(kCapture));
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sql;
    ASSERT_EQ(sqlite3_changes(db), 1) << sql;
    sqlite3_close(db);
    expect_rejected(path, sql);
    const Result r = analyze({"summary", path});
    EXPECT_NE(r.err.find("implausible timestamp"), std::string::npos) << sql << "\n" << r.err;
    EXPECT_NE(r.err.find(names), std::string::npos) << sql << "\n" << r.err;
  }
}

// A table and its index that disagree (found by the fuzzer: a flipped bit). The check at open
// scans api_call through its covering index api_by_name, which still holds the plausible end
// time; the flags trace reads the table, whose end time is -7.4e18 ns. Every row a cursor reads
// is checked as well: one line naming the damage, status 1, the file unchanged (before the check,
// flags ran on and overflowed its launch-delay arithmetic).
TEST(HostileInput, IndexThatDisagreesWithItsTable) {
  TempDir dir;
  const auto path = dir.file("index.sqlite");
  write_file(path, slurp(std::string(FUSELENS_TEST_DATA_DIR) + "/step_loop.sqlite"));
  auto exec = [&](const char* sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sql;
    sqlite3_close(db);
  };
  // Declare the index over another column, so that the update leaves the index alone; then
  // declare it as it was.
  exec("PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = 'CREATE INDEX api_by_name "
       "ON api_call(name_id, start_ns, return_code)' WHERE name = 'api_by_name'");
  exec("UPDATE api_call SET end_ns = -7428000034207136707 WHERE id = 3");
  exec("PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = 'CREATE INDEX api_by_name "
       "ON api_call(name_id, start_ns, end_ns)' WHERE name = 'api_by_name'");
  const std::string before = slurp(path);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"flags", path, "--window", "all"}, {"steps", path}}) {
    const Result r = analyze(args);
    EXPECT_EQ(r.status, 1) << args[0] << "\n" << r.out << r.err;
    ASSERT_EQ(r.err_lines().size(), 1u) << args[0] << "\n" << r.err;
    EXPECT_NE(r.err.find("disagree"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("end_ns -7428000034207136707"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  EXPECT_EQ(slurp(path), before);
}

// The bounds themselves are plausible: 0 and 2^62 - 1, and an unterminated NVTX range (NULL end).
TEST(HostileInput, TimestampsAtTheBoundsAreAccepted) {
  TempDir dir;
  const auto path = dir.file("bounds.sqlite");
  write_file(path, slurp(kCapture));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "UPDATE kernel SET start_ns = 0 WHERE id = 1;"
                         "UPDATE kernel SET end_ns = 4611686018427387903 WHERE id = 2;"
                         "UPDATE nvtx_range SET end_ns = NULL WHERE id = 3;",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  for (const char* command : {"summary", "cct", "flags"}) {
    const Result r = analyze({command, path});
    EXPECT_EQ(r.status, 0) << command << "\n" << r.err;
  }
}

}  // namespace
