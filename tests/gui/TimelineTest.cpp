// The analyzer's Timeline API (analyzer/Timeline.h): lanes, sorting, level-of-detail searches,
// the device-memory counter and launch contexts, on a synthetic capture and the H100 captures.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "GuiTestSupport.h"
#include "summary/Summary.h"
#include "timeline/Timeline.h"
#include "fuselens/db/Reader.h"

namespace fuselens::analyzer {
namespace {

using gui::test::dataFile;

std::string tempCapture(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("fuselens_timeline_" + name + ".sqlite")).string();
}

std::size_t countKind(const Timeline& t, TimelineItemKind kind) {
  std::size_t n = 0;
  for (const auto& lane : t.lanes)
    for (const auto& row : lane.rows)
      for (const auto& item : row.items) n += item.kind == kind ? 1 : 0;
  return n;
}

TEST(Timeline, SyntheticCaptureHasOneLanePerStreamAndThread) {
  const auto path = tempCapture("synthetic");
  const auto written = gui::test::writeSyntheticCapture(path, 5000, 2);
  const Timeline t = load_timeline(db::Reader(path));
  ASSERT_EQ(t.lanes.size(), 4u);  // 2 streams, NVTX thread 7, API thread 7
  EXPECT_EQ(t.lanes[0].kind, LaneKind::Gpu);
  EXPECT_EQ(t.lanes[0].stream_id, 7u);
  EXPECT_EQ(t.lanes[0].title, "GPU 0 · stream 7");
  EXPECT_EQ(t.lanes[1].stream_id, 8u);
  EXPECT_EQ(t.lanes[2].kind, LaneKind::Nvtx);
  EXPECT_EQ(t.lanes[2].tid, 7u);
  EXPECT_EQ(t.lanes[3].kind, LaneKind::Api);
  EXPECT_EQ(t.lanes[0].item_count() + t.lanes[1].item_count(), 5000u);
  EXPECT_EQ(t.lanes[2].item_count(), static_cast<std::size_t>(written.ranges));
  EXPECT_EQ(t.lanes[3].item_count(), 5000u);
  EXPECT_EQ(t.begin_ns, written.first_ns);
  EXPECT_EQ(t.end_ns, written.last_ns);
  EXPECT_EQ(t.kernels.size(), 5000u);
  std::filesystem::remove(path);
}

TEST(Timeline, RowsAreSortedAndKnowTheirLongestItem) {
  const auto path = tempCapture("sorted");
  gui::test::writeSyntheticCapture(path, 3000, 3);
  const Timeline t = load_timeline(db::Reader(path));
  for (const auto& lane : t.lanes) {
    for (const auto& row : lane.rows) {
      EXPECT_TRUE(std::is_sorted(row.items.begin(), row.items.end(),
                                 [](const TimelineItem& a, const TimelineItem& b) { return a.start_ns < b.start_ns; }));
      std::int64_t longest = 0;
      for (const auto& i : row.items) longest = std::max(longest, i.end_ns - i.start_ns);
      EXPECT_EQ(row.max_duration_ns, longest);
    }
  }
  std::filesystem::remove(path);
}

TEST(Timeline, FirstVisibleAndFirstStartingAtBinarySearch) {
  TimelineRow row;
  for (int i = 0; i < 10; ++i) row.items.push_back({i * 100, i * 100 + 50, 0, 0, TimelineItemKind::Kernel});
  row.max_duration_ns = 50;
  EXPECT_EQ(first_visible(row, 0), 0u);
  EXPECT_EQ(first_visible(row, 120), 1u);   // [100, 150] overlaps 120
  EXPECT_EQ(first_visible(row, 160), 2u);   // item 1 ended at 150
  EXPECT_EQ(first_visible(row, 10'000), 10u);
  EXPECT_EQ(first_starting_at(row, 0, 250), 3u);
  EXPECT_EQ(first_starting_at(row, 5, 250), 5u);
  EXPECT_EQ(first_starting_at(row, 0, 900), 9u);
  EXPECT_EQ(first_starting_at(row, 0, 901), 10u);
}

TEST(Timeline, CounterIsTheDeviceMemoryRunningSum) {
  const auto path = tempCapture("memory");
  const auto written = gui::test::writeSyntheticCapture(path, 2500, 1);
  const Timeline t = load_timeline(db::Reader(path));
  ASSERT_EQ(t.counters.size(), 1u);
  EXPECT_EQ(t.counters[0].max_value, written.peak_bytes);
  EXPECT_EQ(t.counters[0].points.front().value, 64 << 20);
  EXPECT_EQ(t.counters[0].points.back().value, 64 << 20);  // the range allocations were freed
  std::filesystem::remove(path);
}

TEST(Timeline, LaunchContextFindsTheCallAndEnclosingRange) {
  const auto path = tempCapture("context");
  gui::test::writeSyntheticCapture(path, 2500, 1);
  const Timeline t = load_timeline(db::Reader(path));
  const TimelineItem& kernel = t.lanes[0].rows[0].items[1500];
  const LaunchContext c = launch_context(t, kernel);
  ASSERT_NE(c.call, nullptr);
  EXPECT_EQ(t.names[c.call->name], "cudaLaunchKernel");
  EXPECT_EQ(kernel.start_ns - c.call->start_ns, 5000 - 4);
  EXPECT_EQ(c.tid, 7u);
  ASSERT_EQ(c.ranges.size(), 1u);
  EXPECT_EQ(t.names[c.ranges[0]->name], "step/1");
  std::filesystem::remove(path);
}

TEST(Timeline, FusionBenchMatchesTheSummary) {
  const db::Reader reader(dataFile("fusion_bench.sqlite"));
  const Summary s = summarize(reader);
  const Timeline t = load_timeline(reader);
  EXPECT_EQ(static_cast<std::int64_t>(countKind(t, TimelineItemKind::Kernel)), s.totals.kernel_count);
  EXPECT_EQ(static_cast<std::int64_t>(countKind(t, TimelineItemKind::Memcpy)), s.totals.memcpy_count);
  EXPECT_EQ(static_cast<std::int64_t>(countKind(t, TimelineItemKind::Api)), s.totals.api_call_count);
  EXPECT_EQ(static_cast<std::int64_t>(countKind(t, TimelineItemKind::Nvtx)), s.totals.nvtx_range_count);
  ASSERT_EQ(t.counters.size(), s.device_memory.size());
  for (std::size_t i = 0; i < t.counters.size(); ++i) {
    EXPECT_EQ(t.counters[i].device_id, s.device_memory[i].device_id);
    EXPECT_EQ(t.counters[i].max_value, s.device_memory[i].peak_bytes);
  }
  // Kernel time per short name equals the summary's (short names) totals.
  const Summary shortNames = summarize(reader, NameKind::Short);
  std::map<std::string, std::int64_t> total;
  for (const auto& lane : t.lanes)
    for (const auto& row : lane.rows)
      for (const auto& item : row.items)
        if (item.kind == TimelineItemKind::Kernel) total[t.names[item.name]] += item.end_ns - item.start_ns;
  for (const auto& k : shortNames.kernels) EXPECT_EQ(total[k.name], k.stats.total_ns) << k.name;
}

TEST(Timeline, PytorchLaunchContextsMatchTheNvtxProjection) {
  const db::Reader reader(dataFile("pytorch_mlp.sqlite"));
  const Timeline t = load_timeline(reader);
  // Launch contexts hold the ranges open on the launching thread: the thread projection.
  const Summary s = summarize(reader, NameKind::Demangled, NvtxProjection::Thread);
  // Kernels per range name, from launch contexts; each enclosing range counts the kernel, as
  // Summary's GPU projection does.
  std::map<std::string, std::int64_t> perRange;
  std::size_t kernels = 0;
  for (const auto& lane : t.lanes) {
    if (lane.kind != LaneKind::Gpu) continue;
    for (const auto& item : lane.rows[0].items) {
      if (item.kind != TimelineItemKind::Kernel) continue;
      ++kernels;
      for (const auto* range : launch_context(t, item).ranges) ++perRange[t.names[range->name]];
    }
  }
  EXPECT_EQ(kernels, 366u);
  ASSERT_FALSE(s.nvtx.empty());
  for (const auto& row : s.nvtx) EXPECT_EQ(perRange[row.name], row.kernel_count) << row.name;
}

}  // namespace
}  // namespace fuselens::analyzer
