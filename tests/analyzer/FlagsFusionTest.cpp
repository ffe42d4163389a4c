// fusion_chain's evidence on synthetic captures (TestSupport's FlagsCapture): kernel arguments
// that do or do not share an allocation, with and without arguments, with and without counters
// or annotations, datasheet or measured ceilings; and the calling context every hit names.
// Each capture is built so that only the rules under test fire.
#include <gtest/gtest.h>
#include <algorithm>

#include <array>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "TestSupport.h"
#include "flags/Flags.h"
#include "flags/FlagsFormat.h"
#include "flags/FlagsTrace.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/RooflineStore.h"

namespace fuselens::analyzer {
namespace {

using test::fired;
using test::flags_of;
using test::FlagsCapture;
using test::hits_of;
using test::TempDir;
using test::us;

// Device allocations (made at 1 us, never freed): inputs X and W, intermediate T, output Y.
constexpr std::uint64_t kX = 0x7f00'0000'0000ull, kW = 0x7f00'0010'0000ull;
constexpr std::uint64_t kT = 0x7f00'0020'0000ull, kY = 0x7f00'0080'0000ull;
constexpr std::uint64_t kMiB = 1 << 20;
constexpr double kH100Dram = 3350e9;  // analyzer/data/peaks.json, h100-sxm

struct ChainCapture {
  FlagsCapture c;
  std::vector<std::array<std::uint32_t, 3>> ids;  // correlation ids of a, b, c per occurrence
};

/// `n` occurrences of a_kernel -> b_kernel -> c_kernel in range "layer" on an H100 (datasheet
/// peaks): 100 us kernels 2 us apart, each launched 8 us ahead by a 5 us call, so only
/// fusion_chain fires. No arguments unless a test adds them.
ChainCapture chain_capture(int n = 10, bool with_allocations = true) {
  ChainCapture out;
  FlagsCapture& c = out.c;
  c.device();
  if (with_allocations) {
    c.allocation(kX, kMiB, us(1));
    c.allocation(kW, kMiB, us(1));
    c.allocation(kT, 4 * kMiB, us(1));
    c.allocation(kY, kMiB, us(1));
  }
  c.range("layer", 0, us(102 * 3 * n + 100));
  std::int64_t t = us(10);
  for (int i = 0; i < n; ++i) {
    std::array<std::uint32_t, 3> ids{};
    int k = 0;
    for (const char* name : {"a_kernel", "b_kernel", "c_kernel"}) {
      ids[static_cast<std::size_t>(k++)] = c.kernel(name, t, us(100), t - us(8), us(5));
      t += us(102);
    }
    out.ids.push_back(ids);
  }
  return out;
}

/// a(X + 0x100, T), b(T, W), c(T + 0x40, Y): every consecutive pair shares T (4 MiB).
void add_feeding_args(ChainCapture& chain) {
  for (const auto& ids : chain.ids) {
    chain.c.args(ids[0], {kX + 0x100, kT});
    chain.c.args(ids[1], {kT, kW});
    chain.c.args(ids[2], {kT + 0x40, kY});
  }
}

/// The one hit of a report where only fusion_chain fires (a copy: reports are temporaries).
Hit only_chain(const FlagsReport& r) {
  EXPECT_EQ(fired(r), std::set<std::string>{"fusion_chain"});
  const auto hits = hits_of(r, "fusion_chain");
  EXPECT_EQ(hits.size(), 1U);
  return hits.empty() ? Hit{} : *hits.front();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(FlagsFusion, SharedBufferMeansTheOutputFeedsTheNextAndAddsTheByteTerm) {
  ChainCapture chain = chain_capture();
  add_feeding_args(chain);
  const FlagsReport r = flags_of(chain.c);
  const Hit h = only_chain(r);
  EXPECT_EQ(h.subject, "a_kernel -> b_kernel -> c_kernel");
  EXPECT_DOUBLE_EQ(h.metric("output_feeds_next"), 1);
  EXPECT_DOUBLE_EQ(h.metric("occurrences_feeding"), 10);
  EXPECT_DOUBLE_EQ(h.metric("memory_bound"), -1);  // no counters, no annotation
  EXPECT_DOUBLE_EQ(h.metric("fusion_candidate"), 1);
  // Two pairs share T, each written once and read once: 2 x 2 x 4 MiB per occurrence.
  const double bytes = 10 * 2 * 2 * 4.0 * kMiB;
  EXPECT_DOUBLE_EQ(h.metric("intermediate_bytes"), bytes);
  EXPECT_DOUBLE_EQ(h.metric("dram_bytes_per_s"), kH100Dram);
  EXPECT_NEAR(h.metric("byte_saving_ns"), bytes / kH100Dram * 1e9, 1e-6);
  EXPECT_NEAR(static_cast<double>(h.time_ns), 10 * 2 * us(2) + bytes / kH100Dram * 1e9, 1.0);
  EXPECT_TRUE(contains(h.detail, "Output feeds next: yes")) << h.detail;
  EXPECT_TRUE(contains(h.detail, "datasheet peak of NVIDIA H100")) << h.detail;
  EXPECT_TRUE(contains(h.detail, "if the chain is memory-bound")) << h.detail;
}

// A sigmoid -> multiply loop whose first pair is cut by a long gap: the run that repeats starts
// with multiply, but the chain keeps the range's own order (the range's first kernel heads it).
TEST(FlagsFusion, ARunCutAfterTheRangesFirstKernelKeepsTheRangesOrder) {
  FlagsCapture c;
  c.device();
  c.range("swish", 0, us(2000));
  std::int64_t t = us(10);
  for (int i = 0; i < 6; ++i) {
    for (const char* name : {"sigmoid_kernel", "multiply_kernel"}) {
      c.kernel(name, t, us(100), t - us(8), us(5));
      t += us(i == 0 && name[0] == 's' ? 160 : 102);  // 60 us gap after the first sigmoid
    }
  }
  const FlagsReport report = flags_of(c);
  const auto hits = hits_of(report, "fusion_chain");
  ASSERT_EQ(hits.size(), 1U);
  EXPECT_EQ(hits[0]->subject, "sigmoid_kernel -> multiply_kernel");
  EXPECT_EQ(hits[0]->count, 5);  // the first sigmoid stands alone
}

TEST(FlagsFusion, DisjointBuffersDoNotFeedAndAreNoFusionCandidate) {
  ChainCapture chain = chain_capture();
  for (const auto& ids : chain.ids) {
    chain.c.args(ids[0], {kX});
    chain.c.args(ids[1], {kW, 1024});  // a small integer is never a buffer
    chain.c.args(ids[2], {kY});
  }
  const Hit h = only_chain(flags_of(chain.c));
  EXPECT_DOUBLE_EQ(h.metric("output_feeds_next"), 0);
  EXPECT_DOUBLE_EQ(h.metric("occurrences_independent"), 10);
  EXPECT_DOUBLE_EQ(h.metric("fusion_candidate"), 0);
  EXPECT_DOUBLE_EQ(h.metric("intermediate_bytes"), 0);
  EXPECT_EQ(h.time_ns, 10 * 2 * us(2));  // launch gaps only
  EXPECT_TRUE(contains(h.detail, "Output feeds next: no")) << h.detail;
  EXPECT_TRUE(contains(h.advice, "share no buffer")) << h.advice;
}

TEST(FlagsFusion, OccurrencesThatDifferGivePartly) {
  ChainCapture chain = chain_capture(4);
  for (std::size_t i = 0; i < chain.ids.size(); ++i) {
    const auto& ids = chain.ids[i];
    chain.c.args(ids[0], {kX, kT});
    chain.c.args(ids[1], {i % 2 == 0 ? kT : kW});
    chain.c.args(ids[2], {i % 2 == 0 ? kT : kY});
  }
  const Hit h = only_chain(flags_of(chain.c));
  EXPECT_DOUBLE_EQ(h.metric("output_feeds_next"), 0.5);
  EXPECT_DOUBLE_EQ(h.metric("fusion_candidate"), 1);
  EXPECT_DOUBLE_EQ(h.metric("intermediate_bytes"), 2 * 2 * 2 * 4.0 * kMiB);  // 2 feeding occ.
  EXPECT_TRUE(contains(h.detail, "partly (2 of 4")) << h.detail;
}

TEST(FlagsFusion, WithoutArgumentsWhetherTheOutputFeedsIsUnknown) {
  ChainCapture chain = chain_capture();
  const Hit h = only_chain(flags_of(chain.c));
  EXPECT_DOUBLE_EQ(h.metric("output_feeds_next"), -1);
  EXPECT_DOUBLE_EQ(h.metric("fusion_candidate"), 1);
  EXPECT_EQ(h.time_ns, 10 * 2 * us(2));
  EXPECT_TRUE(contains(h.detail, "unknown (no args captured")) << h.detail;
  EXPECT_TRUE(contains(h.detail, "not measured")) << h.detail;

  // Arguments recorded for another kernel only (30 us after the chains, so not part of them):
  // captured, but not for these launches.
  const auto other = chain.c.kernel("z_kernel", us(3100), us(50), us(3092), us(5));
  chain.c.args(other, {kX});
  const Hit unknown = only_chain(flags_of(chain.c));
  EXPECT_DOUBLE_EQ(unknown.metric("output_feeds_next"), -1);
  EXPECT_TRUE(contains(unknown.detail, "no pointer arguments recorded")) << unknown.detail;
}

TEST(FlagsFusion, PointersOutsideRecordedAllocationsMatchOnlyExactly) {
  ChainCapture chain = chain_capture(10, /*with_allocations=*/false);
  for (const auto& ids : chain.ids) {
    chain.c.args(ids[0], {kX, kT});
    chain.c.args(ids[1], {kT, 1 << 20});    // 1 MiB as an integer: not a pointer
    chain.c.args(ids[2], {kT, kY + 0x40});  // kT exactly; kY + 0x40 is unaligned
  }
  const Hit h = only_chain(flags_of(chain.c));
  EXPECT_DOUBLE_EQ(h.metric("output_feeds_next"), 1);
  EXPECT_DOUBLE_EQ(h.metric("intermediate_bytes"), 0);  // sizes unknown
  EXPECT_DOUBLE_EQ(h.metric("unsized_shared_buffers"), 20);
  EXPECT_EQ(h.time_ns, 10 * 2 * us(2));
  EXPECT_TRUE(contains(h.detail, "lie in no recorded allocation")) << h.detail;
}

TEST(FlagsFusion, LowIntensityCountersMakeTheChainMemoryBound) {
  ChainCapture chain = chain_capture();
  add_feeding_args(chain);
  for (const auto& ids : chain.ids) {
    for (const auto id : ids) chain.c.counters(id, 2e6, 1e6);  // 2 FLOP/B < ridge 19.97
  }
  const Hit h = only_chain(flags_of(chain.c));
  EXPECT_DOUBLE_EQ(h.metric("memory_bound"), 1);
  EXPECT_NEAR(h.metric("arithmetic_intensity"), 2.0, 1e-9);
  EXPECT_NEAR(h.metric("ridge_point"), 66.9e12 / kH100Dram, 1e-6);
  EXPECT_DOUBLE_EQ(h.metric("fusion_candidate"), 1);
  EXPECT_GT(h.metric("byte_saving_ns"), 0);
  EXPECT_TRUE(contains(h.detail, "Memory-bound: yes")) << h.detail;
  EXPECT_TRUE(contains(h.detail, "hardware counters")) << h.detail;
  EXPECT_FALSE(contains(h.detail, "if the chain is memory-bound")) << h.detail;
}

TEST(FlagsFusion, HighIntensityCountersMakeTheChainComputeBound) {
  ChainCapture chain = chain_capture();
  add_feeding_args(chain);
  for (const auto& ids : chain.ids) {
    for (const auto id : ids) chain.c.counters(id, 1e9, 1e6);  // 1000 FLOP/B
  }
  const Hit h = only_chain(flags_of(chain.c));
  EXPECT_DOUBLE_EQ(h.metric("memory_bound"), 0);
  EXPECT_DOUBLE_EQ(h.metric("output_feeds_next"), 1);
  EXPECT_DOUBLE_EQ(h.metric("fusion_candidate"), 0);
  EXPECT_DOUBLE_EQ(h.metric("byte_saving_ns"), 0);  // not counted
  EXPECT_EQ(h.time_ns, 10 * 2 * us(2));
  EXPECT_TRUE(contains(h.detail, "compute-bound: fusion saves little")) << h.detail;
  EXPECT_TRUE(contains(h.advice, "Compute-bound: fusion saves little")) << h.advice;
}

TEST(FlagsFusion, TheMostBindingMemoryLevelDecides) {
  // 100 FLOP/B of DRAM traffic (compute-bound at DRAM, ridge 20) but 1 FLOP/B of L2 traffic,
  // below the L2 ridge of the measured ceilings (40e12 / 8e12 = 5): memory-bound at L2.
  ChainCapture chain = chain_capture();
  add_feeding_args(chain);
  chain.c.ceiling(db::kCeilingDramBandwidth, 2e12);
  chain.c.ceiling(db::kCeilingL2Bandwidth, 8e12);
  chain.c.ceiling(db::kCeilingFp32, 40e12);
  for (const auto& ids : chain.ids) {
    for (const auto id : ids) chain.c.counters(id, 1e8, 1e6, 1e8);
  }
  const Hit h = only_chain(flags_of(chain.c));
  EXPECT_DOUBLE_EQ(h.metric("memory_bound"), 1);
  EXPECT_NEAR(h.metric("arithmetic_intensity"), 1.0, 1e-9);
  EXPECT_NEAR(h.metric("ridge_point"), 5.0, 1e-9);
  EXPECT_TRUE(contains(h.detail, "of L2 traffic")) << h.detail;
}

TEST(FlagsFusion, CountersForSomeKernelsOnlyLeaveTheTestUnknown) {
  ChainCapture chain = chain_capture();
  for (const auto& ids : chain.ids) chain.c.counters(ids[0], 1e9, 1e6);
  const Hit h = only_chain(flags_of(chain.c));
  EXPECT_DOUBLE_EQ(h.metric("memory_bound"), -1);
}

TEST(FlagsFusion, TheRangesWorkAnnotationDecidesWithoutCounters) {
  for (const auto& [flops, bound] : {std::pair{1e6, 1.0}, std::pair{1e10, 0.0}}) {
    ChainCapture chain = chain_capture();
    add_feeding_args(chain);
    chain.c.annotation(us(5), flops, 1e6);  // inside "layer"
    const Hit h = only_chain(flags_of(chain.c));
    EXPECT_DOUBLE_EQ(h.metric("memory_bound"), bound) << flops;
    EXPECT_TRUE(contains(h.detail, "work annotation of range layer")) << h.detail;
  }
}

TEST(FlagsFusion, MeasuredCeilingsGiveTheBandwidthAndTheRidge) {
  ChainCapture chain = chain_capture();
  add_feeding_args(chain);
  chain.c.ceiling(db::kCeilingDramBandwidth, 2e12);
  chain.c.ceiling(db::kCeilingFp32, 40e12);
  chain.c.annotation(us(5), 1e6, 1e6);
  const Hit h = only_chain(flags_of(chain.c));
  EXPECT_DOUBLE_EQ(h.metric("dram_bytes_per_s"), 2e12);
  EXPECT_NEAR(h.metric("ridge_point"), 20.0, 1e-9);
  EXPECT_TRUE(contains(h.detail, "measured on this device")) << h.detail;
}

TEST(FlagsFusion, AnUnknownDeviceHasNoRidgeAndNoBandwidth) {
  ChainCapture chain = chain_capture();
  add_feeding_args(chain);
  chain.c.device("Mystery GPU", 7);
  chain.c.annotation(us(5), 1e6, 1e6);
  const Hit h = only_chain(flags_of(chain.c));
  EXPECT_DOUBLE_EQ(h.metric("memory_bound"), -1);
  EXPECT_DOUBLE_EQ(h.metric("byte_saving_ns"), 0);
  EXPECT_TRUE(contains(h.detail, "not turned into time")) << h.detail;
}

TEST(FlagsTraceFusion, AllocationsAreMatchedByAddressAndTime) {
  FlagsCapture c;
  c.allocation(kX, kMiB, us(1), us(10));  // freed, then the address is reused
  c.allocation(kX, 2 * kMiB, us(20));
  c.allocation(kT, 4 * kMiB, us(1));
  TempDir dir;
  c.write(dir.file("c.sqlite"));
  const db::Reader reader(dir.file("c.sqlite"));
  const FlagsTrace t = load_flags_trace(reader);
  const std::uint32_t pid = test::kFlagsPid;
  const auto at = [](std::int64_t v) { return test::kFlagsT0 + v; };
  ASSERT_EQ(t.allocations.size(), 3U);
  EXPECT_EQ(t.allocation_at(pid, kX + 10, at(us(5)))->bytes, kMiB);
  EXPECT_EQ(t.allocation_at(pid, kX + kMiB + 10, at(us(5))), nullptr);  // beyond the first
  EXPECT_EQ(t.allocation_at(pid, kX + 10, at(us(15))), nullptr);        // between the two
  EXPECT_EQ(t.allocation_at(pid, kX + kMiB + 10, at(us(25)))->bytes, 2 * kMiB);
  EXPECT_EQ(t.allocation_at(pid, kT + 4 * kMiB - 1, at(us(25)))->address, kT);
  EXPECT_EQ(t.allocation_at(pid, kT + 4 * kMiB, at(us(25))), nullptr);
  EXPECT_EQ(t.allocation_at(pid + 1, kT, at(us(25))), nullptr);
}

// --- Calling contexts ---------------------------------------------------------------------

TEST(FlagsContext, LaunchShortIsAggregatedPerKernelAndCallSite) {
  FlagsCapture c;
  c.range("tiny", 0, us(200));
  for (int i = 0; i < 20; ++i) {
    const auto id = c.kernel("tiny_kernel", us(6 * i + 6), us(2), us(6 * i), us(5));
    if (i % 2 == 0) {
      c.context(id, {"_start", "__libc_start_main", "main", "run(int)", "launch_a()"}, 10);
    } else {
      c.context(
          id, {"main", "std::function<void ()>::operator()() const", "run(int)", "launch_b()"}, 20);
    }
  }
  const FlagsReport r = flags_of(c);
  EXPECT_EQ(fired(r), (std::set<std::string>{"launch_short", "stream_idle", "gpu_utilization"}));
  const auto hits = hits_of(r, "launch_short");
  ASSERT_EQ(hits.size(), 2U);
  std::set<std::string> contexts;
  for (const Hit* h : hits) {
    EXPECT_EQ(h->count, 10);
    contexts.insert(h->context);
  }
  // From main down, std:: plumbing hidden, the last frame with its line.
  EXPECT_EQ(contexts, (std::set<std::string>{"main > run > launch_a [synthetic.cu:10]",
                                             "main > run > launch_b [synthetic.cu:20]"}));
  for (const Hit* h : hits_of(r, "stream_idle")) EXPECT_EQ(h->context, "");  // a stream's idle

  std::ostringstream csv, json, table;
  write_flags(csv, r, OutputFormat::Csv);
  write_flags(json, r, OutputFormat::Json);
  write_flags(table, r, OutputFormat::Table);
  const auto rows = test::parse_csv(csv.str());
  ASSERT_GE(rows.size(), 3U);
  EXPECT_EQ(rows[0][9], "context");
  EXPECT_EQ(rows[1][0], "verdict");
  const auto launch = std::find_if(rows.begin(), rows.end(),
                                   [](const auto& row) { return row[0] == "launch_short"; });
  ASSERT_NE(launch, rows.end());
  EXPECT_EQ((*launch)[9].rfind("main > run > launch_", 0), 0U) << (*launch)[9];
  EXPECT_TRUE(contains(json.str(), "\"context\": \"main > run > launch_a [synthetic.cu:10]\""));
  EXPECT_TRUE(contains(table.str(), "called from main > run > launch_b [synthetic.cu:20]"));
}

TEST(FlagsContext, AChainNamesTheCallPathItsLaunchesShare) {
  ChainCapture chain = chain_capture(3);
  for (const auto& ids : chain.ids) {
    chain.c.context(ids[0], {"main", "layer_forward(int)", "launch_a(float*)"}, 30);
    chain.c.context(ids[1], {"main", "layer_forward(int)", "launch_b(float*)"}, 31);
    chain.c.context(ids[2], {"main", "layer_forward(int)", "launch_c(float*)"}, 32);
  }
  const Hit h = only_chain(flags_of(chain.c));
  EXPECT_EQ(h.context, "main > layer_forward");
}

TEST(FlagsContext, CapturesWithoutContextsLeaveItEmpty) {
  const Hit h = only_chain(flags_of(chain_capture(3).c));
  EXPECT_EQ(h.context, "");
}

TEST(FlagsContext, FormatCollapsesUnsymbolizedFramesAndStartsAtMain) {
  EXPECT_EQ(format_context({{"libc.so.6+0x29d90", ""},
                            {"worker()", ""},
                            {"libcublasLt.so.13+0x10", ""},
                            {"libcublasLt.so.13+0x20", ""},
                            {"libcublasLt.so.13+0x30", "x.cu:3"}}),
            "worker > libcublasLt.so.13 (3 frames) [x.cu:3]");
  EXPECT_EQ(format_context({{"_start", ""}, {"main", "m.cc:1"}, {"ns::go<int>(int)", "m.cc:9"}}),
            "main > go [m.cc:9]");
  // The compiler's launch stub is hidden: the frame above it holds the launch line.
  EXPECT_EQ(format_context({{"main", ""},
                            {"launch(float*)", "k.cu:5"},
                            {"__device_stub__Z1kPf(float*)", "k.cudafe1.stub.c:1"}}),
            "main > launch [k.cu:5]");
  EXPECT_EQ(format_context({}), "");
}

}  // namespace
}  // namespace fuselens::analyzer
