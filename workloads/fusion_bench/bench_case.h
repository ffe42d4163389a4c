#pragma once
// The pieces every fusion_bench op case shares: the run context, the variants of one op × shape,
// the result table, and the registry through which each case_<op>.cpp adds itself to the program.
//
// A case file defines `void run_<op>(const CaseContext&, Report&)`, which for each of its shapes
// makes inputs (random_inputs), a double-precision CPU reference, device buffers, and calls
// run_variants with its variants; then registers itself with FUSION_BENCH_OP("<op>", order,
// run_<op>). Ops run in ascending `order`; `--only <op>` selects one by its registered name.
//
// Variant rules (README.md beside this file; the tests and the analyzer rely on them): the NVTX
// range is "<op>/<variant>/<shape>"; `kernels_per_iter` is the exact number of kernel launches of
// one iteration(); iteration() launches on the legacy default stream and does nothing else (no
// memset, no copy, no allocation); the variant named "unfused" is the baseline of the speedup
// column, and the suite's peers (cuBLAS, cuBLASLt) are variants too, named for what they are
// ("cublas_unfused_epilogue", "cublaslt_epilogue").

#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "common/compare.h"
#include "variant_runner.h"
#include "work_model.h"

namespace fuselens::workloads {

/// What the command line selected, for every case.
struct CaseContext {
  VariantSettings settings;  ///< warm-up and measured iterations per range
  bool quick = false;  ///< --quick: the smallest shapes only (tests); otherwise every study shape
  std::uint32_t seed = 20240602u;
};

/// One way of computing the op: a name, its exact launches per iteration, the launches, the work.
struct Variant {
  std::string name;
  int kernels_per_iter = 0;
  std::function<void()> iteration;
  DeclaredWork work;  ///< per iteration, declared for the range (work_model.h)
};

/// The output all variants of a shape write, and how to check it after each variant ran.
struct CheckedOutput {
  void* data = nullptr;  ///< device pointer, poisoned (0xFF) before each variant
  std::size_t bytes = 0;
  std::function<kernels::Comparison()>
      check;  ///< copies the output back, compares with the reference
  double tolerance =
      kernels::kFp32RelativeTolerance;  ///< relative L2 bound of the dtype (compare.h)
  std::string dtype = "fp32";           ///< printed in the check line
};

struct Row {
  std::string op, shape, variant, dtype;
  int kernels_per_iter = 0;
  double median_us = 0.0;
  kernels::Comparison check;
  double tolerance = kernels::kFp32RelativeTolerance;
};

/// Collects results, prints one check line per variant and the final table (speedup over the
/// "unfused" variant of the same op and shape).
class Report {
 public:
  void add(Row row);
  void print_table() const;
  [[nodiscard]] int failures() const { return failures_; }

 private:
  std::vector<Row> rows_;
  int failures_ = 0;
};

/// n floats uniform in [lo, hi) with exact zeros redrawn.
[[nodiscard]] std::vector<float> random_inputs(std::size_t n, std::mt19937& rng, float lo = -1.0f,
                                               float hi = 1.0f);

/// Runs every variant through run_variant (variant_runner.h) into the range "<op>/<name>/<shape>",
/// checks the output after each and adds a Row per variant to the report.
void run_variants(const std::string& op, const std::string& shape, const CaseContext& context,
                  const CheckedOutput& output, const std::vector<Variant>& variants,
                  Report& report);

using OpRunner = void (*)(const CaseContext&, Report&);

struct RegisteredOp {
  std::string name;
  int order = 0;
  OpRunner run = nullptr;
};

/// Every op case linked into the program, sorted by order.
[[nodiscard]] std::vector<RegisteredOp> registered_ops();

/// Adds an op to the registry (used through FUSION_BENCH_OP at namespace scope).
struct OpRegistration {
  OpRegistration(const char* name, int order, OpRunner run);
};

}  // namespace fuselens::workloads

#define FUSION_BENCH_OP(name, order, fn)                                              \
  static const ::fuselens::workloads::OpRegistration fusion_bench_registration_##fn { \
    name, order, fn                                                                   \
  }
