#include "bench_case.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

namespace fuselens::workloads {
namespace {

std::vector<RegisteredOp>& registry() {
  static std::vector<RegisteredOp> ops;
  return ops;
}

}  // namespace

OpRegistration::OpRegistration(const char* name, int order, OpRunner run) {
  registry().push_back(RegisteredOp{name, order, run});
}

std::vector<RegisteredOp> registered_ops() {
  std::vector<RegisteredOp> ops = registry();
  std::stable_sort(ops.begin(), ops.end(),
                   [](const RegisteredOp& a, const RegisteredOp& b) { return a.order < b.order; });
  return ops;
}

void Report::add(Row row) {
  const std::string name = row.op + "/" + row.variant + "/" + row.shape;
  const bool ok = row.check.passes(row.tolerance);
  std::printf("check %-48s %-5s rel_l2 %.3e  non-finite %zu  %s\n", name.c_str(), row.dtype.c_str(),
              row.check.relative_l2, row.check.nonfinite_count, ok ? "ok" : "MISMATCH");
  if (!ok) {
    ++failures_;
    std::fprintf(stderr,
                 "fusion_bench: MISMATCH %s: relative L2 error %.3e (tolerance %.0e), "
                 "%zu non-finite outputs\n",
                 name.c_str(), row.check.relative_l2, row.tolerance, row.check.nonfinite_count);
  }
  std::fflush(stdout);
  rows_.push_back(std::move(row));
}

void Report::print_table() const {
  std::map<std::pair<std::string, std::string>, double> unfused_us;
  for (const Row& row : rows_) {
    if (row.variant == "unfused") unfused_us[{row.op, row.shape}] = row.median_us;
  }
  std::printf("\n%-22s %-18s %-26s %12s %12s %9s\n", "op", "shape", "variant", "kernels/iter",
              "median_us", "speedup");
  for (const Row& row : rows_) {
    std::string speedup = "-";
    const auto base = unfused_us.find({row.op, row.shape});
    if (row.variant != "unfused" && base != unfused_us.end() && row.median_us > 0.0) {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%.2fx", base->second / row.median_us);
      speedup = buffer;
    }
    std::printf("%-22s %-18s %-26s %12d %12.3f %9s\n", row.op.c_str(), row.shape.c_str(),
                row.variant.c_str(), row.kernels_per_iter, row.median_us, speedup.c_str());
  }
  std::printf("speedup = unfused median / variant median (> 1: faster than the unfused chain)\n");
}

std::vector<float> random_inputs(std::size_t n, std::mt19937& rng, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> values(n);
  for (float& v : values) {
    do {
      v = dist(rng);
    } while (v == 0.0f);
  }
  return values;
}

void run_variants(const std::string& op, const std::string& shape, const CaseContext& context,
                  const CheckedOutput& output, const std::vector<Variant>& variants,
                  Report& report) {
  for (const Variant& variant : variants) {
    const std::string range = op + "/" + variant.name + "/" + shape;
    const VariantTiming timing = run_variant(range, context.settings, output.data, output.bytes,
                                             variant.iteration, variant.work);
    report.add(Row{op, shape, variant.name, output.dtype, variant.kernels_per_iter,
                   timing.median_us(), output.check(), output.tolerance});
  }
}

}  // namespace fuselens::workloads
