#include "gemm_tc/gemm_tc.cuh"

#include "common/cuda_check.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace fuselens::kernels {
namespace {

// ------------------------------------------------------------------------------------ tile configs

/// Block tile BM×BN, k-tile depth BK, warp tile WM×WN, STAGES-deep cp.async ring, MIN_BLOCKS per
/// SM.
template <int BM_, int BN_, int BK_, int WM_, int WN_, int STAGES_, int MIN_BLOCKS_>
struct TileConfig {
  static constexpr int BM = BM_;
  static constexpr int BN = BN_;
  static constexpr int BK = BK_;
  static constexpr int WM = WM_;
  static constexpr int WN = WN_;
  static constexpr int STAGES = STAGES_;
  static constexpr int MIN_BLOCKS = MIN_BLOCKS_;
  static constexpr int WARPS_M = BM / WM;
  static constexpr int WARPS_N = BN / WN;
  static constexpr int THREADS = WARPS_M * WARPS_N * 32;
  static constexpr int MI = WM / 16;               // m16 fragments per warp
  static constexpr int NI = WN / 8;                // n8 fragments per warp
  static constexpr int A_CHUNKS_PER_ROW = BK / 8;  // 16-byte chunks of one A tile row (4 or 8)
  static constexpr int B_CHUNKS_PER_ROW = BN / 8;  // ... of one B tile row
  static constexpr int A_STAGE = BM * BK;          // elements
  static constexpr int B_STAGE = BK * BN;
  static constexpr int SMEM_BYTES = STAGES * (A_STAGE + B_STAGE) * 2;

  static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0, "warp tiling");
  static_assert(A_CHUNKS_PER_ROW == 4 || A_CHUNKS_PER_ROW % 8 == 0,
                "A swizzle: BK = 32 or a multiple of 64");
  static_assert(BK % 16 == 0, "k16 steps");
  static_assert(B_CHUNKS_PER_ROW % 8 == 0, "the B swizzle assumes rows of a multiple of 128 bytes");
  static_assert((BM * A_CHUNKS_PER_ROW) % THREADS == 0 && (BK * B_CHUNKS_PER_ROW) % THREADS == 0,
                "tile loads must divide among the threads");
};

// Measured on the H100 (README.md, 2026-11-22): at 4096³ FP16 fused, 128×256×64/3 stages 407 µs,
// 256×128×64/3 404 µs, 128×256×32/4 422 µs, 256×128×32/4 434 µs, 128×128×32/4 429 µs.
using LargeConfig = TileConfig<128, 256, 64, 64, 64, 3, 1>;   // 8 warps, 144 KiB
using MediumConfig = TileConfig<128, 128, 32, 64, 64, 4, 2>;  // 4 warps, 64 KiB
using SmallConfig = TileConfig<64, 64, 32, 32, 32, 4, 2>;     // 4 warps, 32 KiB
// Tuning alternative (FUSELENS_GEMM_TC_CONFIG=large_bk32 only): the large tile with 32-deep
// k-tiles.
using LargeBk32Config = TileConfig<128, 256, 32, 64, 64, 4, 1>;  // 8 warps, 96 KiB
constexpr int kMaxGridY = 65535;
constexpr int kMinBlockRows = 64;  // smallest BM of the configs (grid.y bound)
constexpr int kGroupM = 8;         // block-rows per rasterisation group (L2 reuse of B)
constexpr int kElementwiseThreads = 256;

// ------------------------------------------------------------------------------- dtype helpers

template <typename T>
struct Pair;
template <>
struct Pair<__half> {
  using type = __half2;
  static __device__ __forceinline__ float2 to_float2(type v) { return __half22float2(v); }
  static __device__ __forceinline__ type from_float2(float2 f) { return __float22half2_rn(f); }
};
template <>
struct Pair<__nv_bfloat16> {
  using type = __nv_bfloat162;
  static __device__ __forceinline__ float2 to_float2(type v) { return __bfloat1622float2(v); }
  static __device__ __forceinline__ type from_float2(float2 f) { return __float22bfloat162_rn(f); }
};

__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T>
__device__ __forceinline__ T from_float(float v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(v);
  } else {
    return __float2bfloat16_rn(v);
  }
}

// --------------------------------------------------------------------------------- PTX wrappers

__device__ __forceinline__ std::uint32_t smem_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

/// 16-byte global -> shared copy; zero-fills the 16 bytes when !valid (src-size 0 reads nothing).
__device__ __forceinline__ void cp_async_16(std::uint32_t dst, const void* src, bool valid) {
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], std::uint32_t address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}

/// d += a·b for one m16n8k16 tile, FP32 accumulators (PTX ISA, "Matrix fragments for
/// mma.m16n8k16").
template <typename T>
__device__ __forceinline__ void mma_16816(float (&d)[4], const std::uint32_t (&a)[4],
                                          std::uint32_t b0, std::uint32_t b1) {
  if constexpr (std::is_same_v<T, __half>) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// Shared-memory swizzles (element offsets inside one stage). ldmatrix reads 8 rows × 16 bytes at
// one logical chunk column; the XOR spreads those 8 reads over the 8 distinct 16-byte slots of a
// 128-byte bank window, so every ldmatrix phase and every cp.async store is bank-conflict free.
//   A rows of 64 bytes (BK = 32, 4 chunks): slot = 4·(r & 1) + (c ^ ((r >> 1) & 3)).
//   A rows of a multiple of 128 bytes (BK = 64, ...) and all B rows: slot = c ^ (r & 7) (mod 8).
template <class Cfg>
__device__ __forceinline__ int a_offset(int r, int c) {
  if constexpr (Cfg::A_CHUNKS_PER_ROW == 4) {
    return r * Cfg::BK + ((c ^ ((r >> 1) & 3)) << 3);
  } else {
    return r * Cfg::BK + ((c ^ (r & 7)) << 3);
  }
}
template <class Cfg>
__device__ __forceinline__ int b_offset(int r, int c) {
  return r * Cfg::BN + ((c ^ (r & 7)) << 3);
}

// ------------------------------------------------------------------------------------ epilogues

/// Unfused GEMM: store the accumulators rounded to T.
struct StoreEpilogue {
  template <typename T>
  __device__ float2 operator()(float2 acc, int /*col*/, const T* /*bias*/) const {
    return acc;
  }
};

/// Fused: bias add and ReLU on the register-resident FP32 accumulators (NaN-propagating ReLU).
struct BiasReluEpilogue {
  template <typename T>
  __device__ float2 operator()(float2 acc, int col, const T* __restrict__ bias) const {
    const float2 b =
        Pair<T>::to_float2(*reinterpret_cast<const typename Pair<T>::type*>(bias + col));
    float x = acc.x + b.x;
    float y = acc.y + b.y;
    x = x < 0.0f ? 0.0f : x;
    y = y < 0.0f ? 0.0f : y;
    return make_float2(x, y);
  }
};

// -------------------------------------------------------------------------------- the block tile

/// One BM×BN tile of C = epilogue(A·B) per thread block (see gemm_tc.cuh for the algorithm).
template <class Cfg, typename T, class Epilogue>
__device__ __forceinline__ void gemm_tc_block_tile(const T* __restrict__ A, const T* __restrict__ B,
                                                   const T* __restrict__ bias, T* __restrict__ C,
                                                   int M, int N, int K, Epilogue epilogue) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* const smem_a = reinterpret_cast<T*>(smem_raw);       // STAGES × A_STAGE
  T* const smem_b = smem_a + Cfg::STAGES * Cfg::A_STAGE;  // STAGES × B_STAGE

  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int warp_m = warp % Cfg::WARPS_M;
  const int warp_n = warp / Cfg::WARPS_M;

  // Grouped rasterisation: consecutive blocks walk kGroupM block-rows before moving right, so the
  // blocks resident at one time share B column panels and A row panels in L2.
  const int tiles_n = static_cast<int>(gridDim.x);
  const int tiles_m = static_cast<int>(gridDim.y);
  const int pid = static_cast<int>(blockIdx.y) * tiles_n + static_cast<int>(blockIdx.x);
  const int group_size = kGroupM * tiles_n;
  const int first_m = (pid / group_size) * kGroupM;
  const int group_rows = min(tiles_m - first_m, kGroupM);
  const int tile_m = first_m + (pid % group_size) % group_rows;
  const int tile_n = (pid % group_size) / group_rows;
  const int m0 = tile_m * Cfg::BM;
  const int n0 = tile_n * Cfg::BN;

  const int k_tiles = (K + Cfg::BK - 1) / Cfg::BK;

  // Copies k-tile `kt` into ring slot `stage`: zero-fill outside [0, M) × [0, K) and [0, K) × [0,
  // N).
  auto load_tile = [&](int stage, int kt) {
    const int k0 = kt * Cfg::BK;
    T* const sa = smem_a + stage * Cfg::A_STAGE;
    T* const sb = smem_b + stage * Cfg::B_STAGE;
#pragma unroll
    for (int i = 0; i < (Cfg::BM * Cfg::A_CHUNKS_PER_ROW) / Cfg::THREADS; ++i) {
      const int id = tid + i * Cfg::THREADS;
      const int r = id / Cfg::A_CHUNKS_PER_ROW;
      const int c = id % Cfg::A_CHUNKS_PER_ROW;
      const int gr = m0 + r;
      const int gk = k0 + c * 8;
      const bool valid = gr < M && gk < K;
      const T* src = valid ? A + static_cast<std::size_t>(gr) * K + gk : A;
      cp_async_16(smem_address(sa + a_offset<Cfg>(r, c)), src, valid);
    }
#pragma unroll
    for (int i = 0; i < (Cfg::BK * Cfg::B_CHUNKS_PER_ROW) / Cfg::THREADS; ++i) {
      const int id = tid + i * Cfg::THREADS;
      const int r = id / Cfg::B_CHUNKS_PER_ROW;
      const int c = id % Cfg::B_CHUNKS_PER_ROW;
      const int gk = k0 + r;
      const int gn = n0 + c * 8;
      const bool valid = gk < K && gn < N;
      const T* src = valid ? B + static_cast<std::size_t>(gk) * N + gn : B;
      cp_async_16(smem_address(sb + b_offset<Cfg>(r, c)), src, valid);
    }
  };

  float acc[Cfg::MI][Cfg::NI][4];
#pragma unroll
  for (int mi = 0; mi < Cfg::MI; ++mi) {
#pragma unroll
    for (int ni = 0; ni < Cfg::NI; ++ni) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        acc[mi][ni][e] = 0.0f;
      }
    }
  }

  // Prologue: STAGES - 1 k-tiles in flight (empty groups past the end keep the group count
  // uniform).
#pragma unroll
  for (int s = 0; s < Cfg::STAGES - 1; ++s) {
    if (s < k_tiles) {
      load_tile(s, s);
    }
    cp_async_commit();
  }

  const int a_row = warp_m * Cfg::WM + (lane & 15);  // ldmatrix row address of this lane
  const int a_chunk = lane >> 4;
  const int b_row = lane & 15;
  const int b_chunk = (warp_n * Cfg::WN) / 8 + (lane >> 4);

  for (int kt = 0; kt < k_tiles; ++kt) {
    cp_async_wait<Cfg::STAGES - 2>();  // k-tile kt has landed (this thread's copies)
    __syncthreads();                   // ... everyone's; and everyone is done with k-tile kt - 1
    const int next = kt + Cfg::STAGES - 1;
    if (next < k_tiles) {
      load_tile(next % Cfg::STAGES, next);  // refills the slot k-tile kt - 1 used
    }
    cp_async_commit();

    const T* const sa = smem_a + (kt % Cfg::STAGES) * Cfg::A_STAGE;
    const T* const sb = smem_b + (kt % Cfg::STAGES) * Cfg::B_STAGE;
#pragma unroll
    for (int kk = 0; kk < Cfg::BK / 16; ++kk) {
      std::uint32_t af[Cfg::MI][4];
      std::uint32_t bf[Cfg::NI / 2][4];
#pragma unroll
      for (int mi = 0; mi < Cfg::MI; ++mi) {
        ldmatrix_x4(af[mi], smem_address(sa + a_offset<Cfg>(a_row + mi * 16, kk * 2 + a_chunk)));
      }
#pragma unroll
      for (int nj = 0; nj < Cfg::NI / 2; ++nj) {
        ldmatrix_x4_trans(bf[nj],
                          smem_address(sb + b_offset<Cfg>(kk * 16 + b_row, b_chunk + nj * 2)));
      }
#pragma unroll
      for (int mi = 0; mi < Cfg::MI; ++mi) {
#pragma unroll
        for (int ni = 0; ni < Cfg::NI; ++ni) {
          mma_16816<T>(acc[mi][ni], af[mi], bf[ni / 2][(ni % 2) * 2], bf[ni / 2][(ni % 2) * 2 + 1]);
        }
      }
    }
  }
  cp_async_wait<0>();

  // Epilogue from registers: thread (g = lane / 4, t = lane % 4) holds rows g and g + 8, columns
  // 2t and 2t + 1 of every m16n8 fragment; N % 8 == 0 makes both columns valid together.
  const int g = lane >> 2;
  const int t = lane & 3;
#pragma unroll
  for (int mi = 0; mi < Cfg::MI; ++mi) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = m0 + warp_m * Cfg::WM + mi * 16 + g + half * 8;
      if (row >= M) {
        continue;
      }
      T* const c_row = C + static_cast<std::size_t>(row) * N;
#pragma unroll
      for (int ni = 0; ni < Cfg::NI; ++ni) {
        const int col = n0 + warp_n * Cfg::WN + ni * 8 + 2 * t;
        if (col < N) {
          const float2 v =
              epilogue(make_float2(acc[mi][ni][2 * half], acc[mi][ni][2 * half + 1]), col, bias);
          *reinterpret_cast<typename Pair<T>::type*>(c_row + col) = Pair<T>::from_float2(v);
        }
      }
    }
  }
}

}  // namespace

// ----------------------------------------------------------------------------------------- kernels

template <class Cfg, typename T>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS)
    gemm_tc_kernel(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int M,
                   int N, int K) {
  gemm_tc_block_tile<Cfg, T>(A, B, static_cast<const T*>(nullptr), C, M, N, K, StoreEpilogue{});
}

template <class Cfg, typename T>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS)
    gemm_tc_bias_relu_fused_kernel(const T* __restrict__ A, const T* __restrict__ B,
                                   const T* __restrict__ bias, T* __restrict__ C, int M, int N,
                                   int K) {
  gemm_tc_block_tile<Cfg, T>(A, B, bias, C, M, N, K, BiasReluEpilogue{});
}

/// C[r][c] = round(C[r][c] + bias[c]). `vector`: 8 elements (16 bytes) per step, needs N % 8 == 0
/// and 16-byte aligned C and bias; otherwise one element per step.
template <typename T>
__global__ void add_bias_tc_kernel(T* __restrict__ C, const T* __restrict__ bias, int M, int N,
                                   bool vector) {
  using P = Pair<T>;
  const std::size_t n = static_cast<std::size_t>(N);
  const std::size_t total = static_cast<std::size_t>(M) * n;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (vector) {
    for (std::size_t i = first; i < total / 8; i += stride) {
      const std::size_t col = (i * 8) % n;
      uint4 c = reinterpret_cast<const uint4*>(C)[i];
      const uint4 b = *reinterpret_cast<const uint4*>(bias + col);
      auto* cp = reinterpret_cast<typename P::type*>(&c);
      const auto* bp = reinterpret_cast<const typename P::type*>(&b);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float2 x = P::to_float2(cp[j]);
        const float2 y = P::to_float2(bp[j]);
        cp[j] = P::from_float2(make_float2(x.x + y.x, x.y + y.y));
      }
      reinterpret_cast<uint4*>(C)[i] = c;
    }
  } else {
    for (std::size_t i = first; i < total; i += stride) {
      C[i] = from_float<T>(to_float(C[i]) + to_float(bias[i % n]));
    }
  }
}

/// y = relu(x): 8 elements per 16-byte step for the first 8·floor(n / 8) when x and y are 16-byte
/// aligned (`vector`), the rest one by one. NaN propagates (x < 0 is false for NaN).
template <typename T>
__global__ void relu_tc_kernel(const T* __restrict__ x, T* __restrict__ y, std::size_t n,
                               bool vector) {
  using P = Pair<T>;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t vector_count = vector ? n / 8 : 0;
  for (std::size_t i = first; i < vector_count; i += stride) {
    uint4 v = reinterpret_cast<const uint4*>(x)[i];
    auto* vp = reinterpret_cast<typename P::type*>(&v);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float2 f = P::to_float2(vp[j]);
      const T lo = f.x < 0.0f ? from_float<T>(0.0f) : vp[j].x;
      const T hi = f.y < 0.0f ? from_float<T>(0.0f) : vp[j].y;
      vp[j].x = lo;
      vp[j].y = hi;
    }
    reinterpret_cast<uint4*>(y)[i] = v;
  }
  for (std::size_t i = vector_count * 8 + first; i < n; i += stride) {
    const T v = x[i];
    y[i] = to_float(v) < 0.0f ? from_float<T>(0.0f) : v;
  }
}

// ----------------------------------------------------------------------------------------
// launchers

namespace {

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

void validate_gemm(const char* who, const void* A, const void* B, const void* bias, const void* C,
                   int M, int N, int K) {
  const std::string sizes =
      " (M=" + std::to_string(M) + " N=" + std::to_string(N) + " K=" + std::to_string(K) + ")";
  if (M < 0 || N < 0 || K < 0) {
    throw std::invalid_argument(std::string(who) + ": negative size" + sizes);
  }
  if (K % 8 != 0 || N % 8 != 0) {
    throw std::invalid_argument(std::string(who) +
                                ": K and N must be multiples of 8 (16-byte cp.async rows)" + sizes);
  }
  if ((M + kMinBlockRows - 1) / kMinBlockRows > kMaxGridY || (N + 63) / 64 > kMaxGridY) {
    throw std::invalid_argument(std::string(who) + ": M or N exceeds the grid limit (65535 · 64)" +
                                sizes);
  }
  if (M == 0 || N == 0) {
    return;
  }
  if (!aligned16(A) || !aligned16(B) || !aligned16(C) || (bias != nullptr && !aligned16(bias))) {
    throw std::invalid_argument(std::string(who) + ": A, B, C and bias must be 16-byte aligned");
  }
}

int sm_count() {
  int device = 0;
  FUSELENS_CUDA_CHECK(cudaGetDevice(&device));
  constexpr int kMaxDevices = 64;
  static int cached[kMaxDevices] = {};
  if (device >= kMaxDevices) {
    int n = 0;
    FUSELENS_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device));
    return n;
  }
  if (cached[device] == 0) {
    FUSELENS_CUDA_CHECK(
        cudaDeviceGetAttribute(&cached[device], cudaDevAttrMultiProcessorCount, device));
  }
  return cached[device];
}

enum class ConfigChoice { Large, Medium, Small, LargeBk32 };

/// FUSELENS_GEMM_TC_CONFIG=large|medium|small|large_bk32 forces a config (tuning only; read once
/// per process); otherwise the largest config that still gives at least one block tile per SM.
ConfigChoice choose_config(int M, int N) {
  static const char* forced = std::getenv("FUSELENS_GEMM_TC_CONFIG");
  if (forced != nullptr) {
    if (std::strcmp(forced, "large") == 0) return ConfigChoice::Large;
    if (std::strcmp(forced, "medium") == 0) return ConfigChoice::Medium;
    if (std::strcmp(forced, "small") == 0) return ConfigChoice::Small;
    if (std::strcmp(forced, "large_bk32") == 0) return ConfigChoice::LargeBk32;
  }
  auto tiles = [&](int bm, int bn) {
    return static_cast<long long>((M + bm - 1) / bm) * static_cast<long long>((N + bn - 1) / bn);
  };
  const long long sms = sm_count();
  if (tiles(LargeConfig::BM, LargeConfig::BN) >= sms) return ConfigChoice::Large;
  if (tiles(MediumConfig::BM, MediumConfig::BN) >= sms) return ConfigChoice::Medium;
  return ConfigChoice::Small;
}

template <class Cfg, typename Kernel>
void prepare(Kernel kernel) {
  // Once per kernel instantiation (and per process): allow more than 48 KiB of dynamic shared
  // memory.
  static const bool done = [&] {
    FUSELENS_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::SMEM_BYTES));
    return true;
  }();
  (void)done;
}

template <class Cfg, typename T>
void launch_config(bool fused, const T* A, const T* B, const T* bias, T* C, int M, int N, int K,
                   cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((N + Cfg::BN - 1) / Cfg::BN),
                  static_cast<unsigned>((M + Cfg::BM - 1) / Cfg::BM));
  if (fused) {
    prepare<Cfg>(gemm_tc_bias_relu_fused_kernel<Cfg, T>);
    gemm_tc_bias_relu_fused_kernel<Cfg, T>
        <<<grid, Cfg::THREADS, Cfg::SMEM_BYTES, stream>>>(A, B, bias, C, M, N, K);
  } else {
    prepare<Cfg>(gemm_tc_kernel<Cfg, T>);
    gemm_tc_kernel<Cfg, T><<<grid, Cfg::THREADS, Cfg::SMEM_BYTES, stream>>>(A, B, C, M, N, K);
  }
  FUSELENS_CUDA_CHECK_LAST();
}

template <typename T>
void launch_gemm_any(bool fused, const T* A, const T* B, const T* bias, T* C, int M, int N, int K,
                     cudaStream_t stream) {
  switch (choose_config(M, N)) {
    case ConfigChoice::Large:
      launch_config<LargeConfig>(fused, A, B, bias, C, M, N, K, stream);
      break;
    case ConfigChoice::Medium:
      launch_config<MediumConfig>(fused, A, B, bias, C, M, N, K, stream);
      break;
    case ConfigChoice::Small:
      launch_config<SmallConfig>(fused, A, B, bias, C, M, N, K, stream);
      break;
    case ConfigChoice::LargeBk32:
      launch_config<LargeBk32Config>(fused, A, B, bias, C, M, N, K, stream);
      break;
  }
}

unsigned elementwise_blocks(std::size_t work_items) {
  constexpr std::size_t kMaxBlocks = std::size_t{1} << 20;  // grid-stride beyond this
  std::size_t blocks = (work_items + kElementwiseThreads - 1) / kElementwiseThreads;
  blocks = blocks < kMaxBlocks ? blocks : kMaxBlocks;
  return static_cast<unsigned>(blocks > 0 ? blocks : 1);
}

}  // namespace

template <typename T>
void launch_gemm_tc(const T* A, const T* B, T* C, int M, int N, int K, cudaStream_t stream) {
  validate_gemm("launch_gemm_tc", A, B, nullptr, C, M, N, K);
  if (M == 0 || N == 0) {
    return;
  }
  launch_gemm_any<T>(false, A, B, nullptr, C, M, N, K, stream);
}

template <typename T>
void launch_add_bias_tc(T* C, const T* bias, int M, int N, cudaStream_t stream) {
  if (M < 0 || N < 0) {
    throw std::invalid_argument("launch_add_bias_tc: negative size M=" + std::to_string(M) +
                                " N=" + std::to_string(N));
  }
  const std::size_t total = static_cast<std::size_t>(M) * static_cast<std::size_t>(N);
  if (total == 0) {
    return;
  }
  const bool vector = N % 8 == 0 && aligned16(C) && aligned16(bias);
  add_bias_tc_kernel<T>
      <<<elementwise_blocks(vector ? total / 8 : total), kElementwiseThreads, 0, stream>>>(
          C, bias, M, N, vector);
  FUSELENS_CUDA_CHECK_LAST();
}

template <typename T>
void launch_relu_tc(const T* x, T* y, std::size_t n, cudaStream_t stream) {
  if (n == 0) {
    return;
  }
  const bool vector = aligned16(x) && aligned16(y);
  relu_tc_kernel<T>
      <<<elementwise_blocks(vector ? (n + 7) / 8 : n), kElementwiseThreads, 0, stream>>>(x, y, n,
                                                                                         vector);
  FUSELENS_CUDA_CHECK_LAST();
}

template <typename T>
void launch_gemm_tc_bias_relu_unfused(const T* A, const T* B, const T* bias, T* C, int M, int N,
                                      int K, cudaStream_t stream) {
  validate_gemm("launch_gemm_tc_bias_relu_unfused", A, B, bias, C, M, N, K);
  if (M == 0 || N == 0) {
    return;
  }
  launch_gemm_any<T>(false, A, B, nullptr, C, M, N, K, stream);
  launch_add_bias_tc<T>(C, bias, M, N, stream);
  launch_relu_tc<T>(C, C, static_cast<std::size_t>(M) * static_cast<std::size_t>(N), stream);
}

template <typename T>
void launch_gemm_tc_bias_relu_fused(const T* A, const T* B, const T* bias, T* C, int M, int N,
                                    int K, cudaStream_t stream) {
  validate_gemm("launch_gemm_tc_bias_relu_fused", A, B, bias, C, M, N, K);
  if (M == 0 || N == 0) {
    return;
  }
  launch_gemm_any<T>(true, A, B, bias, C, M, N, K, stream);
}

#define FUSELENS_GEMM_TC_INSTANTIATE(T)                                                            \
  template void launch_gemm_tc<T>(const T*, const T*, T*, int, int, int, cudaStream_t);            \
  template void launch_add_bias_tc<T>(T*, const T*, int, int, cudaStream_t);                       \
  template void launch_relu_tc<T>(const T*, T*, std::size_t, cudaStream_t);                        \
  template void launch_gemm_tc_bias_relu_unfused<T>(const T*, const T*, const T*, T*, int, int,    \
                                                    int, cudaStream_t);                            \
  template void launch_gemm_tc_bias_relu_fused<T>(const T*, const T*, const T*, T*, int, int, int, \
                                                  cudaStream_t);
FUSELENS_GEMM_TC_INSTANTIATE(__half)
FUSELENS_GEMM_TC_INSTANTIATE(__nv_bfloat16)
#undef FUSELENS_GEMM_TC_INSTANTIATE

}  // namespace fuselens::kernels
