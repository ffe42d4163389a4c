#pragma once
// EvoNorm over NCHW, FP32: the seed study's "EvoNorm-B0" op (seed 000) — "group normalization
// statistics, the learnable sigmoid activation, and the scaling" — unfused (five kernels) and fused
// (one kernel).
//
// Formula. Seed 000 names the op EvoNorm-B0 but describes group statistics + a learnable sigmoid +
// scaling, which is the sample-based layer EvoNorm-S0 of Liu, Brock, Simonyan, Le, "Evolving
// Normalization-Activation Layers" (NeurIPS 2020, arXiv:2004.02967), eq. for S0:
//     y = x · σ(v1 · x) / s_{w,h,c/g}(x) · γ + β
// (the paper's B0, x / max(sqrt(var_batch + eps), v1·x + sqrt(var_instance + eps)) · γ + β, has
// batch and instance statistics and no sigmoid, so it is not the op the seed describes; issue #3
// asks for the seed's "group statistics, learnable sigmoid, scaling"). Here:
//     σ(z)        = 1 / (1 + exp(-z))
//     s(x)[n, g]  = sqrt(var[n, g] + eps)
//     var[n, g]   = (1 / L) · Σ (x - mean[n, g])²   over the L = (C / G) · H · W elements of group
//     g
//                   of sample n: channels [g·C/G, (g+1)·C/G) × all H × W (biased/population
//                   variance, as GroupNorm and the paper's reference code use)
//     v1, γ, β    per channel, shape [C] (the paper's (1, C, 1, 1) parameters)
// Defaults: eps = 1e-5 (kEvoNormEps, the paper's and GroupNorm's), G = 32 groups (kEvoNormGroups,
// the paper's S0 setting, as GroupNorm). G is a parameter and must divide C.
//
// Layouts: x and y [N, C, H, W] contiguous (NCHW), so a group is one contiguous run of L floats
// starting at (n·C + g·C/G)·H·W. gamma, beta, v1: [C]. All device pointers; x must not alias y or
// the scratch buffers. Units: none (y has x's units times γ's, plus β).
//
// Kernels (names as a profiler shows them, all in namespace fuselens::kernels):
//   unfused, in launch order (what a framework runs op by op; intermediates in global memory):
//     evonorm_s0_group_var_kernel   var[N·G]   one block per (n, g), mean then Σ(x-mean)² (two
//     passes
//                                              over the group in global memory)          statistics
//     evonorm_s0_group_std_kernel   sd[N·G]    sd = sqrt(var + eps) statistics
//     evonorm_s0_gate_kernel        s[N·C·H·W] s = σ(v1[c] · x)   (the learnable sigmoid)
//     activation evonorm_s0_multiply_kernel    a[N·C·H·W] a = x · s activation
//     evonorm_s0_scale_kernel       y          y = a / sd[n, g] · γ[c] + β[c] scaling
//   fused:
//     evonorm_s0_fused_kernel       y          one block per (n, g) computes the group's mean and
//                                              Σ(x-mean)² on chip (block reductions, exact two-pass
//                                              over the values held on chip), then writes y = x /
//                                              (1 + exp(-v1·x)) · (γ · rsqrt(var + eps)) + β once.
//                                              Block: about 4 items (float4, or float on the scalar
//                                              path) per thread, whole warps, 64 to 1024 threads
//                                              (128 at L = 1568). Where the group is held between
//                                              the passes: registers when it fits 4 items per
//                                              thread (all loads issued before the first use), else
//                                              shared memory (L floats of dynamic shared memory);
//                                              groups larger than kEvoNormFusedCacheFloats floats
//                                              are not held at all: the kernel reads them from
//                                              global memory three times (sum, squared deviations,
//                                              output).
// Exact launch counts: launch_evonorm_unfused 5, launch_evonorm_fused 1 (none for an empty tensor,
// N·C·H·W == 0).
// Vectorisation: when H·W is a multiple of 4 and x, y (and the unfused gate/product scratch) are
// 16-byte aligned (cudaMalloc: always), every kernel but evonorm_s0_group_std_kernel moves float4
// (four floats of one channel); otherwise scalar. Unfused kernels: 256-thread blocks. Measured
// figures (H100): README.md beside this file.
//
// Errors: std::invalid_argument for negative sizes, groups < 1, C not a multiple of groups, eps < 0
// or not finite, N·C·H·W >= 2^31 (the kernels index with 32 bits), or a null pointer (when the
// tensor is not empty); CUDA launch failures throw fuselens::kernels::CudaError
// (FUSELENS_CUDA_CHECK_LAST). Launchers are asynchronous on `stream` (default: the legacy default
// stream). README.md beside this file tabulates the bytes each variant moves.

#include <cuda_runtime_api.h>

#include <cstddef>

namespace fuselens::kernels {

/// The paper's epsilon (also GroupNorm's default).
inline constexpr float kEvoNormEps = 1e-5f;
/// The paper's group count for EvoNorm-S0 (as GroupNorm's default).
inline constexpr int kEvoNormGroups = 32;
/// Largest group (floats) the fused kernel holds on chip: 12288 floats = 48 KiB, the dynamic shared
/// memory a block may use without an opt-in.
inline constexpr int kEvoNormFusedCacheFloats = 12288;

/// Tensor shape and group count. Total elements N·C·H·W; L = (C / groups)·H·W per group.
struct EvoNormShape {
  int n = 0;
  int c = 0;
  int h = 0;
  int w = 0;
  int groups = kEvoNormGroups;

  [[nodiscard]] constexpr std::size_t elements() const noexcept {
    return static_cast<std::size_t>(n) * static_cast<std::size_t>(c) * static_cast<std::size_t>(h) *
           static_cast<std::size_t>(w);
  }
  /// Elements per (n, g) group: (C / groups) · H · W (0 when groups does not divide C: invalid).
  [[nodiscard]] constexpr std::size_t group_elements() const noexcept {
    return groups > 0 && c % groups == 0
               ? static_cast<std::size_t>(c / groups) * static_cast<std::size_t>(h) *
                     static_cast<std::size_t>(w)
               : 0;
  }
  /// Number of (n, g) groups: N · groups.
  [[nodiscard]] constexpr std::size_t group_count() const noexcept {
    return static_cast<std::size_t>(n) * static_cast<std::size_t>(groups);
  }
};

/// The per-channel parameters, device pointers to C floats each.
struct EvoNormParams {
  const float* gamma = nullptr;  ///< γ, scale
  const float* beta = nullptr;   ///< β, shift
  const float* v1 = nullptr;     ///< v1, slope inside the learnable sigmoid
};

/// Caller-provided intermediates of the unfused variant (the memory round trips fusion removes).
/// Device pointers; none may alias x, y or each other.
struct EvoNormScratch {
  float* var = nullptr;      ///< N·groups floats: group variance
  float* sd = nullptr;       ///< N·groups floats: sqrt(var + eps)
  float* gate = nullptr;     ///< N·C·H·W floats: σ(v1 · x)
  float* product = nullptr;  ///< N·C·H·W floats: x · σ(v1 · x)
};

/// y = EvoNorm-S0(x) in five launches: evonorm_s0_group_var_kernel, evonorm_s0_group_std_kernel,
/// evonorm_s0_gate_kernel, evonorm_s0_multiply_kernel, evonorm_s0_scale_kernel (see above).
void launch_evonorm_unfused(const float* x, const EvoNormParams& params, float* y,
                            const EvoNormShape& shape, const EvoNormScratch& scratch,
                            float eps = kEvoNormEps, cudaStream_t stream = nullptr);

/// y = EvoNorm-S0(x) in one launch of evonorm_s0_fused_kernel (see above). No scratch.
void launch_evonorm_fused(const float* x, const EvoNormParams& params, float* y,
                          const EvoNormShape& shape, float eps = kEvoNormEps,
                          cudaStream_t stream = nullptr);

/// True when launch_evonorm_fused holds each group on chip, in registers or shared memory
/// (group_elements() <= kEvoNormFusedCacheFloats): x is then read from global memory once,
/// otherwise three times.
[[nodiscard]] constexpr bool evonorm_fused_is_cached(const EvoNormShape& shape) noexcept {
  return shape.group_elements() <= static_cast<std::size_t>(kEvoNormFusedCacheFloats);
}

/// Analytic work of ONE call (README.md beside this file derives it): compulsory device-memory
/// bytes, each kernel reading each of its inputs once and writing each output once, and FP32 FLOPs
/// (an FMA counts 2, exp 1, sqrt 1, division 1).
struct EvoNormWork {
  double bytes = 0;
  double flops = 0;
};

/// Work of launch_evonorm_unfused, with E = N·C·H·W: bytes 32·E + 16·N·G + 12·C (x read by three
/// kernels, s written and read, a written and read, y written; var written and read, sd written and
/// read; v1, γ, β read); FLOPs 12·E + 2·N·G (per element: statistics 4 (sum 1, subtract + FMA 3),
/// gate 4 (v1·x, exp, add, divide), multiply 1, scale 3 (divide, ·γ, +β); per group: eps add,
/// sqrt).
[[nodiscard]] constexpr EvoNormWork evonorm_unfused_work(const EvoNormShape& shape) noexcept {
  const double e = static_cast<double>(shape.elements());
  const double groups = static_cast<double>(shape.group_count());
  const double c = static_cast<double>(shape.c);
  return {32.0 * e + 16.0 * groups + 12.0 * c, 12.0 * e + 2.0 * groups};
}

/// Work of launch_evonorm_fused: bytes 8·E + 12·C (x read once, y written once, v1 γ β) when the
/// group is held on chip, 16·E + 12·C otherwise (x read three times); FLOPs 11·E + 2·N·G
/// (per element: statistics 4, x / (1 + exp(-v1·x)) 4, γ·rsd 1, FMA with β 2; per group: eps add,
/// rsqrt).
[[nodiscard]] constexpr EvoNormWork evonorm_fused_work(const EvoNormShape& shape) noexcept {
  const double e = static_cast<double>(shape.elements());
  const double groups = static_cast<double>(shape.group_count());
  const double c = static_cast<double>(shape.c);
  return {(evonorm_fused_is_cached(shape) ? 8.0 : 16.0) * e + 12.0 * c, 11.0 * e + 2.0 * groups};
}

}  // namespace fuselens::kernels
