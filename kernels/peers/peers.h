#pragma once
// Vendor peers of the kernel suite: what a user would otherwise run for C = relu(A·B + bias).
// Library fuselens_kernel_peers (links cuBLAS and cuBLASLt); namespace fuselens::kernels::peers.
//
// Layouts (as kernels/gemm_bias_relu and kernels/gemm_tc): row-major A [M×K] (ld K), B [K×N] (ld
// N), C [M×N] (ld N), bias [N] broadcast over the M rows; every matrix and the bias in the peer's
// dtype; FP32 accumulation. cuBLAS is column-major, so both peers use the row-major trick: a
// row-major X is the column-major X^T, and C^T = B^T · A^T is computed as the column-major problem
//   m' = N, n' = M, k' = K,  "A" = B (ld N),  "B" = A (ld K),  "C" = C (ld N).
// cuBLASLt's bias vector runs over the m' rows of that column-major D, i.e. over C's N columns:
// exactly bias[N] broadcast over C's rows (PeersTest checks it with N != M).
//
// Math: F32 uses CUBLAS_COMPUTE_32F with the default math mode (no TF32: full FP32 FMA). F16/BF16
// use CUBLAS_COMPUTE_32F (FP32 accumulation, FP32 alpha/beta) with tensor cores.
//
// Launches (measured on an H100 80GB HBM3, CUDA 13, by graph capture in PeersTest, 2026-11-22):
//   CublasLtGemm::run is one kernel launch at every shape PeersTest checks: the heuristic is asked
//   for algorithms without split-K reduction (CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK = NONE; if
//   none exists for a shape it falls back to any algorithm, which may add a reduction kernel).
//   CublasGemm::run is one or two launches: cuBLAS picks its kernel per call and adds a split-K
//   reduction kernel at some shapes (measured 2 for FP32 at M×N×K = 64×128×256, 77×136×72,
//   77×131×59, 256×256×256, 512×256×256 and 512×256×512, and for BF16 at 77×131×59; 1 elsewhere).
//   launch_cublas_gemm_bias_relu_unfused = CublasGemm::run + 2 launches (bias, ReLU). Callers that
//   need the exact count measure it with count_kernel_launches (fusion_bench does).
// Kernel names are cuBLAS's own (e.g. sm90_xmma_gemm_..., nvjet_...): the profiler shows them as
// such.
//
// Alignment: cuBLASLt's algorithm is chosen with the preference defaults
// (CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_{A,B,C,D}_BYTES = 256), so CublasLtGemm::run requires A, B, C
// 256-byte aligned (cudaMalloc's alignment) and bias 16-byte aligned, and throws
// std::invalid_argument otherwise. CublasGemm has no alignment requirement beyond the element size.
// Errors: a failed cuBLAS/cuBLASLt call throws PeerError (std::runtime_error) whose what() names
// the call and the status (e.g. "cublasLtMatmul: CUBLAS_STATUS_NOT_SUPPORTED"); CUDA runtime
// failures throw fuselens::kernels::CudaError; negative sizes throw std::invalid_argument. Objects
// are move-only and not thread-safe (one handle each, one stream at a time).

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>

namespace fuselens::kernels::peers {

enum class DType { F32, F16, BF16 };

/// What cuBLASLt applies after A·B: nothing, + bias, or relu(+ bias) (CUBLASLT_EPILOGUE_DEFAULT,
/// CUBLASLT_EPILOGUE_BIAS, CUBLASLT_EPILOGUE_RELU_BIAS).
enum class Epilogue { None, Bias, ReluBias };

/// Workspace of each peer object, bytes (32 MiB).
inline constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;

/// Bytes per element of a dtype (4, 2, 2).
[[nodiscard]] std::size_t dtype_size(DType dtype) noexcept;
/// "fp32", "fp16", "bf16".
[[nodiscard]] const char* dtype_name(DType dtype) noexcept;

/// A failed cuBLAS or cuBLASLt call. status() is the cublasStatus_t as an int.
class PeerError : public std::runtime_error {
 public:
  PeerError(int status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  [[nodiscard]] int status() const noexcept { return status_; }

 private:
  int status_;
};

/// C = A·B with cublasGemmEx (row-major via the trick above), FP32 accumulation. One cuBLAS handle
/// per object, bound to `stream` (cublasSetStream) with its own 32 MiB workspace
/// (cublasSetWorkspace), so a run allocates nothing and can be captured into a CUDA graph.
class CublasGemm {
 public:
  explicit CublasGemm(DType dtype, cudaStream_t stream = nullptr);
  ~CublasGemm();
  CublasGemm(CublasGemm&& other) noexcept;
  CublasGemm& operator=(CublasGemm&& other) noexcept;
  CublasGemm(const CublasGemm&) = delete;
  CublasGemm& operator=(const CublasGemm&) = delete;

  /// C = A·B, asynchronous on the bound stream. M, N, K >= 0; M == 0 or N == 0 does nothing.
  void run(const void* A, const void* B, void* C, int M, int N, int K);
  /// Rebinds the handle to another stream.
  void set_stream(cudaStream_t stream);

  [[nodiscard]] DType dtype() const noexcept { return dtype_; }
  [[nodiscard]] cudaStream_t stream() const noexcept { return stream_; }

 private:
  void release() noexcept;

  DType dtype_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;  // device, kWorkspaceBytes
};

/// C = epilogue(A·B + bias) with cublasLtMatmul, for one shape (M, N, K) fixed at construction,
/// where the algorithm is chosen once with cublasLtMatmulAlgoGetHeuristic (32 MiB workspace,
/// owned). The bias is ignored (may be null) for Epilogue::None.
class CublasLtGemm {
 public:
  CublasLtGemm(DType dtype, Epilogue epilogue, int M, int N, int K);
  ~CublasLtGemm();
  CublasLtGemm(CublasLtGemm&& other) noexcept;
  CublasLtGemm& operator=(CublasLtGemm&& other) noexcept;
  CublasLtGemm(const CublasLtGemm&) = delete;
  CublasLtGemm& operator=(const CublasLtGemm&) = delete;

  /// C = epilogue(A·B + bias), asynchronous on `stream`. Throws std::invalid_argument for a null or
  /// misaligned pointer (see Alignment above).
  void run(const void* A, const void* B, const void* bias, void* C, cudaStream_t stream = nullptr);

  [[nodiscard]] DType dtype() const noexcept { return dtype_; }
  [[nodiscard]] Epilogue epilogue() const noexcept { return epilogue_; }
  /// Whether the chosen algorithm is one without split-K reduction (the one-launch case above).
  [[nodiscard]] bool single_kernel_algorithm() const noexcept { return single_kernel_; }

 private:
  void release() noexcept;

  DType dtype_;
  Epilogue epilogue_;
  int M_ = 0, N_ = 0, K_ = 0;
  bool single_kernel_ = false;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t layout_a_ = nullptr;  // column-major "A" of the trick (= our B)
  cublasLtMatrixLayout_t layout_b_ = nullptr;  // column-major "B" (= our A)
  cublasLtMatrixLayout_t layout_c_ = nullptr;  // C and D
  cublasLtMatmulAlgo_t algo_{};
  void* workspace_ = nullptr;  // device, kWorkspaceBytes
};

/// C = relu(A·B + bias) the way a cuBLAS user without cuBLASLt writes it: gemm.run (cuBLAS GEMM),
/// then the suite's own bias and ReLU kernels, in place on C, on gemm.stream(): FP32
/// launch_add_bias and launch_relu (kernels/gemm_bias_relu, kernels/elementwise); F16/BF16
/// launch_add_bias_tc and launch_relu_tc (kernels/gemm_tc). Three launches (cuBLAS's one plus two).
/// The dtype is gemm.dtype().
void launch_cublas_gemm_bias_relu_unfused(CublasGemm& gemm, const void* A, const void* B,
                                          const void* bias, void* C, int M, int N, int K);

/// Kernel launches of `work`, measured: creates a non-blocking stream, runs work(stream) once
/// uncaptured (module loading, first-use setup) and synchronizes, then captures work(stream) into a
/// CUDA graph and returns its number of kernel nodes. `work` must issue everything on the stream it
/// is given (rebind a CublasGemm with set_stream first). Throws CudaError when capture fails.
[[nodiscard]] int count_kernel_launches(const std::function<void(cudaStream_t)>& work);

}  // namespace fuselens::kernels::peers
