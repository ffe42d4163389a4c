// fusion_bench: unfused vs fused variants (and the vendor peers) of every op of the kernel suite,
// one NVTX range per op, variant and shape, every output checked against a double-precision CPU
// reference. Each op is a case_<op>.cpp registered with FUSION_BENCH_OP (bench_case.h). Conventions
// (range names, launch counts, copies, exit status) are documented in README.md beside this file;
// tests depend on them.

#include "bench_case.h"
#include "bench_options.h"

#include "common/cuda_check.h"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

namespace {

namespace fk = fuselens::kernels;
namespace fw = fuselens::workloads;

constexpr int kExitNoDevice = 77;

std::string op_list(const std::vector<fw::RegisteredOp>& ops) {
  std::string names;
  for (const auto& op : ops) names += (names.empty() ? "" : ", ") + op.name;
  return names;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<fw::RegisteredOp> ops = fw::registered_ops();
  fw::BenchOptions options;
  try {
    options = fw::parse_bench_options(argc, argv);
    if (options.only && !options.help) {
      bool known = false;
      for (const auto& op : ops) known = known || op.name == *options.only;
      if (!known)
        throw fw::UsageError("--only expects one of " + op_list(ops) + ", got '" + *options.only +
                             "'");
    }
  } catch (const fw::UsageError& e) {
    std::fprintf(stderr, "fusion_bench: error: %s (see --help)\n", e.what());
    return 2;
  }
  if (options.help) {
    std::fputs(fw::bench_usage().c_str(), stdout);
    std::printf("Ops: %s\n", op_list(ops).c_str());
    return 0;
  }

  int device_count = 0;
  const cudaError_t status = cudaGetDeviceCount(&device_count);
  if (status != cudaSuccess || device_count == 0) {
    std::fprintf(stderr, "fusion_bench: no CUDA device available (%s)\n",
                 status != cudaSuccess ? cudaGetErrorString(status) : "device count is 0");
    return kExitNoDevice;
  }

  fw::Report report;
  try {
    cudaDeviceProp properties{};
    FUSELENS_CUDA_CHECK(cudaGetDeviceProperties(&properties, 0));
    const fw::CaseContext context{fw::VariantSettings{options.warmup, options.iters},
                                  options.quick};
    std::printf(
        "fusion_bench: device 0 %s; seed %u (std::mt19937, inputs uniform in [-1, 1], "
        "zeros redrawn); iters %d, warmup %d; %s shapes\n",
        properties.name, context.seed, options.iters, options.warmup,
        options.quick ? "quick" : "all");
    for (const auto& op : ops) {
      if (options.runs(op.name)) op.run(context, report);
    }
  } catch (const fk::CudaError&) {
    return 1;  // FUSELENS_CUDA_CHECK already printed the error line
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fusion_bench: error: %s\n", e.what());
    return 1;
  }

  report.print_table();
  if (report.failures() > 0) {
    std::fprintf(stderr, "fusion_bench: %d check(s) failed\n", report.failures());
    return 1;
  }
  std::printf("all checks passed\n");
  return 0;
}
