// The check of a workloads/graph_replay capture (GraphReplayCheck.h): on the committed H100
// capture, tests/data/graph_replay.sqlite with the program's own report graph_replay.launched.json
// (made by scripts/device/run.sh graphs, tests/data/README.md; skips until committed), and on a
// synthetic capture of the same shape, which the check must pass and must fail once the report
// names the wrong capture site.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "GraphReplayCheck.h"
#include "TempDir.h"
#include "fuselens/db/Writer.h"

using namespace fuselens;

namespace {

// graph_replay --replays 2 --json: what the program reports (the again-replays are replays / 2).
constexpr const char* kLaunched = R"({
  "replays": 2,
  "graph_operations": {
    "graph_fill": {"captured_in": "capture_fill", "replayed_from": {"replay_stream_graph": 2, "replay_stream_graph_again": 1}},
    "<memset>": {"captured_in": "capture_fill", "replayed_from": {"replay_stream_graph": 2, "replay_stream_graph_again": 1}},
    "graph_scale": {"captured_in": "capture_scale_add", "replayed_from": {"replay_stream_graph": 2, "replay_stream_graph_again": 1}},
    "graph_add": {"captured_in": "capture_scale_add", "replayed_from": {"replay_stream_graph": 2, "replay_stream_graph_again": 1}},
    "explicit_axpy": {"captured_in": "add_axpy_node", "replayed_from": {"replay_explicit_graph": 2}},
    "explicit_square": {"captured_in": "add_square_node", "replayed_from": {"replay_explicit_graph": 2}}
  },
  "plain_kernel": {"launched_from": "main", "launches": 1}
})";

// A capture shaped as graph_replay's: native frames as the H100 records them (host stubs of <<<>>>
// launches below the launching function, the CUDA runtime's frames internal).
void write_synthetic_capture(const std::string& path) {
  db::RunInfo run;
  run.command_line = {"graph_replay", "--replays", "2"};
  auto w = db::Writer::create(path, run);
  db::CallingContextTree tree;
  tree.pid = 4;
  auto frame = [&](const std::string& function, std::uint32_t line) {
    tree.frames.push_back({db::FrameKind::Native, "/stage/bin/graph_replay",
                           0x100 + tree.frames.size(), function, "/src/graph_replay.cu", line});
    return static_cast<std::uint32_t>(tree.frames.size() - 1);
  };
  const auto cudart = static_cast<std::uint32_t>(tree.frames.size());
  tree.frames.push_back({db::FrameKind::Native, "/stage/lib/libcudart.so.13", 0x99, "", "", 0});
  const auto main_capture = frame("main", 178), main_explicit = frame("main", 179),
             main_replay = frame("main", 185), main_again = frame("main", 186),
             main_explicit_replay = frame("main", 187), main_plain = frame("main", 189);
  const auto stream =
      frame("capture_stream_graph(CUstream_st*, (anonymous namespace)::Buffers&)", 92);
  const auto stream2 =
      frame("capture_stream_graph(CUstream_st*, (anonymous namespace)::Buffers&)", 93);
  const auto fill = frame("capture_fill(CUstream_st*, (anonymous namespace)::Buffers&)", 80);
  const auto memset = frame("capture_fill(CUstream_st*, (anonymous namespace)::Buffers&)", 81);
  const auto scale = frame("capture_scale_add(CUstream_st*, (anonymous namespace)::Buffers&)", 85);
  const auto add = frame("capture_scale_add(CUstream_st*, (anonymous namespace)::Buffers&)", 86);
  const auto stub = frame("__device_stub__graph_fill(float*, int)", 2963);
  const auto build = frame("build_explicit_graph((anonymous namespace)::Buffers&)", 121);
  const auto build2 = frame("build_explicit_graph((anonymous namespace)::Buffers&)", 122);
  const auto axpy = frame("add_axpy_node(CUgraph_st*, (anonymous namespace)::Buffers&)", 109);
  const auto square =
      frame("add_square_node(CUgraph_st*, CUgraphNode_st*, (anonymous namespace)::Buffers&)", 117);
  const auto replay = frame("replay_stream_graph(CUgraphExec_st*, CUstream_st*, long)", 137);
  const auto again = frame("replay_stream_graph_again(CUgraphExec_st*, CUstream_st*, long)", 142);
  const auto explicit_replay =
      frame("replay_explicit_graph(CUgraphExec_st*, CUstream_st*, long)", 147);
  const auto plain_stub = frame("__device_stub__plain_kernel(float*, int)", 2963);
  tree.nodes = {{0, 0}};
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> interned;
  std::uint32_t next_correlation = 1;
  auto call = [&](std::vector<std::uint32_t> frames) {  // a traced call from this path
    frames.push_back(cudart);
    std::uint32_t node = 0;
    for (const auto f : frames) {
      auto [it, fresh] = interned.emplace(std::make_pair(node, f), tree.nodes.size());
      if (fresh) tree.nodes.push_back({node, f});
      node = it->second;
    }
    tree.contexts.push_back({next_correlation, 1, node});
    return next_correlation++;
  };
  db::RecordBatch b;
  std::uint64_t t = 1000;
  auto kernel = [&](const char* name, std::uint32_t correlation, std::uint64_t graph_node) {
    db::KernelRecord k;
    k.pid = 4;
    k.correlation_id = correlation;
    k.start_ns = t;
    k.end_ns = t + 10;
    t += 100;
    k.mangled_name = name;
    if (graph_node) {
      k.graph_id = 1;
      k.graph_node_id = graph_node;
    }
    b.kernels.push_back(k);
  };
  // Nodes made by the capture's calls (ids 1..6), cloned by instantiation (ids 11..16).
  const std::uint32_t made[] = {
      call({main_capture, stream, fill, stub}), call({main_capture, stream, memset}),
      call({main_capture, stream2, scale}),     call({main_capture, stream2, add}),
      call({main_explicit, build, axpy}),       call({main_explicit, build2, square})};
  for (std::uint64_t i = 0; i < 6; ++i) {
    tree.graph_nodes.push_back({i + 1, 0, i < 4 ? 1u : 2u, made[i]});
    tree.graph_nodes.push_back({i + 11, i + 1, i < 4 ? 3u : 4u, 0});
  }
  auto replay_stream = [&](std::uint32_t correlation) {
    kernel("graph_fill", correlation, 11);
    db::MemsetRecord m;
    m.pid = 4;
    m.correlation_id = correlation;
    m.bytes = 1024;
    m.start_ns = t;
    m.end_ns = t + 5;
    t += 100;
    m.graph_id = 1;
    m.graph_node_id = 12;
    b.memsets.push_back(m);
    kernel("graph_scale", correlation, 13);
    kernel("graph_add", correlation, 14);
  };
  replay_stream(call({main_replay, replay}));
  replay_stream(call({main_replay, replay}));
  replay_stream(call({main_again, again}));
  for (int i = 0; i < 2; ++i) {
    const auto correlation = call({main_explicit_replay, explicit_replay});
    kernel("explicit_axpy", correlation, 15);
    kernel("explicit_square", correlation, 16);
  }
  kernel("plain_kernel", call({main_plain, plain_stub}), 0);
  w.write(b);
  w.write_calling_contexts(tree);
  w.finalize({db::EndReason::Exited, 0, std::nullopt, 1});
}

}  // namespace

TEST(CctGraphCapture, EveryReplayedOperationIsUnderItsCaptureSiteOnTheH100Capture) {
  const std::string data = FUSELENS_TEST_DATA_DIR;
  const std::string capture = data + "/graph_replay.sqlite";
  if (!std::filesystem::exists(capture)) {
    GTEST_SKIP() << capture << " is not committed yet (scripts/device/run.sh graphs makes it)";
  }
  test::expect_graph_replay(capture, data + "/graph_replay.launched.json");
}

TEST(CctGraphCapture, TheCheckPassesOnACaptureOfTheWorkloadsShapeAndCatchesAWrongCaptureSite) {
  test::TempDir dir;
  const std::string capture = dir.file("graph_replay.sqlite");
  write_synthetic_capture(capture);
  const std::string launched = dir.file("launched.json");
  std::ofstream(launched) << kLaunched;
  test::expect_graph_replay(capture, launched);

  std::string wrong = kLaunched;
  const std::string square = "\"captured_in\": \"add_square_node\"";
  wrong.replace(wrong.find(square), square.size(), "\"captured_in\": \"add_axpy_node\"");
  std::ofstream(launched) << wrong;
  EXPECT_NONFATAL_FAILURE(test::expect_graph_replay(capture, launched),
                          "explicit_square replayed from replay_explicit_graph is not under "
                          "add_axpy_node");
}
