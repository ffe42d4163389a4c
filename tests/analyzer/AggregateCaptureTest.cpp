// Aggregate captures (docs/aggregate.md) read by the analyses: summary and cct from the aggregate
// rows against exact statistics of the same synthetic records, and every other analysis saying in
// one line that it needs a trace.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "Subprocess.h"
#include "TempDir.h"
#include "cct/CallingContext.h"
#include "fuselens/db/Aggregate.h"
#include "fuselens/db/AggregateStore.h"
#include "fuselens/db/Layout.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/Writer.h"
#include "steps/Steps.h"
#include "store/AnalysisStore.h"
#include "summary/Summary.h"

#ifndef PROF_ANALYZE_PATH
#error "PROF_ANALYZE_PATH must name the prof-analyze binary"
#endif

namespace fuselens::analyzer {
namespace {

constexpr std::uint32_t kPid = 77;

struct Written {
  std::map<std::string, std::vector<std::int64_t>> by_name;  // demangled name -> GPU times
  std::map<std::int64_t, std::int64_t> gpu_by_site;          // tree node -> GPU time
  std::int64_t copy_bytes = 0;
};

// Writes an aggregate capture: two launch sites (tree nodes 2 and 3 under main), two kernels,
// one with two grids, copies from site 3; `windowed` also stores a capture window.
Written write_aggregate_capture(const std::string& path,
                                db::TraceLayout layout = db::TraceLayout::Full) {
  Written w;
  db::RunInfo run;
  run.command_line = {"./synthetic-aggregate"};
  run.trace = "cuda,api,context";
  auto writer = db::Writer::create(path, run, layout);
  db::ProcessInfo p;
  p.pid = kPid;
  p.executable = "/bin/synthetic";
  writer.write_process(p);
  db::CallingContextTree tree;
  tree.pid = kPid;
  tree.frames = {{db::FrameKind::Native, "/bin/synthetic", 0x10, "main", "app.cu", 10},
                 {db::FrameKind::Native, "/bin/synthetic", 0x20, "forward", "app.cu", 20},
                 {db::FrameKind::Native, "/bin/synthetic", 0x30, "backward", "app.cu", 30}};
  tree.nodes = {{0, 0}, {0, 0}, {1, 1}, {1, 2}};
  db::Aggregator aggregator(kPid, true);
  std::mt19937_64 rng(5);
  std::lognormal_distribution<double> time(std::log(8000.0), 0.5);
  std::map<std::uint32_t, std::int64_t> node_of;
  std::uint64_t t = 1000;
  for (std::uint32_t c = 1; c <= 3000; ++c) {
    db::RecordBatch b;
    db::ApiCallRecord call;
    call.pid = kPid;
    call.correlation_id = c;
    call.name = "cudaLaunchKernel";
    call.start_ns = t;
    call.end_ns = t + 100;
    b.api_calls.push_back(call);
    db::KernelRecord k;
    k.pid = kPid;
    k.correlation_id = c;
    k.mangled_name = c % 3 == 0 ? "_Z4reluPf" : "_Z4gemmPf";
    k.grid_x = c % 5 == 0 ? 128 : 64;
    k.start_ns = t + 500;
    const auto d = static_cast<std::int64_t>(std::llround(time(rng)));
    k.end_ns = k.start_ns + static_cast<std::uint64_t>(d);
    b.kernels.push_back(k);
    const std::int64_t node = c % 2 == 0 ? 2 : 3;
    node_of[c] = node;
    w.by_name[db::demangle(k.mangled_name)].push_back(d);
    w.gpu_by_site[node] += d;
    if (c % 100 == 0) {
      db::MemcpyRecord m;
      m.pid = kPid;
      m.correlation_id = c + 100000;
      node_of[c + 100000] = 3;
      m.copy_kind = db::MemcpyKind::DeviceToHost;
      m.bytes = 1 << 20;
      m.start_ns = t;
      m.end_ns = t + 300;
      b.memcpys.push_back(m);
      w.copy_bytes += m.bytes;
    }
    aggregator.add(b);
    t += 20000;
  }
  const auto ids = writer.write_calling_contexts(tree);
  writer.write_aggregates(aggregator.finish([&](std::uint32_t c) {
    const auto it = node_of.find(c);
    return it == node_of.end() ? std::int64_t{-1} : it->second;
  }),
                          ids);
  writer.finalize(db::RunEnd{db::EndReason::Exited, 0, std::nullopt, 2});
  return w;
}

TEST(AggregateCapture, SummaryKernelTableIsExactAndItsMedianFromTheSketchWithinAlpha) {
  fuselens::test::TempDir dir;
  const auto path = dir.file("agg.sqlite");
  const auto w = write_aggregate_capture(path);
  db::Reader reader(path);
  const auto s = summarize(reader);
  EXPECT_TRUE(s.from_aggregate_mode);
  EXPECT_DOUBLE_EQ(s.sketch_alpha, 0.01);
  ASSERT_EQ(s.kernels.size(), w.by_name.size());
  for (const auto& row : s.kernels) {
    auto values = w.by_name.at(row.name);
    std::sort(values.begin(), values.end());
    std::int64_t total = 0;
    for (const auto v : values) total += v;
    EXPECT_EQ(row.stats.count, static_cast<std::int64_t>(values.size()));
    EXPECT_EQ(row.stats.total_ns, total);
    EXPECT_EQ(row.stats.min_ns, values.front());
    EXPECT_EQ(row.stats.max_ns, values.back());
    const double median = static_cast<double>(values[(values.size() - 1) / 2]);
    EXPECT_LE(std::abs(row.stats.median_ns - median), 0.01 * median * (1 + 1e-9)) << row.name;
  }
  ASSERT_EQ(s.memory_operations.size(), 1u);
  EXPECT_EQ(s.memory_operations[0].name, "[CUDA memcpy Device-to-Host]");
  EXPECT_EQ(s.memory_operations[0].total_bytes, w.copy_bytes);
  EXPECT_EQ(s.totals.kernel_count, 3000);
}

TEST(AggregateCapture, CallingContextTreeChargesEachSiteItsWholeRunCost) {
  fuselens::test::TempDir dir;
  const auto path = dir.file("agg.sqlite");
  const auto w = write_aggregate_capture(path);
  db::Reader reader(path);
  const auto report = calling_context_report(reader, CctOptions{});
  ASSERT_TRUE(report.available) << report.unavailable_reason;
  EXPECT_TRUE(report.from_aggregate_mode);
  std::int64_t total = 0;
  for (const auto& [node, ns] : w.gpu_by_site) total += ns;
  EXPECT_EQ(report.total.gpu_time_ns, total + 30 * 300);  // + the 30 copies
  EXPECT_EQ(report.unattributed_operations, 0);
  std::map<std::string, std::int64_t> inclusive;
  for (const auto& row : report.rows) inclusive[row.label] = row.inclusive.gpu_time_ns;
  const auto find = [&](const std::string& prefix) {
    for (const auto& [label, ns] : inclusive)
      if (label.rfind(prefix, 0) == 0) return ns;
    return std::int64_t{-1};
  };
  EXPECT_EQ(find("forward"), w.gpu_by_site.at(2));
  EXPECT_EQ(find("backward"), w.gpu_by_site.at(3) + 30 * 300);  // + the 30 copies
}

// The lean layout (db/Layout.h): aggregate rows written through a lean writer, and an aggregate
// capture converted to lean, give the full layout's summary and calling-context tree.
TEST(AggregateCapture, LeanLayoutGivesTheSameSummaryAndTree) {
  fuselens::test::TempDir dir;
  const auto full = dir.file("agg.sqlite");
  const auto lean = dir.file("agg_lean.sqlite");
  const auto converted = dir.file("agg_converted.sqlite");
  write_aggregate_capture(full);
  write_aggregate_capture(lean, db::TraceLayout::Lean);
  db::convert_to_lean(full, converted);
  db::Reader full_reader(full);
  const auto expected = summarize(full_reader);
  const auto expected_tree = calling_context_report(full_reader, CctOptions{});
  for (const auto& path : {lean, converted}) {
    db::Reader reader(path);
    EXPECT_TRUE(reader.lean()) << path;
    const auto s = summarize(reader);
    EXPECT_TRUE(s.from_aggregate_mode) << path;
    ASSERT_EQ(s.kernels.size(), expected.kernels.size()) << path;
    for (std::size_t i = 0; i < s.kernels.size(); ++i) {
      EXPECT_EQ(s.kernels[i].name, expected.kernels[i].name) << path;
      EXPECT_EQ(s.kernels[i].stats.count, expected.kernels[i].stats.count) << path;
      EXPECT_EQ(s.kernels[i].stats.total_ns, expected.kernels[i].stats.total_ns) << path;
      EXPECT_EQ(s.kernels[i].stats.median_ns, expected.kernels[i].stats.median_ns) << path;
    }
    EXPECT_EQ(s.totals.kernel_count, expected.totals.kernel_count) << path;
    const auto tree = calling_context_report(reader, CctOptions{});
    ASSERT_TRUE(tree.available) << tree.unavailable_reason;
    EXPECT_TRUE(tree.from_aggregate_mode) << path;
    EXPECT_EQ(tree.total.gpu_time_ns, expected_tree.total.gpu_time_ns) << path;
    EXPECT_EQ(tree.rows.size(), expected_tree.rows.size()) << path;
  }
}

TEST(AggregateCapture, OtherAnalysesSayInOneLineThatTheyNeedATrace) {
  fuselens::test::TempDir dir;
  const auto path = dir.file("agg.sqlite");
  write_aggregate_capture(path);
  const auto summary = fuselens::test::run_cli(dir, {"summary", path});
  EXPECT_EQ(summary.status, 0) << summary.err;
  EXPECT_NE(summary.out.find("Mode:"), std::string::npos);
  EXPECT_NE(summary.err.find("whole run's statistics"), std::string::npos) << summary.err;
  const auto cct = fuselens::test::run_cli(dir, {"cct", path});
  EXPECT_EQ(cct.status, 0) << cct.err;
  EXPECT_NE(cct.out.find("forward"), std::string::npos);
  for (const std::string command : {"flags", "steps", "roofline"}) {
    const auto r = fuselens::test::run_cli(dir, {command, path});
    const auto note = r.err.find("needs a trace");
    EXPECT_NE(note, std::string::npos) << command << ": " << r.err;
    EXPECT_EQ(
        std::count(r.err.begin(),
                   r.err.begin() + static_cast<std::ptrdiff_t>(r.err.find('\n', note) + 1), '\n'),
        1)
        << r.err;
  }
}

// prof-run stores cct's and flags' results when the run ends (analyzer/store); flags then
// answers from them without opening the window, and must still say that it shows the windows'
// trace, not the whole run.
TEST(AggregateCapture, FlagsFromStoredResultsStillSayTheyNeedATrace) {
  fuselens::test::TempDir dir;
  const auto path = dir.file("agg.sqlite");
  write_aggregate_capture(path);
  {
    // The trace of one capture window, as the collector keeps it in aggregate mode.
    auto writer = db::Writer::open(path);
    db::RecordBatch b;
    for (std::uint32_t c = 1; c <= 20; ++c) {
      db::ApiCallRecord call;
      call.pid = kPid;
      call.correlation_id = 500000 + c;
      call.name = "cudaLaunchKernel";
      call.start_ns = 100'000'000 + 20000 * c;
      call.end_ns = call.start_ns + 100;
      b.api_calls.push_back(call);
      db::KernelRecord k;
      k.pid = kPid;
      k.correlation_id = call.correlation_id;
      k.mangled_name = "_Z4gemmPf";
      k.start_ns = call.start_ns + 500;
      k.end_ns = k.start_ns + 4000;
      b.kernels.push_back(k);
    }
    writer.write(b);
    writer.write_capture_windows({{kPid, 100'000'000, 100'500'000, "time"}});
  }
  {
    db::Reader reader(db::Connection(path, db::Connection::Mode::ReadWrite));
    if (!stored_step_report(reader)) store_steps(reader);
  }
  store_analyses(path);
  {
    const db::Reader reader(path, db::TimestampCheck::DeferLargeTables);
    const auto window = stored_results_window(reader, parse_window(kStoredWindowSpec), {});
    ASSERT_TRUE(window.has_value());
    ASSERT_TRUE(load_stored_flags(reader, *window).has_value());  // the stored path is taken
  }
  const auto r = fuselens::test::run_cli(dir, {"flags", path});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("needs a trace"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace fuselens::analyzer

// The real aggregate captures from the H100 (scripts/device/plans/aggregate.sh, 2026-11-27,
// tests/data/aggregate/): ten million launches of launch_overhead and 5,000 steps of mlp_train.py,
// each checked on the H100 against the full trace of the same run (counts exact, totals within
// 1 %). Here: the summary reads them (every launch counted), cct answers, the other analyses say
// in one line that they need a trace.
TEST(AggregateCapture, RealH100CapturesAnswerOrSayTheyNeedATrace) {
  fuselens::test::TempDir dir;
  const std::string data = std::string(FUSELENS_TEST_DATA_DIR) + "/aggregate/";
  const std::pair<const char*, long> captures[] = {
      {"launch_overhead_10m_aggregate.sqlite", 10'000'100},
      {"mlp_train_5000_aggregate.sqlite", 140'086}};
  for (const auto& [file, launches] : captures) {
    const std::string path = data + file;
    fuselens::db::Reader reader(path);
    ASSERT_TRUE(fuselens::db::has_aggregates(reader)) << file;
    EXPECT_EQ(reader.query_int("SELECT SUM(count) FROM aggregate_kernel"), launches) << file;
    const auto summary = fuselens::test::run_cli(dir, {"summary", path, "--format", "json"});
    EXPECT_EQ(summary.status, 0) << file << ": " << summary.err;
    EXPECT_NE(summary.out.find("\"kernels\""), std::string::npos) << file;
    const auto cct = fuselens::test::run_cli(dir, {"cct", path});
    EXPECT_EQ(cct.status, 0) << file << ": " << cct.err;
    const auto flags = fuselens::test::run_cli(dir, {"flags", path});
    EXPECT_NE(flags.err.find("needs a trace"), std::string::npos) << file << ": " << flags.err;
  }
}
