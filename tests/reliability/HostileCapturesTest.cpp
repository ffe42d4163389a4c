// Issue 22, the probe's recipes: each hostile capture or argument is generated here from a
// committed capture, and prof-analyze must answer within a timeout, in bounded output, with one
// clear line where it refuses. Each test failed (crash, hang, unbounded output, overflow or a
// misleading message) before its fix.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "Subprocess.h"
#include "TempDir.h"

using fuselens::test::Result;
using fuselens::test::run;
using fuselens::test::slurp;
using fuselens::test::TempDir;

namespace {

const std::string kData = FUSELENS_TEST_DATA_DIR;
const std::string kCapture = kData + "/fusion_bench.sqlite";

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

/// Copies `source` to `path` and runs `sql` on the copy.
void make_capture(const std::string& source, const std::string& path, const std::string& sql) {
  write_file(path, slurp(source));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << sql.substr(0, 200) << ": " << (error ? error : "");
  sqlite3_close(db);
}

/// prof-analyze under `timeout 60` (status 124 when it hangs).
Result analyze(const std::vector<std::string>& args, const std::string& prefix = "") {
  std::vector<std::string> argv;
  if (!prefix.empty()) {  // setpriv and its arguments, space-separated
    std::size_t begin = 0;
    while (begin < prefix.size()) {
      const std::size_t end = prefix.find(' ', begin);
      argv.push_back(prefix.substr(begin, end == std::string::npos ? end : end - begin));
      begin = end == std::string::npos ? prefix.size() : end + 1;
    }
  }
  argv.insert(argv.end(), {"/usr/bin/timeout", "60", PROF_ANALYZE_PATH});
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

void expect_one_error(const Result& r, int status, const std::string& words) {
  EXPECT_EQ(r.status, status) << r.out.substr(0, 500) << r.err;
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_EQ(r.err.rfind("prof-analyze: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
}

// Crashes and hangs: the range glob of compare was recursive, one frame per star and exponential
// in the stars ('********Z' > 60 s; 60,000 stars overflowed the stack).
TEST(HostileCaptures, GlobWithManyStarsAnswersAtOnce) {
  for (const std::string& pattern :
       {std::string(60000, '*'), std::string("********Z"), std::string(200, '*') + "Z"}) {
    const Result r =
        analyze({"compare", kCapture, "--baseline", pattern + "/unfused/*", "--candidate", "*"});
    EXPECT_NE(r.status, 124) << "hung on " << pattern.size() << " characters";
    // 60,000 stars match every range (then nothing pairs); the others match none.
    expect_one_error(r, 1, "prof-analyze: error: compare: ");
  }
}

// Crash: cct --filter used std::regex, which recursed per character of a 30 KB kernel name. RE2
// matches in linear time; a pattern whose program is too large is refused in one line.
TEST(HostileCaptures, CctFilterOnALongNameAndAHugePattern) {
  TempDir dir;
  const auto path = dir.file("long.sqlite");
  make_capture(kCapture, path,
               "UPDATE strings SET value = value || printf('%.*c', 30000, 'a') || 'zzz' WHERE id = "
               "(SELECT demangled_name_id FROM kernel ORDER BY id LIMIT 1)");
  const Result r = analyze({"cct", path, "--window", "all", "--filter", ".*zzz"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("aaazzz"), std::string::npos) << "the filter kept no row with the name";
  const Result none = analyze({"cct", path, "--window", "all", "--filter", ".*yyy$"});
  EXPECT_EQ(none.status, 0) << none.err;
  EXPECT_EQ(none.out.find("aaazzz"), std::string::npos);
  expect_one_error(analyze({"cct", path, "--filter", "((a{100}){100}){100}"}), 2, "--filter");
  expect_one_error(analyze({"cct", path, "--filter", "(?=x)"}), 2, "not a regular expression");
}

// Unbounded output and memory: a 90 MB kernel name was copied into every row, node and trace
// event (cct/export: 8.5 GB of memory, a 7.8 GB trace) and, joined per row, read again for every
// launch. A string over 1 MiB is refused at open in one line; one of 200 KB is cut to 64 KiB with
// its length said, in every output.
TEST(HostileCaptures, HugeKernelNamesAreRefusedOrCut) {
  TempDir dir;
  const auto huge = dir.file("huge.sqlite");
  make_capture(kCapture, huge,
               "UPDATE strings SET value = printf('%.*c', 90000000, 'k') WHERE id = (SELECT "
               "demangled_name_id FROM kernel ORDER BY id LIMIT 1)");
  for (const char* command : {"summary", "cct", "flags"}) {
    expect_one_error(analyze({command, huge, "--window", "all"}), 1,
                     "holds a string of 90000000 bytes");
  }
  const auto path = dir.file("long.sqlite");
  const std::int64_t bytes = 200'000;
  make_capture(kCapture, path,
               "UPDATE strings SET value = printf('%.*c', " + std::to_string(bytes) +
                   ", 'k') WHERE id = (SELECT demangled_name_id FROM kernel ORDER BY id LIMIT 1)");
  const std::string said = "[truncated: " + std::to_string(bytes) + " bytes]";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"summary", path, "--window", "all"},
        {"cct", path, "--window", "all"},
        {"flags", path, "--window", "all"},
        {"export", path, "--window", "all", "--format", "chrome-trace", "-o",
         dir.file("trace.json")}}) {
    const Result r = analyze(args);
    ASSERT_EQ(r.status, 0) << args[0] << ": " << r.err;
    const std::string out = args[0] == "export" ? slurp(dir.file("trace.json")) : r.out;
    // summary and the trace name every kernel; cct and flags only where the name is charged.
    if (args[0] == "summary" || args[0] == "export") {
      EXPECT_NE(out.find(said), std::string::npos) << args[0];
    }
    EXPECT_EQ(out.find(std::string(65 * 1024, 'k')), std::string::npos) << args[0];
  }
}

// A call chain 300,000 frames deep (5 MB) made cct write 8.9 GB and growing; the depth is bounded
// with a message.
TEST(HostileCaptures, DeepCallChainIsRefusedInOneLine) {
  TempDir dir;
  const auto path = dir.file("deep.sqlite");
  make_capture(kData + "/cct_paths.sqlite", path,
               "CREATE TEMP TABLE leaf AS SELECT pid, (SELECT MAX(id) FROM cct_node) AS top, "
               "(SELECT frame_id FROM cct_node WHERE frame_id IS NOT NULL LIMIT 1) AS frame, "
               "(SELECT id FROM cct_node c WHERE parent_id IS NULL AND c.pid = a.pid) AS root "
               "FROM api_context a LIMIT 1;"
               "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300000) "
               "INSERT INTO cct_node SELECT top + i, pid, CASE i WHEN 1 THEN root ELSE top + i - 1 "
               "END, frame FROM n, leaf;"
               "UPDATE api_context SET cct_node_id = (SELECT top + 300000 FROM leaf)");
  for (const char* command : {"cct", "flags"}) {
    expect_one_error(analyze({command, path, "--window", "all"}), 1, "deeper than 4096 frames");
  }
}

// Unbounded output: cct prints at most --limit rows (default 10,000), the rest counted in a last
// line (table), "rows_left_out" (JSON) or a note on stderr (CSV). A chain 4,000 frames deep, under
// the depth bound, made 4,000 rows of growing indentation.
TEST(HostileCaptures, CctOutputIsCappedByLimit) {
  TempDir dir;
  const auto path = dir.file("chain.sqlite");
  make_capture(kData + "/cct_paths.sqlite", path,
               "CREATE TEMP TABLE leaf AS SELECT pid, (SELECT MAX(id) FROM cct_node) AS top, "
               "(SELECT frame_id FROM cct_node WHERE frame_id IS NOT NULL LIMIT 1) AS frame, "
               "(SELECT id FROM cct_node c WHERE parent_id IS NULL AND c.pid = a.pid) AS root "
               "FROM api_context a LIMIT 1;"
               "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 4000) "
               "INSERT INTO cct_node SELECT top + i, pid, CASE i WHEN 1 THEN root ELSE top + i - 1 "
               "END, frame FROM n, leaf;"
               "UPDATE api_context SET cct_node_id = (SELECT top + 4000 FROM leaf)");
  const Result all = analyze({"cct", path, "--window", "all", "--format", "json", "--limit", "0"});
  ASSERT_EQ(all.status, 0) << all.err;
  const auto rows = nlohmann::json::parse(all.out).at("rows").size();
  ASSERT_GT(rows, 4000u);
  const Result json =
      analyze({"cct", path, "--window", "all", "--format", "json", "--limit", "100"});
  ASSERT_EQ(json.status, 0) << json.err;
  const auto doc = nlohmann::json::parse(json.out);
  EXPECT_EQ(doc.at("rows").size(), 100u);
  EXPECT_EQ(doc.at("rows_left_out").get<std::size_t>(), rows - 100);
  const Result table = analyze({"cct", path, "--window", "all", "--limit", "100"});
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find("(" + std::to_string(rows - 100) + " more rows not shown"),
            std::string::npos)
      << table.out.substr(table.out.size() - 300);
  EXPECT_LT(table.out.size(), all.out.size() / 10);
  const Result csv = analyze({"cct", path, "--window", "all", "--format", "csv", "--limit", "100"});
  ASSERT_EQ(csv.status, 0) << csv.err;
  EXPECT_EQ(static_cast<std::size_t>(std::count(csv.out.begin(), csv.out.end(), '\n')), 101u);
  EXPECT_NE(csv.err.find("note: " + std::to_string(rows - 100) + " more rows"), std::string::npos)
      << csv.err;
  const Result help = analyze({"cct", "--help"});
  EXPECT_NE(help.out.find("10000"), std::string::npos) << "the default cap is not documented";
}

// Memory sizes of INT64_MAX or below 0 overflowed the memory summary ("Peak 9223372 TB", "Peak At
// -1795355418 s"): refused at open. Plausible sizes whose sum overflows saturate.
TEST(HostileCaptures, ImplausibleAndOverflowingMemorySizes) {
  TempDir dir;
  int n = 0;
  for (const char* bytes : {"9223372036854775807", "-5", "1125899906842624", "'big'"}) {
    const auto path = dir.file("size" + std::to_string(++n) + ".sqlite");
    make_capture(kCapture, path,
                 std::string("UPDATE memory_event SET bytes = ") + bytes +
                     " WHERE id = (SELECT MAX(id) FROM memory_event)");
    for (const char* command : {"summary", "flags", "cct"}) {
      expect_one_error(analyze({command, path, "--window", "all"}), 1, "implausible size");
    }
  }
  // 9,000 allocations of 2^50 - 1 bytes, never released: the running sum passes INT64_MAX.
  const auto path = dir.file("many.sqlite");
  make_capture(kCapture, path,
               "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 9000) "
               "INSERT INTO memory_event (pid, timestamp_ns, operation, memory_kind, address, "
               "bytes, device_id, context_id, stream_id, correlation_id, is_async) SELECT pid, "
               "timestamp_ns, 1, memory_kind, address + i, 1125899906842623, device_id, "
               "context_id, stream_id, correlation_id, is_async FROM n, (SELECT * FROM "
               "memory_event WHERE operation = 1 ORDER BY id LIMIT 1)");
  const Result r = analyze({"summary", path, "--window", "all", "--format", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  bool saturated = false;
  for (const auto& row : doc.at("device_memory")) {
    saturated = saturated || row.at("peak_bytes").get<std::int64_t>() ==
                                 std::numeric_limits<std::int64_t>::max();
  }
  EXPECT_TRUE(saturated) << doc.at("device_memory").dump();
}

/// Runs `sql` in a child that dies (_exit) before committing, with a cache so small that SQLite
/// writes changed pages into the file: what prof-run killed while storing its aggregates leaves.
// A writer killed in the middle of `transaction` (by default one that adds a table, so the
// schema read back without the journal is half written).
void leave_hot_journal(const std::string& path,
                       const char* transaction =
                           "CREATE TABLE half_written(x); INSERT INTO half_written SELECT "
                           "randomblob(1000) FROM kernel, kernel LIMIT 2000; UPDATE kernel SET "
                           "start_ns = start_ns + 1;") {
  const pid_t child = ::fork();
  if (child == 0) {
    sqlite3* db = nullptr;
    if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) ::_exit(1);
    const std::string sql =
        std::string("PRAGMA journal_mode = DELETE; PRAGMA cache_size = 2; BEGIN;") + transaction;
    sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
    ::_exit(9);  // no commit, no rollback
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 9);
}

/// The prefix that runs prof-analyze as an unprivileged user, so that permissions hold for it
/// (root writes anywhere); "" when the test does not run as root.
std::string unprivileged() {
  return ::geteuid() == 0 ? "/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups" : "";
}

// Unclear: a hot rollback journal read "not a FuseLens capture". Writable: rolled back, with a
// note, the capture as it was committed. Read-only: the journal ignored, with a note.
TEST(HostileCaptures, HotJournalIsRolledBackOrIgnoredWithANote) {
  TempDir dir;
  const auto path = dir.file("hot.sqlite");
  write_file(path, slurp(kCapture));
  const Result original = analyze({"summary", path, "--window", "all", "--format", "json"});
  ASSERT_EQ(original.status, 0) << original.err;
  leave_hot_journal(path);
  ASSERT_GT(std::filesystem::file_size(path + "-journal"), 0u);
  const std::string damaged = slurp(path), journal = slurp(path + "-journal");

  // Read-only (file and folder): the journal is ignored.
  const auto ro = dir.file("ro");
  std::filesystem::create_directory(ro);
  write_file(ro + "/hot.sqlite", damaged);
  write_file(ro + "/hot.sqlite-journal", journal);
  ASSERT_EQ(::chmod((ro + "/hot.sqlite").c_str(), 0444), 0);
  ASSERT_EQ(::chmod((ro + "/hot.sqlite-journal").c_str(), 0444), 0);
  ASSERT_EQ(::chmod(ro.c_str(), 0555), 0);
  ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
  const Result ignored =
      analyze({"summary", ro + "/hot.sqlite", "--window", "all"}, unprivileged());
  EXPECT_NE(ignored.err.find("note: "), std::string::npos) << ignored.err;
  EXPECT_NE(ignored.err.find("journal is ignored"), std::string::npos) << ignored.err;
  EXPECT_EQ(ignored.err.find("not a FuseLens capture"), std::string::npos) << ignored.err;
  EXPECT_EQ(slurp(ro + "/hot.sqlite"), damaged);
  EXPECT_EQ(slurp(ro + "/hot.sqlite-journal"), journal);
  ASSERT_EQ(::chmod(ro.c_str(), 0755), 0);

  // Writable: rolled back, the summary that of the capture before the killed transaction.
  const Result r = analyze({"summary", path, "--window", "all", "--format", "json"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("prof-analyze: note: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("rolled back"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, original.out);
  EXPECT_FALSE(std::filesystem::exists(path + "-journal") &&
               std::filesystem::file_size(path + "-journal") > 0);
  const Result again = analyze({"summary", path, "--window", "all"});
  EXPECT_EQ(again.status, 0);
  EXPECT_TRUE(again.err.empty()) << again.err;
}

// A read-only capture whose hot journal holds only changed rows reads as it is, with one note,
// also where an analysis reads it on several connections (flags: Reader::twin): a second reader
// of a file already opened says nothing again.
TEST(HostileCaptures, AnIgnoredHotJournalIsNotedOnceByAnAnalysisOnThreads) {
  TempDir dir;
  const auto path = dir.file("hot.sqlite");
  write_file(path, slurp(kCapture));
  leave_hot_journal(path, "UPDATE kernel SET start_ns = start_ns + 1;");
  ASSERT_GT(std::filesystem::file_size(path + "-journal"), 0u);
  ASSERT_EQ(::chmod(path.c_str(), 0444), 0);
  ASSERT_EQ(::chmod((path + "-journal").c_str(), 0444), 0);
  ASSERT_EQ(::chmod(dir.path().c_str(), 0555), 0);
  const Result flags = analyze({"flags", path, "--window", "all"}, unprivileged());
  ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
  EXPECT_EQ(flags.status, 0) << flags.err;
  const auto first = flags.err.find("note: ");
  EXPECT_NE(first, std::string::npos) << flags.err;
  EXPECT_NE(flags.err.find("journal is ignored"), std::string::npos) << flags.err;
  EXPECT_EQ(flags.err.find("note: ", first + 1), std::string::npos) << flags.err;
}

// Unclear: analysing a WAL-mode capture left -wal and -shm files beside it, and in a read-only
// folder it read "not a FuseLens capture".
TEST(HostileCaptures, WalCaptureIsReadWithoutFilesBesideItEvenInAReadOnlyFolder) {
  TempDir dir;
  const auto folder = dir.file("wal");
  std::filesystem::create_directory(folder);
  const auto path = folder + "/wal.sqlite";
  make_capture(kCapture, path, "PRAGMA journal_mode = WAL");
  ASSERT_FALSE(std::filesystem::exists(path + "-wal"));
  const std::string before = slurp(path);
  for (const char* command : {"summary", "cct", "flags"}) {
    const Result r = analyze({command, path, "--window", "all"});
    EXPECT_EQ(r.status, 0) << command << ": " << r.err;
    EXPECT_FALSE(std::filesystem::exists(path + "-wal")) << command;
    EXPECT_FALSE(std::filesystem::exists(path + "-shm")) << command;
  }
  ASSERT_EQ(::chmod(path.c_str(), 0444), 0);
  ASSERT_EQ(::chmod(folder.c_str(), 0555), 0);
  ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
  const Result r = analyze({"summary", path, "--window", "all"}, unprivileged());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("not a FuseLens capture"), std::string::npos) << r.err;
  ASSERT_EQ(::chmod(folder.c_str(), 0755), 0);
  EXPECT_EQ(slurp(path), before);
}

}  // namespace
