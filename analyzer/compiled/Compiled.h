#pragma once
// Compiled: torch.compile (Inductor) kernels mapped to the source ops and user lines they fuse,
// and an eager capture compared with a compiled capture of the same script, per fusion, per op
// and per module (docs/calling-context.md, "torch.compile").
//
// Evidence read:
//  - compiled capture: the NVTX marks "fuselens:inductor:<json>" that prof-run's
//    fuselens_inductor.py emits once per generated kernel (InductorKernel below). A GPU kernel is
//    a fusion's when its name is a Triton or template kernel's name of a mark; an extern call's
//    (cuBLAS, cuDNN through ATen) when the launch's calling context holds the generated wrapper's
//    line (file:line) that the mark names as its site, or (CUDA graph replays, which carry no
//    such context) when its name is one an extern call launched elsewhere in the capture;
//  - eager capture: each GPU operation's ATen ops, the `at::_ops::<op>::call` and
//    `::redispatch` frames of its calling context (outermost first), with overloads folded
//    ("sub_Tensor" -> "sub", "fill__Scalar" -> "fill"); its module, the innermost enclosing NVTX
//    range "fuselens:module:fwd:<path>" or "fuselens:module:bwd:<path>" on the launching thread.
//
// Attribution (no GPU nanosecond counted twice):
//  - an eager operation's op is the outermost of its ATen ops that some fusion lists, else its
//    innermost ATen op ("<no aten op>" without one);
//  - an op listed by k fusions (that ran in the window) gives each 1/k of its eager cost; the
//    eager cost of a fusion is the sum of those shares over its ops. Eager ops no fusion lists and
//    compiled operations that match no mark are reported apart ("<not fused>" rows);
//  - by op, a fusion's compiled cost is split over its ops in proportion to their eager shares
//    (evenly when the eager side has none); by module, evenly over the modules of its nodes.
//  - speedup = eager GPU ns / compiled GPU ns (> 1: the compiled program is faster).
//  - figures per step: totals over the window divided by its steps (1 for a window without
//    steps), so captures of different lengths compare.
//
// Units: ns, bytes (of copies and memsets; kernels move none that the capture records).
// Errors: CompiledError when the compiled capture holds no fuselens:inductor mark, or (by module)
// when the eager capture holds no module range; db::Error from reading a capture.

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fuselens/db/Reader.h"

namespace fuselens::analyzer {

class CompiledError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr std::string_view kInductorMarkPrefix = "fuselens:inductor:";

/// One source node of a fusion: the Dynamo graph's node name, its user line ("file:line") and
/// module path (empty when not recorded).
struct InductorNode {
  std::string name, line, module;
};

/// One generated kernel as its mark describes it.
struct InductorKernel {
  std::string graph;   ///< AOT ID, "0_forward", "0_backward", "1_inference"
  std::string kernel;  ///< GPU name (triton, template) or the wrapper's call ("extern_kernels.mm")
  std::string kind;    ///< "triton", "template", "extern", ...
  std::vector<std::string> ops;  ///< Original ATen, without "aten."
  std::vector<InductorNode> nodes;
  std::string site;  ///< "wrapper.py:line" of its launch, empty when unknown
  /// User lines of its launch site from Inductor's linemap (the stack trace of the scheduler
  /// node's last origin), "file:line"; empty when unknown.
  std::vector<std::string> site_lines;
  bool truncated = false;

  bool extern_call() const { return kind == "extern"; }
  /// Its user lines: the nodes' lines, then the site's, each once.
  std::vector<std::string> lines() const;
};

/// Parses one mark text; nullopt when it lacks the prefix, is not JSON, or has no kernel name.
std::optional<InductorKernel> parse_inductor_mark(std::string_view text);

/// The marks of a capture in time order (read them before restricting the reader to a window:
/// they are emitted at compile time, before the steady steps). Duplicates (same graph, kernel and
/// site) are dropped.
std::vector<InductorKernel> inductor_kernels(const db::Reader& reader);

/// GPU kernel names of extern calls, learned from launches whose calling context holds an
/// extern mark's site (read unrestricted: the warm-up runs of reduce-overhead launch them from the
/// wrapper before the CUDA graph replays them without that context): kernel name -> index into
/// `kernels` of the first extern mark seen launching it.
std::map<std::string, std::size_t> extern_kernel_names(const db::Reader& reader,
                                                       const std::vector<InductorKernel>& kernels);

/// For `prof-analyze cct`: GPU kernel name -> "<torch.compile> LINES: OPS", the user lines and
/// ATen ops of the compiled kernel (Triton and template kernels by name, extern kernels by the
/// names extern_kernel_names learns; marks of one name in several graphs joined). Empty for a
/// capture without marks. Read it before restricting the reader to a window.
std::map<std::string, std::string> compiled_kernel_sources(const db::Reader& reader);

/// "sub_Tensor" -> "sub", "pow_Tensor_Scalar" -> "pow", "mean_dim" -> "mean", "fill__Scalar"
/// -> "fill", "addmm" -> "addmm": the op of an `at::_ops::` name without overload or in-place
/// suffix (overloads: segments starting upper-case, and dim, out, int, self, correction, default,
/// names, input, dtype, memory_format). The names of one op's functional, decomposed and
/// backend forms read as its user-facing name (batch norm: "_native_batch_norm_legit_functional",
/// "native_batch_norm", "cudnn_batch_norm" -> "batch_norm"; "native_batch_norm_backward",
/// "cudnn_batch_norm_backward" -> "batch_norm_backward"), so Inductor's op names meet eager's.
std::string fold_aten_op(std::string_view name);

/// The op name of an `at::_ops::NAME::call(...)` / `::redispatch(...)` frame, folded; empty
/// for other functions.
std::string aten_op_of_frame(std::string_view function);

/// Cost of a set of GPU operations (kernels, copies, memsets).
struct OpCost {
  double gpu_ns = 0, launches = 0, bytes = 0;
  void add(const OpCost& o, double share = 1);
};

/// One compiled kernel (a fusion) against the eager work of its ops.
struct FusionRow {
  InductorKernel kernel;
  OpCost eager, compiled;                  ///< per step
  std::vector<std::string> eager_kernels;  ///< distinct eager kernel names of its ops (<= 8)
  std::optional<double> speedup;
};

/// One op or module row.
struct GroupRow {
  std::string name;
  OpCost eager, compiled;  ///< per step
  std::optional<double> speedup;
};

enum class CompareBy { Op, Module };

struct CompiledReport {
  std::string eager_path, compiled_path;
  CompareBy by = CompareBy::Op;
  double eager_steps = 1, compiled_steps = 1;  ///< steps in each window (1 without steps)
  std::vector<FusionRow> fusions;              ///< by eager GPU time descending
  std::vector<GroupRow> groups;        ///< ops or modules, by eager GPU time descending; the
                                       ///< "<not fused>" row last
  OpCost eager_total, compiled_total;  ///< every GPU operation of each window, per step
  OpCost eager_unmatched, compiled_unmatched;  ///< what no fusion explains, per step
  std::int64_t marks = 0;                      ///< fuselens:inductor marks in the compiled capture
  std::optional<double> speedup;               ///< eager_total / compiled_total GPU time
};

/// Compares `eager` with `compiled` (both readers possibly restricted to their windows);
/// `kernels`: inductor_kernels(compiled) read before the restriction; `*_steps`: steps in each
/// window (>= 1); `extern_names`: extern_kernel_names(compiled) read before the restriction,
/// for kernels launched without their wrapper line (CUDA graph replays). Throws CompiledError
/// when `kernels` is empty, or by module when `eager` has no module range.
CompiledReport compare_compiled(const db::Reader& eager, const db::Reader& compiled,
                                const std::vector<InductorKernel>& kernels, CompareBy by,
                                double eager_steps = 1, double compiled_steps = 1,
                                const std::map<std::string, std::size_t>& extern_names = {});

}  // namespace fuselens::analyzer
