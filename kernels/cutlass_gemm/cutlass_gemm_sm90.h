#pragma once
// Internal to kernels/cutlass_gemm: the entry points of the four CUTLASS instantiations, one per
// cutlass_gemm_{fp16,bf16}_{plain,bias_relu}.cu (defined in cutlass_gemm_kernel.cuh), called by the
// public launchers of cutlass_gemm.cpp after their checks. No CUTLASS include.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

namespace fuselens::kernels::cutlass_detail {

/// The kernel configuration (tile shapes in cutlass_gemm_kernel.cuh, Sm90Schedule): kLarge tiles of
/// 256×128 in clusters of 1×2, kSmall tiles of 64×128 without clusters.
enum class Config { kLarge, kSmall };

/// The configuration for an M×N output on `sm_count` SMs: kLarge when its 256×128 tiles (rounded
/// up to whole 1×2 clusters) at least fill every SM once, kSmall otherwise (up to 8 × more tiles:
/// at 1024×1024, 32 large tiles leave 100 of an H100's 132 SMs idle; 128 small ones do not).
inline Config choose_config(int M, int N, int sm_count) {
  const long long tiles_m = (static_cast<long long>(M) + 255) / 256;
  const long long tiles_n = ((static_cast<long long>(N) + 255) / 256) * 2;  // whole clusters
  return tiles_m * tiles_n >= sm_count ? Config::kLarge : Config::kSmall;
}

/// The tile scheduler swizzle named by `text` (FUSELENS_CUTLASS_SWIZZLE's value): exactly "1", "2",
/// "4" or "8"; anything else (null, empty, other numbers, signs, spaces, trailing text) gives
/// `fallback`.
inline int parse_swizzle(const char* text, int fallback) {
  if (text == nullptr || text[0] == '\0' || text[1] != '\0') return fallback;
  switch (text[0]) {
    case '1':
      return 1;
    case '2':
      return 2;
    case '4':
      return 4;
    case '8':
      return 8;
    default:
      return fallback;
  }
}

/// The tile scheduler's rasterization order (CUTLASS's RasterOrderOptions: which output dimension
/// consecutive tiles advance along, within a swizzle group): kHeuristic lets CUTLASS pick (along
/// the longer tile dimension), kAlongM and kAlongN force one.
enum class Raster { kHeuristic, kAlongM, kAlongN };

/// The order named by `text` (FUSELENS_CUTLASS_RASTER's value): exactly "heuristic", "m" or "n";
/// anything else (null, empty, other case, trailing text) gives `fallback`.
inline Raster parse_raster(const char* text, Raster fallback) {
  if (text == nullptr) return fallback;
  const auto same = [text](const char* word) {
    const char* t = text;
    while (*word != '\0' && *t == *word) ++t, ++word;
    return *word == '\0' && *t == '\0';
  };
  if (same("heuristic")) return Raster::kHeuristic;
  if (same("m")) return Raster::kAlongM;
  if (same("n")) return Raster::kAlongN;
  return fallback;
}

/// The stream-K scheduler's decomposition (CUTLASS's DecompositionMode; used only by a build with
/// FUSELENS_CUTLASS_SCHEDULER=streamk or streamk_128x256, README.md "Stream-K"): kHeuristic lets
/// CUTLASS choose per problem between whole tiles (data-parallel) and stream-K units; kStreamK
/// forces stream-K units; kDataParallel forces whole tiles (the persistent schedule, run by the
/// stream-K kernel).
enum class Decomposition { kHeuristic, kStreamK, kDataParallel };

/// The decomposition named by `text` (FUSELENS_CUTLASS_DECOMPOSITION's value): exactly
/// "heuristic", "streamk" or "dataparallel"; anything else (null, empty, other case, trailing
/// text) gives `fallback`.
inline Decomposition parse_decomposition(const char* text, Decomposition fallback) {
  if (text == nullptr) return fallback;
  const auto same = [text](const char* word) {
    const char* t = text;
    while (*word != '\0' && *t == *word) ++t, ++word;
    return *word == '\0' && *t == '\0';
  };
  if (same("heuristic")) return Decomposition::kHeuristic;
  if (same("streamk")) return Decomposition::kStreamK;
  if (same("dataparallel")) return Decomposition::kDataParallel;
  return fallback;
}

/// One launch of the sm90 kernel: D = A·B (kBiasRelu false) or relu(A·B + bias) (true), rounded to
/// T, on `device` (the current one) with `sm_count` SMs. Preconditions (checked by the callers):
/// M, N, K > 0, K % 8 == 0, N % 8 == 0, non-null 16-byte aligned pointers, a compute capability 9.0
/// device. Throws std::runtime_error for a CUTLASS status other than success and CudaError for a
/// failed launch.
template <typename T, bool kBiasRelu, Config kConfig>
void run_sm90(const T* A, const T* B, const T* bias, T* C, int M, int N, int K, int device,
              int sm_count, cudaStream_t stream);

#define FUSELENS_CUTLASS_RUN_EXTERN(T, kBiasRelu, kConfig)                                         \
  extern template void run_sm90<T, kBiasRelu, kConfig>(const T*, const T*, const T*, T*, int, int, \
                                                       int, int, int, cudaStream_t);
FUSELENS_CUTLASS_RUN_EXTERN(__half, false, Config::kLarge)
FUSELENS_CUTLASS_RUN_EXTERN(__half, true, Config::kLarge)
FUSELENS_CUTLASS_RUN_EXTERN(__nv_bfloat16, false, Config::kLarge)
FUSELENS_CUTLASS_RUN_EXTERN(__nv_bfloat16, true, Config::kLarge)
FUSELENS_CUTLASS_RUN_EXTERN(__half, false, Config::kSmall)
FUSELENS_CUTLASS_RUN_EXTERN(__half, true, Config::kSmall)
FUSELENS_CUTLASS_RUN_EXTERN(__nv_bfloat16, false, Config::kSmall)
FUSELENS_CUTLASS_RUN_EXTERN(__nv_bfloat16, true, Config::kSmall)
#undef FUSELENS_CUTLASS_RUN_EXTERN

}  // namespace fuselens::kernels::cutlass_detail
