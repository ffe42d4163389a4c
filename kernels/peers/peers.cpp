#include "peers/peers.h"

#include "common/cuda_check.h"
#include "elementwise/elementwise.cuh"
#include "gemm_bias_relu/gemm_bias_relu.cuh"
#include "gemm_tc/gemm_tc.cuh"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fuselens::kernels::peers {
namespace {

void check(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw PeerError(static_cast<int>(status),
                    std::string(call) + ": " + cublasGetStatusName(status));
  }
}

cudaDataType_t cuda_type(DType dtype) {
  switch (dtype) {
    case DType::F32:
      return CUDA_R_32F;
    case DType::F16:
      return CUDA_R_16F;
    case DType::BF16:
      return CUDA_R_16BF;
  }
  return CUDA_R_32F;
}

cublasLtEpilogue_t lt_epilogue(Epilogue epilogue) {
  switch (epilogue) {
    case Epilogue::None:
      return CUBLASLT_EPILOGUE_DEFAULT;
    case Epilogue::Bias:
      return CUBLASLT_EPILOGUE_BIAS;
    case Epilogue::ReluBias:
      return CUBLASLT_EPILOGUE_RELU_BIAS;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

void require_sizes(const char* who, int M, int N, int K) {
  if (M < 0 || N < 0 || K < 0) {
    throw std::invalid_argument(std::string(who) + ": negative size M=" + std::to_string(M) +
                                " N=" + std::to_string(N) + " K=" + std::to_string(K));
  }
}

void require_aligned(const char* what, const void* p, std::uintptr_t alignment) {
  if (p == nullptr || reinterpret_cast<std::uintptr_t>(p) % alignment != 0) {
    throw std::invalid_argument(std::string("CublasLtGemm::run: ") + what + " must be a non-null " +
                                std::to_string(alignment) + "-byte aligned device pointer");
  }
}

void* allocate_workspace() {
  void* workspace = nullptr;
  FUSELENS_CUDA_CHECK(cudaMalloc(&workspace, kWorkspaceBytes));
  return workspace;
}

}  // namespace

std::size_t dtype_size(DType dtype) noexcept { return dtype == DType::F32 ? 4 : 2; }

const char* dtype_name(DType dtype) noexcept {
  switch (dtype) {
    case DType::F32:
      return "fp32";
    case DType::F16:
      return "fp16";
    case DType::BF16:
      return "bf16";
  }
  return "?";
}

// ----------------------------------------------------------------------------------------
// CublasGemm

CublasGemm::CublasGemm(DType dtype, cudaStream_t stream) : dtype_(dtype), stream_(stream) {
  try {
    check(cublasCreate(&handle_), "cublasCreate");
    workspace_ = allocate_workspace();
    // cublasSetStream resets the workspace to cuBLAS's own pool, so the stream is set first.
    check(cublasSetStream(handle_, stream_), "cublasSetStream");
    check(cublasSetWorkspace(handle_, workspace_, kWorkspaceBytes), "cublasSetWorkspace");
    // Default math: tensor cores for F16/BF16 inputs, never TF32 for F32 with CUBLAS_COMPUTE_32F.
    check(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  } catch (...) {
    release();
    throw;
  }
}

CublasGemm::~CublasGemm() { release(); }

CublasGemm::CublasGemm(CublasGemm&& other) noexcept
    : dtype_(other.dtype_),
      stream_(other.stream_),
      handle_(std::exchange(other.handle_, nullptr)),
      workspace_(std::exchange(other.workspace_, nullptr)) {}

CublasGemm& CublasGemm::operator=(CublasGemm&& other) noexcept {
  if (this != &other) {
    release();
    dtype_ = other.dtype_;
    stream_ = other.stream_;
    handle_ = std::exchange(other.handle_, nullptr);
    workspace_ = std::exchange(other.workspace_, nullptr);
  }
  return *this;
}

void CublasGemm::release() noexcept {
  if (handle_ != nullptr) {
    cublasDestroy(handle_);
    handle_ = nullptr;
  }
  if (workspace_ != nullptr) {
    cudaFree(workspace_);
    workspace_ = nullptr;
  }
}

void CublasGemm::set_stream(cudaStream_t stream) {
  check(cublasSetStream(handle_, stream), "cublasSetStream");
  check(cublasSetWorkspace(handle_, workspace_, kWorkspaceBytes),
        "cublasSetWorkspace");  // reset by SetStream
  stream_ = stream;
}

void CublasGemm::run(const void* A, const void* B, void* C, int M, int N, int K) {
  require_sizes("CublasGemm::run", M, N, K);
  if (M == 0 || N == 0) {
    return;
  }
  const cudaDataType_t type = cuda_type(dtype_);
  const float alpha = 1.0f;
  const float beta = 0.0f;
  // Row-major C = A·B as column-major C^T = B^T · A^T: m' = N, n' = M, k' = K.
  check(cublasGemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, type, N, A, type, K,
                     &beta, C, type, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx");
}

// --------------------------------------------------------------------------------------
// CublasLtGemm

CublasLtGemm::CublasLtGemm(DType dtype, Epilogue epilogue, int M, int N, int K)
    : dtype_(dtype), epilogue_(epilogue), M_(M), N_(N), K_(K) {
  require_sizes("CublasLtGemm", M, N, K);
  cublasLtMatmulPreference_t preference = nullptr;
  try {
    const cudaDataType_t type = cuda_type(dtype_);
    check(cublasLtCreate(&handle_), "cublasLtCreate");
    workspace_ = allocate_workspace();
    check(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F),
          "cublasLtMatmulDescCreate");
    const cublasOperation_t none = CUBLAS_OP_N;
    check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &none, sizeof none),
          "cublasLtMatmulDescSetAttribute(TRANSA)");
    check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &none, sizeof none),
          "cublasLtMatmulDescSetAttribute(TRANSB)");
    const cublasLtEpilogue_t lt_epi = lt_epilogue(epilogue_);
    check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, &lt_epi,
                                         sizeof lt_epi),
          "cublasLtMatmulDescSetAttribute(EPILOGUE)");
    if (epilogue_ != Epilogue::None) {
      const auto bias_type = static_cast<std::int32_t>(type);  // bias in the dtype of C
      check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type,
                                           sizeof bias_type),
            "cublasLtMatmulDescSetAttribute(BIAS_DATA_TYPE)");
    }
    // Column-major problem of the row-major trick: D (N × M, ld N) = "A" (N × K, ld N) · "B" (K ×
    // M, ld K).
    const auto m = static_cast<std::uint64_t>(N);
    const auto n = static_cast<std::uint64_t>(M);
    const auto k = static_cast<std::uint64_t>(K);
    const auto ld_a = static_cast<std::int64_t>(N > 0 ? N : 1);
    const auto ld_b = static_cast<std::int64_t>(K > 0 ? K : 1);
    check(cublasLtMatrixLayoutCreate(&layout_a_, type, m, k, ld_a),
          "cublasLtMatrixLayoutCreate(A)");
    check(cublasLtMatrixLayoutCreate(&layout_b_, type, k, n, ld_b),
          "cublasLtMatrixLayoutCreate(B)");
    check(cublasLtMatrixLayoutCreate(&layout_c_, type, m, n, ld_a),
          "cublasLtMatrixLayoutCreate(C)");

    check(cublasLtMatmulPreferenceCreate(&preference), "cublasLtMatmulPreferenceCreate");
    const std::size_t workspace_bytes = kWorkspaceBytes;
    check(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                               &workspace_bytes, sizeof workspace_bytes),
          "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
    if (M > 0 && N > 0) {
      // First ask only for algorithms without a split-K reduction (one kernel per run).
      const std::uint32_t no_reduction = CUBLASLT_REDUCTION_SCHEME_NONE;
      check(cublasLtMatmulPreferenceSetAttribute(preference,
                                                 CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                                                 &no_reduction, sizeof no_reduction),
            "cublasLtMatmulPreferenceSetAttribute(REDUCTION_SCHEME_MASK)");
      cublasLtMatmulHeuristicResult_t result{};
      int found = 0;
      check(cublasLtMatmulAlgoGetHeuristic(handle_, desc_, layout_a_, layout_b_, layout_c_,
                                           layout_c_, preference, 1, &result, &found),
            "cublasLtMatmulAlgoGetHeuristic");
      single_kernel_ = found > 0;
      if (found == 0) {  // fall back to any reduction scheme
        const std::uint32_t any = CUBLASLT_REDUCTION_SCHEME_MASK;
        check(cublasLtMatmulPreferenceSetAttribute(
                  preference, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &any, sizeof any),
              "cublasLtMatmulPreferenceSetAttribute(REDUCTION_SCHEME_MASK)");
        check(cublasLtMatmulAlgoGetHeuristic(handle_, desc_, layout_a_, layout_b_, layout_c_,
                                             layout_c_, preference, 1, &result, &found),
              "cublasLtMatmulAlgoGetHeuristic");
      }
      if (found == 0) {
        throw PeerError(
            static_cast<int>(CUBLAS_STATUS_NOT_SUPPORTED),
            "cublasLtMatmulAlgoGetHeuristic: CUBLAS_STATUS_NOT_SUPPORTED (no algorithm for " +
                std::string(dtype_name(dtype_)) + " M=" + std::to_string(M) +
                " N=" + std::to_string(N) + " K=" + std::to_string(K) + ")");
      }
      algo_ = result.algo;
    }
    cublasLtMatmulPreferenceDestroy(preference);
  } catch (...) {
    if (preference != nullptr) {
      cublasLtMatmulPreferenceDestroy(preference);
    }
    release();
    throw;
  }
}

CublasLtGemm::~CublasLtGemm() { release(); }

CublasLtGemm::CublasLtGemm(CublasLtGemm&& other) noexcept
    : dtype_(other.dtype_),
      epilogue_(other.epilogue_),
      M_(other.M_),
      N_(other.N_),
      K_(other.K_),
      single_kernel_(other.single_kernel_),
      handle_(std::exchange(other.handle_, nullptr)),
      desc_(std::exchange(other.desc_, nullptr)),
      layout_a_(std::exchange(other.layout_a_, nullptr)),
      layout_b_(std::exchange(other.layout_b_, nullptr)),
      layout_c_(std::exchange(other.layout_c_, nullptr)),
      algo_(other.algo_),
      workspace_(std::exchange(other.workspace_, nullptr)) {}

CublasLtGemm& CublasLtGemm::operator=(CublasLtGemm&& other) noexcept {
  if (this != &other) {
    release();
    dtype_ = other.dtype_;
    epilogue_ = other.epilogue_;
    M_ = other.M_;
    N_ = other.N_;
    K_ = other.K_;
    single_kernel_ = other.single_kernel_;
    handle_ = std::exchange(other.handle_, nullptr);
    desc_ = std::exchange(other.desc_, nullptr);
    layout_a_ = std::exchange(other.layout_a_, nullptr);
    layout_b_ = std::exchange(other.layout_b_, nullptr);
    layout_c_ = std::exchange(other.layout_c_, nullptr);
    algo_ = other.algo_;
    workspace_ = std::exchange(other.workspace_, nullptr);
  }
  return *this;
}

void CublasLtGemm::release() noexcept {
  if (layout_a_ != nullptr) cublasLtMatrixLayoutDestroy(layout_a_);
  if (layout_b_ != nullptr) cublasLtMatrixLayoutDestroy(layout_b_);
  if (layout_c_ != nullptr) cublasLtMatrixLayoutDestroy(layout_c_);
  if (desc_ != nullptr) cublasLtMatmulDescDestroy(desc_);
  if (handle_ != nullptr) cublasLtDestroy(handle_);
  if (workspace_ != nullptr) cudaFree(workspace_);
  layout_a_ = layout_b_ = layout_c_ = nullptr;
  desc_ = nullptr;
  handle_ = nullptr;
  workspace_ = nullptr;
}

void CublasLtGemm::run(const void* A, const void* B, const void* bias, void* C,
                       cudaStream_t stream) {
  if (M_ == 0 || N_ == 0) {
    return;
  }
  require_aligned("A", A, 256);
  require_aligned("B", B, 256);
  require_aligned("C", C, 256);
  if (epilogue_ != Epilogue::None) {
    require_aligned("bias", bias, 16);
    check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                         sizeof bias),
          "cublasLtMatmulDescSetAttribute(BIAS_POINTER)");
  }
  const float alpha = 1.0f;
  const float beta = 0.0f;
  // "A" of the column-major problem is our B, "B" is our A (see peers.h).
  check(cublasLtMatmul(handle_, desc_, &alpha, B, layout_a_, A, layout_b_, &beta, C, layout_c_, C,
                       layout_c_, &algo_, workspace_, kWorkspaceBytes, stream),
        "cublasLtMatmul");
}

// ------------------------------------------------------------------------------------------
// unfused

void launch_cublas_gemm_bias_relu_unfused(CublasGemm& gemm, const void* A, const void* B,
                                          const void* bias, void* C, int M, int N, int K) {
  require_sizes("launch_cublas_gemm_bias_relu_unfused", M, N, K);
  if (M == 0 || N == 0) {
    return;
  }
  gemm.run(A, B, C, M, N, K);
  const cudaStream_t stream = gemm.stream();
  const std::size_t count = static_cast<std::size_t>(M) * static_cast<std::size_t>(N);
  switch (gemm.dtype()) {
    case DType::F32:
      launch_add_bias(static_cast<float*>(C), static_cast<const float*>(bias), M, N, stream);
      launch_relu(static_cast<const float*>(C), static_cast<float*>(C), count, stream);
      break;
    case DType::F16:
      launch_add_bias_tc(static_cast<__half*>(C), static_cast<const __half*>(bias), M, N, stream);
      launch_relu_tc(static_cast<const __half*>(C), static_cast<__half*>(C), count, stream);
      break;
    case DType::BF16:
      launch_add_bias_tc(static_cast<__nv_bfloat16*>(C), static_cast<const __nv_bfloat16*>(bias), M,
                         N, stream);
      launch_relu_tc(static_cast<const __nv_bfloat16*>(C), static_cast<__nv_bfloat16*>(C), count,
                     stream);
      break;
  }
}

// ------------------------------------------------------------------------------------ launch count

int count_kernel_launches(const std::function<void(cudaStream_t)>& work) {
  cudaStream_t stream = nullptr;
  FUSELENS_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph = nullptr;
  int kernels = 0;
  try {
    work(stream);
    FUSELENS_CUDA_CHECK(cudaStreamSynchronize(stream));
    FUSELENS_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    try {
      work(stream);
    } catch (...) {
      cudaStreamEndCapture(stream, &graph);
      throw;
    }
    FUSELENS_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    std::size_t count = 0;
    FUSELENS_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &count));
    std::vector<cudaGraphNode_t> nodes(count);
    if (count > 0) {
      FUSELENS_CUDA_CHECK(cudaGraphGetNodes(graph, nodes.data(), &count));
    }
    for (cudaGraphNode_t node : nodes) {
      cudaGraphNodeType type{};
      FUSELENS_CUDA_CHECK(cudaGraphNodeGetType(node, &type));
      kernels += type == cudaGraphNodeTypeKernel ? 1 : 0;
    }
  } catch (...) {
    if (graph != nullptr) cudaGraphDestroy(graph);
    cudaStreamDestroy(stream);
    throw;
  }
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
  return kernels;
}

}  // namespace fuselens::kernels::peers
