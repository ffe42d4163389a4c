// SQLite's own floor under the writer (issue 21: ">= 2 million kernel records a second through the
// writer on one core"): the rows the lean layout stores per kernel of the launch-loop mix,
// inserted with SQLite's C API alone (prepared statements bound and stepped, nothing else), into
// the capture schema (schema_sql(): the same tables, keys and WITHOUT ROWID api_context) with the
// writer's settings (WAL, synchronous NORMAL) and its transactions (20,000 kernels each). No
// writer code runs: what it costs is what any SQLite-based writer of these rows pays at least.
// Same machine and pinning as the writer benchmark:
//
//   taskset -c 0 writer_benchmark --benchmark_counters_tabular=true --benchmark_filter=SqliteFloor
//
// Rows per kernel (the argument `rows`): 1 the kernel_lean row alone; 2 plus its launch call
// (api_call_lean); 3 plus that call's api_context row (the lean layout's three rows of a launch
// loop; kernel_config and api_config hold one row each for the whole run and are not written).
// Rows per statement (`per_statement`): 1, or multi-row INSERTs of 32 rows as the writer's
// (db/src/RowInsert.h, BulkInsert), or 250 (SQLite's default limit is 32,766 parameters).
// Values as a launch loop makes them: correlation delta 0, start deltas growing by 2.6 us,
// durations of about 2 us, no graph, one thread, one calling-context node.
//
// Counters: kernels_per_cpu_s (kernel records, each with its companion rows, per second of the
// thread's CPU time; the final WAL checkpoint left out, as the writer benchmark's counter leaves
// finalize() out), rows_per_cpu_s.

#include <benchmark/benchmark.h>
#include <sqlite3.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "fuselens/db/Writer.h"

namespace {

constexpr std::int64_t kBatch = 20000;
constexpr std::int64_t kPid = 4242;

double thread_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

void check(int rc, sqlite3* db, const char* what) {
  if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
    throw std::runtime_error(std::string(what) + ": " + sqlite3_errmsg(db));
  }
}

void exec(sqlite3* db, const char* sql) {
  check(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), db, sql);
}

sqlite3_stmt* prepare(sqlite3* db, const char* sql) {
  sqlite3_stmt* s = nullptr;
  check(sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr), db, sql);
  return s;
}

void step(sqlite3_stmt* s, sqlite3* db) {
  check(sqlite3_step(s), db, "step");
  sqlite3_reset(s);
}

// "INSERT INTO table(columns) VALUES(?,..),(?,..),..." with `rows` rows of `columns` values.
std::string insert_sql(const char* head, int columns, int rows) {
  std::string one = "(";
  for (int c = 0; c < columns; ++c) one += c ? ",?" : "?";
  one += ')';
  std::string sql = std::string(head) + " VALUES";
  for (int r = 0; r < rows; ++r) sql += (r ? "," : "") + one;
  return sql;
}

// Stores `n` rows (n a multiple of the statement's rows) of `columns` values each, value(i, c)
// the c-th value of row i, through the multi-row statement `s` of `per` rows.
template <typename Value>
void insert_rows(sqlite3* db, sqlite3_stmt* s, int per, int columns, std::int64_t first,
                 std::int64_t n, Value value) {
  for (std::int64_t i = first; i < first + n; i += per) {
    for (int r = 0; r < per; ++r) {
      for (int c = 0; c < columns; ++c) sqlite3_bind_int64(s, r * columns + c + 1, value(i + r, c));
    }
    step(s, db);
  }
}

void BM_SqliteFloor(benchmark::State& state) {
  const std::int64_t kernels = state.range(0);
  const int rows = static_cast<int>(state.range(1));
  const int per = static_cast<int>(state.range(2));
  if (kBatch % per != 0 || kernels % kBatch != 0) {
    state.SkipWithError("kernels must be a multiple of the batch, the batch of per-statement rows");
    return;
  }
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("sqlite_floor_" + std::to_string(getpid()) + ".sqlite"))
                               .string();
  double cpu_s = 0;
  for (auto _ : state) {
    for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(path + s);
    sqlite3* db = nullptr;
    check(sqlite3_open(path.c_str(), &db), db, "open");
    exec(db, "PRAGMA journal_mode = WAL");
    exec(db, "PRAGMA synchronous = NORMAL");
    exec(db, fuselens::db::schema_sql());
    exec(db,
         "INSERT INTO kernel_config VALUES (1, 4242, 0, 0, 1, 7, 1, 1, 1, 32, 1, 1, 16, 0, 0, 0, "
         "0, 0, 0); INSERT INTO api_config VALUES (1, 4242, 0, 4243, 1, 211, 0, 0)");
    sqlite3_stmt* kernel = prepare(
        db, insert_sql("INSERT INTO kernel_lean (id, config_id, correlation_delta, start_ns, "
                       "duration_ns)",
                       5, per)
                .c_str());
    sqlite3_stmt* call = prepare(
        db, insert_sql("INSERT INTO api_call_lean (id, config_id, correlation_delta, start_ns, "
                       "duration_ns)",
                       5, per)
                .c_str());
    sqlite3_stmt* context = prepare(
        db, insert_sql("INSERT INTO api_context (pid, correlation_id, tid, cct_node_id)", 4, per)
                .c_str());
    const auto lean = [](std::int64_t base, std::int64_t spread) {
      return [base, spread](std::int64_t i, int c) -> std::int64_t {
        switch (c) {
          case 0:
            return i + 1;  // id
          case 1:
            return 1;  // config_id
          case 2:
            return 0;  // correlation_delta
          case 3:
            return base + i * 2600;
          default:
            return 1900 + (i % spread);
        }
      };
    };
    const double c0 = thread_cpu_s();
    for (std::int64_t first = 0; first < kernels; first += kBatch) {
      exec(db, "BEGIN");
      insert_rows(db, kernel, per, 5, first, kBatch, lean(5000, 256));
      if (rows >= 2) insert_rows(db, call, per, 5, first, kBatch, lean(0, 128));
      if (rows >= 3) {
        insert_rows(db, context, per, 4, first, kBatch, [](std::int64_t i, int c) -> std::int64_t {
          return c == 0 ? kPid : c == 1 ? i + 1 : c == 2 ? kPid + 1 : 1;
        });
      }
      exec(db, "COMMIT");
    }
    cpu_s += thread_cpu_s() - c0;  // as the writer's counter: the final checkpoint not included
    for (sqlite3_stmt* s : {kernel, call, context}) sqlite3_finalize(s);
    sqlite3_close(db);
  }
  const auto n = static_cast<double>(kernels) * static_cast<double>(state.iterations());
  state.counters["kernels_per_cpu_s"] = n / std::max(cpu_s, 1e-9);
  state.counters["rows_per_cpu_s"] = n * rows / std::max(cpu_s, 1e-9);
  for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(path + s);
}

BENCHMARK(BM_SqliteFloor)
    ->ArgNames({"kernels", "rows", "per_statement"})
    ->Args({1000000, 1, 32})
    ->Args({1000000, 3, 1})
    ->Args({1000000, 3, 32})
    ->Args({1000000, 3, 250})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

}  // namespace
