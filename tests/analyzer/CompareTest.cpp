// Compare: glob pairing, per-range statistics on synthetic captures, the two-capture kernel diff,
// the real fusion_bench capture, and `prof-analyze compare` run as a program.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "Subprocess.h"
#include "TestSupport.h"
#include "compare/Compare.h"
#include "compare/CompareFormat.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/Writer.h"

#ifndef PROF_ANALYZE_PATH
#error "PROF_ANALYZE_PATH must name the prof-analyze binary"
#endif

namespace fuselens::analyzer {
namespace {

using fuselens::test::Result;
using fuselens::test::run_cli;
using fuselens::test::slurp;
using test::TempDir;

constexpr std::uint32_t kPid = 100, kTid = 1;
const std::string kFusionBench = std::string(FUSELENS_TEST_DATA_DIR) + "/fusion_bench.sqlite";
const std::string kFusionBenchArgs =
    std::string(FUSELENS_TEST_DATA_DIR) + "/fusion_bench_args.sqlite";

/// Builds a capture: ranges with payloads, launches of one or more kernels, copies, memsets
/// and device-memory events. Times in ns.
class Capture {
 public:
  void range(const std::string& text, std::int64_t start, std::int64_t end,
             std::optional<std::int64_t> iterations = std::nullopt) {
    db::NvtxRangeRecord r;
    r.pid = kPid;
    r.tid = kTid;
    r.text = text;
    r.start_ns = static_cast<std::uint64_t>(start);
    r.end_ns = static_cast<std::uint64_t>(end);
    if (iterations) {
      r.payload_kind = db::PayloadKind::UInt64;
      r.payload_int = *iterations;
    }
    batch_.nvtx_ranges.push_back(r);
  }
  /// One launch call at `call_start` and one kernel per duration, back to back from `start`.
  void launch(const std::string& name, std::int64_t call_start, std::int64_t start,
              const std::vector<std::int64_t>& durations) {
    const std::uint32_t corr = call("cudaLaunchKernel", call_start);
    for (const auto d : durations) {
      db::KernelRecord k;
      k.pid = kPid;
      k.stream_id = 7;
      k.correlation_id = corr;
      k.start_ns = static_cast<std::uint64_t>(start);
      k.end_ns = static_cast<std::uint64_t>(start + d);
      k.mangled_name = name;
      batch_.kernels.push_back(k);
      start += d;
    }
  }
  void copy(std::int64_t call_start, std::uint64_t bytes) {
    db::MemcpyRecord m;
    m.pid = kPid;
    m.correlation_id = call("cudaMemcpyAsync", call_start);
    m.start_ns = static_cast<std::uint64_t>(call_start + 10);
    m.end_ns = m.start_ns + 100;
    m.copy_kind = db::MemcpyKind::HostToDevice;
    m.bytes = bytes;
    m.is_async = true;
    batch_.memcpys.push_back(m);
  }
  void memset(std::int64_t call_start, std::uint64_t bytes) {
    db::MemsetRecord m;
    m.pid = kPid;
    m.correlation_id = call("cudaMemsetAsync", call_start);
    m.start_ns = static_cast<std::uint64_t>(call_start + 10);
    m.end_ns = m.start_ns + 100;
    m.bytes = bytes;
    m.memory_kind = db::MemoryKind::Device;
    m.is_async = true;
    batch_.memsets.push_back(m);
  }
  void memory(std::uint32_t device, std::int64_t t, bool allocation, std::uint64_t bytes) {
    db::MemoryEventRecord e;
    e.pid = kPid;
    e.device_id = device;
    e.timestamp_ns = static_cast<std::uint64_t>(t);
    e.operation = allocation ? db::MemoryOperation::Allocation : db::MemoryOperation::Release;
    e.memory_kind = db::MemoryKind::Device;
    e.bytes = bytes;
    batch_.memory_events.push_back(e);
  }
  void write(const std::string& path) const {
    db::RunInfo run;
    run.command_line = {"./synthetic"};
    auto writer = db::Writer::create(path, run);
    db::ProcessInfo p;
    p.pid = kPid;
    writer.write_process(p);
    writer.write(batch_);
    writer.finalize({db::EndReason::Exited, 0, std::nullopt, 2});
  }

 private:
  std::uint32_t call(const std::string& name, std::int64_t start) {
    db::ApiCallRecord a;
    a.pid = kPid;
    a.tid = kTid;
    a.name = name;
    a.start_ns = static_cast<std::uint64_t>(start);
    a.end_ns = static_cast<std::uint64_t>(start + 5);
    a.correlation_id = next_++;
    batch_.api_calls.push_back(a);
    return a.correlation_id;
  }
  db::RecordBatch batch_;
  std::uint32_t next_ = 1;
};

/// op/variant/shape ranges, times in us x 1000:
///   mlp/slow/batch8   instance 1 [1000, 2000] payload 2: launches at 1100 (kernels 300+100,
///                     one launch of two kernels) and 1200 (a 200) -> 600 ns / 2 = 300 per it;
///                     a copy of 1000 B and a memset of 24 B inside;
///                     instance 2 [3000, 4000] payload 2: one launch of a 1000 -> 500 per it;
///                     median (300, 500) = 400 ns; kernels 4 / 4 it = 1, launches 3 / 4;
///   mlp/fast/batch8   [5000, 6000] payload 4: one launch of a 400 -> 100 ns per iteration;
///   mlp/fast/batch16  [7000, 8000], no payload: a 50;  (no slow/batch16: unpaired)
/// device memory: +1000 @500 (before every range), +4000 @1500, -4000 @1800, +10 @3500 on
/// device 0; +7 @1600 on device 1 -> slow/batch8 peaks: device 0 5000, device 1 7.
Capture synthetic() {
  Capture c;
  c.range("mlp/slow/batch8", 1000, 2000, 2);
  c.launch("k_big", 1100, 1300, {300, 100});
  c.launch("k_a", 1200, 1800, {200});
  c.copy(1300, 1000);
  c.memset(1400, 24);
  c.range("mlp/slow/batch8", 3000, 4000, 2);
  c.launch("k_a", 3100, 3200, {1000});
  c.range("mlp/fast/batch8", 5000, 6000, 4);
  c.launch("k_fused", 5100, 5200, {400});
  c.range("mlp/fast/batch16", 7000, 8000);
  c.launch("k_fused", 7100, 7200, {50});
  c.memory(0, 500, true, 1000);
  c.memory(0, 1500, true, 4000);
  c.memory(1, 1600, true, 7);
  c.memory(0, 1800, false, 4000);
  c.memory(0, 3500, true, 10);
  return c;
}

struct Written {
  TempDir dir;
  std::string path;
  explicit Written(const Capture& c) : path(dir.file("c.sqlite")) { c.write(path); }
};

TEST(Glob, CapturesWhatTheWildcardsMatched) {
  EXPECT_EQ(glob_match("gemm/unfused/*", "gemm/unfused/M64"), std::vector<std::string>{"M64"});
  EXPECT_FALSE(glob_match("gemm/unfused/*", "gemm/fused/M64"));
  EXPECT_EQ(glob_match("*/fused/*", "swish/fused/1024x1024"),
            (std::vector<std::string>{"swish", "1024x1024"}));
  EXPECT_EQ(glob_match("a?c", "abc"), std::vector<std::string>{"b"});
  EXPECT_EQ(glob_match("exact", "exact"), std::vector<std::string>{});
  EXPECT_FALSE(glob_match("exact", "exactly"));
  EXPECT_EQ(glob_match("*", ""), std::vector<std::string>{""});
}

// The reference: the recursive leftmost-shortest search the matcher replaced (exponential in the
// stars, so only for short patterns here).
bool reference_glob(std::string_view p, std::string_view t, std::vector<std::string>& captures) {
  if (p.empty()) return t.empty();
  if (p.front() == '*') {
    for (std::size_t n = 0; n <= t.size(); ++n) {
      captures.emplace_back(t.substr(0, n));
      if (reference_glob(p.substr(1), t.substr(n), captures)) return true;
      captures.pop_back();
    }
    return false;
  }
  if (t.empty()) return false;
  if (p.front() != '?' && p.front() != t.front()) return false;
  if (p.front() == '?') captures.emplace_back(t.substr(0, 1));
  if (reference_glob(p.substr(1), t.substr(1), captures)) return true;
  if (p.front() == '?') captures.pop_back();
  return false;
}

TEST(Glob, AgreesWithTheRecursiveSearchOnEveryShortPattern) {
  // Every pattern of up to 5 symbols over {a, b, *, ?} against every text of up to 6 letters
  // over {a, b}: same verdict and the same captured texts.
  const std::string symbols = "ab*?";
  std::vector<std::string> patterns{""}, texts{""};
  for (std::size_t i = 0; i < patterns.size() && patterns[i].size() < 5; ++i)
    for (const char c : symbols) patterns.push_back(patterns[i] + c);
  for (std::size_t i = 0; i < texts.size() && texts[i].size() < 6; ++i)
    for (const char c : std::string("ab")) texts.push_back(texts[i] + c);
  int matches = 0;
  for (const auto& p : patterns) {
    for (const auto& t : texts) {
      std::vector<std::string> expected;
      const bool match = reference_glob(p, t, expected);
      const auto got = glob_match(p, t);
      ASSERT_EQ(got.has_value(), match) << "'" << p << "' on '" << t << "'";
      if (match) {
        EXPECT_EQ(*got, expected) << "'" << p << "' on '" << t << "'";
        ++matches;
      }
    }
  }
  EXPECT_GT(matches, 1000);
}

// Issue 22: stars made the recursive matcher exponential ('********Z' took > 60 s on a capture's
// range names) and 60,000 stars overflowed its stack. Both finish here at once; before, this test
// crashed or ran into ctest's timeout.
TEST(Glob, ManyStarsNeitherHangNorOverflowTheStack) {
  const std::string text(2000, 'a');
  EXPECT_FALSE(glob_match(std::string(40, '*') + "Z", text));
  EXPECT_FALSE(glob_match("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*Z", text));
  const auto all = glob_match(std::string(60000, '*'), text);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->size(), 60000u);
  EXPECT_EQ(all->front(), "");  // leftmost-shortest: the last star takes the whole text
  EXPECT_EQ(all->back(), text);
  EXPECT_EQ(glob_match(std::string(60000, '*') + "a", text)->back(), std::string(1999, 'a'));
}

TEST(Compare, RangeStatsPerIteration) {
  const Written w(synthetic());
  const db::Reader reader(w.path);
  std::map<std::string, RangeStats> by_name;
  for (auto& r : range_stats(reader)) by_name[r.name] = r;
  ASSERT_EQ(by_name.size(), 3U);
  const RangeStats& slow = by_name.at("mlp/slow/batch8");
  EXPECT_EQ(slow.instances, 2);
  EXPECT_EQ(slow.iterations, 4);
  EXPECT_DOUBLE_EQ(slow.median_gpu_ns_per_iter, 400);
  EXPECT_EQ(slow.gpu_ns, 1600);
  EXPECT_DOUBLE_EQ(slow.kernels_per_iter, 1.0);
  EXPECT_DOUBLE_EQ(slow.launches_per_iter, 0.75);
  EXPECT_DOUBLE_EQ(slow.memcpy_bytes_per_iter, 250);
  EXPECT_DOUBLE_EQ(slow.memset_bytes_per_iter, 6);
  using Peak = std::pair<std::uint32_t, std::int64_t>;
  EXPECT_EQ(slow.peak_device_bytes, (std::vector<Peak>{{0, 5000}, {1, 7}}));
  EXPECT_EQ(slow.items_per_iter, 8);
  EXPECT_DOUBLE_EQ(slow.iterations_per_s, 1e9 / 400);
  ASSERT_TRUE(slow.items_per_s);
  EXPECT_DOUBLE_EQ(*slow.items_per_s, 8e9 / 400);
  const RangeStats& b16 = by_name.at("mlp/fast/batch16");
  EXPECT_EQ(b16.iterations, 1);  // no payload
  EXPECT_DOUBLE_EQ(b16.median_gpu_ns_per_iter, 50);
  // Peak at range start counts what was allocated before: 1000 + 10 after 3500.
  EXPECT_EQ(b16.peak_device_bytes, (std::vector<Peak>{{0, 1010}, {1, 7}}));
}

TEST(Compare, VariantMatrixPutsEveryVariantOfAShapeInOneRow) {
  std::vector<RangeStats> ranges(6);
  const char* names[] = {"gemm/cutlass_fused/M1/K2",
                         "gemm/fused/M1/K2",
                         "gemm/unfused/M1/K2",
                         "gemm/zeta/M3",
                         "twosegments/x",
                         "relu/fused/M1/K2"};
  for (std::size_t i = 0; i < ranges.size(); ++i) ranges[i].name = names[i];
  const VariantMatrix m = variant_matrix(ranges);
  EXPECT_EQ(m.rows, (std::vector<std::string>{"gemm · M1/K2", "gemm · M3", "relu · M1/K2"}));
  EXPECT_EQ(m.columns, (std::vector<std::string>{"unfused", "fused", "cutlass_fused", "zeta"}));
  ASSERT_EQ(m.cells.size(), 3U);
  EXPECT_EQ(m.cells[0][0], &ranges[2]);
  EXPECT_EQ(m.cells[0][1], &ranges[1]);
  EXPECT_EQ(m.cells[0][2], &ranges[0]);
  EXPECT_EQ(m.cells[0][3], nullptr);
  EXPECT_EQ(m.cells[1][3], &ranges[3]);
  EXPECT_EQ(m.cells[2][1], &ranges[5]);
  EXPECT_EQ(m.cells[2][0], nullptr);
  // Leading names that are absent are skipped; a repeated one is placed once.
  const VariantMatrix n = variant_matrix(ranges, {"nope", "fused", "fused"});
  EXPECT_EQ(n.columns, (std::vector<std::string>{"fused", "cutlass_fused", "unfused", "zeta"}));
  EXPECT_TRUE(variant_matrix({}).rows.empty());
}

TEST(Compare, PairsRangesByWildcardText) {
  const Written w(synthetic());
  const db::Reader reader(w.path);
  const CompareReport r = compare_ranges(reader, "mlp/slow/*", "mlp/fast/*");
  ASSERT_EQ(r.entries.size(), 2U);
  const CompareEntry& e = r.entries[0];  // paired rows first
  EXPECT_EQ(e.key, "batch8");
  EXPECT_EQ(e.op, "mlp");
  EXPECT_EQ(e.shape, "batch8");
  EXPECT_EQ(e.baseline_variant, "slow");
  EXPECT_EQ(e.candidate_variant, "fast");
  ASSERT_TRUE(e.speedup);
  EXPECT_DOUBLE_EQ(*e.speedup, 4.0);
  EXPECT_DOUBLE_EQ(*e.slowdown_percent(), -75.0);
  EXPECT_FALSE(r.entries[1].baseline);  // batch16 has no slow variant
  EXPECT_FALSE(r.entries[1].speedup);
  EXPECT_TRUE(r.slower_than(0).empty());
  const CompareReport reversed = compare_ranges(reader, "mlp/fast/*", "mlp/slow/*");
  ASSERT_EQ(reversed.slower_than(200).size(), 1U);  // +300 %
  EXPECT_TRUE(reversed.slower_than(300).empty());

  const auto doc = compare_to_json(r);
  ASSERT_EQ(doc["matrix"].size(), 3U);
  EXPECT_EQ(doc["matrix"][0]["variant"], "slow");
  EXPECT_EQ(doc["matrix"][1]["variant"], "fast");
  EXPECT_EQ(doc["matrix"][1]["speedup_vs_baseline"], 4.0);
  EXPECT_TRUE(doc["matrix"][2]["speedup_vs_baseline"].is_null());
  EXPECT_EQ(doc["matrix"][0]["peak_device_bytes_by_device"]["1"], 7);
}

/// Per iteration (payload 2), kernels of 1 us with 3 us gaps between them, one launch each:
///   gap/unfused/s  [0, 20000]: 2 kernels per iteration, starts 1000 + 4000 k (k = 0..3):
///                  GPU time 4000 / 2 = 2000 ns per iteration; span 1000 -> 14000 = 13000,
///                  6500 per iteration;
///   gap/fused/s    [30000, 50000]: 1 kernel of 1500 per iteration, starts 31000 + 4500 k
///                  (k = 0, 1): GPU time 1500 per iteration; span 31000 -> 37000, 3000 per it.
/// A kernel launched before the range and run inside it is not the range's.
Capture gapped() {
  Capture c;
  c.range("gap/unfused/s", 0, 20000, 2);
  for (int k = 0; k < 4; ++k) c.launch("k_a", 100 + 10 * k, 1000 + 4000 * k, {1000});
  c.range("gap/fused/s", 30000, 50000, 2);
  c.launch("k_early", 29000, 30500, {100});  // launched outside, runs inside: not counted
  for (int k = 0; k < 2; ++k) c.launch("k_f", 30100 + 10 * k, 31000 + 4500 * k, {1500});
  return c;
}

TEST(Compare, SpanIsFirstStartToLastEndOfTheWorkLaunchedInside) {
  const Written w(gapped());
  const db::Reader reader(w.path);
  std::map<std::string, RangeStats> by_name;
  for (auto& r : range_stats(reader)) by_name[r.name] = r;
  const RangeStats& unfused = by_name.at("gap/unfused/s");
  EXPECT_DOUBLE_EQ(unfused.median_gpu_ns_per_iter, 2000);
  EXPECT_DOUBLE_EQ(unfused.median_span_ns_per_iter, 6500);
  EXPECT_EQ(unfused.span_ns, 13000);
  const RangeStats& fused = by_name.at("gap/fused/s");
  EXPECT_DOUBLE_EQ(fused.median_gpu_ns_per_iter, 1500);
  EXPECT_DOUBLE_EQ(fused.median_span_ns_per_iter, 3000);

  const CompareReport r = compare_ranges(reader, "gap/unfused/*", "gap/fused/*");
  ASSERT_EQ(r.entries.size(), 1U);
  const CompareEntry& e = r.entries[0];
  ASSERT_TRUE(e.speedup && e.span_speedup);
  EXPECT_DOUBLE_EQ(*e.speedup, 2000.0 / 1500.0);
  EXPECT_DOUBLE_EQ(*e.span_speedup, 6500.0 / 3000.0);
  EXPECT_DOUBLE_EQ(*e.slowdown_percent(TimeBasis::Span), (3000.0 / 6500.0 - 1) * 100);

  const auto doc = compare_to_json(r);
  EXPECT_EQ(doc["comparisons"][0]["baseline_span_ns_per_iter"], 6500.0);
  EXPECT_EQ(doc["comparisons"][0]["candidate_span_ns_per_iter"], 3000.0);
  EXPECT_EQ(doc["comparisons"][0]["span_speedup"], 6500.0 / 3000.0);
  EXPECT_EQ(doc["matrix"][0]["median_span_ns_per_iter"], 6500.0);
  EXPECT_EQ(doc["matrix"][0]["span_speedup_vs_baseline"], 1.0);
  EXPECT_EQ(doc["matrix"][1]["span_speedup_vs_baseline"], 6500.0 / 3000.0);
  EXPECT_EQ(doc["matrix"][1]["speedup_vs_baseline"], 2000.0 / 1500.0);  // still GPU time
}

TEST(Compare, SpanCountsCopiesAndOverlapOnceAndTakesTheMedianOverInstances) {
  Capture c;
  // Instance 1 (1 iteration): kernels [1200, 2200] and [1500, 2000] overlap (GPU time 1500,
  // span 1000), then a copy launched at 2600 runs [2610, 2710]: span 1200 -> 2710 = 1510.
  c.range("ov/a/s", 1000, 3000);
  c.launch("k1", 1100, 1200, {1000});
  c.launch("k2", 1150, 1500, {500});
  c.copy(2600, 64);
  // Instance 2: one kernel of 300 -> span 300. Instance 3: nothing launched -> span 0.
  c.range("ov/a/s", 4000, 5000);
  c.launch("k1", 4100, 4200, {300});
  c.range("ov/a/s", 6000, 7000);
  // The candidate launches nothing: span 0, no span speedup.
  c.range("ov/b/s", 8000, 9000);
  const Written w(c);
  const db::Reader reader(w.path);
  std::map<std::string, RangeStats> by_name;
  for (auto& r : range_stats(reader)) by_name[r.name] = r;
  const RangeStats& a = by_name.at("ov/a/s");
  EXPECT_EQ(a.span_ns, 1510 + 300);
  EXPECT_DOUBLE_EQ(a.median_span_ns_per_iter, 300);  // median of (1510, 300, 0)
  EXPECT_DOUBLE_EQ(a.median_gpu_ns_per_iter, 300);   // median of (1500, 300, 0)
  const CompareReport r = compare_ranges(reader, "ov/a/*", "ov/b/*");
  EXPECT_FALSE(r.entries[0].span_speedup);
  EXPECT_TRUE(compare_to_json(r)["comparisons"][0]["span_speedup"].is_null());
}

TEST(Compare, PatternsThatMatchNothingOrNeverPairAreErrors) {
  const Written w(synthetic());
  const db::Reader reader(w.path);
  EXPECT_THROW(compare_ranges(reader, "nothing/*", "mlp/fast/*"), CompareError);
  EXPECT_THROW(compare_ranges(reader, "mlp/slow/*", "nothing/*"), CompareError);
  EXPECT_THROW(compare_ranges(reader, "mlp/slow/batch*", "mlp/fast/batch1*"), CompareError);
}

TEST(Compare, TwoCapturesDiffKernels) {
  Capture a, b;
  a.range("step", 0, 10000);
  b.range("step", 0, 10000);
  a.launch("same", 100, 200, {1000});
  b.launch("same", 100, 200, {1040});  // +4 %: unchanged
  a.launch("faster", 300, 1300, {1000});
  b.launch("faster", 300, 1300, {900});  // -10 %
  a.launch("slower", 400, 2400, {1000});
  b.launch("slower", 400, 2400, {1100});  // +10 %
  a.launch("gone", 500, 3500, {100});
  b.launch("new", 500, 3500, {100});
  TempDir dir;
  a.write(dir.file("a.sqlite"));
  b.write(dir.file("b.sqlite"));
  const db::Reader ra(dir.file("a.sqlite")), rb(dir.file("b.sqlite"));
  const CompareReport r = compare_captures(ra, rb);
  EXPECT_TRUE(r.two_captures);
  ASSERT_EQ(r.entries.size(), 1U);
  EXPECT_EQ(r.entries[0].key, "step");
  ASSERT_TRUE(r.entries[0].speedup);
  EXPECT_NEAR(*r.entries[0].speedup, 3100.0 / 3140.0, 1e-12);
  std::map<std::string, KernelChange> change;
  for (const auto& k : r.kernel_diff) change[k.name] = k.change;
  EXPECT_EQ(change, (std::map<std::string, KernelChange>{{"same", KernelChange::Unchanged},
                                                         {"faster", KernelChange::Faster},
                                                         {"slower", KernelChange::Slower},
                                                         {"gone", KernelChange::Removed},
                                                         {"new", KernelChange::Added}}));
  CompareOptions tight;
  tight.diff_threshold_percent = 3;
  for (const auto& k : compare_captures(ra, rb, tight).kernel_diff) {
    if (k.name == "same") {
      EXPECT_EQ(k.change, KernelChange::Slower);
    }
  }
}

TEST(Compare, FusionBenchGemmSpeedupPerShape) {
  if (!std::filesystem::exists(kFusionBench)) GTEST_SKIP() << kFusionBench << " is missing";
  const db::Reader reader(kFusionBench);
  const CompareReport r =
      compare_ranges(reader, "gemm_bias_relu/unfused/*", "gemm_bias_relu/fused/*");
  ASSERT_EQ(r.entries.size(), 3U);
  std::map<std::string, const CompareEntry*> by_shape;
  for (const auto& e : r.entries) by_shape[e.shape] = &e;
  for (const char* shape : {"M64_N128_K256", "M128_N256_K256", "M1024_N1024_K1024"}) {
    ASSERT_TRUE(by_shape.count(shape)) << shape;
    const CompareEntry& e = *by_shape[shape];
    EXPECT_EQ(e.op, "gemm_bias_relu");
    EXPECT_EQ(e.baseline_variant, "unfused");
    EXPECT_EQ(e.candidate_variant, "fused");
    ASSERT_TRUE(e.baseline && e.candidate && e.speedup) << shape;
    EXPECT_EQ(e.baseline->iterations, 50);  // the payload
    EXPECT_DOUBLE_EQ(e.baseline->kernels_per_iter, 3);
    EXPECT_DOUBLE_EQ(e.baseline->launches_per_iter, 3);
    EXPECT_DOUBLE_EQ(e.candidate->kernels_per_iter, 1);
    EXPECT_GT(*e.speedup, 1.0) << shape;         // the fused kernel saves two kernels per iteration
    EXPECT_GT(e.baseline->max_peak_bytes(), 0);  // buffers allocated before the range
    EXPECT_DOUBLE_EQ(e.baseline->memcpy_bytes_per_iter, 0);  // no copies inside ranges
  }
  const auto matrix = compare_to_json(r)["matrix"];
  ASSERT_EQ(matrix.size(), 6U);
  for (const auto& row : matrix) {
    EXPECT_EQ(row["op"], "gemm_bias_relu");
    EXPECT_TRUE(row["variant"] == "unfused" || row["variant"] == "fused");
    EXPECT_TRUE(row["speedup_vs_baseline"].is_number());
  }
}

// Issue #6's proof: the span speedup reproduces fusion_bench's own CUDA-event speedups.
//
// fusion_bench.sqlite was recorded by `prof-run -- fusion_bench` (50 iterations, default trace) in
// the run whose event-timed medians docs/BENCHMARKS.md's "Fused vs unfused: fusion_bench" table
// quotes (unfused / fused µs): GEMM+bias+ReLU M64_N128_K256 27.6 / 20.6 = 1.34x, M128_N256_K256
// 31.3 / 20.6 = 1.52x, M1024_N1024_K1024 106.2 / 96.9 = 1.10x; Swish 1024x1024 18.8 / 10.2 =
// 1.83x, 4096x4096 118.5 / 49.3 = 2.40x. The span (mean of the range's iterations) and the
// events (median of per-iteration differences) measure the same stretch of GPU time but are
// different statistics, and the two launch-bound shapes move by several µs between iterations,
// hence a tolerance of 15 % (measured: 1.45x, 1.54x, 1.10x, 1.68x, 2.41x; GPU time alone says
// 1.12x, 1.13x, 1.07x, 2.18x, 2.46x).
TEST(Compare, FusionBenchSpanSpeedupReproducesItsEventTimedSpeedup) {
  if (!std::filesystem::exists(kFusionBench)) GTEST_SKIP() << kFusionBench << " is missing";
  const db::Reader reader(kFusionBench);
  const std::map<std::string, double> event_speedup{
      {"gemm_bias_relu/M64_N128_K256", 27.6 / 20.6},
      {"gemm_bias_relu/M128_N256_K256", 31.3 / 20.6},
      {"gemm_bias_relu/M1024_N1024_K1024", 106.2 / 96.9},
      {"swish/1024x1024", 18.8 / 10.2},
      {"swish/4096x4096", 118.5 / 49.3}};
  int checked = 0;
  for (const auto& e : compare_ranges(reader, "*/unfused/*", "*/fused/*").entries) {
    const auto it = event_speedup.find(e.key);
    if (it == event_speedup.end()) continue;
    ASSERT_TRUE(e.span_speedup) << e.key;
    EXPECT_NEAR(*e.span_speedup / it->second, 1.0, 0.15) << e.key << ": " << *e.span_speedup;
    // Serial work on one stream: the span covers at least the kernels' summed time.
    EXPECT_GE(e.baseline->median_span_ns_per_iter, e.baseline->median_gpu_ns_per_iter) << e.key;
    EXPECT_GE(e.candidate->median_span_ns_per_iter, e.candidate->median_gpu_ns_per_iter) << e.key;
    ++checked;
  }
  EXPECT_EQ(checked, 5);
}

// fusion_bench_args.sqlite: `prof-run --trace +args -- fusion_bench --quick` (5 iterations). Its
// own run log is not kept, so the figures to meet are a full, unprofiled run of the same binary
// on the same H100: swish 1024x1024 unfused 10.704 µs, fused 6.288 µs, 1.70x; swish 4096x4096
// 119.152 / 49.504 µs, 2.41x. At 4096² the kernels are long and the GPU never waits, so the span
// speedup meets 2.41x (measured 2.44x). At 1024² (and the GEMM at M64_N128_K256) the kernels
// last 1-4 µs and the loop is launch-bound: the collector's per-launch work under this trace
// (calling contexts and kernel arguments) widens each launch gap, and the span measures what
// the GPU did in that profiled run: 26.5 µs per unfused iteration against 20.6 µs under the
// default trace (fusion_bench.sqlite) and 10.7 µs unprofiled. Its speedup (2.29x; GEMM 1.98x)
// is not the unprofiled 1.70x, and fusion_bench's events in that run would have seen the same
// gaps; those two shapes are checked against their own capture's figures instead, and the
// unprofiled comparison is the 4096² one (and the test above, made in one run).
TEST(Compare, FusionBenchArgsSpanSpeedups) {
  if (!std::filesystem::exists(kFusionBenchArgs)) GTEST_SKIP() << kFusionBenchArgs << " is missing";
  const db::Reader reader(kFusionBenchArgs);
  std::map<std::string, CompareEntry> by_key;
  for (auto& e : compare_ranges(reader, "*/unfused/*", "*/fused/*").entries) by_key[e.key] = e;
  const CompareEntry& big = by_key.at("swish/4096x4096");
  ASSERT_TRUE(big.span_speedup);
  EXPECT_NEAR(*big.span_speedup / (119.152 / 49.504), 1.0, 0.15) << *big.span_speedup;
  // Launch-bound under this trace: the span per iteration is several times the GPU time, and
  // the span speedup is this capture's (see above).
  const CompareEntry& small = by_key.at("swish/1024x1024");
  const CompareEntry& gemm = by_key.at("gemm_bias_relu/M64_N128_K256");
  ASSERT_TRUE(small.span_speedup && gemm.span_speedup);
  EXPECT_GT(small.baseline->median_span_ns_per_iter, 3 * small.baseline->median_gpu_ns_per_iter);
  EXPECT_NEAR(*small.span_speedup, 2.29, 0.05);
  EXPECT_NEAR(*gemm.span_speedup, 1.98, 0.05);
}

// --- prof-analyze compare, run as a program ----------------------------------------------

TEST(CompareCli, TimeSpanJudgesFailIfSlowerOnTheSpan) {
  // The candidate's kernels take less GPU time (2 x 500 vs 2000) but wait 3 µs between them:
  // faster in GPU time, twice as slow in span.
  Capture c;
  c.range("op/base/s", 0, 10000);
  c.launch("k_one", 100, 1000, {2000});
  c.range("op/cand/s", 20000, 30000);
  c.launch("k_half", 20100, 21000, {500});
  c.launch("k_half", 20200, 24500, {500});
  const Written w(c);
  const std::vector<std::string> base{"compare",     w.path,      "--baseline",       "op/base/*",
                                      "--candidate", "op/cand/*", "--fail-if-slower", "5"};
  const Result gpu = run_cli(w.dir, base);
  EXPECT_EQ(gpu.status, 0) << gpu.err;
  EXPECT_NE(gpu.out.find("Span speedup"), std::string::npos) << gpu.out;
  EXPECT_NE(gpu.out.find("2.000 µs -> 4.000 µs"), std::string::npos) << gpu.out;
  EXPECT_NE(gpu.out.find("0.50x"), std::string::npos) << gpu.out;
  auto with_time = [&](const char* basis) {
    auto args = base;
    args.insert(args.end(), {"--time", basis});
    return run_cli(w.dir, args);
  };
  EXPECT_EQ(with_time("gpu").status, 0);
  const Result span = with_time("span");
  EXPECT_EQ(span.status, 3) << span.err;
  EXPECT_NE(span.err.find("GPU span"), std::string::npos) << span.err;
  EXPECT_NE(span.err.find("op/cand/s (+100.0 %)"), std::string::npos) << span.err;
  EXPECT_EQ(with_time("wall").status, 2);
  const Result csv = run_cli(w.dir, {"compare", w.path, "--baseline", "op/base/*", "--candidate",
                                     "op/cand/*", "--format", "csv"});
  ASSERT_EQ(csv.status, 0) << csv.err;
  const auto records = test::parse_csv(csv.out);
  ASSERT_GE(records.size(), 3U);
  EXPECT_EQ(records[1].back(), "window");  // with range patterns the window is all
  EXPECT_EQ(records[2].back(), "whole capture");
  // The gate's columns follow span_speedup (CompareGate.h).
  const auto column = std::find(records[1].begin(), records[1].end(), "span_speedup");
  ASSERT_NE(column, records[1].end());
  EXPECT_EQ(records[2].at(static_cast<std::size_t>(column - records[1].begin())), "0.5");
}

TEST(CompareCli, FailIfSlowerExitsThree) {
  const Written w(synthetic());
  const Result ok = run_cli(w.dir, {"compare", w.path, "--baseline", "mlp/slow/*", "--candidate",
                                    "mlp/fast/*", "--fail-if-slower", "5"});
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_NE(ok.out.find("4.00x"), std::string::npos) << ok.out;
  const Result slower = run_cli(w.dir, {"compare", w.path, "--baseline", "mlp/fast/*",
                                        "--candidate", "mlp/slow/*", "--fail-if-slower", "5"});
  EXPECT_EQ(slower.status, 3) << slower.err;
  EXPECT_NE(slower.err.find("mlp/slow/batch8"), std::string::npos) << slower.err;
  const Result generous = run_cli(w.dir, {"compare", w.path, "--baseline", "mlp/fast/*",
                                          "--candidate", "mlp/slow/*", "--fail-if-slower", "400"});
  EXPECT_EQ(generous.status, 0) << generous.err;
}

TEST(CompareCli, UsageErrorsAndUnmatchedPatterns) {
  const Written w(synthetic());
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"compare", w.path, "--baseline", "mlp/slow/*"},
           {"compare", w.path, w.path, "--baseline", "a", "--candidate", "b"},
           {"compare", w.path, "--baseline", "a", "--candidate", "b", "--fail-if-slower", "x"},
           {"compare"}}) {
    const Result r = run_cli(w.dir, args);
    EXPECT_EQ(r.status, 2) << args.size();
    EXPECT_EQ(r.err.rfind("prof-analyze: error: ", 0), 0U) << r.err;
  }
  const Result none =
      run_cli(w.dir, {"compare", w.path, "--baseline", "zzz/*", "--candidate", "mlp/fast/*"});
  EXPECT_EQ(none.status, 1);
  EXPECT_NE(none.err.find("zzz/*"), std::string::npos);
}

TEST(CompareCli, TwoCapturesAndEveryFormat) {
  const Written w(synthetic());
  const Result table = run_cli(w.dir, {"compare", w.path, w.path});
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find("Kernel diff"), std::string::npos);
  const Result json = run_cli(w.dir, {"compare", w.path, w.path, "--format", "json"});
  ASSERT_EQ(json.status, 0) << json.err;
  const auto doc = nlohmann::json::parse(json.out);
  EXPECT_TRUE(doc["two_captures"]);
  for (const auto& k : doc["kernel_diff"]) EXPECT_EQ(k["change"], "unchanged");
  for (const auto& c : doc["comparisons"]) EXPECT_EQ(c["speedup"], 1.0);
  const Result csv = run_cli(w.dir, {"compare", w.path, w.path, "--format", "csv"});
  ASSERT_EQ(csv.status, 0) << csv.err;
  const auto records = test::parse_csv(csv.out);
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(records[0], std::vector<std::string>{"# comparisons"});
  EXPECT_NE(csv.out.find("# matrix"), std::string::npos);
  EXPECT_NE(csv.out.find("# kernel_diff"), std::string::npos);
}

TEST(CompareCli, FusionBenchSwishAndGemm) {
  if (!std::filesystem::exists(kFusionBench)) GTEST_SKIP() << kFusionBench << " is missing";
  TempDir dir;
  for (const char* op : {"gemm_bias_relu", "swish"}) {
    const Result r =
        run_cli(dir, {"compare", kFusionBench, "--baseline", std::string(op) + "/unfused/*",
                      "--candidate", std::string(op) + "/fused/*", "--format", "json"});
    ASSERT_EQ(r.status, 0) << r.err;
    const auto doc = nlohmann::json::parse(r.out);
    EXPECT_EQ(doc["comparisons"].size(), std::string(op) == "swish" ? 2U : 3U);
    for (const auto& c : doc["comparisons"]) EXPECT_TRUE(c["speedup"].is_number()) << c["key"];
  }
}

}  // namespace
}  // namespace fuselens::analyzer
