// Reader::restrict_to selects the same rows whichever way it searches (db/src/Window.cpp): through
// the indexes (a narrow window of a full-layout capture, issue 21), by the merge of every GPU row
// and call in correlation order, and as docs/windows.md defines them, computed here from every row
// of the file: GPU rows whose launch call (the earliest call of their pid and correlation id with a
// start) starts inside a span, else whose own start does; calls that start inside. Committed H100
// captures and one with generated edge cases (a key with a call before the window and one inside,
// a call on a thread of its own, GPU rows without a call, on a stream of their own).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "TempDir.h"
#include "fuselens/db/Reader.h"

namespace fuselens::db {
namespace {

using Ids = std::vector<std::int64_t>;

std::string data(const std::string& name) {
  return std::string(FUSELENS_TEST_DATA_DIR) + "/" + name;
}

bool inside(const std::vector<TimeSpan>& spans, std::int64_t t) {
  return std::any_of(spans.begin(), spans.end(),
                     [t](const TimeSpan& s) { return s.start_ns <= t && t < s.end_ns; });
}

std::optional<std::int64_t> value(const Statement& s, int column) {
  if (s.is_null(column)) return std::nullopt;
  return s.int64(column);
}

// The definition, from every row of the file.
std::map<std::string, Ids> expected(const std::string& path, const std::vector<TimeSpan>& spans) {
  const Connection c(path, Connection::Mode::ReadOnly);
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> launch;  // key -> earliest start
  std::map<std::string, Ids> out;
  auto calls = c.prepare("SELECT id, pid, correlation_id, start_ns FROM main.api_call");
  while (calls.step()) {
    const auto start = value(calls, 3);
    if (start && inside(spans, *start)) out["api_call"].push_back(calls.int64(0));
    const auto pid = value(calls, 1), correlation = value(calls, 2);
    if (!pid || !correlation || !start) continue;
    const auto [it, added] = launch.try_emplace({*pid, *correlation}, *start);
    if (!added) it->second = std::min(it->second, *start);
  }
  for (const std::string table : {"kernel", "memcpy", "memset"}) {
    auto rows = c.prepare("SELECT id, pid, correlation_id, start_ns FROM main." + table);
    while (rows.step()) {
      std::optional<std::int64_t> at;
      const auto pid = value(rows, 1), correlation = value(rows, 2);
      if (pid && correlation) {
        if (const auto it = launch.find({*pid, *correlation}); it != launch.end()) at = it->second;
      }
      if (!at) at = value(rows, 3);
      if (at && inside(spans, *at)) out[table].push_back(rows.int64(0));
    }
  }
  for (auto& [table, ids] : out) std::sort(ids.begin(), ids.end());
  return out;
}

std::map<std::string, Ids> selected(const std::string& path, const std::vector<TimeSpan>& spans) {
  Reader reader(path);
  reader.restrict_to(spans);
  std::map<std::string, Ids> out;
  for (const std::string table : {"api_call", "kernel", "memcpy", "memset"}) {
    auto s = reader.prepare("SELECT id FROM " + table + " ORDER BY id");
    while (s.step()) out[table].push_back(s.int64(0));
  }
  return out;
}

// Windows over a capture's calls: three narrow spans, a window of three of them, one of the whole.
std::vector<std::vector<TimeSpan>> windows_of(const std::string& path) {
  const Connection c(path, Connection::Mode::ReadOnly);
  auto s = c.prepare("SELECT MIN(start_ns), MAX(start_ns) FROM main.api_call");
  EXPECT_TRUE(s.step());
  const std::int64_t first = s.int64(0), last = s.int64(1) + 1, d = (last - first) / 20;
  const auto at = [&](int twentieth) { return first + twentieth * d; };
  return {{{at(1), at(2)}},
          {{at(9), at(10)}},
          {{at(18), last}},
          {{at(2), at(3)}, {at(7), at(8)}, {at(15), at(17)}},
          {{first, last}}};
}

void expect_the_definition(const std::string& path) {
  std::size_t rows = 0;  // over every window: some may hold nothing in a sparse capture
  for (const auto& spans : windows_of(path)) {
    const auto want = expected(path, spans);
    for (const auto& [table, ids] : want) rows += ids.size();
    auto got = selected(path, spans);
    for (const std::string table : {"api_call", "kernel", "memcpy", "memset"}) {
      EXPECT_EQ(got[table], want.count(table) ? want.at(table) : Ids{})
          << path << " " << table << " window from " << spans.front().start_ns;
    }
  }
  EXPECT_GT(rows, 0u) << path;
}

// Small captures: every window through the indexes.
TEST(WindowSelection, TheIndexesSelectTheDefinitionOnRealCaptures) {
  for (const char* name : {"train_steps.sqlite", "step_loop.sqlite", "cct_torch.sqlite",
                           "ddp_2rank.sqlite", "p2p_copy.sqlite", "graph_replay.sqlite"}) {
    expect_the_definition(data(name));
  }
}

void exec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  EXPECT_EQ(rc, SQLITE_OK) << (error ? error : "") << "\n" << sql;
  sqlite3_free(error);
  sqlite3_close(db);
}

void exec(const std::string& path, const std::string& sql);

// The training capture repeated twelve times after itself (new ids and correlation ids): about
// 80,000 calls, so that its narrow windows go through the indexes and the whole one, holding more
// calls than the index search may read (65,536 here), through the merge.
TEST(WindowSelection, NarrowWindowsThroughTheIndexesAndWideOnesThroughTheMergeSelectTheDefinition) {
  test::TempDir dir;
  const std::string path = (dir.path() / "repeated.sqlite").string();
  std::filesystem::copy_file(data("train_steps.sqlite"), path);
  std::int64_t shift = 0, ids = 0;
  {
    const Connection c(path, Connection::Mode::ReadOnly);
    shift = c.query_int(
        "SELECT MAX((SELECT MAX(end_ns) FROM kernel), (SELECT MAX(end_ns) FROM api_call)) - "
        "MIN((SELECT MIN(start_ns) FROM kernel), (SELECT MIN(start_ns) FROM api_call)) + 1");
    ids =
        c.query_int("SELECT MAX((SELECT MAX(id) FROM kernel), (SELECT MAX(id) FROM api_call)) + 1");
  }
  for (int k = 1; k <= 12; ++k) {
    const std::string id = std::to_string(k * ids), t = std::to_string(k * shift);
    for (const std::string table : {"kernel", "api_call"}) {
      exec(path, "CREATE TEMP TABLE r AS SELECT * FROM main." + table + " WHERE id < " +
                     std::to_string(ids) + "; UPDATE r SET id = id + " + id +
                     ", correlation_id = correlation_id + " + id + ", start_ns = start_ns + " + t +
                     ", end_ns = end_ns + " + t + "; INSERT INTO main." + table +
                     " SELECT * FROM r;");
    }
  }
  const Connection c(path, Connection::Mode::ReadOnly);
  EXPECT_GT(c.query_int("SELECT COUNT(*) FROM api_call"), 65536);
  expect_the_definition(path);
}

// Rows copied from the capture's first kernel and call with the fields that make each case.
TEST(WindowSelection, TheIndexesSelectTheDefinitionOnGeneratedEdgeCases) {
  test::TempDir dir;
  const std::string path = (dir.path() / "edges.sqlite").string();
  std::filesystem::copy_file(data("train_steps.sqlite"), path);
  const auto spans = windows_of(path);
  const std::int64_t in = spans[1].front().start_ns + 1000,
                     before = spans[1].front().start_ns - 1000;
  const auto kernel = [&](const std::string& set) {
    exec(path,
         "CREATE TEMP TABLE k AS SELECT * FROM main.kernel LIMIT 1; UPDATE k SET id = (SELECT "
         "MAX(id) + 1 FROM main.kernel), " +
             set + "; INSERT INTO main.kernel SELECT * FROM k;");
  };
  const auto call = [&](const std::string& set) {
    exec(path,
         "CREATE TEMP TABLE a AS SELECT * FROM main.api_call LIMIT 1; UPDATE a SET id = (SELECT "
         "MAX(id) + 1 FROM main.api_call), " +
             set + "; INSERT INTO main.api_call SELECT * FROM a;");
  };
  const std::string t_in = std::to_string(in), t_before = std::to_string(before);
  // A key with a call before the window and one inside: launched before (left out).
  call("correlation_id = 900000001, start_ns = " + t_before + ", end_ns = " + t_in);
  call("correlation_id = 900000001, start_ns = " + t_in + ", end_ns = " + t_in);
  kernel("correlation_id = 900000001, start_ns = " + t_in + ", end_ns = " + t_in);
  // A key whose only call starts inside, on a thread of its own: its kernel goes with it, wherever
  // it ran.
  call("correlation_id = 900000002, tid = 4242, start_ns = " + t_in + ", end_ns = " + t_in);
  kernel("correlation_id = 900000002, start_ns = " + t_before + ", end_ns = " + t_before);
  // No call: placed by its own start, inside and before, on a stream of its own too.
  kernel("correlation_id = 900000003, start_ns = " + t_in + ", end_ns = " + t_in);
  kernel("correlation_id = 900000004, start_ns = " + t_before + ", end_ns = " + t_before);
  kernel("correlation_id = 900000005, stream_id = 4242, start_ns = " + t_in + ", end_ns = " + t_in);
  const auto want = expected(path, spans[1]);
  const auto has = [&](const std::string& table, const std::string& where) {
    const Connection c(path, Connection::Mode::ReadOnly);
    auto s = c.prepare("SELECT id FROM main." + table + " WHERE " + where);
    EXPECT_TRUE(s.step()) << where;
    const auto& ids = want.at(table);
    return std::binary_search(ids.begin(), ids.end(), s.int64(0));
  };
  // The definition itself, on the cases (so that the comparison below compares something).
  EXPECT_FALSE(has("kernel", "correlation_id = 900000001"));
  EXPECT_TRUE(has("kernel", "correlation_id = 900000002"));
  EXPECT_TRUE(has("kernel", "correlation_id = 900000003"));
  EXPECT_FALSE(has("kernel", "correlation_id = 900000004"));
  EXPECT_TRUE(has("kernel", "stream_id = 4242"));
  EXPECT_TRUE(has("api_call", "tid = 4242"));
  expect_the_definition(path);
}

}  // namespace
}  // namespace fuselens::db
