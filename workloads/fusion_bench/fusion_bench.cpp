// fusion_bench: unfused vs fused GEMM + bias + ReLU and Swish, one NVTX range per variant and shape,
// every output checked against a double-precision CPU reference. Conventions (range names, launch
// counts, copies, exit status) are documented in README.md beside this file; tests depend on them.

#include "bench_options.h"
#include "variant_runner.h"

#include "common/compare.h"
#include "common/cuda_check.h"
#include "common/device_buffer.h"
#include "elementwise/elementwise.cuh"
#include "elementwise/reference.h"
#include "gemm_bias_relu/gemm_bias_relu.cuh"
#include "gemm_bias_relu/reference.h"

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace fk = fuselens::kernels;
namespace fw = fuselens::workloads;

constexpr std::uint32_t kSeed = 20240602u;
constexpr int kExitNoDevice = 77;

struct GemmShape {
    int M, K, N;  // in seed 002's (M, K, N) order
};
constexpr std::array<GemmShape, 3> kGemmShapes{{{64, 256, 128}, {128, 256, 256}, {1024, 1024, 1024}}};

struct SwishShape {
    int rows, cols;  // n = rows * cols
};
constexpr std::array<SwishShape, 2> kSwishShapes{{{1024, 1024}, {4096, 4096}}};

struct Variant {
    const char* name;         // "unfused" or "fused"
    int kernels_per_iter;     // exact launches per iteration
    std::function<void()> iteration;
    fw::DeclaredWork work;    // per iteration, declared for the range (work_model.h)
};

struct Row {
    std::string op, shape, variant;
    int kernels_per_iter = 0;
    double median_us = 0.0;
    fk::Comparison check;
};

/// Collects results, prints one check line per variant and the final table.
class Report {
public:
    void add(Row row) {
        const std::string name = row.op + "/" + row.variant + "/" + row.shape;
        const bool ok = row.check.passes();
        std::printf("check %-40s rel_l2 %.3e  non-finite %zu  %s\n", name.c_str(), row.check.relative_l2,
                    row.check.nonfinite_count, ok ? "ok" : "MISMATCH");
        if (!ok) {
            ++failures_;
            std::fprintf(stderr,
                         "fusion_bench: MISMATCH %s: relative L2 error %.3e (tolerance %.0e), "
                         "%zu non-finite outputs\n",
                         name.c_str(), row.check.relative_l2, fk::kFp32RelativeTolerance,
                         row.check.nonfinite_count);
        }
        std::fflush(stdout);
        rows_.push_back(std::move(row));
    }

    void print_table() const {
        std::printf("\n%-15s %-16s %-8s %12s %12s %9s\n", "op", "shape", "variant", "kernels/iter",
                    "median_us", "speedup");
        const Row* unfused = nullptr;
        for (const Row& row : rows_) {
            std::string speedup = "-";
            if (row.variant == "unfused") {
                unfused = &row;
            } else if (unfused != nullptr && unfused->shape == row.shape && row.median_us > 0.0) {
                char buffer[32];
                std::snprintf(buffer, sizeof buffer, "%.2fx", unfused->median_us / row.median_us);
                speedup = buffer;
            }
            std::printf("%-15s %-16s %-8s %12d %12.3f %9s\n", row.op.c_str(), row.shape.c_str(),
                        row.variant.c_str(), row.kernels_per_iter, row.median_us, speedup.c_str());
        }
        std::printf("speedup = unfused median / fused median (> 1: fused is faster)\n");
    }

    [[nodiscard]] int failures() const { return failures_; }

private:
    std::vector<Row> rows_;
    int failures_ = 0;
};

/// n floats uniform in [-1, 1) with exact zeros redrawn.
std::vector<float> random_inputs(std::size_t n, std::mt19937& rng) {
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> values(n);
    for (float& v : values) {
        do {
            v = dist(rng);
        } while (v == 0.0f);
    }
    return values;
}

void run_variants(const std::string& op, const std::string& shape, const fw::VariantSettings& settings,
                  fk::DeviceBuffer<float>& output, const std::vector<float>& reference,
                  const std::array<Variant, 2>& variants, Report& report) {
    for (const Variant& variant : variants) {
        const std::string range = op + "/" + variant.name + "/" + shape;
        const fw::VariantTiming timing =
            fw::run_variant(range, settings, output.data(), output.bytes(), variant.iteration, variant.work);
        const std::vector<float> result = output.copy_to_host();  // one Device-to-Host copy
        report.add(Row{op, shape, variant.name, variant.kernels_per_iter, timing.median_us(),
                       fk::compare_relative_l2(result, reference)});
    }
}

void run_gemm_case(const GemmShape& s, const fw::VariantSettings& settings, Report& report) {
    const auto m = static_cast<std::size_t>(s.M);
    const auto n = static_cast<std::size_t>(s.N);
    const auto k = static_cast<std::size_t>(s.K);
    std::mt19937 rng(kSeed);
    const std::vector<float> a = random_inputs(m * k, rng);
    const std::vector<float> b = random_inputs(k * n, rng);
    const std::vector<float> bias = random_inputs(n, rng);
    const std::vector<float> reference = fk::gemm_bias_relu_reference(a, b, bias, s.M, s.N, s.K);

    fk::DeviceBuffer<float> d_a(m * k);
    fk::DeviceBuffer<float> d_b(k * n);
    fk::DeviceBuffer<float> d_bias(n);
    fk::DeviceBuffer<float> d_c(m * n);
    d_a.copy_from_host(a);  // the only Host-to-Device copies of this shape
    d_b.copy_from_host(b);
    d_bias.copy_from_host(bias);

    const std::string shape =
        "M" + std::to_string(s.M) + "_N" + std::to_string(s.N) + "_K" + std::to_string(s.K);
    const std::array<Variant, 2> variants{{
        {"unfused", 3,
         [&] {
             fk::launch_gemm_bias_relu_unfused(d_a.data(), d_b.data(), d_bias.data(), d_c.data(), s.M, s.N,
                                               s.K);
         },
         fw::gemm_bias_relu_work(false, s.M, s.N, s.K)},
        {"fused", 1,
         [&] {
             fk::launch_gemm_bias_relu_fused(d_a.data(), d_b.data(), d_bias.data(), d_c.data(), s.M, s.N,
                                             s.K);
         },
         fw::gemm_bias_relu_work(true, s.M, s.N, s.K)},
    }};
    run_variants("gemm_bias_relu", shape, settings, d_c, reference, variants, report);
}

void run_swish_case(const SwishShape& s, const fw::VariantSettings& settings, Report& report) {
    const std::size_t n = static_cast<std::size_t>(s.rows) * static_cast<std::size_t>(s.cols);
    std::mt19937 rng(kSeed);
    const std::vector<float> x = random_inputs(n, rng);
    const std::vector<float> reference = fk::swish_reference(x);

    fk::DeviceBuffer<float> d_x(n);
    fk::DeviceBuffer<float> d_s(n);  // unfused intermediate sigmoid(x)
    fk::DeviceBuffer<float> d_y(n);
    d_x.copy_from_host(x);  // the only Host-to-Device copy of this shape

    const std::string shape = std::to_string(s.rows) + "x" + std::to_string(s.cols);
    const std::array<Variant, 2> variants{{
        {"unfused", 2, [&] { fk::launch_swish_unfused(d_x.data(), d_s.data(), d_y.data(), n); },
         fw::swish_work(false, static_cast<double>(n))},
        {"fused", 1, [&] { fk::launch_swish_fused(d_x.data(), d_y.data(), n); },
         fw::swish_work(true, static_cast<double>(n))},
    }};
    run_variants("swish", shape, settings, d_y, reference, variants, report);
}

}  // namespace

int main(int argc, char** argv) {
    fw::BenchOptions options;
    try {
        options = fw::parse_bench_options(argc, argv);
    } catch (const fw::UsageError& e) {
        std::fprintf(stderr, "fusion_bench: error: %s (see --help)\n", e.what());
        return 2;
    }
    if (options.help) {
        std::fputs(fw::bench_usage().c_str(), stdout);
        return 0;
    }

    int device_count = 0;
    const cudaError_t status = cudaGetDeviceCount(&device_count);
    if (status != cudaSuccess || device_count == 0) {
        std::fprintf(stderr, "fusion_bench: no CUDA device available (%s)\n",
                     status != cudaSuccess ? cudaGetErrorString(status) : "device count is 0");
        return kExitNoDevice;
    }

    Report report;
    try {
        cudaDeviceProp properties{};
        FUSELENS_CUDA_CHECK(cudaGetDeviceProperties(&properties, 0));
        std::printf("fusion_bench: device 0 %s; seed %u (std::mt19937, inputs uniform in [-1, 1], "
                    "zeros redrawn); iters %d, warmup %d\n",
                    properties.name, kSeed, options.iters, options.warmup);
        const fw::VariantSettings settings{options.warmup, options.iters};
        if (options.runs("gemm_bias_relu")) {
            for (const GemmShape& shape : kGemmShapes) {
                run_gemm_case(shape, settings, report);
            }
        }
        if (options.runs("swish")) {
            for (const SwishShape& shape : kSwishShapes) {
                run_swish_case(shape, settings, report);
            }
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
