// Issue 20 on the committed H100 captures of scripts/device/plans/compiled.sh (and the H200
// frames-mode captures of plans/modframes.sh)
// (tests/data/README.md): the eager CNN training step (cnn_step.py) and transformer block
// (transformer_block.py), recorded with the default trace, so with the module view and backward
// attribution on. The module tree names the scripts' modules, splits forward from backward, and
// attributes more than 95 % of the backward GPU time; the default frames fold PyTorch's dispatcher
// into one frame per op while --frames all keeps it; backward work launched in a module sits under
// its forward context.

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "cct/CallingContext.h"
#include "fuselens/db/Reader.h"
#include "modules/Modules.h"

using namespace fuselens;
using namespace fuselens::analyzer;

namespace {

std::string data(const std::string& name) {
  return std::string(FUSELENS_TEST_DATA_DIR) + "/" + name;
}

std::map<std::string, const ModuleRow*> by_path(const ModulesReport& r) {
  std::map<std::string, const ModuleRow*> out;
  for (const auto& row : r.rows) out[row.path] = &row;
  return out;
}

// What the scripts build (workloads/python/cnn_step.py, transformer_block.py): the module paths,
// each with forward and backward GPU work.
void expect_tree(const std::string& capture, const std::vector<std::string>& paths) {
  SCOPED_TRACE(capture);
  const db::Reader reader(data(capture));
  const auto r = module_report(reader);
  ASSERT_TRUE(r.available);
  const auto rows = by_path(r);
  for (const auto& path : paths) {
    ASSERT_TRUE(rows.count(path)) << path;
    const auto& row = *rows.at(path);
    EXPECT_GT(row.calls, 0) << path;
    EXPECT_GT(row.forward_inclusive.gpu_ns, 0) << path;
    EXPECT_GT(row.backward_inclusive.gpu_ns, 0) << path;
  }
  // Inclusive = exclusive + the children's inclusive, forward and backward apart.
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    std::int64_t fwd = r.rows[i].forward_exclusive.gpu_ns,
                 bwd = r.rows[i].backward_exclusive.gpu_ns;
    for (const auto& child : r.rows) {
      if (child.parent == static_cast<int>(i)) {
        fwd += child.forward_inclusive.gpu_ns;
        bwd += child.backward_inclusive.gpu_ns;
      }
    }
    EXPECT_EQ(fwd, r.rows[i].forward_inclusive.gpu_ns) << r.rows[i].path;
    EXPECT_EQ(bwd, r.rows[i].backward_inclusive.gpu_ns) << r.rows[i].path;
  }
  EXPECT_GT(r.backward_total.gpu_ns, 0);
  EXPECT_GT(r.backward_attributed_share(), 0.95);  // the goal
}

TEST(PyTorchCaptures, CnnModuleTreeSplitsForwardAndBackward) {
  expect_tree("cnn_eager.sqlite",
              {"model", "model.block1", "model.block1.conv", "model.block1.bn", "model.block2.conv",
               "model.block3.pool", "model.head", "loss_fn"});
}

TEST(PyTorchCaptures, TransformerModuleTreeSplitsForwardAndBackward) {
  expect_tree("transformer_eager.sqlite",
              {"model", "model.attn", "model.attn.qkv", "model.attn.proj", "model.mlp.fc1",
               "model.mlp.fc2", "model.ln1", "model.ln2"});
}

// The default frames of a Python capture are the user's: no dispatcher frame is left, ops are
// named once, and every backward operation launched in a module is under its forward context;
// --frames all shows the dispatcher frames the folding removed.
TEST(PyTorchCaptures, UserFramesFoldTheDispatcherAndLinkBackward) {
  for (const char* capture : {"cnn_eager.sqlite", "transformer_eager.sqlite"}) {
    SCOPED_TRACE(capture);
    const db::Reader reader(data(capture));
    CctOptions o;
    const auto user = calling_context_report(reader, o);
    ASSERT_TRUE(user.available);
    EXPECT_EQ(user.frames, FramesMode::User);
    int ops = 0, dispatcher = 0;
    for (const auto& row : user.rows) {
      ops += row.label.rfind("[torch: aten::", 0) == 0 ? 1 : 0;
      dispatcher += row.label.find("at::_ops::") != std::string::npos ||
                    row.label.find("wrap_kernel_functor") != std::string::npos;
    }
    EXPECT_GT(ops, 0);
    EXPECT_EQ(dispatcher, 0);
    // Backward work is linked to its forward through the module ranges: what stays under its
    // thread is exactly the backward work outside every module (the optimizer's, the leaves').
    EXPECT_GT(user.backward_linked, 0);
    EXPECT_EQ(user.backward_unlinked, module_report(reader).backward_outside.launches);
    o.frames = FramesMode::All;
    const auto all = calling_context_report(reader, o);
    int recorded = 0;
    for (const auto& row : all.rows) recorded += row.label.find("at::_ops::") != std::string::npos;
    EXPECT_GT(recorded, 0);
    EXPECT_EQ(all.total.gpu_time_ns, user.total.gpu_time_ns);  // folding moves time, never loses it
  }
}

// The same scripts recorded in frames mode (the default since schema 9: module frames and
// autograd sequence numbers, no per-call Python hook; scripts/device/plans/modframes.sh on an
// H200): the module tree has the same paths as the hooks-mode capture of the same script, the
// backward share meets the goal, every backward operation with a sequence number is under a
// forward launch, and the tree is derived, not read from stored ranges.
void expect_same_paths(const std::string& hooks, const std::string& frames) {
  SCOPED_TRACE(frames);
  const db::Reader h(data(hooks)), f(data(frames));
  const auto a = module_report(h), b = module_report(f);
  ASSERT_TRUE(a.available);
  ASSERT_TRUE(b.available);
  EXPECT_FALSE(a.derived);
  EXPECT_TRUE(b.derived);
  // Every module with GPU work in hooks mode is in frames mode's tree; frames mode sees no module
  // that launched nothing (block1.pool is an Identity there).
  std::set<std::string> pa, pb;
  for (const auto& row : a.rows) {
    if (row.forward_inclusive.gpu_ns > 0) pa.insert(row.path);
  }
  for (const auto& row : b.rows) pb.insert(row.path);
  EXPECT_EQ(pa, pb);
  EXPECT_GT(b.backward_attributed_share(), 0.95);
}

TEST(PyTorchCaptures, FramesModeCnnHasTheHooksModeTree) {
  expect_tree("cnn_eager_frames.sqlite",
              {"model", "model.block1", "model.block1.conv", "model.block1.bn", "model.block2.conv",
               "model.block3.pool", "model.head", "loss_fn"});
  expect_same_paths("cnn_eager.sqlite", "cnn_eager_frames.sqlite");
}

TEST(PyTorchCaptures, FramesModeTransformerHasTheHooksModeTree) {
  expect_tree("transformer_eager_frames.sqlite",
              {"model", "model.attn", "model.attn.qkv", "model.attn.proj", "model.mlp.fc1",
               "model.mlp.fc2", "model.ln1", "model.ln2"});
  expect_same_paths("transformer_eager.sqlite", "transformer_eager_frames.sqlite");
}

TEST(PyTorchCaptures, FramesModeLinksBackwardBySequenceNumber) {
  for (const char* capture : {"cnn_eager_frames.sqlite", "transformer_eager_frames.sqlite"}) {
    SCOPED_TRACE(capture);
    const db::Reader reader(data(capture));
    // Recorded: forward launches carry forward_seq, backward ones backward_seq.
    EXPECT_GT(reader.query_int("SELECT COUNT(*) FROM api_context WHERE forward_seq IS NOT NULL"),
              0);
    EXPECT_GT(reader.query_int("SELECT COUNT(*) FROM api_context WHERE backward_seq IS NOT NULL"),
              0);
    EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM nvtx_range r JOIN strings t ON t.id = "
                               "r.text_id WHERE t.value GLOB 'fuselens:module:*'"),
              0);  // no hook ran per call
    const auto report = calling_context_report(reader, CctOptions{});
    ASSERT_TRUE(report.available);
    // Every backward kernel whose node has a forward op is placed under it; what stays under its
    // thread is at most the work of nodes without a forward launch (AccumulateGrad, the
    // optimizer's).
    const std::int64_t with_node = reader.query_int(
        "SELECT COUNT(*) FROM kernel k JOIN api_context c ON c.pid = k.pid AND "
        "c.correlation_id = k.correlation_id WHERE c.backward_seq IS NOT NULL");
    EXPECT_GT(report.backward_linked, 0);
    EXPECT_GE(report.backward_linked, with_node);
  }
}

}  // namespace
