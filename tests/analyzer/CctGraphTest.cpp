// CUDA graphs in the calling-context views (CallingContext.h, "CUDA graphs"), on a synthetic
// capture whose graph nodes and replays are known:
//   corr 10  main > capture_stream [g.cu:50] > libcuda   cuLaunchKernel under stream capture: node
//   100 (A) corr 11  main > build_explicit [g.cu:70] > libcuda   cuGraphAddKernelNode: node 101 (B)
//   corr 12  main > build_explicit [g.cu:71] > libcuda   cuGraphAddMemsetNode: node 102
//   graph instantiated twice: nodes 200, 201, 202 cloned from 100, 101, 102; node 300 from 100
//   corr 20  main > replay_a [g.cu:90] > libcuda         cuGraphLaunch: A (node 200, 100 ns),
//                                                       B (node 201, 30 ns), memset (node 202, 5
//                                                       ns)
//   corr 21  main > replay_b [g.cu:100] > libcuda        cuGraphLaunch: A (node 300, 50 ns)
//   corr 22  main > replay_a [g.cu:91] > libcuda         cuGraphLaunch: C (node 999, unknown, 7
//   ns),
//                                                       D (node 400, a clone cycle, 3 ns)
//   corr 30  main > plain [g.cu:120] > libcuda           cuLaunchKernel: E (no graph, 11 ns)
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "TempDir.h"
#include "cct/CallingContextFormat.h"
#include "fuselens/db/Sqlite.h"
#include "fuselens/db/TraceCursors.h"
#include "fuselens/db/Writer.h"

using namespace fuselens;
using namespace fuselens::analyzer;
using GraphNode = db::CallingContextTree::GraphNode;

namespace {

const std::vector<GraphNode> kGraphNodes = {
    {100, 0, 1, 10},  {101, 0, 1, 11},  {102, 0, 1, 12},   // made by traced calls
    {200, 100, 2, 0}, {201, 101, 2, 0}, {202, 102, 2, 0},  // first instantiation
    {300, 100, 3, 0},                                      // second instantiation
    {400, 401, 4, 0}, {401, 400, 4, 0},                    // a damaged capture: a cycle
};

void write_graph_capture(const std::string& path) {
  db::RunInfo run;
  run.command_line = {"graph_replay"};
  auto w = db::Writer::create(path, run);
  db::RecordBatch b;
  std::uint64_t t = 1000;
  auto kernel = [&](const char* name, std::uint32_t corr, std::uint64_t dur,
                    std::optional<std::uint64_t> node) {
    db::KernelRecord k;
    k.pid = 9;
    k.correlation_id = corr;
    k.start_ns = t;
    k.end_ns = t + dur;
    t += 1000;
    k.mangled_name = name;
    if (node) {
      k.graph_id = 2;
      k.graph_node_id = *node;
    }
    b.kernels.push_back(k);
  };
  kernel("A", 20, 100, 200);
  kernel("B", 20, 30, 201);
  kernel("A", 21, 50, 300);
  kernel("C", 22, 7, 999);
  kernel("D", 22, 3, 400);
  kernel("E", 30, 11, std::nullopt);
  db::MemsetRecord m;
  m.pid = 9;
  m.correlation_id = 20;
  m.bytes = 256;
  m.start_ns = t;
  m.end_ns = t + 5;
  m.graph_id = 2;
  m.graph_node_id = 202;
  b.memsets.push_back(m);
  w.write(b);

  db::CallingContextTree tree;
  tree.pid = 9;
  using db::FrameKind;
  tree.frames = {
      {FrameKind::Native, "/bin/g", 0x10, "main", "/src/g.cu", 5},               // 0
      {FrameKind::Native, "/bin/g", 0x20, "capture_stream()", "/src/g.cu", 50},  // 1
      {FrameKind::Native, "/bin/g", 0x30, "build_explicit()", "/src/g.cu", 70},  // 2
      {FrameKind::Native, "/bin/g", 0x31, "build_explicit()", "/src/g.cu", 71},  // 3
      {FrameKind::Native, "/bin/g", 0x40, "replay_a()", "/src/g.cu", 90},        // 4
      {FrameKind::Native, "/bin/g", 0x41, "replay_a()", "/src/g.cu", 91},        // 5
      {FrameKind::Native, "/bin/g", 0x50, "replay_b()", "/src/g.cu", 100},       // 6
      {FrameKind::Native, "/bin/g", 0x60, "plain()", "/src/g.cu", 120},          // 7
      {FrameKind::Native, "/usr/lib/libcuda.so.1", 0x99, "", "", 0},             // 8: internal
  };
  // node i: {parent, frame}; each call site then libcuda below it
  tree.nodes = {{0, 0}, {0, 0},    //  1 main
                {1, 1}, {2, 8},    //  2 capture_stream, 3 libcuda
                {1, 2}, {4, 8},    //  4 build_explicit:70, 5
                {1, 3}, {6, 8},    //  6 build_explicit:71, 7
                {1, 4}, {8, 8},    //  8 replay_a:90, 9
                {1, 5}, {10, 8},   // 10 replay_a:91, 11
                {1, 6}, {12, 8},   // 12 replay_b, 13
                {1, 7}, {14, 8}};  // 14 plain, 15
  tree.contexts = {{10, 1, 3},  {11, 1, 5},  {12, 1, 7}, {20, 1, 9},
                   {21, 1, 13}, {22, 1, 11}, {30, 1, 15}};
  tree.graph_nodes = kGraphNodes;
  w.write_calling_contexts(tree);
  w.finalize({db::EndReason::Exited, 0, std::nullopt, 1});
}

// Label path (root excluded) -> row.
std::map<std::string, CctRow> by_path(const CctReport& r) {
  std::map<std::string, CctRow> out;
  for (std::size_t i = 1; i < r.rows.size(); ++i) {
    std::string p = r.rows[i].label;
    for (int a = r.rows[i].parent; a > 0; a = r.rows[static_cast<std::size_t>(a)].parent) {
      p = r.rows[static_cast<std::size_t>(a)].label + " / " + p;
    }
    out.emplace(p, r.rows[i]);
  }
  return out;
}

class CctGraphs : public ::testing::Test {
 protected:
  void SetUp() override { write_graph_capture(path); }
  CctReport report(CctView view) {
    db::Reader reader(path);
    CctOptions o;
    o.view = view;
    return calling_context_report(reader, o);
  }
  std::string output(OutputFormat format) {
    std::ostringstream out;
    write_cct(out, report(CctView::TopDown), format, {});
    return out.str();
  }
  fuselens::test::TempDir dir;
  std::string path = dir.file("graphs.sqlite");
};

}  // namespace

TEST_F(CctGraphs, TheGraphNodesGoInAndComeOutOfTheCapture) {
  db::Reader reader(path);
  EXPECT_EQ(reader.schema_version(), db::kSchemaVersion);
  std::vector<GraphNode> read;
  auto rows = db::graph_nodes(reader);
  while (auto r = rows.next()) {
    EXPECT_EQ(r->pid, 9);
    read.push_back(
        {static_cast<std::uint64_t>(r->node_id), static_cast<std::uint64_t>(r->original_node_id),
         static_cast<std::uint32_t>(r->graph_id), static_cast<std::uint32_t>(r->correlation_id)});
  }
  EXPECT_EQ(read, kGraphNodes);
}

TEST_F(CctGraphs, AReplayedKernelIsChargedToItsCaptureSiteWithItsReplaySiteKept) {
  const auto r = report(CctView::TopDown);
  ASSERT_TRUE(r.available);
  EXPECT_EQ(r.total.gpu_time_ns, 100 + 30 + 50 + 7 + 3 + 11 + 5);
  EXPECT_EQ(r.unattributed_operations, 0);
  const auto rows = by_path(r);
  // Stream capture: both replays of A, from two functions, under the capturing function.
  EXPECT_EQ(rows.at("main [g.cu:5] / capture_stream() [g.cu:50]").inclusive.gpu_time_ns, 150);
  const auto& a_first =
      rows.at("main [g.cu:5] / capture_stream() [g.cu:50] / <graph replay> replay_a() [g.cu:90]");
  EXPECT_EQ(a_first.kind, CctRow::Kind::GraphReplay);
  EXPECT_EQ(a_first.inclusive.gpu_time_ns, 100);
  EXPECT_EQ(rows.at("main [g.cu:5] / capture_stream() [g.cu:50] / <graph replay> replay_a() "
                    "[g.cu:90] / <gpu kernel> A")
                .exclusive.gpu_time_ns,
            100);
  EXPECT_EQ(rows.at("main [g.cu:5] / capture_stream() [g.cu:50] / <graph replay> replay_b() "
                    "[g.cu:100] / <gpu kernel> A")
                .exclusive.gpu_time_ns,
            50);
  // Explicit construction: each node under the cuGraphAdd*Node call that made it.
  EXPECT_EQ(rows.at("main [g.cu:5] / build_explicit() [g.cu:70] / <graph replay> replay_a() "
                    "[g.cu:90] / <gpu kernel> B")
                .exclusive.gpu_time_ns,
            30);
  const auto& memset = rows.at(
      "main [g.cu:5] / build_explicit() [g.cu:71] / <graph replay> replay_a() [g.cu:90] / "
      "<gpu memset>");
  EXPECT_EQ(memset.inclusive.bytes, 256);
  // The replay site itself launched nothing it captured: only what stays there.
  EXPECT_EQ(rows.at("main [g.cu:5] / replay_a() [g.cu:91]").inclusive.gpu_time_ns, 7 + 3);
  EXPECT_EQ(rows.count("main [g.cu:5] / replay_a() [g.cu:90]"), 0u);
  EXPECT_EQ(rows.at("main [g.cu:5] / plain() [g.cu:120] / <gpu kernel> E").exclusive.gpu_time_ns,
            11);
}

TEST_F(CctGraphs, AKernelWhoseNodeIsUnknownStaysUnderItsGraphLaunch) {
  const auto r = report(CctView::TopDown);
  const auto rows = by_path(r);
  // Node 999 was never recorded; node 400 is a clone cycle (a damaged capture): no capture site.
  EXPECT_EQ(rows.at("main [g.cu:5] / replay_a() [g.cu:91] / <gpu kernel> C").exclusive.gpu_time_ns,
            7);
  EXPECT_EQ(rows.at("main [g.cu:5] / replay_a() [g.cu:91] / <gpu kernel> D").exclusive.gpu_time_ns,
            3);
  EXPECT_EQ(r.graph_operations, 6);
  EXPECT_EQ(r.graph_at_capture_site, 4);
}

TEST_F(CctGraphs, BottomUpShowsTheReplaySiteBetweenTheKernelAndItsCaptureSite) {
  const auto rows = by_path(report(CctView::BottomUp));
  EXPECT_EQ(rows.at("<gpu kernel> A").inclusive.gpu_time_ns, 150);
  EXPECT_EQ(rows.at("<gpu kernel> A / <graph replay> replay_b() [g.cu:100] / capture_stream() "
                    "[g.cu:50] / main [g.cu:5]")
                .inclusive.gpu_time_ns,
            50);
}

TEST_F(CctGraphs, FlatChargesTheCaptureSitesFunctions) {
  const auto r = report(CctView::Flat);
  std::map<std::string, std::int64_t> function_time;
  for (const auto& row : r.rows) {
    if (row.kind == CctRow::Kind::Function) function_time[row.label] = row.inclusive.gpu_time_ns;
  }
  EXPECT_EQ(function_time.at("capture_stream()"), 150);
  EXPECT_EQ(function_time.at("build_explicit()"), 35);
  EXPECT_EQ(function_time.at("replay_a()"), 10);  // C and D only
  EXPECT_EQ(function_time.count("replay_b()"), 0u);
}

TEST_F(CctGraphs, TheOutputsSayWhereReplayedOperationsWent) {
  const std::string text = output(OutputFormat::Table);
  EXPECT_NE(text.find("CUDA graphs: 6 replayed GPU operations, 4 under the context that captured "
                      "them, 2 under their graph launch"),
            std::string::npos)
      << text;
  const auto json = nlohmann::json::parse(output(OutputFormat::Json));
  EXPECT_EQ(json["graphs"]["replayed_operations"], 6);
  EXPECT_EQ(json["graphs"]["at_capture_site"], 4);
  EXPECT_EQ(json["graphs"]["at_replay_site"], 2);
  int replay_rows = 0;
  for (const auto& row : json["rows"]) replay_rows += row["kind"] == "graph_replay";
  EXPECT_EQ(replay_rows, 4);  // A at replay_a and at replay_b, B at replay_a, the memset
}

TEST_F(CctGraphs, ACaptureBeforeSchemaSevenReadsWithReplaysUnderTheirLaunch) {
  {
    db::Connection c(path, db::Connection::Mode::ReadWrite);
    c.exec("DROP TABLE graph_node; PRAGMA user_version = 6");
  }
  db::Reader reader(path);
  EXPECT_EQ(reader.schema_version(), 6);
  EXPECT_FALSE(db::graph_nodes(reader).next());
  const auto r = calling_context_report(reader, {});
  EXPECT_EQ(r.graph_operations, 6);
  EXPECT_EQ(r.graph_at_capture_site, 0);
  const auto rows = by_path(r);
  EXPECT_EQ(rows.at("main [g.cu:5] / replay_a() [g.cu:90]").inclusive.gpu_time_ns, 100 + 30 + 5);
  EXPECT_EQ(rows.count("main [g.cu:5] / capture_stream() [g.cu:50]"), 0u);
  std::ostringstream text;
  write_cct(text, r, OutputFormat::Table, {});
  EXPECT_NE(text.str().find("0 under the context that captured them, 6 under their graph launch"),
            std::string::npos);
}

TEST(CctGraphsPython, TheReplaySiteIsTheUsersLineNotTorchs) {
  fuselens::test::TempDir dir;
  const std::string path = dir.file("torch_graph.sqlite");
  db::RunInfo run;
  run.command_line = {"python3", "graph_torch.py"};
  auto w = db::Writer::create(path, run);
  db::RecordBatch b;
  db::KernelRecord k;
  k.pid = 3;
  k.correlation_id = 2;
  k.start_ns = 100;
  k.end_ns = 140;
  k.mangled_name = "ampere_sgemm";
  k.graph_id = 1;
  k.graph_node_id = 11;
  b.kernels.push_back(k);
  w.write(b);
  db::CallingContextTree tree;
  tree.pid = 3;
  using db::FrameKind;
  const std::string site = "/usr/lib/python3/site-packages/torch/cuda/graphs.py";
  tree.frames = {
      {FrameKind::Python, "graph_torch.py", 0, "<module>", "/w/graph_torch.py", 40},  // 0
      {FrameKind::Python, "graph_torch.py", 0, "forward", "/w/graph_torch.py", 12},   // 1
      {FrameKind::Python, "graph_torch.py", 0, "replay_steps", "/w/graph_torch.py", 30},
      {FrameKind::Python, site, 0, "CUDAGraph.replay", site, 88},  // 3
      {FrameKind::Native, "/lib/libtorch_cuda.so", 0x10, "at::cuda::CUDAGraph::replay()", "", 0},
  };
  tree.nodes = {{0, 0}, {0, 0}, {1, 1}, {1, 2}, {3, 3}, {4, 4}};
  tree.contexts = {{1, 1, 2}, {2, 1, 5}};  // capture: forward; replay: replay_steps > torch
  tree.graph_nodes = {{10, 0, 1, 1}, {11, 10, 1, 0}};
  w.write_calling_contexts(tree);
  w.finalize({db::EndReason::Exited, 0, std::nullopt, 3});

  db::Reader reader(path);
  const auto r = calling_context_report(reader, {});
  const auto rows = by_path(r);
  EXPECT_EQ(rows.at("<module> [graph_torch.py:40] / forward [graph_torch.py:12] / <graph replay> "
                    "replay_steps [graph_torch.py:30] / <gpu kernel> ampere_sgemm")
                .exclusive.gpu_time_ns,
            40);
}
