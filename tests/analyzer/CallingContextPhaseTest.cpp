// PyTorch phases in the calling-context views, on a synthetic capture shaped like one of
// workloads/python/cct_torch.py with emit_nvtx on:
//   main thread (tid 100): <module> > train_step > encoder [s.py:39] > Linear.forward > torch >
//   gemm   corr 1, 100 ns
//                          <module> > train_step > decoder [s.py:43] > Linear.forward > torch >
//                          gemm   corr 2, 200 ns
//   autograd thread (tid 200, "pt_autograd_0"): thread_main > evaluate_function >
//       AddmmBackward0::apply > at::mm > gemm                    corr 3 (seq 12: decoder's addmm),
//       300 ns
//                                                                 corr 4 (seq 11: encoder's addmm),
//                                                                 400 ns corr 5 (no NVTX range), 50
//                                                                 ns
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "TestSupport.h"
#include "cct/CallingContextFormat.h"
#include "fuselens/db/Writer.h"

using namespace fuselens;
using namespace fuselens::analyzer;

namespace {

void write_torch_capture(const std::string& path) {
  db::RunInfo run;
  run.command_line = {"python3", "s.py"};
  auto w = db::Writer::create(path, run);
  db::RecordBatch b;
  auto launch = [&](std::uint32_t corr, std::uint32_t tid, std::uint64_t call, std::uint64_t dur) {
    db::KernelRecord k;
    k.pid = 9;
    k.correlation_id = corr;
    k.start_ns = call + 100;
    k.end_ns = k.start_ns + dur;
    k.mangled_name = "gemm";
    b.kernels.push_back(k);
    db::ApiCallRecord a;
    a.pid = 9;
    a.tid = tid;
    a.domain = db::ApiDomain::Driver;
    a.name = "cuLaunchKernel";
    a.correlation_id = corr;
    a.start_ns = call;
    a.end_ns = call + 5;
    b.api_calls.push_back(a);
  };
  launch(1, 100, 1000, 100);
  launch(2, 100, 2000, 200);
  launch(3, 200, 5000, 300);
  launch(4, 200, 6000, 400);
  launch(5, 200, 9000, 50);
  auto range = [&](std::uint32_t tid, const char* text, std::uint64_t start, std::uint64_t end) {
    db::NvtxRangeRecord r;
    r.pid = 9;
    r.tid = tid;
    r.text = text;
    r.start_ns = start;
    r.end_ns = end;
    b.nvtx_ranges.push_back(r);
  };
  range(100, "aten::linear, seq = 10, op_id = 1", 900, 1500);
  range(100, "aten::t, seq = 10, op_id = 2", 910, 920);
  range(100, "aten::addmm, seq = 11, op_id = 3", 950, 1400);
  range(100, "aten::linear, seq = 12, op_id = 4", 1900, 2500);
  range(100, "aten::addmm, seq = 12, op_id = 5", 1950, 2400);
  range(200, "autograd::engine::evaluate_function: AddmmBackward0, op_id = 7", 4900, 5500);
  range(200, "AddmmBackward0, seq = 12, op_id = 8", 4950, 5400);
  range(200, "aten::mm, op_id = 9", 4960, 5300);
  range(200, "autograd::engine::evaluate_function: AddmmBackward0, op_id = 10", 5900, 6500);
  range(200, "AddmmBackward0, seq = 11, op_id = 11", 5950, 6400);
  w.write(b);
  w.write_threads({{9, 100, "python3"}, {9, 200, "pt_autograd_0"}});

  db::CallingContextTree t;
  t.pid = 9;
  using db::FrameKind;
  const std::string torch_lib = "/venv/torch/lib/libtorch_cuda.so";
  t.frames = {
      {FrameKind::Python, "/w/s.py", 0, "<module>", "/w/s.py", 60},                   // 0
      {FrameKind::Python, "/w/s.py", 0, "train_step", "/w/s.py", 47},                 // 1
      {FrameKind::Python, "/w/s.py", 0, "encoder", "/w/s.py", 39},                    // 2
      {FrameKind::Python, "/w/s.py", 0, "decoder", "/w/s.py", 43},                    // 3
      {FrameKind::Python, "/t/linear.py", 0, "Linear.forward", "/t/linear.py", 125},  // 4
      {FrameKind::Native, "/venv/torch/lib/libtorch_python.so", 0x10,
       "torch::autograd::THPVariable_linear(_object*, _object*, _object*)", "", 0},  // 5
      {FrameKind::Native, torch_lib, 0x20, "at::addmm(at::Tensor const&)", "", 0},   // 6
      {FrameKind::Native, "/usr/lib/libcuda.so.1", 0x99, "", "", 0},                 // 7
      {FrameKind::Native, "/usr/lib/libc.so.6", 0x30, "start_thread", "", 0},        // 8
      {FrameKind::Native, "/venv/torch/lib/libtorch_cpu.so", 0x40,
       "torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)",
       "", 0},  // 9
      {FrameKind::Native, "/venv/torch/lib/libtorch_cpu.so", 0x50,
       "torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::autograd::GraphTask>&)",
       "", 0},  // 10
      {FrameKind::Native, "/venv/torch/lib/libtorch_cpu.so", 0x60,
       "torch::autograd::generated::AddmmBackward0::apply(std::vector<at::Tensor, "
       "std::allocator<at::Tensor> >&&)",
       "", 0},                                                                   // 11
      {FrameKind::Native, torch_lib, 0x70, "at::mm(at::Tensor const&)", "", 0},  // 12
  };
  t.nodes = {
      {0, 0}, {0, 0},  {1, 1},   {2, 2},   {3, 4},   {4, 5},
      {5, 6}, {6, 7},                                           // 1..7: encoder's launch
      {2, 3}, {8, 4},  {9, 5},   {10, 6},  {11, 7},             // 8..12: decoder's launch
      {0, 8}, {13, 9}, {14, 10}, {15, 11}, {16, 12}, {17, 7}};  // 13..18: the backward launch
  t.contexts = {{1, 100, 7}, {2, 100, 12}, {3, 200, 18}, {4, 200, 18}, {5, 200, 18}};
  w.write_calling_contexts(t);
  w.finalize({db::EndReason::Exited, 0, std::nullopt, 1});
}

class CallingContextPhases : public ::testing::Test {
 protected:
  void SetUp() override { write_torch_capture(path); }
  CctReport report(CctView view, std::optional<CctPhase> phase = std::nullopt, bool split = false) {
    db::Reader reader(path);
    CctOptions o;
    o.view = view;
    o.phase = phase;
    o.split_phase = split;
    o.frames = FramesMode::All;  // the recorded frames (folding: FrameFoldingTest)
    return calling_context_report(reader, o);
  }
  static std::map<std::string, CctRow> by_path(const CctReport& r) {
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
  analyzer::test::TempDir dir;
  std::string path = dir.file("torch.sqlite");
};

constexpr const char* kStep = "<module> [s.py:60] / train_step [s.py:47]";

}  // namespace

TEST_F(CallingContextPhases, SeparatesForwardAndBackward) {
  const auto r = report(CctView::TopDown);
  ASSERT_TRUE(r.available);
  EXPECT_TRUE(r.has_phases);
  EXPECT_EQ(r.phase_total[static_cast<int>(CctPhase::Forward)].gpu_time_ns, 300);
  EXPECT_EQ(r.phase_total[static_cast<int>(CctPhase::Backward)].gpu_time_ns, 750);
  EXPECT_EQ(r.phase_total[static_cast<int>(CctPhase::Unknown)].gpu_time_ns, 0);
  EXPECT_EQ(r.backward_linked, 2);
  EXPECT_EQ(r.backward_unlinked, 1);
  EXPECT_EQ(report(CctView::TopDown, CctPhase::Backward).total.gpu_time_ns, 750);
  EXPECT_EQ(report(CctView::TopDown, CctPhase::Forward).total.gpu_time_ns, 300);
}

TEST_F(CallingContextPhases,
       AttachesBackwardKernelsUnderTheForwardContextWithTheSameSequenceNumber) {
  const auto rows = by_path(report(CctView::TopDown));
  const std::string enc =
      std::string(kStep) + " / encoder [s.py:39] / Linear.forward [linear.py:125]";
  const std::string dec =
      std::string(kStep) + " / decoder [s.py:43] / Linear.forward [linear.py:125]";
  const auto& enc_bw = rows.at(enc + " / <backward> AddmmBackward0 / <gpu kernel> gemm");
  EXPECT_EQ(enc_bw.inclusive.gpu_time_ns, 400);
  EXPECT_EQ(row_phase(enc_bw), "backward");
  EXPECT_EQ(rows.at(dec + " / <backward> AddmmBackward0").inclusive.gpu_time_ns, 300);
  EXPECT_EQ(rows.at(dec + " / <backward> AddmmBackward0").kind, CctRow::Kind::BackwardOp);
  // The forward launch keeps its native path below the Python frames.
  const auto& enc_fw =
      rows.at(enc +
              " / torch::autograd::THPVariable_linear(_object*, _object*, _object*) /"
              " at::addmm(at::Tensor const&) / <gpu kernel> gemm");
  EXPECT_EQ(enc_fw.inclusive.gpu_time_ns, 100);
  EXPECT_EQ(row_phase(enc_fw), "forward");
  // encoder's line carries its layer's forward and backward time.
  const auto& encoder = rows.at(std::string(kStep) + " / encoder [s.py:39]");
  EXPECT_EQ(encoder.inclusive.gpu_time_ns, 500);
  EXPECT_EQ(row_phase(encoder), "mixed");
  // Without a sequence number: under the autograd thread, named by the node's apply() frame.
  EXPECT_EQ(
      rows.at("<backward thread> pt_autograd_0 / <backward> AddmmBackward0 / <gpu kernel> gemm")
          .inclusive.gpu_time_ns,
      50);
}

TEST_F(CallingContextPhases, SplitsByPhaseAndFormatsThePhaseColumn) {
  const auto r = report(CctView::TopDown, std::nullopt, true);
  const auto rows = by_path(r);
  EXPECT_EQ(rows.at("<forward>").inclusive.gpu_time_ns, 300);
  EXPECT_EQ(rows.at("<backward>").inclusive.gpu_time_ns, 750);
  EXPECT_EQ(rows.at("<forward> / <module> [s.py:60]").kind, CctRow::Kind::Frame);
  std::ostringstream table, csv;
  write_cct(table, report(CctView::TopDown), OutputFormat::Table, CctDisplay{});
  EXPECT_NE(table.str().find("Phases: forward"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("mixed"), std::string::npos);
  write_cct(csv, report(CctView::TopDown), OutputFormat::Csv, CctDisplay{});
  const auto records = analyzer::test::parse_csv(csv.str());
  ASSERT_GE(records.size(), 2u);
  EXPECT_EQ(records[0].back(), "phase");
}

TEST_F(CallingContextPhases, BottomUpAndFlatChargeBackwardWorkToTheForwardLine) {
  const auto up = by_path(report(CctView::BottomUp));
  EXPECT_EQ(up.at("<gpu kernel> gemm / <backward> AddmmBackward0 / Linear.forward [linear.py:125] "
                  "/ encoder [s.py:39]")
                .inclusive.gpu_time_ns,
            400);
  const auto flat = by_path(report(CctView::Flat));
  EXPECT_EQ(flat.at("/w/s.py / encoder").inclusive.gpu_time_ns, 500);
  EXPECT_EQ(flat.at("/w/s.py / decoder").inclusive.gpu_time_ns, 500);
}

TEST(CallingContextPhasesRealCapture, NativeOnlyPyTorchCaptureGetsPhasesFromItsFrames) {
  // tests/data/pytorch_mlp.sqlite: native calling contexts only, no emit_nvtx.
  db::Reader reader(std::string(FUSELENS_TEST_DATA_DIR) + "/pytorch_mlp.sqlite");
  const auto r = calling_context_report(reader, CctOptions{});
  ASSERT_TRUE(r.available);
  EXPECT_TRUE(r.has_phases);
  EXPECT_GT(r.phase_total[static_cast<int>(CctPhase::Forward)].launches, 0);
  EXPECT_GT(r.phase_total[static_cast<int>(CctPhase::Backward)].launches, 0);
  EXPECT_EQ(r.backward_linked, 0);
  EXPECT_EQ(r.backward_unlinked, r.phase_total[static_cast<int>(CctPhase::Backward)].launches);
}
