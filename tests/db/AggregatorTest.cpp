// Aggregator (db/include/fuselens/db/Aggregate.h) against exact statistics computed here from the
// same synthetic records, the rows' round trip through Writer::write_aggregates and
// read_aggregates, and hostile aggregate rows refused with one line.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "TempDir.h"
#include "fuselens/db/Aggregate.h"
#include "fuselens/db/AggregateStore.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/Writer.h"

using namespace fuselens::db;

namespace {

constexpr std::uint32_t kPid = 42;

struct Synthetic {
  std::vector<RecordBatch> batches;
  // exact expectations, by (node, name, grid_x): GPU times and latencies
  std::map<std::tuple<std::int64_t, std::string, int>, std::vector<std::int64_t>> gpu, latency;
  std::map<std::uint32_t, std::int64_t> node_of;  // correlation -> node
  std::int64_t copy_bytes = 0, copies = 0, memsets = 0, memset_bytes = 0;
  std::int64_t peak = 0;
};

// Kernels of three names and two grids from four call sites, their launch calls (some in the
// batch after their kernel, some never), copies, memsets and allocations.
Synthetic make_synthetic(bool with_nodes) {
  Synthetic s;
  std::mt19937_64 rng(11);
  std::lognormal_distribution<double> time(std::log(4000.0), 0.6);
  std::uniform_int_distribution<int> pick(0, 5);
  const std::string names[] = {"_Z4gemmPf", "_Z4reluPf", "_Z6reducePf"};
  std::uint32_t correlation = 1;
  std::uint64_t t = 1'000'000;
  std::int64_t allocated = 0;
  RecordBatch late;  // API calls that arrive one batch after their kernel
  for (int b = 0; b < 40; ++b) {
    RecordBatch batch = std::move(late);
    late = RecordBatch();
    for (int i = 0; i < 500; ++i, ++correlation) {
      const int which = pick(rng);
      const std::int64_t node = with_nodes ? (which % 4) + 1 : -1;
      s.node_of[correlation] = node;
      ApiCallRecord call;
      call.pid = kPid;
      call.correlation_id = correlation;
      call.name = "cudaLaunchKernel";
      call.start_ns = t;
      call.end_ns = t + 2000;
      KernelRecord k;
      k.pid = kPid;
      k.correlation_id = correlation;
      k.mangled_name = names[which % 3];
      k.grid_x = which < 3 ? 64 : 128;
      k.block_x = 256;
      k.start_ns = t + 5000 + static_cast<std::uint64_t>(which) * 100;
      const auto d = static_cast<std::uint64_t>(std::llround(time(rng)));
      k.end_ns = k.start_ns + d;
      batch.kernels.push_back(k);
      const auto key = std::make_tuple(node, k.mangled_name, k.grid_x);
      s.gpu[key].push_back(static_cast<std::int64_t>(d));
      if (i % 50 != 7) {  // 1 in 50 launch calls is never recorded
        s.latency[key].push_back(static_cast<std::int64_t>(k.start_ns - call.start_ns));
        (i % 3 == 0 ? late : batch).api_calls.push_back(call);
      }
      t += 10000;
    }
    MemcpyRecord c;
    c.pid = kPid;
    c.correlation_id = correlation;
    s.node_of[correlation++] = with_nodes ? 9 : -1;
    c.copy_kind = MemcpyKind::HostToDevice;
    c.src_kind = MemoryKind::Pageable;
    c.dst_kind = MemoryKind::Device;
    c.bytes = 4096 * static_cast<std::uint64_t>(b + 1);
    c.start_ns = t;
    c.end_ns = t + 700;
    batch.memcpys.push_back(c);
    s.copy_bytes += static_cast<std::int64_t>(c.bytes);
    ++s.copies;
    MemsetRecord m;
    m.pid = kPid;
    m.correlation_id = correlation;
    s.node_of[correlation++] = with_nodes ? 9 : -1;
    m.bytes = 100;
    m.memory_kind = MemoryKind::Device;
    m.start_ns = t;
    m.end_ns = t + 50;
    batch.memsets.push_back(m);
    s.memset_bytes += 100;
    ++s.memsets;
    MemoryEventRecord e;
    e.pid = kPid;
    e.context_id = 1;
    e.bytes = 1000 * static_cast<std::uint64_t>(b % 7 + 1);
    e.operation = b % 3 == 2 ? MemoryOperation::Release : MemoryOperation::Allocation;
    allocated = e.operation == MemoryOperation::Allocation
                    ? allocated + static_cast<std::int64_t>(e.bytes)
                    : std::max<std::int64_t>(allocated - static_cast<std::int64_t>(e.bytes), 0);
    s.peak = std::max(s.peak, allocated);
    batch.memory_events.push_back(e);
    s.batches.push_back(std::move(batch));
  }
  s.batches.push_back(std::move(late));
  return s;
}

AggregateSet aggregate(const Synthetic& s, bool with_nodes) {
  Aggregator a(kPid, with_nodes);
  for (const auto& b : s.batches) a.add(b);
  return a.finish([&](std::uint32_t c) {
    const auto it = s.node_of.find(c);
    return it == s.node_of.end() ? -1 : it->second;
  });
}

void expect_matches(const Synthetic& s, const AggregateSet& set) {
  ASSERT_EQ(set.kernels.size(), s.gpu.size());
  std::int64_t kernels = 0;
  for (const auto& row : set.kernels) {
    const auto key = std::make_tuple(row.node, row.mangled_name, row.grid_x);
    ASSERT_TRUE(s.gpu.count(key)) << row.mangled_name;
    const auto& exact = s.gpu.at(key);
    kernels += row.gpu.count;
    EXPECT_EQ(row.gpu.count, static_cast<std::int64_t>(exact.size()));
    std::int64_t total = 0;
    for (const auto v : exact) total += v;
    EXPECT_EQ(row.gpu.total, total);
    EXPECT_EQ(row.gpu.min, *std::min_element(exact.begin(), exact.end()));
    EXPECT_EQ(row.gpu.max, *std::max_element(exact.begin(), exact.end()));
    auto sorted = exact;
    std::sort(sorted.begin(), sorted.end());
    for (const double q : {0.5, 0.9, 0.99}) {
      const double want = static_cast<double>(
          sorted[static_cast<std::size_t>(std::floor(q * static_cast<double>(sorted.size() - 1)))]);
      EXPECT_LE(std::abs(row.gpu.sketch.quantile(q) - want), 0.01 * want * (1 + 1e-9)) << q;
    }
    const auto& lat = s.latency.at(key);
    EXPECT_EQ(row.latency.count, static_cast<std::int64_t>(lat.size()));
    std::int64_t lat_total = 0;
    for (const auto v : lat) lat_total += v;
    EXPECT_EQ(row.latency.total, lat_total);
    EXPECT_EQ(row.latency.min, *std::min_element(lat.begin(), lat.end()));
    EXPECT_EQ(row.latency.max, *std::max_element(lat.begin(), lat.end()));
  }
  ASSERT_EQ(set.processes.size(), 1u);
  EXPECT_EQ(set.processes[0].kernels, kernels);
  EXPECT_EQ(set.processes[0].copies, s.copies);
  ASSERT_EQ(set.transfers.size(), 2u);
  for (const auto& t : set.transfers) {
    if (t.operation == TransferOperation::Memcpy) {
      EXPECT_EQ(t.count, s.copies);
      EXPECT_EQ(t.bytes, s.copy_bytes);
      EXPECT_EQ(t.total_ns, 700 * s.copies);
      EXPECT_EQ(t.copy_kind, MemcpyKind::HostToDevice);
    } else {
      EXPECT_EQ(t.count, s.memsets);
      EXPECT_EQ(t.bytes, s.memset_bytes);
      EXPECT_EQ(t.src_kind, MemoryKind::Device);
    }
  }
  ASSERT_EQ(set.memory.size(), 1u);
  EXPECT_EQ(set.memory[0].peak_bytes, s.peak);
}

RunInfo run_info() {
  RunInfo r;
  r.command_line = {"synthetic"};
  r.trace = "cuda,api,aggregate";
  return r;
}

}  // namespace

TEST(Aggregator, CountsTotalsAndExtremesAreExactAndQuantilesWithinAlphaWithoutContexts) {
  const auto s = make_synthetic(false);
  const auto set = aggregate(s, false);
  expect_matches(s, set);
  EXPECT_EQ(set.processes[0].without_context, set.processes[0].kernels + s.copies + s.memsets);
}

TEST(Aggregator, RecordsAreAttributedToTheNodeOfTheirCall) {
  const auto s = make_synthetic(true);
  const auto set = aggregate(s, true);
  expect_matches(s, set);
  EXPECT_EQ(set.processes[0].without_context, 0);
  for (const auto& t : set.transfers) EXPECT_EQ(t.node, 9);
}

TEST(Aggregator, KernelWaitingForACallThatNeverComesHasNoLatency) {
  Aggregator a(kPid, false);
  RecordBatch b;
  KernelRecord k;
  k.pid = kPid;
  k.correlation_id = 5;
  k.mangled_name = "k";
  k.start_ns = 100;
  k.end_ns = 50;  // end before start: GPU time 0
  b.kernels.push_back(k);
  a.add(b);
  for (std::uint32_t i = 0; i < Aggregator::kGenerations + 1; ++i) a.add(RecordBatch());
  ApiCallRecord late;
  late.correlation_id = 5;
  late.start_ns = 10;
  RecordBatch with_call;
  with_call.api_calls.push_back(late);
  a.add(with_call);
  const auto set = a.finish({});
  ASSERT_EQ(set.kernels.size(), 1u);
  EXPECT_EQ(set.kernels[0].gpu.count, 1);
  EXPECT_EQ(set.kernels[0].gpu.total, 0);
  EXPECT_EQ(set.kernels[0].latency.count, 0);
}

TEST(Aggregator, RowsRoundTripThroughTheWriterAndTheReader) {
  fuselens::test::TempDir dir;
  const auto path = dir.file("agg.sqlite");
  const auto s = make_synthetic(true);
  const auto set = aggregate(s, true);
  {
    auto w = Writer::create(path, run_info());
    CallingContextTree tree;
    tree.pid = kPid;
    tree.frames.push_back({FrameKind::Native, "/bin/app", 16, "main", "", 0});
    tree.nodes.push_back({0, 0});
    for (int i = 1; i <= 9; ++i) tree.nodes.push_back({0, 0});
    const auto ids = w.write_calling_contexts(tree);
    ASSERT_EQ(ids.size(), tree.nodes.size());
    w.write_aggregates(set, ids);
    w.finalize(RunEnd{EndReason::Exited, 0, std::nullopt, 1});
  }
  Reader reader(path);
  ASSERT_TRUE(has_aggregates(reader));
  const auto back = read_aggregates(reader);
  ASSERT_EQ(back.kernels.size(), set.kernels.size());
  for (std::size_t i = 0; i < set.kernels.size(); ++i) {
    EXPECT_EQ(back.kernels[i].mangled_name, set.kernels[i].mangled_name);
    EXPECT_EQ(back.kernels[i].demangled_name, demangle(set.kernels[i].mangled_name));
    EXPECT_EQ(back.kernels[i].gpu.count, set.kernels[i].gpu.count);
    EXPECT_EQ(back.kernels[i].gpu.total, set.kernels[i].gpu.total);
    EXPECT_EQ(back.kernels[i].gpu.sketch.encode(), set.kernels[i].gpu.sketch.encode());
    EXPECT_EQ(back.kernels[i].latency.count, set.kernels[i].latency.count);
    // stored as the cct_node id of the tree index
    EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM cct_node WHERE id = " +
                               std::to_string(back.kernels[i].node)),
              1);
  }
  EXPECT_EQ(back.transfers.size(), set.transfers.size());
  EXPECT_EQ(back.memory.size(), 1u);
  EXPECT_EQ(back.memory[0].peak_bytes, s.peak);
  EXPECT_EQ(back.processes[0].kernels, set.processes[0].kernels);
}

namespace {

// A finalized aggregate capture with one row of each table, changed by `sql` afterwards.
std::string hostile(const fuselens::test::TempDir& dir, const std::string& name,
                    const std::string& sql) {
  const auto path = dir.file(name);
  {
    auto w = Writer::create(path, run_info());
    Aggregator a(kPid, false);
    RecordBatch b;
    KernelRecord k;
    k.pid = kPid;
    k.mangled_name = "k";
    k.start_ns = 10;
    k.end_ns = 20;
    b.kernels.push_back(k);
    MemcpyRecord c;
    c.pid = kPid;
    c.bytes = 8;
    b.memcpys.push_back(c);
    MemoryEventRecord e;
    e.bytes = 8;
    b.memory_events.push_back(e);
    a.add(b);
    w.write_aggregates(a.finish({}), {});
    w.finalize(RunEnd{EndReason::Exited, 0, std::nullopt, 1});
  }
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
  return path;
}

std::string refusal(const std::string& path) {
  try {
    Reader reader(path);
    read_aggregates(reader);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(AggregateStore, HostileRowsAreRefusedWithOneLine) {
  fuselens::test::TempDir dir;
  const std::pair<const char*, const char*> cases[] = {
      {"UPDATE aggregate_kernel SET count = -1", "negative GPU time"},
      {"CREATE TABLE t AS SELECT * FROM aggregate_kernel; DROP TABLE aggregate_kernel; "
       "ALTER TABLE t RENAME TO aggregate_kernel; UPDATE aggregate_kernel SET total_ns = NULL",
       "NULL in GPU time"},
      {"UPDATE aggregate_kernel SET min_ns = 100, max_ns = 5", "min > max"},
      {"UPDATE aggregate_kernel SET count = 7", "sketch of another count"},
      {"UPDATE aggregate_kernel SET sketch = x'00'", "does not decode"},
      {"UPDATE aggregate_kernel SET sketch = 'text'", "holds no GPU time sketch"},
      {"UPDATE aggregate_kernel SET latency_count = 5", "latency"},
      {"UPDATE aggregate_kernel SET demangled_name_id = 99999", "missing from strings"},
      {"UPDATE aggregate_kernel SET cct_node_id = -4", "negative cct_node_id"},
      {"UPDATE aggregate_transfer SET operation = 7", "outside its enumeration"},
      {"UPDATE aggregate_transfer SET bytes = -8", "negative bytes"},
      {"CREATE TABLE t AS SELECT * FROM aggregate_memory; DROP TABLE aggregate_memory; "
       "ALTER TABLE t RENAME TO aggregate_memory; UPDATE aggregate_memory SET peak_bytes = NULL",
       "NULL in peak_bytes"},
      {"CREATE TABLE t AS SELECT * FROM aggregate_process; DROP TABLE aggregate_process; "
       "ALTER TABLE t RENAME TO aggregate_process; UPDATE aggregate_process SET sketch_alpha = "
       "NULL",
       "sketch_alpha"},
      {"UPDATE aggregate_process SET kernels = -3", "negative kernels"},
      {"DROP TABLE aggregate_memory", "table aggregate_memory is missing"},
  };
  int i = 0;
  for (const auto& [sql, want] : cases) {
    const auto message = refusal(hostile(dir, "h" + std::to_string(i++) + ".sqlite", sql));
    EXPECT_NE(message.find(want), std::string::npos) << sql << ": " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  // A view in place of a table: the Reader refuses the capture.
  const auto view = hostile(dir, "view.sqlite",
                            "DROP TABLE aggregate_kernel; CREATE VIEW aggregate_kernel AS "
                            "SELECT * FROM kernel");
  EXPECT_NE(refusal(view), "");
  // The unchanged capture reads.
  EXPECT_EQ(refusal(hostile(dir, "ok.sqlite", "SELECT 1")), "");
}
