// The HTML report's lanes per rank and device (analyzer/export/ExportRankLanes.h, issue 25) on the
// synthetic two-rank capture of tests/support/TwoRankCapture.h: lanes, counts and times derived
// from what the capture holds, the straggler's late steps, and the report section.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "TempDir.h"
#include "TwoRankCapture.h"
#include "export/Export.h"
#include "export/ExportHtml.h"
#include "export/ExportRankLanes.h"
#include "fuselens/db/Reader.h"

namespace fuselens::analyzer {
namespace {

using fuselens::test::TempDir;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(ExportRankLanes, OneLanePerRankAndDeviceWithItsKernelsAndCommunication) {
  TempDir dir;
  const auto path = dir.file("two_rank.sqlite");
  const int steps = 4;
  const auto written = fuselens::test::write_two_rank_capture(path, true, steps);
  const auto strip = load_rank_lane_strip(db::Reader(path));
  ASSERT_TRUE(strip.has_value());
  std::vector<std::string> titles;
  for (const auto& lane : strip->lanes) titles.push_back(lane.title);
  EXPECT_EQ(titles, (std::vector<std::string>{"rank 0 · GPU 0", "rank 1 · GPU 0", "rank 1 · GPU 1",
                                              "pid 300 · GPU 0"}));
  // Kernels per lane: the writer's counts of that pid and device summed over streams.
  for (const auto& lane : strip->lanes) {
    int expected = 0;
    for (const auto& [key, n] : written.gpu_items) {
      if (std::get<0>(key) == lane.pid && std::get<1>(key) == lane.device_id) expected += n;
    }
    EXPECT_EQ(lane.kernels, expected) << lane.title;
  }
  const auto& rank0 = strip->lanes[0];
  EXPECT_EQ(rank0.communication_kernels, written.nccl_kernels_per_rank);
  EXPECT_EQ(rank0.communication_ns, steps * fuselens::test::kNcclNs);
  EXPECT_EQ(rank0.busy_ns, steps * (fuselens::test::kComputeKernels * fuselens::test::kComputeNs +
                                    fuselens::test::kNcclNs));
  int comm_bars = 0;
  for (const auto& bar : strip->lanes[2].bars) comm_bars += bar.communication ? 1 : 0;
  EXPECT_EQ(comm_bars, steps);  // one allreduce per step, a step (1 ms) apart: never merged
  EXPECT_EQ(strip->lanes[3].rank, -1);
}

TEST(ExportRankLanes, TheDelayedRankStartsEveryStepLater) {
  TempDir dir;
  const auto path = dir.file("two_rank.sqlite");
  const std::int64_t delay = 300'000;
  fuselens::test::write_two_rank_capture(path, true, 3, 1'000'000, delay);
  const auto strip = load_rank_lane_strip(db::Reader(path));
  ASSERT_TRUE(strip.has_value());
  ASSERT_EQ(strip->steps.size(), 2u);
  ASSERT_EQ(strip->steps[0].ranges.size(), 3u);
  ASSERT_EQ(strip->steps[1].ranges.size(), 3u);
  for (std::size_t s = 0; s < 3; ++s) {
    EXPECT_EQ(strip->steps[1].ranges[s].first - strip->steps[0].ranges[s].first, delay) << s;
  }
}

TEST(ExportRankLanes, CapturesWithoutRanksGetNoStripAndNoSection) {
  TempDir dir;
  const auto path = dir.file("plain.sqlite");
  fuselens::test::write_two_rank_capture(path, /*with_ranks=*/false);
  EXPECT_FALSE(load_rank_lane_strip(db::Reader(path)).has_value());
  std::ostringstream out;
  make_html_report({load_export_run(db::Reader(path), "A")}).write(out);
  EXPECT_EQ(out.str().find("rank-lanes"), std::string::npos);
}

TEST(ExportRankLanes, TheReportDrawsEveryLaneWithCommunicationInItsOwnColour) {
  TempDir dir;
  const auto path = dir.file("two_rank.sqlite");
  fuselens::test::write_two_rank_capture(path, true, 3);
  std::ostringstream out;
  make_html_report({load_export_run(db::Reader(path), "A")}).write(out);
  const std::string html = out.str();
  // FUSELENS_RANK_REPORT=PATH keeps the report (for a look in a browser).
  if (const char* keep = std::getenv("FUSELENS_RANK_REPORT")) std::ofstream(keep) << html;
  ASSERT_NE(html.find("<section id=\"rank-lanes\""), std::string::npos);
  EXPECT_NE(html.find("rank 1 · GPU 1"), std::string::npos);
  EXPECT_NE(html.find("pid 300 · GPU 0"), std::string::npos);
  EXPECT_EQ(count(html, "class=\"comm\""), 6u);  // 3 allreduces on each rank
  EXPECT_EQ(count(html, "class=\"step\""), 6u);  // 3 steps on each rank
  // The section sits in the overview slot, before the flags.
  EXPECT_LT(html.find("<section id=\"rank-lanes\""), html.find("<!-- fuselens:slot flags -->"));
}

}  // namespace
}  // namespace fuselens::analyzer
