// torch.compile against eager (analyzer/compiled): the fuselens:inductor mark parser, ATen op
// names from dispatcher frames, the mapping of compiled kernels (by name, extern calls by their
// wrapper line) and eager kernels (by their at::_ops frames) on synthetic captures written with
// db::Writer, and `prof-analyze compare EAGER COMPILED --by op|module` as a program.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "Subprocess.h"
#include "TestSupport.h"
#include "cct/CallingContext.h"
#include "compiled/Compiled.h"
#include "compiled/CompiledFormat.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/TraceCursors.h"
#include "fuselens/db/Writer.h"

#ifndef PROF_ANALYZE_PATH
#error "PROF_ANALYZE_PATH must name the prof-analyze binary"
#endif

namespace fuselens::analyzer {
namespace {

using test::TempDir;

constexpr std::uint32_t kPid = 200, kTid = 1;
constexpr std::int64_t kT0 = 1'000'000'000;

struct Frame {
  db::FrameKind kind;
  std::string function, file;
  std::uint32_t line;
};
Frame py(const std::string& function, const std::string& file, std::uint32_t line) {
  return {db::FrameKind::Python, function, file, line};
}
Frame native(const std::string& function) { return {db::FrameKind::Native, function, "", 0}; }

/// A PyTorch-like capture: kernels with their launch calls and calling contexts (Python and
/// native frames, root first), NVTX ranges and marks.
class TorchCapture {
 public:
  void kernel(const std::string& name, std::int64_t duration, const std::vector<Frame>& path) {
    const std::uint32_t correlation = next_++;
    const std::int64_t t = kT0 + 10'000 * correlation;
    db::ApiCallRecord a;
    a.pid = kPid;
    a.tid = kTid;
    a.name = "cuLaunchKernel";
    a.start_ns = t;
    a.end_ns = t + 1000;
    a.correlation_id = correlation;
    batch_.api_calls.push_back(a);
    db::KernelRecord k;
    k.pid = kPid;
    k.stream_id = 7;
    k.correlation_id = correlation;
    k.start_ns = t + 2000;
    k.end_ns = t + 2000 + duration;
    k.grid_x = k.grid_y = k.grid_z = k.block_x = k.block_y = k.block_z = 1;
    k.mangled_name = name;
    batch_.kernels.push_back(k);
    std::uint32_t node = 0;
    for (const Frame& f : path) {
      std::uint32_t frame = 0;
      bool found = false;
      for (std::uint32_t i = 0; i < tree_.frames.size(); ++i) {
        const auto& g = tree_.frames[i];
        if (g.kind == f.kind && g.function == f.function && g.file == f.file && g.line == f.line) {
          frame = i;
          found = true;
        }
      }
      if (!found) {
        frame = static_cast<std::uint32_t>(tree_.frames.size());
        tree_.frames.push_back({f.kind,
                                f.kind == db::FrameKind::Python ? f.file : "/lib/libtorch.so",
                                0x1000 + frame, f.function, f.file, f.line});
      }
      std::uint32_t child = 0;
      for (std::uint32_t i = 1; i < tree_.nodes.size(); ++i) {
        if (tree_.nodes[i].parent == node && tree_.nodes[i].frame == frame) child = i;
      }
      if (child == 0) {
        child = static_cast<std::uint32_t>(tree_.nodes.size());
        tree_.nodes.push_back({node, frame});
      }
      node = child;
    }
    tree_.contexts.push_back({correlation, kTid, node});
  }
  /// An NVTX range around the launches `first`..`last` (correlation ids, 1-based).
  void range(const std::string& text, std::uint32_t first, std::uint32_t last) {
    db::NvtxRangeRecord r;
    r.pid = kPid;
    r.tid = kTid;
    r.text = text;
    r.start_ns = kT0 + 10'000 * first - 10;
    r.end_ns = kT0 + 10'000 * last + 1010;
    batch_.nvtx_ranges.push_back(r);
  }
  void mark(const std::string& text) {
    db::NvtxMarkRecord m;
    m.pid = kPid;
    m.tid = kTid;
    m.text = text;
    m.timestamp_ns = kT0 + static_cast<std::int64_t>(batch_.nvtx_marks.size());
    batch_.nvtx_marks.push_back(m);
  }
  void write(const std::string& path) {
    db::RunInfo run;
    run.command_line = {"python3", "model.py"};
    run.start_utc_ns = 1;
    auto writer = db::Writer::create(path, run);
    db::ProcessInfo p;
    p.pid = kPid;
    p.executable = "/usr/bin/python3";
    writer.write_process(p);
    writer.write(batch_);
    tree_.pid = kPid;
    writer.write_calling_contexts(tree_);
    db::RunEnd end;
    end.reason = db::EndReason::Exited;
    writer.finalize(end);
  }

 private:
  db::RecordBatch batch_;
  db::CallingContextTree tree_{kPid, {{0, 0}}, {}, {}, {}};
  std::uint32_t next_ = 1;
};

const std::string kWrapper = "/tmp/torchinductor_u/ab/cabwrapper.py";

std::vector<Frame> eager_path(std::uint32_t line, const std::vector<std::string>& ops) {
  std::vector<Frame> p{py("<module>", "/w/model.py", 50), py("forward", "/w/model.py", line)};
  for (const auto& op : ops) p.push_back(native("at::_ops::" + op + "::call(at::Tensor const&)"));
  p.push_back(native("cudaLaunchKernel"));
  return p;
}

/// Eager: linear (addmm) 1000 ns, relu (clamp_min) 200, layer_norm 300, add 100, mul 80, an
/// optimizer kernel 50 no fusion lists. Modules: block.fc, block.norm, block.
void write_eager(const std::string& path, bool modules = false) {
  TorchCapture c;
  c.kernel("ampere_sgemm", 1000, eager_path(10, {"linear", "addmm"}));
  c.kernel("elementwise_relu", 200, eager_path(11, {"relu", "clamp_min"}));
  c.kernel("layer_norm_kernel", 300, eager_path(12, {"layer_norm", "native_layer_norm"}));
  c.kernel("add_kernel", 100, eager_path(13, {"add_Tensor"}));
  c.kernel("mul_kernel", 80, eager_path(14, {"mul_Tensor"}));
  c.kernel("sgd_kernel", 50, eager_path(30, {"_foreach_add__List"}));
  if (modules) {
    c.range("fuselens:module:fwd:model", 1, 5);
    c.range("fuselens:module:fwd:model.block", 1, 5);
    c.range("fuselens:module:fwd:model.block.fc", 1, 1);
    c.range("fuselens:module:fwd:model.block.norm", 3, 3);
  }
  c.write(path);
}

std::string mark(const std::string& kernel, const std::string& kind, const std::string& ops,
                 const std::string& nodes, const std::string& site = "",
                 const std::string& graph = "0_forward") {
  return "fuselens:inductor:{\"v\":1,\"graph\":\"" + graph + "\",\"kernel\":\"" + kernel +
         "\",\"kind\":\"" + kind + "\",\"ops\":" + ops + ",\"nodes\":" + nodes +
         (site.empty() ? "" : ",\"site\":\"" + site + "\"") + "}";
}

/// Compiled: relu + layer_norm fused (250 ns), add alone (60), add + mul (40), addmm through
/// extern_kernels (cuBLAS, 900, found by its wrapper line), the optimizer kernel (50, no mark).
void write_compiled(const std::string& path, bool with_marks = true) {
  TorchCapture c;
  if (with_marks) {
    c.mark(mark("triton_per_fused_native_layer_norm_relu_0", "triton",
                "[\"relu\",\"native_layer_norm\"]",
                "[{\"name\":\"relu\",\"line\":\"/w/model.py:11\",\"module\":\"block\"},"
                "{\"name\":\"y\",\"line\":\"/w/model.py:12\",\"module\":\"block.norm\"}]",
                kWrapper + ":90"));
    c.mark(mark("triton_poi_fused_add_1", "triton", "[\"add\"]",
                "[{\"name\":\"add\",\"line\":\"/w/model.py:13\",\"module\":\"block\"}]",
                kWrapper + ":95"));
    c.mark(mark("triton_poi_fused_add_mul_2", "triton", "[\"add\",\"mul\"]",
                "[{\"name\":\"mul\",\"line\":\"/w/model.py:14\",\"module\":\"block\"}]",
                kWrapper + ":99"));
    c.mark(mark("extern_kernels.addmm", "extern", "[\"addmm\"]",
                "[{\"name\":\"linear\",\"line\":\"/w/model.py:10\",\"module\":\"block.fc\"}]",
                kWrapper + ":80"));
    c.mark("fuselens:inductor:{not json");
    c.mark("fuselens:module:fwd:model");  // another feature's text: not a mark of this one
  }
  const std::vector<Frame> call{py("<module>", "/w/model.py", 50), py("forward", "/w/model.py", 9)};
  auto at = [&](std::uint32_t line, std::vector<Frame> tail) {
    std::vector<Frame> p = call;
    p.push_back(py("call", kWrapper, line));
    for (auto& f : tail) p.push_back(std::move(f));
    return p;
  };
  c.kernel("sm90_gemm", 900, at(80, {native("at::_ops::addmm_out::call(at::Tensor const&)")}));
  c.kernel("triton_per_fused_native_layer_norm_relu_0", 250,
           at(90, {py("run", "/usr/lib/python3/torch/_inductor/runtime/triton_heuristics.py", 1)}));
  c.kernel("triton_poi_fused_add_1", 60, at(95, {}));
  c.kernel("triton_poi_fused_add_mul_2", 40, at(99, {}));
  c.kernel("sgd_kernel", 50, eager_path(30, {"_foreach_add__List"}));
  c.write(path);
}

TEST(CompiledNames, FoldsOverloadsAndInPlaceForms) {
  EXPECT_EQ(fold_aten_op("sub_Tensor"), "sub");
  EXPECT_EQ(fold_aten_op("pow_Tensor_Scalar"), "pow");
  EXPECT_EQ(fold_aten_op("mean_dim"), "mean");
  EXPECT_EQ(fold_aten_op("fill__Scalar"), "fill");
  EXPECT_EQ(fold_aten_op("addmm_out"), "addmm");
  EXPECT_EQ(fold_aten_op("_foreach_add__List"), "_foreach_add");
  EXPECT_EQ(fold_aten_op("native_layer_norm"), "native_layer_norm");
  EXPECT_EQ(fold_aten_op("_to_copy"), "_to_copy");
  EXPECT_EQ(fold_aten_op("aten.relu"), "relu");
  // Inductor's functional forms and eager's backend kernels of one op meet (the committed CNN
  // captures failed CompiledRealCaptures before: no eager op named _native_batch_norm_legit).
  EXPECT_EQ(fold_aten_op("_native_batch_norm_legit_functional"), "batch_norm");
  EXPECT_EQ(fold_aten_op("cudnn_batch_norm"), "batch_norm");
  EXPECT_EQ(fold_aten_op("native_batch_norm_backward"), "batch_norm_backward");
  EXPECT_EQ(fold_aten_op("cudnn_batch_norm_backward"), "batch_norm_backward");
  EXPECT_EQ(aten_op_of_frame("at::_ops::addmm::call(at::Tensor const&)"), "addmm");
  EXPECT_EQ(aten_op_of_frame("at::_ops::mul_Tensor::redispatch(c10::DispatchKeySet)"), "mul");
  EXPECT_EQ(aten_op_of_frame("at::_ops::addmm::schema()"), "");
  EXPECT_EQ(aten_op_of_frame("at::native::addmm_out_cuda(at::Tensor const&)"), "");
}

TEST(CompiledMarks, ParsesMarksAndRejectsOthers) {
  const auto k = parse_inductor_mark(mark("k0", "triton", "[\"aten.add\",\"relu\"]",
                                          "[{\"name\":\"x\",\"line\":\"m.py:3\"},{\"name\":\"y\"}]",
                                          "w.py:7", "2_backward"));
  ASSERT_TRUE(k);
  EXPECT_EQ(k->kernel, "k0");
  EXPECT_EQ(k->graph, "2_backward");
  EXPECT_EQ(k->ops, (std::vector<std::string>{"add", "relu"}));
  ASSERT_EQ(k->nodes.size(), 2U);
  EXPECT_EQ(k->nodes[0].line, "m.py:3");
  EXPECT_EQ(k->nodes[1].line, "");
  EXPECT_EQ(k->site, "w.py:7");
  EXPECT_FALSE(k->extern_call());
  EXPECT_EQ(k->lines(), (std::vector<std::string>{"m.py:3"}));
  const auto with_site = parse_inductor_mark(
      "fuselens:inductor:{\"kernel\":\"k\",\"nodes\":[{\"name\":\"x\",\"line\":\"m.py:3\"}],"
      "\"lines\":[\"m.py:4\",\"m.py:3\",7]}");
  ASSERT_TRUE(with_site);
  EXPECT_EQ(with_site->lines(), (std::vector<std::string>{"m.py:3", "m.py:4"}));
  EXPECT_FALSE(parse_inductor_mark("fuselens:inductor:{"));
  EXPECT_FALSE(parse_inductor_mark("fuselens:inductor:[1,2]"));
  EXPECT_FALSE(parse_inductor_mark("fuselens:inductor:{\"ops\":[]}"));  // no kernel
  EXPECT_FALSE(parse_inductor_mark("inductor:{\"kernel\":\"k\"}"));
  EXPECT_TRUE(
      parse_inductor_mark("fuselens:inductor:{\"kernel\":\"k\",\"ops\":[1,{}],\"nodes\":[3]}"));
}

TEST(CompiledMarks, ReadsTheCapturesMarksOnce) {
  TempDir dir;
  const auto path = dir.file("compiled.sqlite");
  write_compiled(path);
  const db::Reader reader(path);
  const auto kernels = inductor_kernels(reader);
  ASSERT_EQ(kernels.size(), 4U);
  EXPECT_EQ(kernels[3].kernel, "extern_kernels.addmm");
  EXPECT_TRUE(kernels[3].extern_call());
}

const FusionRow* fusion(const CompiledReport& r, const std::string& kernel) {
  for (const auto& f : r.fusions) {
    if (f.kernel.kernel == kernel) return &f;
  }
  return nullptr;
}
const GroupRow* group(const CompiledReport& r, const std::string& name) {
  for (const auto& g : r.groups) {
    if (g.name == name) return &g;
  }
  return nullptr;
}

TEST(CompiledCompare, MapsEachFusionToTheEagerKernelsOfItsOps) {
  TempDir dir;
  write_eager(dir.file("eager.sqlite"));
  write_compiled(dir.file("compiled.sqlite"));
  const db::Reader eager(dir.file("eager.sqlite")), compiled(dir.file("compiled.sqlite"));
  const auto r = compare_compiled(eager, compiled, inductor_kernels(compiled), CompareBy::Op);
  ASSERT_EQ(r.fusions.size(), 4U);
  const auto* ln = fusion(r, "triton_per_fused_native_layer_norm_relu_0");
  ASSERT_TRUE(ln);
  EXPECT_DOUBLE_EQ(ln->eager.gpu_ns, 500);  // relu 200 + layer_norm 300
  EXPECT_DOUBLE_EQ(ln->eager.launches, 2);
  EXPECT_DOUBLE_EQ(ln->compiled.gpu_ns, 250);
  EXPECT_DOUBLE_EQ(ln->compiled.launches, 1);
  ASSERT_TRUE(ln->speedup);
  EXPECT_DOUBLE_EQ(*ln->speedup, 2.0);
  EXPECT_EQ(ln->eager_kernels, (std::vector<std::string>{"elementwise_relu", "layer_norm_kernel"}));
  // linear's path holds linear and addmm: the op a fusion lists (addmm) is the one charged.
  const auto* mm = fusion(r, "extern_kernels.addmm");
  ASSERT_TRUE(mm);
  EXPECT_DOUBLE_EQ(mm->eager.gpu_ns, 1000);
  EXPECT_DOUBLE_EQ(mm->compiled.gpu_ns, 900);  // sm90_gemm, found by its wrapper line
  // add is listed by two fusions: each gets half of its eager time.
  EXPECT_DOUBLE_EQ(fusion(r, "triton_poi_fused_add_1")->eager.gpu_ns, 50);
  EXPECT_DOUBLE_EQ(fusion(r, "triton_poi_fused_add_mul_2")->eager.gpu_ns, 50 + 80);
  // Nothing counted twice: the totals are every operation; what no fusion explains is apart.
  EXPECT_DOUBLE_EQ(r.eager_total.gpu_ns, 1730);
  EXPECT_DOUBLE_EQ(r.compiled_total.gpu_ns, 1300);
  EXPECT_DOUBLE_EQ(r.eager_unmatched.gpu_ns, 50);
  EXPECT_DOUBLE_EQ(r.compiled_unmatched.gpu_ns, 50);
  double eager_fused = 0;
  for (const auto& f : r.fusions) eager_fused += f.eager.gpu_ns;
  EXPECT_DOUBLE_EQ(eager_fused + r.eager_unmatched.gpu_ns, r.eager_total.gpu_ns);
  EXPECT_EQ(r.marks, 4);
}

TEST(CompiledCompare, ByOpSplitsAFusionOverItsOpsByTheirEagerShares) {
  TempDir dir;
  write_eager(dir.file("eager.sqlite"));
  write_compiled(dir.file("compiled.sqlite"));
  const db::Reader eager(dir.file("eager.sqlite")), compiled(dir.file("compiled.sqlite"));
  const auto r = compare_compiled(eager, compiled, inductor_kernels(compiled), CompareBy::Op);
  ASSERT_TRUE(group(r, "relu"));
  EXPECT_DOUBLE_EQ(group(r, "relu")->eager.gpu_ns, 200);
  EXPECT_DOUBLE_EQ(group(r, "relu")->compiled.gpu_ns, 100);  // 250 x 200 / 500
  EXPECT_DOUBLE_EQ(group(r, "native_layer_norm")->compiled.gpu_ns, 150);
  EXPECT_DOUBLE_EQ(group(r, "add")->eager.gpu_ns, 100);
  EXPECT_EQ(r.groups.back().name, "<not fused>");
  EXPECT_DOUBLE_EQ(r.groups.back().eager.gpu_ns, 50);
  EXPECT_EQ(r.groups.front().name, "addmm");  // largest eager time first
}

TEST(CompiledCompare, FiguresArePerStep) {
  TempDir dir;
  write_eager(dir.file("eager.sqlite"));
  write_compiled(dir.file("compiled.sqlite"));
  const db::Reader eager(dir.file("eager.sqlite")), compiled(dir.file("compiled.sqlite"));
  const auto r = compare_compiled(eager, compiled, inductor_kernels(compiled), CompareBy::Op, 2, 4);
  EXPECT_DOUBLE_EQ(fusion(r, "extern_kernels.addmm")->eager.gpu_ns, 500);
  EXPECT_DOUBLE_EQ(fusion(r, "extern_kernels.addmm")->compiled.gpu_ns, 225);
  EXPECT_DOUBLE_EQ(r.eager_total.gpu_ns, 865);
}

TEST(CompiledCompare, ByModuleUsesTheModuleRangesAndTheNodesModules) {
  TempDir dir;
  write_eager(dir.file("eager.sqlite"), /*modules=*/true);
  write_compiled(dir.file("compiled.sqlite"));
  const db::Reader eager(dir.file("eager.sqlite")), compiled(dir.file("compiled.sqlite"));
  const auto r = compare_compiled(eager, compiled, inductor_kernels(compiled), CompareBy::Module);
  // "model.block.fc" (the module view's path) is the compiled "block.fc".
  ASSERT_TRUE(group(r, "block.fc"));
  EXPECT_DOUBLE_EQ(group(r, "block.fc")->eager.gpu_ns, 1000);
  EXPECT_DOUBLE_EQ(group(r, "block.fc")->compiled.gpu_ns, 900);
  ASSERT_TRUE(group(r, "block.norm"));
  EXPECT_DOUBLE_EQ(group(r, "block.norm")->eager.gpu_ns, 300);
  EXPECT_DOUBLE_EQ(group(r, "block.norm")->compiled.gpu_ns, 125);  // half of the fusion
  EXPECT_DOUBLE_EQ(group(r, "block")->eager.gpu_ns, 200 + 100 + 80);
  EXPECT_DOUBLE_EQ(group(r, "block")->compiled.gpu_ns, 125 + 60 + 40);
}

TEST(CompiledCompare, ByModuleNeedsModuleRanges) {
  TempDir dir;
  write_eager(dir.file("eager.sqlite"));
  write_compiled(dir.file("compiled.sqlite"));
  const db::Reader eager(dir.file("eager.sqlite")), compiled(dir.file("compiled.sqlite"));
  EXPECT_THROW(compare_compiled(eager, compiled, inductor_kernels(compiled), CompareBy::Module),
               CompiledError);
  EXPECT_THROW(compare_compiled(eager, compiled, {}, CompareBy::Op), CompiledError);
}

TEST(CompiledCompare, SameKernelNameInTwoGraphsIsToldApartByItsSite) {
  TempDir dir;
  TorchCapture c;
  c.mark(
      mark("triton_poi_fused_add_0", "triton", "[\"add\"]", "[]", kWrapper + ":10", "0_forward"));
  c.mark(mark("triton_poi_fused_add_0", "triton", "[\"mul\"]", "[]",
              "/tmp/torchinductor_u/cd/other.py:12", "1_forward"));
  c.kernel("triton_poi_fused_add_0", 70, {py("call", "/tmp/torchinductor_u/cd/other.py", 12)});
  c.write(dir.file("compiled.sqlite"));
  write_eager(dir.file("eager.sqlite"));
  const db::Reader eager(dir.file("eager.sqlite")), compiled(dir.file("compiled.sqlite"));
  const auto r = compare_compiled(eager, compiled, inductor_kernels(compiled), CompareBy::Op);
  ASSERT_EQ(r.fusions.size(), 1U);
  EXPECT_EQ(r.fusions[0].kernel.graph, "1_forward");
  EXPECT_DOUBLE_EQ(r.fusions[0].eager.gpu_ns, 80);  // mul's eager kernel
}

TEST(CompiledCompare, GraphReplaysOfExternKernelsAreKnownByTheirName) {
  TempDir dir;
  TorchCapture c;
  c.mark(mark("extern_kernels.mm", "extern", "[\"mm\"]", "[]", kWrapper + ":80"));
  // A warm-up run from the wrapper, then a CUDA graph replay: no wrapper line on its path.
  c.kernel("sm90_gemm", 100, {py("call", kWrapper, 80), native("at::_ops::mm_out::call()")});
  c.kernel("sm90_gemm", 90,
           {py("replay", "/usr/lib/python3/torch/_inductor/cudagraph_trees.py", 5)});
  c.kernel("other_gemm", 30, {});
  c.write(dir.file("compiled.sqlite"));
  write_eager(dir.file("eager.sqlite"));
  const db::Reader eager(dir.file("eager.sqlite")), compiled(dir.file("compiled.sqlite"));
  const auto kernels = inductor_kernels(compiled);
  const auto names = extern_kernel_names(compiled, kernels);
  ASSERT_EQ(names.size(), 1U);
  EXPECT_EQ(names.begin()->first, "sm90_gemm");
  const auto without = compare_compiled(eager, compiled, kernels, CompareBy::Op);
  EXPECT_DOUBLE_EQ(without.compiled_unmatched.gpu_ns, 90 + 30);
  const auto with = compare_compiled(eager, compiled, kernels, CompareBy::Op, 1, 1, names);
  ASSERT_EQ(with.fusions.size(), 1U);
  EXPECT_DOUBLE_EQ(with.fusions[0].compiled.gpu_ns, 190);
  EXPECT_DOUBLE_EQ(with.fusions[0].compiled.launches, 2);
  EXPECT_DOUBLE_EQ(with.compiled_unmatched.gpu_ns, 30);
}

TEST(CompiledFormat, WritesTheThreeFormats) {
  TempDir dir;
  write_eager(dir.file("eager.sqlite"));
  write_compiled(dir.file("compiled.sqlite"));
  const db::Reader eager(dir.file("eager.sqlite")), compiled(dir.file("compiled.sqlite"));
  const auto r = compare_compiled(eager, compiled, inductor_kernels(compiled), CompareBy::Op);
  std::ostringstream table, csv;
  write_compiled(table, r, OutputFormat::Table);
  EXPECT_NE(table.str().find("triton_per_fused_native_layer_norm_relu_0"), std::string::npos);
  EXPECT_NE(table.str().find("model.py:11"), std::string::npos);
  write_compiled(csv, r, OutputFormat::Csv);
  const auto rows = test::parse_csv(csv.str());
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows[0][0], "# fusions");
  EXPECT_EQ(rows[1][0], "kernel");
  const auto doc = compiled_to_json(r);
  EXPECT_EQ(doc["by"], "op");
  EXPECT_EQ(doc["fusions"].size(), 4U);
  EXPECT_DOUBLE_EQ(doc["totals"]["speedup"].get<double>(), 1730.0 / 1300.0);
}

TEST(CompiledCompare, FindsTheEagerOpsOfARealPyTorchCapture) {
  // cct_torch.sqlite (H100, eager MLP steps with Python and native frames): the ops a compiled
  // MLP would list are found under their at::_ops frames, forward and backward.
  TempDir dir;
  TorchCapture c;
  const std::vector<std::string> ops{"addmm", "relu", "mm", "threshold_backward"};
  for (const auto& op : ops) {
    c.mark(mark("k_" + op, "triton", "[\"" + op + "\"]", "[]"));
    c.kernel("k_" + op, 10, {});
  }
  c.write(dir.file("compiled.sqlite"));
  const db::Reader eager(std::string(FUSELENS_TEST_DATA_DIR) + "/cct_torch.sqlite");
  const db::Reader compiled(dir.file("compiled.sqlite"));
  const auto r = compare_compiled(eager, compiled, inductor_kernels(compiled), CompareBy::Op);
  for (const auto& op : ops) {
    const auto* g = group(r, op);
    ASSERT_TRUE(g) << op;
    EXPECT_GT(g->eager.gpu_ns, 0) << op;
    EXPECT_GT(g->eager.launches, 0) << op;
  }
  EXPECT_GT(r.eager_unmatched.gpu_ns, 0);  // randn, copies, the optimizer: not listed
  EXPECT_LT(r.eager_unmatched.gpu_ns, r.eager_total.gpu_ns);
}

// The H100 captures of scripts/device/plans/compiled.sh, once committed under tests/data: every
// fusion that ran names at least one ATen op found on a launch path of the eager capture, and
// the totals split into fused and not fused work without remainder.
TEST(CompiledRealCaptures, EachFusionNamesOpsOfTheEagerCapture) {
  int pairs = 0;
  for (const std::string workload : {"transformer", "cnn"}) {
    for (const std::string mode : {"compiled", "reduce_overhead"}) {
      const std::string dir = FUSELENS_TEST_DATA_DIR;
      const std::string eager_path = dir + "/" + workload + "_eager.sqlite";
      const std::string compiled_path = dir + "/" + workload + "_" + mode + ".sqlite";
      if (!std::filesystem::exists(eager_path) || !std::filesystem::exists(compiled_path)) continue;
      ++pairs;
      SCOPED_TRACE(compiled_path);
      const db::Reader eager(eager_path), compiled(compiled_path);
      std::set<std::string> eager_ops;
      auto frames = db::frames(eager);
      while (auto f = frames.next()) {
        if (auto op = aten_op_of_frame(f->function); !op.empty()) eager_ops.insert(op);
      }
      const auto kernels = inductor_kernels(compiled);
      ASSERT_FALSE(kernels.empty());
      const auto r = compare_compiled(eager, compiled, kernels, CompareBy::Op, 1, 1,
                                      extern_kernel_names(compiled, kernels));
      ASSERT_FALSE(r.fusions.empty());
      for (const auto& f : r.fusions) {
        if (f.kernel.ops.empty()) continue;  // Inductor listed no op (e.g. a pure copy)
        bool any = false;
        for (const auto& op : f.kernel.ops) any = any || eager_ops.count(op) > 0;
        EXPECT_TRUE(any) << f.kernel.kernel;
      }
      double fused = 0;
      for (const auto& f : r.fusions) fused += f.compiled.gpu_ns;
      EXPECT_NEAR(fused + r.compiled_unmatched.gpu_ns, r.compiled_total.gpu_ns,
                  1e-6 * r.compiled_total.gpu_ns);
    }
  }
  if (pairs == 0)
    GTEST_SKIP() << "no torch.compile captures under tests/data yet (plan compiled.sh)";
}

// On the committed transformer captures the module view names the root by its variable
// ("model.attn.qkv") and Inductor from the compiled root ("attn.qkv"): every group of the
// comparison reads the compiled way, matched or not (it failed before: "model.attn.qkv" stood next
// to "attn.proj").
TEST(CompiledRealCaptures, ByModuleNamesEveryGroupFromTheCompiledRoot) {
  const std::string dir = FUSELENS_TEST_DATA_DIR;
  const std::string eager_path = dir + "/transformer_eager.sqlite";
  const std::string compiled_path = dir + "/transformer_compiled.sqlite";
  if (!std::filesystem::exists(eager_path) || !std::filesystem::exists(compiled_path))
    GTEST_SKIP() << "the transformer captures are not under tests/data";
  const db::Reader eager(eager_path), compiled(compiled_path);
  const auto kernels = inductor_kernels(compiled);
  const auto r = compare_compiled(eager, compiled, kernels, CompareBy::Module, 1, 1,
                                  extern_kernel_names(compiled, kernels));
  ASSERT_FALSE(r.groups.empty());
  bool attn = false;
  for (const auto& g : r.groups) {
    EXPECT_NE(g.name.rfind("model.", 0), 0U) << g.name;
    EXPECT_NE(g.name, "model");
    attn = attn || g.name.rfind("attn", 0) == 0;
  }
  EXPECT_TRUE(attn);
}

TEST(CompiledCct, ShowsACompiledKernelUnderItsSourceLines) {
  TempDir dir;
  write_compiled(dir.file("compiled.sqlite"));
  const db::Reader reader(dir.file("compiled.sqlite"));
  const auto sources = compiled_kernel_sources(reader);
  ASSERT_EQ(sources.count("triton_per_fused_native_layer_norm_relu_0"), 1U);
  EXPECT_EQ(sources.at("triton_per_fused_native_layer_norm_relu_0"),
            "<torch.compile> model.py:11, model.py:12: relu, native_layer_norm");
  EXPECT_EQ(sources.at("sm90_gemm"), "<torch.compile> model.py:10: addmm");  // extern, by site
  EXPECT_EQ(sources.count("sgd_kernel"), 0U);
  CctOptions options;
  options.kernel_sources = sources;
  const auto report = calling_context_report(reader, options);
  bool found = false;
  for (const auto& row : report.rows) {
    if (row.label != "<gpu kernel> triton_per_fused_native_layer_norm_relu_0") continue;
    ASSERT_GE(row.parent, 0);
    EXPECT_EQ(report.rows[static_cast<std::size_t>(row.parent)].label,
              sources.at("triton_per_fused_native_layer_norm_relu_0"));
    found = true;
  }
  EXPECT_TRUE(found);
  for (const auto& row : report.rows) {
    if (row.label == "<gpu kernel> sgd_kernel") {
      EXPECT_EQ(report.rows[static_cast<std::size_t>(row.parent)].label.rfind("<torch.compile>", 0),
                std::string::npos);
    }
  }
  // Without marks nothing changes.
  TempDir plain;
  write_eager(plain.file("eager.sqlite"));
  EXPECT_TRUE(compiled_kernel_sources(db::Reader(plain.file("eager.sqlite"))).empty());
}

using fuselens::test::run_cli;

TEST(CompiledCli, ComparesTwoCapturesAndSaysWhatIsMissing) {
  TempDir dir;
  write_eager(dir.file("eager.sqlite"));
  write_compiled(dir.file("compiled.sqlite"));
  write_compiled(dir.file("plain.sqlite"), /*with_marks=*/false);
  const auto ok = run_cli(dir, {"compare", dir.file("eager.sqlite"), dir.file("compiled.sqlite"),
                                "--by", "op", "--format", "json", "--window", "all"});
  ASSERT_EQ(ok.status, 0) << ok.err;
  const auto doc = nlohmann::json::parse(ok.out);
  EXPECT_EQ(doc["window"].size(), 2U);
  EXPECT_EQ(doc["fusions"].size(), 4U);
  const auto none =
      run_cli(dir, {"compare", dir.file("eager.sqlite"), dir.file("plain.sqlite"), "--by", "op"});
  EXPECT_EQ(none.status, 1);
  ASSERT_EQ(none.err_lines().size(), 1U);
  EXPECT_NE(none.err.find("holds no torch.compile kernels"), std::string::npos);
  EXPECT_TRUE(none.out.empty());
  const auto one = run_cli(dir, {"compare", dir.file("eager.sqlite"), "--by", "op"});
  EXPECT_EQ(one.status, 2);
  const auto modules = run_cli(
      dir, {"compare", dir.file("eager.sqlite"), dir.file("compiled.sqlite"), "--by", "module"});
  EXPECT_EQ(modules.status, 1);
  EXPECT_NE(modules.err.find("no module ranges"), std::string::npos);
}

}  // namespace
}  // namespace fuselens::analyzer
