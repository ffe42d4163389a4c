// The module view derived from module frames and autograd sequence numbers (frames mode, schema
// 9; analyzer/modules/ModuleRanges.h), on a synthetic capture shaped like what the collector
// records for a PyTorch training step:
//   main thread (tid 1), calls with their module instances (outermost first) and forward_seq:
//     lin_fwd   call 100  Net@1000 / Block@2000 / Linear@3000   seq 6   (node 5)
//     block_fwd call 200  Net@1000 / Block@2000                  seq 7   (node 6)
//     counter   call 250  Net@1000                               seq 7   (creates no node)
//     net_fwd   call 300  Net@1000                               seq 8   (node 7)
//     loss      call 400  (no module)                            seq 9   (node 8)
//     lin_fwd2  call 500  Net@1000 / Block@2000 / Linear@3000   seq 10  (node 9; Net called again)
//   autograd thread (tid 2), calls with backward_seq (the node evaluated):
//     loss_bwd  call 1000  node 8 -> seq 9's launch: loss, no module (outside)
//     lin_bwd2  call 1050  node 9 -> seq 10: model.block.lin
//     net_bwd   call 1100  node 7 -> seq 8: model
//     block_bwd call 1200  node 6 -> seq 7: model.block
//     lin_bwd   call 1300  node 5 -> seq 6: model.block.lin
//     view_bwd  call 1400  node 4 -> none with seq 5: the next one, seq 6: model.block.lin
//   name marks at 50 us for Net@1000 and Block@2000; Linear@3000 has none (named
//   "model.block.Linear"), and a stale mark of another class at its address is ignored.
#include <gtest/gtest.h>

#include <map>

#include "TestSupport.h"
#include "cct/CallingContext.h"
#include "fuselens/db/Reader.h"
#include "modules/ModuleRanges.h"
#include "modules/Modules.h"

using namespace fuselens;
using namespace fuselens::analyzer;
using fuselens::analyzer::test::FlagsCapture;
using fuselens::analyzer::test::TempDir;
using fuselens::analyzer::test::us;
namespace support = fuselens::analyzer::test;

namespace {

constexpr std::uint32_t kMain = support::kFlagsTid, kAutograd = 2;
const std::vector<std::string> kNet = {"main", "train.py:step", "module:Net@1000", "forward"};
const std::vector<std::string> kBlock = {"main",    "train.py:step",     "module:Net@1000",
                                         "forward", "module:Block@2000", "block_forward"};
const std::vector<std::string> kLinear = {
    "main",          "train.py:step",      "module:Net@1000", "forward", "module:Block@2000",
    "block_forward", "module:Linear@3000", "linear"};
const std::vector<std::string> kEngine = {"start_thread", "torch::autograd::Engine::thread_main",
                                          "launch"};

struct Durations {
  std::int64_t lin = us(10), block = us(20), net = us(30), loss = us(5), lin2 = us(15),
               counter = us(3);
  std::int64_t loss_bwd = us(7), lin_bwd2 = us(11), net_bwd = us(40), block_bwd = us(50),
               lin_bwd = us(60), view_bwd = us(9);
};

FlagsCapture frames_capture(const Durations& d, bool with_seqs = true) {
  FlagsCapture c;
  c.thread(kAutograd, "pt_autograd_0");
  c.mark("fuselens:module:name:1000:Net:model", us(50));
  c.mark("fuselens:module:name:2000:Block:model.block", us(50));
  c.mark("fuselens:module:name:3000:Conv2d:model.old_conv", us(40));  // another class: stale
  auto launch = [&](const std::string& name, std::int64_t call, std::int64_t duration,
                    std::uint32_t tid, const std::vector<std::string>& path, std::int64_t fwd,
                    std::int64_t bwd) {
    const auto corr = c.kernel(name, call + us(5), duration, call, us(2), tid);
    c.context(corr, path);
    if (with_seqs) c.seq(corr, fwd, bwd);
  };
  launch("lin_fwd", us(100), d.lin, kMain, kLinear, 6, -1);
  launch("block_fwd", us(200), d.block, kMain, kBlock, 7, -1);
  // An op that creates no node in the next module, before that module's first node: the same
  // forward_seq as block's op (BatchNorm's num_batches_tracked += 1 does this).
  launch("counter_add", us(250), d.counter, kMain, kNet, 7, -1);
  launch("net_fwd", us(300), d.net, kMain, kNet, 8, -1);
  launch("loss", us(400), d.loss, kMain, {"main", "train.py:step", "loss"}, 9, -1);
  launch("lin_fwd2", us(500), d.lin2, kMain, kLinear, 10, -1);
  launch("loss_bwd", us(1000), d.loss_bwd, kAutograd, kEngine, -1, 8);
  launch("lin_bwd2", us(1050), d.lin_bwd2, kAutograd, kEngine, -1, 9);
  launch("net_bwd", us(1100), d.net_bwd, kAutograd, kEngine, -1, 7);
  launch("block_bwd", us(1200), d.block_bwd, kAutograd, kEngine, -1, 6);
  launch("lin_bwd", us(1300), d.lin_bwd, kAutograd, kEngine, -1, 5);
  launch("view_bwd", us(1400), d.view_bwd, kAutograd, kEngine, -1, 4);
  return c;
}

std::map<std::string, ModuleRow> by_path(const ModulesReport& r) {
  std::map<std::string, ModuleRow> out;
  for (const auto& row : r.rows) out.emplace(row.path, row);
  return out;
}

}  // namespace

TEST(ModuleFrames, RangesFollowTheInstancesOfEachCall) {
  TempDir dir;
  const auto path = dir.file("frames.sqlite");
  frames_capture({}).write(path);
  db::Reader reader(path);
  const auto ranges = module_ranges(reader);
  ASSERT_TRUE(ranges.derived);
  std::vector<std::string> forward;
  for (const auto& r : ranges.rows) {
    if (!r.backward) forward.push_back(r.path);
  }
  // Net's first run holds the first three launches; the loss ends it; the second run is new.
  EXPECT_EQ(forward, (std::vector<std::string>{"model", "model.block", "model.block.Linear",
                                               "model", "model.block", "model.block.Linear"}));
  for (const auto& r : ranges.rows) {
    if (!r.backward && r.path == "model" && r.start == us(100)) {
      EXPECT_EQ(r.end, us(302));  // the end of net_fwd's call (call 300 us, 2 us long)
    }
  }
}

TEST(ModuleFrames, BackwardGoesToTheModuleOfItsForwardOp) {
  TempDir dir;
  const auto path = dir.file("frames.sqlite");
  const Durations d;
  frames_capture(d).write(path);
  db::Reader reader(path);
  const auto report = module_report(reader);
  ASSERT_TRUE(report.available);
  EXPECT_TRUE(report.derived);
  const auto rows = by_path(report);
  ASSERT_TRUE(rows.count("model.block.Linear"));
  EXPECT_EQ(rows.at("model.block.Linear").forward_exclusive.gpu_ns, d.lin + d.lin2);
  EXPECT_EQ(rows.at("model.block").forward_exclusive.gpu_ns, d.block);
  EXPECT_EQ(rows.at("model").forward_exclusive.gpu_ns, d.net + d.counter);
  EXPECT_EQ(rows.at("model").forward_inclusive.gpu_ns,
            d.net + d.counter + d.block + d.lin + d.lin2);
  EXPECT_EQ(report.forward_outside.gpu_ns, d.loss);
  EXPECT_EQ(rows.at("model.block.Linear").backward_exclusive.gpu_ns,
            d.lin_bwd + d.lin_bwd2 + d.view_bwd);
  EXPECT_EQ(rows.at("model.block").backward_exclusive.gpu_ns, d.block_bwd);
  EXPECT_EQ(rows.at("model").backward_exclusive.gpu_ns, d.net_bwd);
  EXPECT_EQ(report.backward_outside.gpu_ns, d.loss_bwd);
  const double all = static_cast<double>(d.loss_bwd + d.lin_bwd2 + d.net_bwd + d.block_bwd +
                                         d.lin_bwd + d.view_bwd);
  EXPECT_DOUBLE_EQ(report.backward_attributed_share(),
                   (all - static_cast<double>(d.loss_bwd)) / all);
  EXPECT_EQ(rows.at("model").calls, 2);
}

TEST(ModuleFrames, CctPutsEachBackwardOpUnderItsForwardLaunch) {
  TempDir dir;
  const auto path = dir.file("frames.sqlite");
  frames_capture({}).write(path);
  db::Reader reader(path);
  const auto report = calling_context_report(reader, CctOptions{});
  ASSERT_TRUE(report.available);
  EXPECT_EQ(report.backward_linked, 6);  // every backward op, the loss's included
  EXPECT_EQ(report.backward_unlinked, 0);
  std::map<std::string, std::string> parent_of;  // backward kernel -> its path
  for (const auto& row : report.rows) {
    if (row.label.find("_bwd") == std::string::npos) continue;
    std::string p;
    for (int a = row.parent; a > 0; a = report.rows[static_cast<std::size_t>(a)].parent)
      p = report.rows[static_cast<std::size_t>(a)].label + " / " + p;
    for (const char* name : {"loss_bwd", "net_bwd", "block_bwd", "lin_bwd"}) {
      if (row.label.find(std::string("<gpu kernel> ") + name) != std::string::npos)
        parent_of[name] = p;
    }
  }
  EXPECT_NE(parent_of["lin_bwd"].find("linear"), std::string::npos) << parent_of["lin_bwd"];
  EXPECT_NE(parent_of["block_bwd"].find("block_forward"), std::string::npos);
  EXPECT_EQ(parent_of["block_bwd"].find("linear"), std::string::npos) << parent_of["block_bwd"];
  EXPECT_NE(parent_of["loss_bwd"].find("loss"), std::string::npos);
  EXPECT_EQ(parent_of["net_bwd"].find("thread_main"), std::string::npos);
  // Module frames are hidden from the tree's rows unless internal frames are shown.
  for (const auto& row : report.rows) EXPECT_EQ(row.label.find("<nn.Module>"), std::string::npos);
}

TEST(ModuleFrames, WithoutSequenceNumbersBackwardIsNotAttributed) {
  TempDir dir;
  const auto path = dir.file("frames.sqlite");
  const Durations d;
  frames_capture(d, /*with_seqs=*/false).write(path);
  db::Reader reader(path);
  const auto report = module_report(reader);
  ASSERT_TRUE(report.available);  // the forward ranges still come from the module frames
  EXPECT_EQ(report.backward_attributed_share(), 0.0);
  EXPECT_EQ(by_path(report).at("model.block").forward_exclusive.gpu_ns, d.block);
}

// The name marks are written at a root's first call, in the warm-up: a window after them (the
// steady steps) still names the modules (failed before the names were read from the whole
// capture: the window's view of nvtx_mark hid them, and every module was named by its class).
TEST(ModuleFrames, AWindowAfterTheNameMarksStillNamesTheModules) {
  TempDir dir;
  const auto path = dir.file("frames.sqlite");
  frames_capture({}).write(path);
  db::Reader reader(path);
  reader.restrict_to({db::TimeSpan{support::kFlagsT0 + us(90), support::kFlagsT0 + us(2000)}});
  const auto report = module_report(reader);
  ASSERT_TRUE(report.available);
  const auto rows = by_path(report);
  EXPECT_TRUE(rows.count("model"));
  EXPECT_TRUE(rows.count("model.block"));
  EXPECT_FALSE(rows.count("Net"));
}
