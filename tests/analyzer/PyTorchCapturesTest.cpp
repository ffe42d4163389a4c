// Issue 20 on the committed H100 captures of scripts/device/plans/compiled.sh
// (tests/data/README.md): the eager CNN training step (cnn_step.py) and transformer block
// (transformer_block.py), recorded with the default trace, so with the module view and backward
// attribution on. The module tree names the scripts' modules, splits forward from backward, and
// attributes more than 95 % of the backward GPU time; the default frames fold PyTorch's dispatcher
// into one frame per op while --frames all keeps it; backward work launched in a module sits under
// its forward context.

#include <gtest/gtest.h>

#include <map>
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

}  // namespace
