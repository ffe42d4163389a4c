// CUDA graph replays on a real GPU (docs/calling-context.md, "CUDA graphs"): graph_replay builds a
// graph by stream capture and one by explicit construction and replays them from other
// functions; every replayed kernel and memset must be charged to the function whose call put it
// into its graph, with its replay site kept below it, as many times as the program says it
// replayed it from there (GraphReplayCheck.h).
#include <gtest/gtest.h>

#include "Binaries.h"
#include "GpuSkip.h"
#include "GraphReplayCheck.h"
#include "Subprocess.h"
#include "TempDir.h"

using fuselens::test::binary;
using fuselens::test::run;
using fuselens::test::TempDir;

TEST(GraphReplayGpu, EveryReplayedOperationIsChargedToItsCaptureSiteWithItsReplaySiteKept) {
  FUSELENS_SKIP_WITHOUT_GPU();
  TempDir dir;
  const std::string capture = dir.file("graph_replay.sqlite");
  const auto r = run({binary("prof-run", PROF_RUN_PATH), "-o", capture, "--force", "--",
                      binary("graph_replay", GRAPH_REPLAY_PATH), "--replays", "20", "--json",
                      dir.file("launched.json")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(fuselens::db::Reader(capture).run().dropped_records, 0u);
  fuselens::test::expect_graph_replay(capture, dir.file("launched.json"));
}
