// The streamed calling-context groups (analyzer/cct/CctStream.cpp, issue 21): equal, order
// included, to the groups of every operation in memory on each committed H100 capture that needs
// no link between launches, whole and in a window; left to the in-memory path where phases link
// launches (PyTorch's autograd, CUDA graphs); the order kept when rows and correlation ids
// disagree.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "TestSupport.h"
#include "cct/CallingContextData.h"
#include "fuselens/db/Cursor.h"
#include "fuselens/db/Layout.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/Writer.h"
#include "window/Window.h"

using namespace fuselens;
using namespace fuselens::analyzer;

namespace {

std::vector<cct::OperationGroup> in_memory(const db::Reader& reader) {
  const auto frames = cct::load_frames(reader);
  const auto nodes = cct::load_nodes(reader);
  const auto ops = cct::load_operations(reader);
  return cct::group_operations(ops, cct::operation_phases(reader, ops, nodes, frames));
}

std::optional<std::vector<cct::OperationGroup>> streamed(const db::Reader& reader) {
  return cct::stream_operation_groups(reader, cct::load_frames(reader), cct::load_nodes(reader));
}

void expect_same(const std::vector<cct::OperationGroup>& a,
                 const std::vector<cct::OperationGroup>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string at = what + " group " + std::to_string(i) + " " + a[i].label;
    EXPECT_EQ(a[i].label, b[i].label) << at;
    EXPECT_EQ(a[i].node, b[i].node) << at;
    EXPECT_EQ(a[i].graph, b[i].graph) << at;
    EXPECT_EQ(a[i].at_capture_site, b[i].at_capture_site) << at;
    EXPECT_EQ(a[i].replay_node, b[i].replay_node) << at;
    EXPECT_EQ(a[i].phase.phase, b[i].phase.phase) << at;
    EXPECT_EQ(a[i].phase.backward_op, b[i].phase.backward_op) << at;
    EXPECT_EQ(a[i].phase.forward_node, b[i].phase.forward_node) << at;
    EXPECT_EQ(a[i].phase.thread, b[i].phase.thread) << at;
    EXPECT_EQ(a[i].cost.gpu_time_ns, b[i].cost.gpu_time_ns) << at;
    EXPECT_EQ(a[i].cost.launches, b[i].cost.launches) << at;
    EXPECT_EQ(a[i].cost.bytes, b[i].cost.bytes) << at;
  }
}

}  // namespace

TEST(CctStream, EqualsTheInMemoryGroupsOnTheCommittedCaptures) {
  int streamed_captures = 0;
  std::int64_t streamed_launches = 0;
  for (const auto& entry : std::filesystem::directory_iterator(FUSELENS_TEST_DATA_DIR)) {
    if (entry.path().extension() != ".sqlite") continue;
    const std::string name = entry.path().filename().string();
    const db::Reader reader(entry.path().string());
    if (!reader.has_table("api_context")) continue;
    const auto groups = streamed(reader);
    if (!groups) continue;
    ++streamed_captures;
    for (const auto& g : *groups) streamed_launches += g.cost.launches;
    expect_same(*groups, in_memory(reader), name);

    // The middle half of the capture, through the window's views.
    const auto [first, last] = capture_extent(reader);
    db::Reader windowed(entry.path().string());
    const std::int64_t quarter = (last - first) / 4;
    windowed.restrict_to({{first + quarter, last - quarter}});
    const auto window_groups = streamed(windowed);
    ASSERT_TRUE(window_groups.has_value()) << name;
    expect_same(*window_groups, in_memory(windowed), name + " (middle half)");
  }
  EXPECT_GE(streamed_captures, 5);  // the C++ workloads' captures stream
  EXPECT_GT(streamed_launches, 10000);
}

// A lean capture (Layout.h) streams too: its views have no index in correlation order, SQLite's
// sorter orders them. The same groups as in memory, and as the full capture's, on each committed
// capture that streams, converted.
TEST(CctStream, ALeanCaptureStreamsTheSameGroups) {
  analyzer::test::TempDir dir;
  int lean_captures = 0, read_by_id = 0;
  for (const auto& entry : std::filesystem::directory_iterator(FUSELENS_TEST_DATA_DIR)) {
    if (entry.path().extension() != ".sqlite") continue;
    const std::string name = entry.path().filename().string();
    const db::Reader full(entry.path().string());
    if (!full.has_table("api_context")) continue;
    const auto full_groups = streamed(full);
    if (!full_groups) continue;
    const std::string lean_path = dir.file("lean_" + name);
    db::convert_to_lean(entry.path().string(), lean_path);
    const db::Reader lean(lean_path);
    ASSERT_TRUE(lean.lean()) << name;
    const auto groups = streamed(lean);
    ASSERT_TRUE(groups.has_value()) << name;
    ++lean_captures;
    expect_same(*groups, in_memory(lean), name + " (lean)");
    expect_same(*groups, *full_groups, name + " (lean against full)");
    // prof-run's reader (db::Reader::read_lean_by_id): the kernels in the order written, merged
    // with the copies and memsets, the same groups; or the order broke, and it says so.
    db::Reader by_id(lean_path);
    by_id.read_lean_by_id(true);
    try {
      const auto by_id_groups = streamed(by_id);
      ASSERT_TRUE(by_id_groups.has_value()) << name;
      expect_same(*by_id_groups, *groups, name + " (lean, read by id)");
      ++read_by_id;
    } catch (const db::OrderBroken&) {
    }
  }
  EXPECT_GE(lean_captures, 3);
  EXPECT_GE(read_by_id, 1);
}

TEST(CctStream, LeavesLinkedPhasesAndGraphReplaysToTheInMemoryPath) {
  // PyTorch's autograd links backward work to its forward context across launches; a replayed
  // CUDA graph node is charged to the call that captured it: both need every launch.
  for (const char* name : {"cct_torch.sqlite", "transformer_eager_frames.sqlite",
                           "graph_replay.sqlite", "cnn_reduce_overhead.sqlite"}) {
    const db::Reader reader(std::string(FUSELENS_TEST_DATA_DIR) + "/" + name);
    EXPECT_FALSE(streamed(reader).has_value()) << name;
  }
}

TEST(CctStream, KeepsTheRowOrderWhenCorrelationIdsRunBackwards) {
  // Two kernels of equal cost and one copy whose correlation ids run against their row order:
  // the groups come in row order (kernels, then copies), as the in-memory path creates them, so
  // the views' ties sort alike.
  analyzer::test::TempDir dir;
  const std::string path = dir.file("backwards.sqlite");
  {
    db::RunInfo run;
    run.command_line = {"x"};
    auto w = db::Writer::create(path, run);
    db::RecordBatch b;
    const char* names[] = {"B(int)", "A(int)", "B(int)"};
    for (std::uint32_t i = 0; i < 3; ++i) {
      db::KernelRecord k;
      k.pid = 9;
      k.correlation_id = 30 - 10 * i;  // 30, 20, 10
      k.start_ns = 1000 * (i + 1);
      k.end_ns = k.start_ns + (i == 2 ? 50 : 100);
      k.mangled_name = names[i];
      b.kernels.push_back(k);
    }
    db::MemcpyRecord m;
    m.pid = 9;
    m.correlation_id = 5;
    m.copy_kind = db::MemcpyKind::HostToDevice;
    m.bytes = 64;
    m.start_ns = 500;
    m.end_ns = 600;
    b.memcpys.push_back(m);
    w.write(b);
    db::CallingContextTree t;
    t.pid = 9;
    t.frames = {{db::FrameKind::Native, "/bin/x", 0x10, "main", "/src/x.cpp", 5}};
    t.nodes = {{0, 0}, {0, 0}};
    t.contexts = {{30, 100, 1}, {20, 100, 1}, {10, 100, 1}, {5, 100, 1}};
    w.write_calling_contexts(t);
    w.finalize({db::EndReason::Exited, 0, std::nullopt, 1});
  }
  const db::Reader reader(path);
  const auto groups = streamed(reader);
  ASSERT_TRUE(groups.has_value());
  ASSERT_EQ(groups->size(), 3u);
  EXPECT_EQ((*groups)[0].label, "<gpu kernel> B(int)");
  EXPECT_EQ((*groups)[0].cost.launches, 2);
  EXPECT_EQ((*groups)[0].cost.gpu_time_ns, 150);
  EXPECT_EQ((*groups)[1].label, "<gpu kernel> A(int)");
  EXPECT_EQ((*groups)[2].label, "<gpu copy> Host-to-Device");
  EXPECT_EQ((*groups)[2].cost.bytes, 64);
  expect_same(*groups, in_memory(reader), "backwards");
}
