// Flags rules on synthetic captures written with db::Writer: one capture where no rule fires,
// then one capture per planted problem; each test checks the exact set of rules that fire and
// the hits of the planted rule.
#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "TestSupport.h"
#include "flags/Flags.h"
#include "flags/FlagsFormat.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/Writer.h"

namespace fuselens::analyzer {
namespace {

using test::TempDir;
using Capture = test::FlagsCapture;
using test::fired;
using test::flags_of;
using test::hits_of;
using test::us;

constexpr std::uint32_t kTid = test::kFlagsTid, kStream = test::kFlagsStream;

/// No rule fires: range "step" [0, 3000 us]; a 4 KiB synchronous Host-to-Device copy at 100 us
/// (small: exempt); 20 kernels of 100 us from 110 us, 1 us apart (they end at 2129 us), each
/// launched 50 us ahead by a 5 us call.
Capture clean_capture() {
  Capture c;
  c.range("step", 0, us(3000));
  c.copy(db::MemcpyKind::HostToDevice, 4096, us(100), us(2), false, db::MemoryKind::Pageable,
         db::MemoryKind::Device);
  for (int i = 0; i < 20; ++i) {
    const std::int64_t start = us(110 + 101 * i);
    c.kernel("big_kernel", start, us(100), start - us(50), us(5));
  }
  return c;
}

TEST(Flags, CleanCaptureFiresNoRule) {
  const FlagsReport r = flags_of(clean_capture());
  EXPECT_TRUE(r.cuda_used);
  EXPECT_EQ(r.rules_run.size(), flag_rules().size());
  EXPECT_TRUE(r.hits.empty()) << r.hits.front().rule << ": " << r.hits.front().detail;
}

TEST(Flags, ShortKernelsAreLaunchOverheadDominated) {
  // 20 kernels of 2 us, each launched by a 5 us call: GPU time < CPU time; the GPU idles 4 us
  // between them, so the stream and the timeline are mostly idle too.
  Capture c;
  c.range("tiny", 0, us(200));
  for (int i = 0; i < 20; ++i) c.kernel("tiny_kernel", us(6 * i + 6), us(2), us(6 * i), us(5));
  const FlagsReport r = flags_of(c);
  EXPECT_EQ(fired(r), (std::set<std::string>{"launch_short", "stream_idle", "gpu_utilization"}));
  const auto hits = hits_of(r, "launch_short");
  ASSERT_EQ(hits.size(), 1U);
  const Hit& h = *hits[0];
  EXPECT_EQ(h.subject, "tiny_kernel");
  EXPECT_EQ(h.range, "tiny");
  EXPECT_EQ(h.count, 20);
  EXPECT_EQ(h.stream_id, kStream);
  EXPECT_EQ(h.tid, kTid);
  EXPECT_EQ(h.time_ns, 19 * us(4));  // the idle gap before each kernel but the first
  EXPECT_DOUBLE_EQ(h.metric("gpu_ns"), 20.0 * us(2));
  EXPECT_DOUBLE_EQ(h.metric("cpu_ns"), 20.0 * us(5));
  EXPECT_NEAR(h.metric("idle_percent"), 100.0 * 76 / (76 + 40), 1e-9);
  // All idle is "other": every launch call started before the previous kernel ended.
  const auto idle = hits_of(r, "stream_idle");
  ASSERT_EQ(idle.size(), 1U);
  EXPECT_EQ(idle[0]->range, "tiny");
  EXPECT_DOUBLE_EQ(idle[0]->metric("other_ns"), 19.0 * us(4));
  EXPECT_DOUBLE_EQ(idle[0]->metric("host_wait_ns"), 0);
}

TEST(Flags, RaisingTheCutoffBelowTheLaunchTimeSilencesLaunchShort) {
  Capture c;
  c.range("tiny", 0, us(200));
  for (int i = 0; i < 20; ++i) c.kernel("tiny_kernel", us(6 * i + 6), us(2), us(6 * i), us(5));
  FlagsConfig config;
  config.set("launch_short.runtime_cutoff_us=4");
  EXPECT_EQ(flags_of(c, config).hit_count("launch_short"), 0U);
}

TEST(Flags, HostRunningAheadGivesLaunchDelayOutliersOnly) {
  // 10 kernels of 100 us back to back, all launched in the first 60 us.
  Capture c;
  c.range("ahead", 0, us(1200));
  for (int i = 0; i < 10; ++i) c.kernel("big_kernel", us(10 + 101 * i), us(100), us(6 * i), us(5));
  const FlagsReport r = flags_of(c);
  EXPECT_EQ(fired(r), std::set<std::string>{"launch_delay"});
  const auto hits = hits_of(r, "launch_delay");
  ASSERT_EQ(hits.size(), 1U);
  // delay_i = 10 + 101 i - (6 i + 5) = 5 + 95 i us: > 100 us for i >= 2.
  EXPECT_EQ(hits[0]->count, 8);
  std::int64_t total = 0;
  for (int i = 2; i < 10; ++i) total += us(5 + 95 * i);
  EXPECT_EQ(hits[0]->time_ns, total);
  EXPECT_DOUBLE_EQ(hits[0]->metric("max_delay_ns"), static_cast<double>(us(5 + 95 * 9)));
}

TEST(Flags, SlowLaunchCallIsARuntimeOutlier) {
  Capture c = clean_capture();
  c.kernel("slow_launch_kernel", us(2130), us(100), us(2045), us(80), kTid,
           "cudaLaunchKernel_v7000");
  const FlagsReport r = flags_of(c);
  EXPECT_EQ(fired(r), std::set<std::string>{"runtime_outlier"});
  const auto hits = hits_of(r, "runtime_outlier");
  ASSERT_EQ(hits.size(), 1U);
  EXPECT_EQ(hits[0]->subject, "cudaLaunchKernel (slow_launch_kernel)");
  EXPECT_EQ(hits[0]->time_ns, us(80));
  EXPECT_EQ(hits[0]->range, "step");
}

TEST(Flags, HostWaitGapsAreStreamIdle) {
  // 100 us kernels with 30 us gaps; each launch call starts after the previous kernel ended.
  Capture c;
  c.range("waits", 0, us(3000));
  for (int i = 0; i < 20; ++i) {
    const std::int64_t start = us(10 + 130 * i);
    c.kernel("big_kernel", start, us(100), start - us(6), us(5));
  }
  const FlagsReport r = flags_of(c);
  EXPECT_EQ(fired(r), std::set<std::string>{"stream_idle"});
  const auto hits = hits_of(r, "stream_idle");
  ASSERT_EQ(hits.size(), 1U);
  EXPECT_EQ(hits[0]->range, "waits");
  EXPECT_EQ(hits[0]->count, 19);
  EXPECT_EQ(hits[0]->time_ns, 19 * us(30));
  EXPECT_DOUBLE_EQ(hits[0]->metric("host_wait_ns"), 19.0 * us(30));
  EXPECT_NE(hits[0]->advice.find("Host wait"), std::string::npos);
}

TEST(Flags, GapsUnderTheKernelWaitCutoffAreKernelWait) {
  Capture c;
  c.range("queued", 0, us(100));
  for (int i = 0; i < 5; ++i) c.kernel("k", us(20) + i * 120, 100, us(i), us(1));  // 20 ns gaps
  FlagsConfig config;
  config.set("stream_idle.min_idle_percent", 0);
  const FlagsReport r = flags_of(c, config);
  const auto hits = hits_of(r, "stream_idle");
  ASSERT_EQ(hits.size(), 1U);
  EXPECT_DOUBLE_EQ(hits[0]->metric("kernel_wait_ns"), 4 * 20.0);
  EXPECT_DOUBLE_EQ(hits[0]->metric("other_ns"), 0);
}

TEST(Flags, LongDeviceIdleIsAGpuGap) {
  Capture c;
  c.range("first", 0, us(1100));
  c.range("second", us(600'000), us(601'100));
  for (int i = 0; i < 10; ++i) {
    c.kernel("big_kernel", us(10 + 101 * i), us(100), us(10 + 101 * i - 6), us(5));
    c.kernel("big_kernel", us(600'010 + 101 * i), us(100), us(600'010 + 101 * i - 6), us(5));
  }
  const FlagsReport r = flags_of(c);
  // The 599 ms idle is also a low-utilization stretch and stream idle between two ranges.
  EXPECT_EQ(fired(r), (std::set<std::string>{"gpu_gaps", "gpu_utilization", "stream_idle"}));
  const auto gaps = hits_of(r, "gpu_gaps");
  ASSERT_EQ(gaps.size(), 1U);
  EXPECT_EQ(gaps[0]->time_ns, us(600'010) - us(10 + 101 * 9 + 100));
  EXPECT_EQ(gaps[0]->range, "second");                 // named after the work that ends the gap
  EXPECT_EQ(hits_of(r, "stream_idle")[0]->range, "");  // charged to "between ranges"
  FlagsConfig longer;
  longer.set("gpu_gaps.min_gap_ms=700");
  EXPECT_EQ(flags_of(c, longer).hit_count("gpu_gaps"), 0U);
}

TEST(Flags, SynchronousCopiesExceptSmallHostToDeviceAndWithinDevice) {
  Capture c = clean_capture();
  using K = db::MemcpyKind;
  using M = db::MemoryKind;
  // Back to back after the kernels (which end at 2129 us), so the stream stays busy.
  c.copy(K::HostToDevice, 65536, us(2130), us(10), false, M::Pageable, M::Device);    // <= 64 KiB
  c.copy(K::HostToDevice, 65537, us(2141), us(10), false, M::Pageable, M::Device);    // flagged
  c.copy(K::DeviceToDevice, 1 << 20, us(2152), us(10), false, M::Device, M::Device);  // same device
  c.copy(K::DeviceToHost, 1 << 20, us(2163), us(300), false, M::Device, M::Pageable);  // flagged
  const FlagsReport r = flags_of(c);
  EXPECT_EQ(fired(r), std::set<std::string>{"sync_memcpy"});
  const auto hits = hits_of(r, "sync_memcpy");
  ASSERT_EQ(hits.size(), 2U);
  EXPECT_EQ(hits[0]->subject, "[CUDA memcpy Device-to-Host]");
  EXPECT_EQ(hits[0]->time_ns, us(300) + us(2));  // the blocking call: copy + 2 us (Capture)
  EXPECT_DOUBLE_EQ(hits[0]->metric("bytes"), 1 << 20);
  EXPECT_EQ(hits[1]->subject, "[CUDA memcpy Host-to-Device]");
  EXPECT_EQ(hits[1]->range, "step");
}

TEST(Flags, AsyncCopyOfPageableMemory) {
  Capture c = clean_capture();
  using K = db::MemcpyKind;
  using M = db::MemoryKind;
  c.copy(K::HostToDevice, 4096, us(2130), us(10), true, M::Pageable, M::Device);  // flagged
  c.copy(K::HostToDevice, 4096, us(2141), us(10), true, M::Pinned, M::Device);
  const FlagsReport r = flags_of(c);
  EXPECT_EQ(fired(r), std::set<std::string>{"async_pageable"});
  const auto hits = hits_of(r, "async_pageable");
  ASSERT_EQ(hits.size(), 1U);
  EXPECT_EQ(hits[0]->count, 1);
  EXPECT_EQ(hits[0]->time_ns, us(10));
}

TEST(Flags, SynchronousMemsetOnPinnedOrManagedMemory) {
  Capture c = clean_capture();
  using M = db::MemoryKind;
  c.memset(M::Pinned, us(2130), us(10), false);   // flagged
  c.memset(M::Managed, us(2141), us(10), false);  // flagged
  c.memset(M::Device, us(2152), us(10), false);   // asynchronous to the host anyway
  c.memset(M::Pinned, us(2163), us(10), true);
  const FlagsReport r = flags_of(c);
  EXPECT_EQ(fired(r), std::set<std::string>{"sync_memset"});
  const auto hits = hits_of(r, "sync_memset");
  ASSERT_EQ(hits.size(), 2U);
  std::set<std::string> subjects{hits[0]->subject, hits[1]->subject};
  EXPECT_EQ(subjects, (std::set<std::string>{"[CUDA memset] on Pinned memory",
                                             "[CUDA memset] on Managed memory"}));
}

TEST(Flags, SynchronizationInTheHotPath) {
  Capture c = clean_capture();
  // Inside the range "step" (0..3000 us), with a sync_event of the same correlation: one hit.
  const auto corr = c.call("cudaDeviceSynchronize_v3020", us(1000), us(1001));
  c.sync(db::SyncType::ContextSynchronize, us(1000), us(1001), corr);
  // On a thread with no range and no launches: not in the hot path.
  c.call("cudaStreamSynchronize", us(1500), us(1502), kTid + 1);
  // A sync_event without its call (API tracing off), between kernels of the process.
  c.sync(db::SyncType::StreamSynchronize, us(500), us(503), 999'999);
  // Stream-wait-event records never block the host.
  c.sync(db::SyncType::StreamWaitEvent, us(600), us(601), 999'998);
  // After the last launch of the thread and outside ranges: not in the hot path.
  c.call("cuCtxSynchronize", us(5000), us(5010));
  const FlagsReport r = flags_of(c);
  EXPECT_EQ(fired(r), std::set<std::string>{"sync_api"});
  const auto hits = hits_of(r, "sync_api");
  ASSERT_EQ(hits.size(), 2U);
  EXPECT_EQ(hits[0]->subject, "[sync: Stream synchronize]");
  EXPECT_EQ(hits[0]->time_ns, us(3));
  EXPECT_FALSE(hits[0]->tid.has_value());
  EXPECT_EQ(hits[1]->subject, "cudaDeviceSynchronize");
  EXPECT_EQ(hits[1]->range, "step");
  EXPECT_EQ(hits[1]->count, 1);
  EXPECT_EQ(hits[1]->time_ns, us(1));
}

TEST(Flags, SynchronizeBetweenLaunchesOutsideRangesIsHot) {
  Capture c;
  for (int i = 0; i < 4; ++i) {
    c.kernel("big_kernel", us(10 + 101 * i), us(100), us(4 + 101 * i), us(5));
  }
  c.call("cudaStreamSynchronize_v3020", us(30), us(40));  // after the 1st launch, before the 2nd
  const FlagsReport r = flags_of(c);
  const auto hits = hits_of(r, "sync_api");
  ASSERT_EQ(hits.size(), 1U);
  EXPECT_EQ(hits[0]->subject, "cudaStreamSynchronize");
  EXPECT_EQ(hits[0]->range, "");
}

TEST(Flags, RepeatedBackToBackChainIsAFusionOpportunity) {
  Capture c;
  std::int64_t t = us(10);
  const auto launch = [&](const char* name) {
    c.kernel(name, t, us(100), t - us(8), us(5));
    t += us(102);  // 2 us gaps
  };
  c.range("layer", 0, us(3000));
  for (int i = 0; i < 10; ++i) {
    launch("a_kernel");
    launch("b_kernel");
    launch("c_kernel");
  }
  c.range("single", t - us(9), t + us(1100));
  for (int i = 0; i < 10; ++i) launch("d_kernel");  // one kernel repeated: nothing to fuse
  c.range("once", t - us(9), t + us(300));
  launch("e_kernel");
  launch("f_kernel");  // a chain seen once: below min_repeats
  const FlagsReport r = flags_of(c);
  EXPECT_EQ(fired(r), std::set<std::string>{"fusion_chain"});
  const auto hits = hits_of(r, "fusion_chain");
  ASSERT_EQ(hits.size(), 1U);
  const Hit& h = *hits[0];
  EXPECT_EQ(h.subject, "a_kernel -> b_kernel -> c_kernel");
  EXPECT_EQ(h.range, "layer");
  EXPECT_EQ(h.count, 10);
  EXPECT_EQ(h.time_ns, 10 * 2 * us(2));  // launches removed x measured gap per launch
  EXPECT_DOUBLE_EQ(h.metric("launches_removed"), 20);
  EXPECT_DOUBLE_EQ(h.metric("gap_per_launch_ns"), us(2));
  EXPECT_DOUBLE_EQ(h.metric("launch_bound"), 0);  // 100 us kernels, 5 us launches
  EXPECT_NE(h.detail.find("not measured"), std::string::npos);

  FlagsConfig config;
  config.set("fusion_chain.min_repeats=1");
  EXPECT_EQ(flags_of(c, config).hit_count("fusion_chain"), 2U);  // e -> f too
}

TEST(Flags, ChainSplitByGapsStillCountsOccurrences) {
  // [a b] pairs of 200 us kernels 2 us apart, 25 us between pairs (above the 20 us chain gap): ten
  // runs of one chain each; the same sequence recurs, so it is reported with 10 occurrences.
  Capture c;
  c.range("pairs", 0, us(4500));
  std::int64_t t = us(10);
  for (int i = 0; i < 10; ++i) {
    c.kernel("a_kernel", t, us(200), t - us(8), us(5));
    c.kernel("b_kernel", t + us(202), us(200), t + us(190), us(5));
    t += us(402 + 25);
  }
  const FlagsReport r = flags_of(c);
  EXPECT_EQ(fired(r), std::set<std::string>{"fusion_chain"});
  ASSERT_EQ(r.hit_count("fusion_chain"), 1U);
  EXPECT_EQ(hits_of(r, "fusion_chain")[0]->count, 10);
}

TEST(Flags, OnlySelectedRulesRun) {
  Capture c;
  c.range("tiny", 0, us(200));
  for (int i = 0; i < 20; ++i) c.kernel("tiny_kernel", us(6 * i + 6), us(2), us(6 * i), us(5));
  FlagsConfig config;
  config.select_rules({"stream_idle"});
  const FlagsReport r = flags_of(c, config);
  EXPECT_EQ(r.rules_run, std::vector<std::string>{"stream_idle"});
  EXPECT_EQ(fired(r), std::set<std::string>{"stream_idle"});
}

TEST(FlagsTrace, InnermostRangeOnTheLaunchingThread) {
  Capture c;
  c.range("outer", 0, us(100));
  c.range("inner", us(10), us(20), kTid, 1);
  c.range_on(kTid + 1, "other thread", 0, us(100));
  c.kernel("k1", us(15), us(1), us(12), us(1));            // in inner
  c.kernel("k2", us(30), us(1), us(25), us(1));            // in outer only
  c.kernel("k3", us(40), us(1), us(35), us(1), kTid + 1);  // other thread
  c.kernel("k4", us(240), us(1), us(200), us(1));          // no range
  TempDir dir;
  c.write(dir.file("c.sqlite"));
  const db::Reader reader(dir.file("c.sqlite"));
  const FlagsTrace t = load_flags_trace(reader);
  ASSERT_EQ(t.ops.size(), 4U);
  const auto range_of = [&](std::size_t i) {
    const TraceRange* r = t.launch_range(t.ops[i]);
    return r ? r->name : std::string("-");
  };
  EXPECT_EQ(range_of(0), "inner");
  EXPECT_EQ(range_of(1), "outer");
  EXPECT_EQ(range_of(2), "other thread");
  EXPECT_EQ(range_of(3), "-");
}

// An unrestricted reader loads the launch calls and the GPU operations on threads of their own,
// each through a twin of the reader (FlagsTrace.cpp); a window's reader loads them one after
// another. A window holding every row gives the same report, byte for byte, on real captures
// with ranges, calling contexts, copies and fusion chains.
TEST(FlagsTrace, LoadedOnThreadsTheSameAsOneAfterAnother) {
  for (const char* name :
       {"train_steps.sqlite", "fusion_bench_args.sqlite", "cnn_eager.sqlite", "step_loop.sqlite"}) {
    const std::string path = std::string(FUSELENS_TEST_DATA_DIR) + "/" + name;
    const auto text_of = [&](db::Reader& reader) {
      std::ostringstream out;
      write_flags(out, run_flags(reader, FlagsConfig()), OutputFormat::Json);
      return out.str();
    };
    db::Reader whole(path);
    db::Reader windowed(path);
    ASSERT_FALSE(whole.restricted());
    windowed.restrict_to({{std::numeric_limits<std::int64_t>::min() / 2,
                           std::numeric_limits<std::int64_t>::max() / 2}});
    const std::string threads = text_of(whole), sequential = text_of(windowed);
    EXPECT_NE(threads.find("\"hits\""), std::string::npos) << name;
    EXPECT_EQ(threads, sequential) << name;
  }
}

}  // namespace

// Captures for FlagsCliTest.cpp (declared there).
namespace flags_test {

void write_sync_capture(const std::string& path) {
  Capture c = clean_capture();
  c.call("cudaDeviceSynchronize", us(1000), us(1001));
  c.write(path);
}

void write_tiny_capture(const std::string& path) {
  Capture c;
  c.range("tiny", 0, us(200));
  for (int i = 0; i < 20; ++i) c.kernel("tiny_kernel", us(6 * i + 6), us(2), us(6 * i), us(5));
  c.write(path);
}

void write_capture_without_process(const std::string& path) {
  Capture().write(path, /*with_process=*/false);
}

}  // namespace flags_test
}  // namespace fuselens::analyzer
