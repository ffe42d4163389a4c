// Frame folding (cct/FrameFolding.h, `--frames`): the classification of frames, the folded labels
// on synthetic paths, and the four modes on the committed PyTorch captures (tests/data/README.md):
// cct_torch.sqlite (Python frames, Linear and ReLU), train_steps.sqlite (a CNN: cuDNN and cuBLAS)
// and pytorch_mlp.sqlite (no Python frames).
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <set>
#include <string>

#include "cct/CallingContext.h"
#include "cct/FrameFolding.h"
#include "fuselens/db/Reader.h"

using namespace fuselens;
using namespace fuselens::analyzer;
using fuselens::analyzer::cct::Frame;

namespace {

Frame py(const std::string& file, const std::string& function, std::uint32_t line) {
  Frame f;
  f.python = true;
  f.module = file;
  f.file = file;
  f.function = function;
  f.line = line;
  f.label = function + " [" + std::filesystem::path(file).filename().string() + ":" +
            std::to_string(line) + "]";
  return f;
}

Frame native(const std::string& module, const std::string& function) {
  Frame f;
  f.module = module;
  f.function = function;
  f.label =
      function.empty() ? std::filesystem::path(module).filename().string() + "+0x10" : function;
  return f;
}

const std::string kSite = "/venv/lib/python3.12/site-packages/";

std::vector<std::string> labels(const std::vector<const Frame*>& path) {
  std::vector<std::string> out;
  for (const Frame* f : path) out.push_back(f->label);
  return out;
}

std::string data(const char* name) { return std::string(FUSELENS_TEST_DATA_DIR) + "/" + name; }

CctReport report(const std::string& file, FramesMode mode, CctView view = CctView::TopDown) {
  const db::Reader reader(file);
  CctOptions o;
  o.frames = mode;
  o.view = view;
  return calling_context_report(reader, o);
}

}  // namespace

TEST(FrameFolding, ClassifiesUserAndFrameworkFrames) {
  EXPECT_EQ(cct::fold_key(py("/home/me/train.py", "main", 3)), "");
  EXPECT_EQ(cct::fold_key(py(kSite + "torch/nn/modules/linear.py", "Linear.forward", 1)), "torch");
  EXPECT_EQ(cct::fold_key(py("/usr/lib/python3/dist-packages/numpy/core.py", "f", 1)), "numpy");
  EXPECT_EQ(cct::fold_key(py("/usr/lib/python3.12/threading.py", "Thread.run", 1)), "python");
  EXPECT_EQ(cct::fold_key(py("<frozen runpy>", "_run_module_as_main", 1)), "python");
  EXPECT_EQ(cct::fold_key(py("/opt/fl/share/fuselens/python/fuselens_modules.py", "hook", 1)),
            "fuselens");
  EXPECT_EQ(cct::fold_key(native(kSite + "torch/lib/libtorch_cuda.so", "at::native::f()")),
            "torch");
  EXPECT_EQ(cct::fold_key(native("/build/libtorch_cpu.so", "at::_ops::mm::call()")), "torch");
  EXPECT_EQ(cct::fold_key(native(kSite + "nvidia/cu13/lib/libcublasLt.so.13", "")),
            "libcublasLt.so.13");
  EXPECT_EQ(cct::fold_key(native("/usr/lib/x86_64-linux-gnu/libc.so.6", "__libc_start_main")),
            "libc.so.6");
  EXPECT_EQ(cct::fold_key(native("/usr/bin/python3.12", "Py_RunMain")), "python3.12");
  EXPECT_EQ(cct::fold_key(native("/home/me/build/bench", "main")), "");
  EXPECT_EQ(cct::fold_key(native("/home/me/build/libmine.so", "run()")), "");
}

TEST(FrameFolding, UserModeFoldsTheDispatcherIntoTheOutermostOpAndLibrariesIntoTheirLibrary) {
  const std::vector<Frame> frames = {
      py("/home/me/train.py", "<module>", 10),
      py("/home/me/train.py", "step", 20),
      py(kSite + "torch/nn/modules/module.py", "Module._call_impl", 1790),
      py(kSite + "torch/nn/modules/linear.py", "Linear.forward", 134),
      native(kSite + "torch/lib/libtorch_python.so",
             "torch::autograd::THPVariable_linear(_object*)"),
      native(kSite + "torch/lib/libtorch_cpu.so", "at::_ops::linear::call(at::Tensor const&)"),
      native(kSite + "torch/lib/libtorch_cpu.so",
             "c10::impl::wrap_kernel_functor_unboxed_<...>::call(c10::OperatorKernel*)"),
      native(kSite + "torch/lib/libtorch_cpu.so", "at::_ops::addmm::call(at::Tensor const&)"),
      native(kSite + "torch/lib/libtorch_cuda.so", "at::native::structured_addmm_out_cuda::impl()"),
      native(kSite + "nvidia/cu13/lib/libcublasLt.so.13", "cublasLtMatmul"),
      native(kSite + "nvidia/cu13/lib/libcublasLt.so.13", ""),
      native(kSite + "nvidia/cu13/lib/libcublasLt.so.13", ""),
  };
  std::vector<const Frame*> path;
  for (const auto& f : frames) path.push_back(&f);

  cct::FrameFolder user(FramesMode::User);
  EXPECT_EQ(
      labels(user.fold(path)),
      (std::vector<std::string>{"<module> [train.py:10]", "step [train.py:20]",
                                "[torch: aten::linear]", "[libcublasLt.so.13: cublasLtMatmul]"}));
  // The same folded frame for the same op: one row in the tree.
  EXPECT_EQ(user.fold(path)[2], user.fold(path)[2]);

  cct::FrameFolder python(FramesMode::Python);
  EXPECT_EQ(labels(python.fold(path)),
            (std::vector<std::string>{"<module> [train.py:10]", "step [train.py:20]",
                                      "Module._call_impl [module.py:1790]",
                                      "Linear.forward [linear.py:134]", "[torch: aten::linear]",
                                      "[libcublasLt.so.13: cublasLtMatmul]"}));

  cct::FrameFolder native_only(FramesMode::Native);
  const auto n = native_only.fold(path);
  ASSERT_EQ(n.size(), 8u);
  for (const Frame* f : n) EXPECT_FALSE(f->python) << f->label;

  cct::FrameFolder all(FramesMode::All);
  EXPECT_EQ(all.fold(path), path);

  // Before "<backward> OP": the module wrappers at the end of the forward context are dropped.
  const std::vector<const Frame*> forward_context(path.begin(), path.begin() + 4);
  EXPECT_EQ(labels(user.fold(forward_context, /*before_backward=*/true)),
            (std::vector<std::string>{"<module> [train.py:10]", "step [train.py:20]"}));
  EXPECT_EQ(labels(user.fold(forward_context)),
            (std::vector<std::string>{"<module> [train.py:10]", "step [train.py:20]",
                                      "[torch: Linear.forward]"}));
}

TEST(FrameFolding, NamesOverloadsAutogradNodesAndLibrariesThatCallEachOtherOnce) {
  const std::vector<Frame> frames = {
      py("/home/me/train.py", "main", 5),
      native(kSite + "torch/lib/libtorch_cpu.so",
             "at::_ops::pow_Tensor_Scalar::call(at::Tensor const&)"),
      native(kSite + "nvidia/cudnn/lib/libcudnn_graph.so.9", "cudnnBackendExecute"),
      native(kSite + "nvidia/cudnn/lib/libcudnn_engines_precompiled.so.9", ""),
      native(kSite + "nvidia/cudnn/lib/libcudnn_graph.so.9", ""),
      native(kSite + "nvidia/cudnn/lib/libcudnn_engines_precompiled.so.9", ""),
  };
  std::vector<const Frame*> path;
  for (const auto& f : frames) path.push_back(&f);
  cct::FrameFolder user(FramesMode::User);
  EXPECT_EQ(labels(user.fold(path)),
            (std::vector<std::string>{"main [train.py:5]", "[torch: aten::pow.Tensor_Scalar]",
                                      "[libcudnn_graph.so.9: cudnnBackendExecute]",
                                      "[libcudnn_engines_precompiled.so.9]"}));

  const Frame engine =
      native(kSite + "torch/lib/libtorch_cpu.so", "torch::autograd::Engine::thread_main()");
  const Frame node =
      native(kSite + "torch/lib/libtorch_cpu.so",
             "torch::autograd::generated::ConvolutionBackward0::apply(std::vector<at::Tensor>&&)");
  const Frame op =
      native(kSite + "torch/lib/libtorch_cpu.so", "at::_ops::convolution_backward::call()");
  EXPECT_EQ(labels(user.fold({&engine, &node, &op})),
            (std::vector<std::string>{"[torch: ConvolutionBackward0]"}));
}

TEST(FrameFolding, ParsesAndNamesEveryMode) {
  for (const FramesMode m : {FramesMode::Auto, FramesMode::User, FramesMode::Python,
                             FramesMode::Native, FramesMode::All}) {
    EXPECT_EQ(parse_frames_mode(frames_mode_name(m)), m);
  }
  EXPECT_FALSE(parse_frames_mode("bogus").has_value());
  EXPECT_FALSE(parse_frames_mode("User").has_value());
}

TEST(FrameFoldingCapture, UserFramesOfCctTorchAreTheScriptAndOneFrameNamingEachOp) {
  if (!std::filesystem::exists(data("cct_torch.sqlite")))
    GTEST_SKIP() << "cct_torch.sqlite is not committed";
  const auto all = report(data("cct_torch.sqlite"), FramesMode::All);
  const auto user = report(data("cct_torch.sqlite"), FramesMode::Auto);
  ASSERT_TRUE(user.available);
  EXPECT_EQ(user.frames, FramesMode::User);
  EXPECT_EQ(user.total.gpu_time_ns, all.total.gpu_time_ns);
  EXPECT_EQ(user.total.launches, all.total.launches);
  EXPECT_LT(user.rows.size(), all.rows.size());
  bool all_has_dispatcher = false;
  for (const auto& row : all.rows) {
    all_has_dispatcher =
        all_has_dispatcher || row.label.find("wrap_kernel_functor") != std::string::npos;
  }
  EXPECT_TRUE(all_has_dispatcher);  // else the test below proves nothing

  const std::regex op_label(R"(\[torch: (aten::[A-Za-z0-9_.]+|[A-Za-z0-9]+Backward[0-9]+)\])");
  const std::regex unsymbolized(R"(\+0x[0-9a-f]+$)");
  std::set<std::string> ops;
  int folded_libraries = 0;
  for (const auto& row : user.rows) {
    if (row.kind != CctRow::Kind::Frame) continue;
    EXPECT_EQ(row.label.find("wrap_kernel_functor"), std::string::npos) << row.label;
    EXPECT_EQ(row.label.find("::redispatch"), std::string::npos) << row.label;
    EXPECT_FALSE(std::regex_search(row.label, unsymbolized)) << row.label;
    if (row.label.rfind("[torch", 0) == 0) {
      EXPECT_TRUE(std::regex_match(row.label, op_label)) << row.label;
      ops.insert(row.label);
    } else if (row.label.front() == '[') {
      ++folded_libraries;
      EXPECT_NE(row.label.find(".so"), std::string::npos) << row.label;
    } else {
      // Every other frame is the user's script.
      EXPECT_NE(row.label.find("[cct_torch.py:"), std::string::npos) << row.label;
    }
  }
  EXPECT_TRUE(ops.count("[torch: aten::linear]")) << "ops seen: " << ops.size();
  EXPECT_TRUE(ops.count("[torch: aten::relu]"));
  EXPECT_GT(folded_libraries, 0);  // cuBLAS under aten::linear

  // python: torch's Python frames stay, the dispatcher does not.
  const auto python = report(data("cct_torch.sqlite"), FramesMode::Python);
  bool linear_forward = false;
  for (const auto& row : python.rows) {
    linear_forward = linear_forward || row.label.rfind("Linear.forward [linear.py:", 0) == 0;
    EXPECT_EQ(row.label.find("wrap_kernel_functor"), std::string::npos) << row.label;
  }
  EXPECT_TRUE(linear_forward);
  // native: no Python frame.
  for (const auto& row : report(data("cct_torch.sqlite"), FramesMode::Native).rows) {
    EXPECT_EQ(row.label.find(".py:"), std::string::npos) << row.label;
  }
}

TEST(FrameFoldingCapture, LaunchPathsOfTheFlagsRulesFoldToo) {
  if (!std::filesystem::exists(data("cct_torch.sqlite")))
    GTEST_SKIP() << "cct_torch.sqlite is not committed";
  const db::Reader reader(data("cct_torch.sqlite"));
  const auto folded = launch_paths(reader, FramesMode::User);
  const auto recorded = launch_paths(reader, FramesMode::All);
  ASSERT_EQ(folded.paths.size(), recorded.paths.size());
  std::size_t folded_frames = 0, recorded_frames = 0;
  for (const auto& p : folded.paths) {
    folded_frames += p.size();
    for (const auto& f : p) EXPECT_EQ(f.function.find("wrap_kernel_functor"), std::string::npos);
  }
  for (const auto& p : recorded.paths) recorded_frames += p.size();
  EXPECT_LT(folded_frames * 2, recorded_frames);
}

TEST(FrameFoldingCapture, CnnConvolutionsFoldIntoTheirOpAndCudnnLibraries) {
  if (!std::filesystem::exists(data("train_steps.sqlite")))
    GTEST_SKIP() << "train_steps.sqlite is not committed";
  const auto r = report(data("train_steps.sqlite"), FramesMode::Auto);
  ASSERT_TRUE(r.available);
  EXPECT_EQ(r.frames, FramesMode::User);
  int conv = 0, cudnn = 0;
  for (const auto& row : r.rows) {
    if (row.kind != CctRow::Kind::Frame) continue;
    conv += row.label == "[torch: aten::conv2d]" ? 1 : 0;
    cudnn += row.label.rfind("[libcudnn", 0) == 0 ? 1 : 0;
    // A library appears once on a path: never as its own parent.
    if (row.parent > 0 && row.label.front() == '[') {
      EXPECT_NE(r.rows[static_cast<std::size_t>(row.parent)].label, row.label);
    }
  }
  EXPECT_GT(conv, 0);
  EXPECT_GT(cudnn, 0);
}

TEST(FrameFoldingCapture, WithoutPythonFramesTheDefaultIsTheRecordedPath) {
  if (!std::filesystem::exists(data("pytorch_mlp.sqlite")))
    GTEST_SKIP() << "pytorch_mlp.sqlite is not committed";
  const auto automatic = report(data("pytorch_mlp.sqlite"), FramesMode::Auto);
  const auto all = report(data("pytorch_mlp.sqlite"), FramesMode::All);
  ASSERT_TRUE(automatic.available);
  EXPECT_EQ(automatic.frames, FramesMode::Native);
  ASSERT_EQ(automatic.rows.size(), all.rows.size());
  for (std::size_t i = 0; i < all.rows.size(); ++i)
    EXPECT_EQ(automatic.rows[i].label, all.rows[i].label);
  // user on a program without Python frames: its libraries folded, fewer rows.
  const auto user = report(data("pytorch_mlp.sqlite"), FramesMode::User);
  EXPECT_LT(user.rows.size(), all.rows.size());
  EXPECT_EQ(user.total.gpu_time_ns, all.total.gpu_time_ns);
}
