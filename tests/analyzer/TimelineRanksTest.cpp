// Timeline lanes per rank and device (analyzer/timeline/Timeline.h, issue 25) on the synthetic
// two-rank capture of tests/support/TwoRankCapture.h: titles, order and items per lane, and the
// plain lanes of the same activity without process_rank rows.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "TempDir.h"
#include "TwoRankCapture.h"
#include "fuselens/db/Reader.h"
#include "timeline/Timeline.h"

namespace fuselens::analyzer {
namespace {

using fuselens::test::TempDir;

std::vector<std::string> titles(const Timeline& t) {
  std::vector<std::string> out;
  for (const auto& lane : t.lanes) out.push_back(lane.title);
  return out;
}

TEST(TimelineRanks, LanesAreGroupedByRankThenDeviceThenStreamWithRankedTitles) {
  TempDir dir;
  const auto path = dir.file("two_rank.sqlite");
  fuselens::test::write_two_rank_capture(path);
  const Timeline t = load_timeline(db::Reader(path));
  EXPECT_TRUE(t.has_ranks);
  // Rank 0 (pid 200) before rank 1 (pid 100) although its pid is higher; per rank Gpu lanes by
  // (device, stream), then NVTX, then API; rank 1's stray kernel on device 0 keeps its own lane
  // beside rank 0's (device 0, stream 7); pid 300 has no rank and comes last.
  const std::vector<std::string> expected = {
      "rank 0 · GPU 0 · stream 7",      "rank 0 · GPU 0 · stream 13",
      "rank 0 · NVTX · thread 200",     "rank 0 · CUDA API · thread 200",
      "rank 1 · GPU 0 · stream 7",      "rank 1 · GPU 1 · stream 7",
      "rank 1 · GPU 1 · stream 13",     "rank 1 · NVTX · thread 100",
      "rank 1 · CUDA API · thread 100", "pid 300 · GPU 0 · stream 7",
      "pid 300 · CUDA API · thread 300"};
  EXPECT_EQ(titles(t), expected);
  const std::vector<std::int32_t> ranks = {0, 0, 0, 0, 1, 1, 1, 1, 1, -1, -1};
  ASSERT_EQ(t.lanes.size(), ranks.size());
  for (std::size_t i = 0; i < ranks.size(); ++i) EXPECT_EQ(t.lanes[i].rank, ranks[i]) << i;
}

TEST(TimelineRanks, EveryLaneHoldsTheItemsOfItsOwnProcessDeviceAndStream) {
  TempDir dir;
  const auto path = dir.file("two_rank.sqlite");
  const auto written = fuselens::test::write_two_rank_capture(path);
  const Timeline t = load_timeline(db::Reader(path));
  std::size_t total = 0;
  for (const auto& lane : t.lanes) {
    total += lane.item_count();
    switch (lane.kind) {
      case LaneKind::Gpu: {
        const auto key = std::make_tuple(lane.pid, lane.device_id, lane.stream_id);
        ASSERT_TRUE(written.gpu_items.count(key)) << lane.title;
        EXPECT_EQ(lane.item_count(), static_cast<std::size_t>(written.gpu_items.at(key)))
            << lane.title;
        for (const auto& item : lane.rows.at(0).items) {
          EXPECT_EQ(t.kernels[item.detail].pid, lane.pid) << lane.title;
        }
        break;
      }
      case LaneKind::Nvtx:
        EXPECT_EQ(lane.item_count(), static_cast<std::size_t>(written.nvtx_ranges.at(lane.pid)));
        break;
      case LaneKind::Api:
        EXPECT_EQ(lane.item_count(), static_cast<std::size_t>(written.api_calls.at(lane.pid)));
        break;
    }
  }
  std::size_t expected = 0;
  for (const auto& [key, n] : written.gpu_items) expected += static_cast<std::size_t>(n);
  for (const auto& [pid, n] : written.nvtx_ranges) expected += static_cast<std::size_t>(n);
  for (const auto& [pid, n] : written.api_calls) expected += static_cast<std::size_t>(n);
  EXPECT_EQ(total, expected);
  EXPECT_EQ(t.begin_ns, written.first_ns);
  EXPECT_EQ(t.end_ns, written.last_ns);
}

TEST(TimelineRanks, LaunchContextOfARankOneKernelIsItsOwnStepRange) {
  TempDir dir;
  const auto path = dir.file("two_rank.sqlite");
  fuselens::test::write_two_rank_capture(path);
  const Timeline t = load_timeline(db::Reader(path));
  const TimelineLane* nccl = nullptr;
  for (const auto& lane : t.lanes) {
    if (lane.title == "rank 1 · GPU 1 · stream 13") nccl = &lane;
  }
  ASSERT_NE(nccl, nullptr);
  const TimelineItem& second = nccl->rows.at(0).items.at(1);  // step 1's allreduce
  const auto context = launch_context(t, second);
  ASSERT_NE(context.call, nullptr);
  EXPECT_EQ(context.tid, 100u);
  ASSERT_EQ(context.ranges.size(), 1u);
  EXPECT_EQ(t.names[context.ranges[0]->name], "step#1");
}

TEST(TimelineRanks, WithoutRankRowsEveryProcessKeepsItsOwnLanesAndTitles) {
  TempDir dir;
  const auto path = dir.file("no_ranks.sqlite");
  const auto written = fuselens::test::write_two_rank_capture(path, /*with_ranks=*/false);
  const Timeline t = load_timeline(db::Reader(path));
  EXPECT_FALSE(t.has_ranks);
  EXPECT_TRUE(t.several_processes);
  // Issue 22: processes sharing (device 0, stream 7) no longer share one lane; lanes are grouped
  // by pid, each group's Gpu lanes by (device, stream), then NVTX, then API.
  const std::vector<std::string> expected = {
      "pid 100 · GPU 0 · stream 7",      "pid 100 · GPU 1 · stream 7",
      "pid 100 · GPU 1 · stream 13",     "pid 100 · NVTX · thread 100",
      "pid 100 · CUDA API · thread 100", "pid 200 · GPU 0 · stream 7",
      "pid 200 · GPU 0 · stream 13",     "pid 200 · NVTX · thread 200",
      "pid 200 · CUDA API · thread 200", "pid 300 · GPU 0 · stream 7",
      "pid 300 · CUDA API · thread 300"};
  EXPECT_EQ(titles(t), expected);
  for (const auto& lane : t.lanes) {
    EXPECT_EQ(lane.rank, -1) << lane.title;
    if (lane.kind != LaneKind::Gpu) continue;
    const auto key = std::make_tuple(lane.pid, lane.device_id, lane.stream_id);
    ASSERT_TRUE(written.gpu_items.count(key)) << lane.title;
    EXPECT_EQ(lane.item_count(), static_cast<std::size_t>(written.gpu_items.at(key))) << lane.title;
  }
}

}  // namespace
}  // namespace fuselens::analyzer
