// The committed H100 capture of workloads/graph_replay, tests/data/graph_replay.sqlite, with the
// program's own report of what it replayed from where (graph_replay.launched.json; made by
// scripts/device/run.sh graphs, tests/data/README.md): every replayed kernel and memset under the
// function that captured it, its replay function kept (GraphReplayCheck.h). Skips until the
// capture is committed.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "GraphReplayCheck.h"

TEST(CctGraphCapture, EveryReplayedOperationIsUnderItsCaptureSiteOnTheH100Capture) {
  const std::string data = FUSELENS_TEST_DATA_DIR;
  const std::string capture = data + "/graph_replay.sqlite";
  if (!std::filesystem::exists(capture)) {
    GTEST_SKIP() << capture << " is not committed yet (scripts/device/run.sh graphs makes it)";
  }
  fuselens::test::expect_graph_replay(capture, data + "/graph_replay.launched.json");
}
