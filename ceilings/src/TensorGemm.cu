#include "TensorGemm.h"

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/cuda_check.h"

namespace fuselens::ceilings {
namespace {

/// The cuBLASLt entry points used here, resolved with dlsym.
struct Lt {
  decltype(&cublasLtCreate) create = nullptr;
  decltype(&cublasLtDestroy) destroy = nullptr;
  decltype(&cublasLtMatmulDescCreate) desc_create = nullptr;
  decltype(&cublasLtMatmulDescDestroy) desc_destroy = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) layout_create = nullptr;
  decltype(&cublasLtMatrixLayoutDestroy) layout_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) pref_create = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) pref_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) pref_set = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
  decltype(&cublasLtMatmul) matmul = nullptr;
};

const Lt& load() {
  static Lt lt;
  static std::string error;
  static bool tried = false;
  if (!tried) {
    tried = true;
    void* handle = nullptr;
    std::string tried_names;
    const char* env = std::getenv("FUSELENS_CUBLASLT");
    for (const char* name : {env, "libcublasLt.so.13", "libcublasLt.so",
                             "/usr/local/cuda/lib64/libcublasLt.so.13"}) {
      if (!name) continue;
      handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (handle) break;
      tried_names += std::string(tried_names.empty() ? "" : ", ") + name;
    }
    if (!handle) {
      error = "cuBLASLt not found (tried " + tried_names + "; set FUSELENS_CUBLASLT)";
    } else {
      auto sym = [&](auto& fn, const char* name) {
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(handle, name));
        if (!fn && error.empty()) error = std::string("cuBLASLt lacks ") + name;
      };
      sym(lt.create, "cublasLtCreate");
      sym(lt.destroy, "cublasLtDestroy");
      sym(lt.desc_create, "cublasLtMatmulDescCreate");
      sym(lt.desc_destroy, "cublasLtMatmulDescDestroy");
      sym(lt.desc_set, "cublasLtMatmulDescSetAttribute");
      sym(lt.layout_create, "cublasLtMatrixLayoutCreate");
      sym(lt.layout_destroy, "cublasLtMatrixLayoutDestroy");
      sym(lt.pref_create, "cublasLtMatmulPreferenceCreate");
      sym(lt.pref_destroy, "cublasLtMatmulPreferenceDestroy");
      sym(lt.pref_set, "cublasLtMatmulPreferenceSetAttribute");
      sym(lt.heuristic, "cublasLtMatmulAlgoGetHeuristic");
      sym(lt.matmul, "cublasLtMatmul");
    }
  }
  if (!error.empty()) throw TensorGemmUnavailable(error);
  return lt;
}

void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw TensorGemmUnavailable(std::string("cuBLASLt: ") + what + " failed with status " +
                                std::to_string(static_cast<int>(status)));
  }
}

template <typename T>
__global__ void fill_random(T* p, std::size_t n, unsigned seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    unsigned x = static_cast<unsigned>(i) * 2654435761u ^ seed;  // integer hash, uniform bits
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    const float v = static_cast<float>(x & 0xFFFFFF) / 8388608.0f - 1.0f;  // [-1, 1)
    p[i] = static_cast<T>(v);
  }
}

struct GemmContext {
  const Lt* lt;
  cublasLtHandle_t handle;
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t a, b, c;
  cublasLtMatmulAlgo_t algo;
  const void *A, *B;
  void* C;
  void* workspace;
  std::size_t workspace_bytes;
};

}  // namespace

Measurement tensor_gemm_rate(TensorType type, int size, int repetitions) {
  const Lt& lt = load();
  const cudaDataType_t dt = type == TensorType::Fp16 ? CUDA_R_16F : CUDA_R_16BF;
  const std::size_t n = static_cast<std::size_t>(size) * static_cast<std::size_t>(size);
  void *A = nullptr, *B = nullptr, *C = nullptr, *workspace = nullptr;
  const std::size_t workspace_bytes = std::size_t{64} << 20;
  FUSELENS_CUDA_CHECK(cudaMalloc(&A, n * 2));
  FUSELENS_CUDA_CHECK(cudaMalloc(&B, n * 2));
  FUSELENS_CUDA_CHECK(cudaMalloc(&C, n * 2));
  FUSELENS_CUDA_CHECK(cudaMalloc(&workspace, workspace_bytes));
  if (type == TensorType::Fp16) {
    fill_random<<<1024, 256>>>(static_cast<__half*>(A), n, 1u);
    fill_random<<<1024, 256>>>(static_cast<__half*>(B), n, 2u);
  } else {
    fill_random<<<1024, 256>>>(static_cast<__nv_bfloat16*>(A), n, 1u);
    fill_random<<<1024, 256>>>(static_cast<__nv_bfloat16*>(B), n, 2u);
  }
  FUSELENS_CUDA_CHECK_LAST();
  GemmContext ctx{&lt, nullptr, nullptr, nullptr, nullptr, nullptr, {}, A, B, C, workspace, workspace_bytes};
  cublasLtMatmulPreference_t pref = nullptr;
  double ms = 0;
  try {
    check(lt.create(&ctx.handle), "cublasLtCreate");
    check(lt.desc_create(&ctx.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
    const cublasOperation_t transpose = CUBLAS_OP_T, none = CUBLAS_OP_N;
    check(lt.desc_set(ctx.desc, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof transpose), "TRANSA");
    check(lt.desc_set(ctx.desc, CUBLASLT_MATMUL_DESC_TRANSB, &none, sizeof none), "TRANSB");
    check(lt.layout_create(&ctx.a, dt, size, size, size), "layout A");
    check(lt.layout_create(&ctx.b, dt, size, size, size), "layout B");
    check(lt.layout_create(&ctx.c, dt, size, size, size), "layout C");
    check(lt.pref_create(&pref), "preference");
    check(lt.pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes, sizeof workspace_bytes),
          "workspace");
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    check(lt.heuristic(ctx.handle, ctx.desc, ctx.a, ctx.b, ctx.c, ctx.c, pref, 1, &result, &found), "heuristic");
    if (found == 0) throw TensorGemmUnavailable("cuBLASLt found no algorithm");
    ctx.algo = result.algo;
    ms = median_ms(repetitions, [](void* p) {
      auto* g = static_cast<GemmContext*>(p);
      const float alpha = 1.0f, beta = 0.0f;
      check(g->lt->matmul(g->handle, g->desc, &alpha, g->A, g->a, g->B, g->b, &beta, g->C, g->c, g->C, g->c,
                          &g->algo, g->workspace, g->workspace_bytes, nullptr),
            "cublasLtMatmul");
    }, &ctx);
  } catch (...) {
    if (pref) lt.pref_destroy(pref);
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
    cudaFree(workspace);
    throw;
  }
  lt.pref_destroy(pref);
  lt.layout_destroy(ctx.a);
  lt.layout_destroy(ctx.b);
  lt.layout_destroy(ctx.c);
  lt.desc_destroy(ctx.desc);
  lt.destroy(ctx.handle);
  cudaFree(A);
  cudaFree(B);
  cudaFree(C);
  cudaFree(workspace);
  const double flops = 2.0 * size * static_cast<double>(size) * size;
  char method[200];
  std::snprintf(method, sizeof method,
                "cuBLASLt %s GEMM %d^3 (A^T B, FP32 accumulate, random inputs), %.3f ms (median of %d)",
                type == TensorType::Fp16 ? "FP16" : "BF16", size, ms, repetitions);
  return {flops / (ms * 1e-3), method};
}

}  // namespace fuselens::ceilings
