// Vendor peers (kernels/peers): cuBLAS GEMM, the cuBLAS + own bias/ReLU chain, and cuBLASLt with each
// epilogue (None, Bias, ReluBias), in FP32, FP16 and BF16, against a double-precision reference computed
// from the rounded inputs, at a seed shape, a non-square shape (bias over N != M checks the row-major
// trick) and odd shapes (M = 77, N = 136, K = 72; and N = 131, K = 59 where every dtype's rows are
// unaligned). Tolerances per dtype: kernels/common/compare.h. Also measures the launches of one run by
// capturing it into a CUDA graph (kernel nodes; peers.h states the result).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "GpuSkip.h"
#include "KernelTestSupport.h"
#include "common/compare.h"
#include "peers/peers.h"

namespace fk = fuselens::kernels;
namespace fp = fuselens::kernels::peers;
namespace ft = fuselens::test;

namespace {

struct Case {
  fp::DType dtype;
  int M, N, K;
};

double tolerance(fp::DType dtype) {
  switch (dtype) {
    case fp::DType::F32: return fk::kFp32RelativeTolerance;
    case fp::DType::F16: return fk::kFp16RelativeTolerance;
    case fp::DType::BF16: return fk::kBf16RelativeTolerance;
  }
  return 0;
}

template <typename T>
std::vector<unsigned char> bytes_of(const std::vector<T>& v) {
  std::vector<unsigned char> out(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());
  return out;
}

template <typename T>
std::vector<T> from_bytes(const std::vector<unsigned char>& bytes) {
  std::vector<T> out(bytes.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
  return out;
}

/// A device array in the peer's dtype and the float values it really holds.
struct Tensor {
  fk::DeviceBuffer<unsigned char> device;
  std::vector<float> values;
};

Tensor upload(const std::vector<float>& v, fp::DType dtype) {
  Tensor t;
  std::vector<unsigned char> bytes;
  switch (dtype) {
    case fp::DType::F32:
      t.values = v;
      bytes = bytes_of(v);
      break;
    case fp::DType::F16: {
      const auto h = ft::to_half(v);
      t.values = ft::to_float(h);
      bytes = bytes_of(h);
      break;
    }
    case fp::DType::BF16: {
      const auto h = ft::to_bf16(v);
      t.values = ft::to_float(h);
      bytes = bytes_of(h);
      break;
    }
  }
  t.device = fk::DeviceBuffer<unsigned char>(bytes.size());
  t.device.copy_from_host(bytes);
  return t;
}

std::vector<float> download(const fk::DeviceBuffer<unsigned char>& d, fp::DType dtype) {
  const auto bytes = d.copy_to_host();
  switch (dtype) {
    case fp::DType::F32: return from_bytes<float>(bytes);
    case fp::DType::F16: return ft::to_float(from_bytes<__half>(bytes));
    case fp::DType::BF16: return ft::to_float(from_bytes<__nv_bfloat16>(bytes));
  }
  return {};
}

/// A·B (+ bias) (then relu) in double, rounded to float once.
std::vector<float> linear_reference(const std::vector<float>& a, const std::vector<float>& b,
                                    const std::vector<float>* bias, bool relu, int M, int N, int K) {
  std::vector<float> out(static_cast<std::size_t>(M) * N);
  std::vector<double> row(static_cast<std::size_t>(N));
  for (int r = 0; r < M; ++r) {
    for (int c = 0; c < N; ++c) row[c] = bias ? (*bias)[c] : 0.0;
    for (int k = 0; k < K; ++k) {
      const double x = a[static_cast<std::size_t>(r) * K + k];
      for (int c = 0; c < N; ++c) row[c] += x * b[static_cast<std::size_t>(k) * N + c];
    }
    for (int c = 0; c < N; ++c) {
      const double v = relu && row[c] < 0.0 ? 0.0 : row[c];
      out[static_cast<std::size_t>(r) * N + c] = static_cast<float>(v);
    }
  }
  return out;
}

class Peers : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    FUSELENS_SKIP_WITHOUT_GPU();
    const Case c = GetParam();
    a = upload(ft::random_floats(static_cast<std::size_t>(c.M) * c.K, 51), c.dtype);
    b = upload(ft::random_floats(static_cast<std::size_t>(c.K) * c.N, 52), c.dtype);
    bias = upload(ft::random_floats(static_cast<std::size_t>(c.N), 53), c.dtype);
    out = fk::DeviceBuffer<unsigned char>(static_cast<std::size_t>(c.M) * c.N * fp::dtype_size(c.dtype));
  }

  void expect_matches(const std::vector<float>& reference, const char* what) {
    const auto cmp = fk::compare_relative_l2(download(out, GetParam().dtype), reference);
    EXPECT_TRUE(cmp.passes(tolerance(GetParam().dtype)))
        << what << ": relative L2 " << cmp.relative_l2 << " non-finite " << cmp.nonfinite_count;
  }

  Tensor a, b, bias;
  fk::DeviceBuffer<unsigned char> out;
};

TEST_P(Peers, CublasGemmMatchesReference) {
  const Case c = GetParam();
  fp::CublasGemm gemm(c.dtype);
  ft::poison(out);
  gemm.run(a.device.data(), b.device.data(), out.data(), c.M, c.N, c.K);
  FUSELENS_CUDA_CHECK(cudaDeviceSynchronize());
  expect_matches(linear_reference(a.values, b.values, nullptr, false, c.M, c.N, c.K), "cublas gemm");
}

TEST_P(Peers, CublasUnfusedEpilogueMatchesReference) {
  const Case c = GetParam();
  fp::CublasGemm gemm(c.dtype);
  ft::poison(out);
  fp::launch_cublas_gemm_bias_relu_unfused(gemm, a.device.data(), b.device.data(), bias.device.data(), out.data(),
                                           c.M, c.N, c.K);
  FUSELENS_CUDA_CHECK(cudaDeviceSynchronize());
  expect_matches(linear_reference(a.values, b.values, &bias.values, true, c.M, c.N, c.K), "cublas unfused");
}

TEST_P(Peers, CublasLtEveryEpilogueMatchesReference) {
  const Case c = GetParam();
  for (const fp::Epilogue e : {fp::Epilogue::None, fp::Epilogue::Bias, fp::Epilogue::ReluBias}) {
    fp::CublasLtGemm lt(c.dtype, e, c.M, c.N, c.K);
    ft::poison(out);
    lt.run(a.device.data(), b.device.data(), bias.device.data(), out.data());
    FUSELENS_CUDA_CHECK(cudaDeviceSynchronize());
    const bool with_bias = e != fp::Epilogue::None;
    const bool relu = e == fp::Epilogue::ReluBias;
    const std::string what = "cublasLt epilogue " + std::to_string(static_cast<int>(e));
    expect_matches(linear_reference(a.values, b.values, with_bias ? &bias.values : nullptr, relu, c.M, c.N, c.K),
                   what.c_str());
  }
}

/// Kernel nodes (and all nodes) of `work` captured on `stream`.
template <typename Work>
std::pair<int, int> captured_launches(cudaStream_t stream, Work work) {
  FUSELENS_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  work();
  cudaGraph_t graph = nullptr;
  FUSELENS_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  std::size_t count = 0;
  FUSELENS_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &count));
  std::vector<cudaGraphNode_t> nodes(count);
  if (count > 0) FUSELENS_CUDA_CHECK(cudaGraphGetNodes(graph, nodes.data(), &count));
  int kernels = 0;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type{};
    FUSELENS_CUDA_CHECK(cudaGraphNodeGetType(node, &type));
    if (type == cudaGraphNodeTypeKernel) ++kernels;
  }
  FUSELENS_CUDA_CHECK(cudaGraphDestroy(graph));
  return {kernels, static_cast<int>(count)};
}

TEST_P(Peers, LaunchCountsByGraphCapture) {
  const Case c = GetParam();
  cudaStream_t stream = nullptr;
  FUSELENS_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  fp::CublasLtGemm lt(c.dtype, fp::Epilogue::ReluBias, c.M, c.N, c.K);
  fp::CublasGemm gemm(c.dtype, stream);
  lt.run(a.device.data(), b.device.data(), bias.device.data(), out.data(), stream);  // warm (module load)
  gemm.run(a.device.data(), b.device.data(), out.data(), c.M, c.N, c.K);
  FUSELENS_CUDA_CHECK(cudaStreamSynchronize(stream));
  const auto lt_nodes = captured_launches(stream, [&] {
    lt.run(a.device.data(), b.device.data(), bias.device.data(), out.data(), stream);
  });
  const auto gemm_nodes = captured_launches(stream, [&] {
    gemm.run(a.device.data(), b.device.data(), out.data(), c.M, c.N, c.K);
  });
  const auto unfused_nodes = captured_launches(stream, [&] {
    fp::launch_cublas_gemm_bias_relu_unfused(gemm, a.device.data(), b.device.data(), bias.device.data(), out.data(),
                                             c.M, c.N, c.K);
  });
  FUSELENS_CUDA_CHECK(cudaStreamDestroy(stream));
  std::cout << "[launches] " << fp::dtype_name(c.dtype) << " M=" << c.M << " N=" << c.N << " K=" << c.K
            << ": cublasLt relu_bias " << lt_nodes.first << " kernel(s) / " << lt_nodes.second
            << " node(s) (no-split-K algorithm: " << (lt.single_kernel_algorithm() ? "yes" : "no")
            << "); cublas gemm " << gemm_nodes.first << " / " << gemm_nodes.second << "; cublas unfused chain "
            << unfused_nodes.first << " / " << unfused_nodes.second << "\n";
  if (lt.single_kernel_algorithm()) {
    EXPECT_EQ(lt_nodes.first, 1);
    EXPECT_EQ(lt_nodes.second, 1);
  }
  EXPECT_GE(gemm_nodes.first, 1);
  EXPECT_EQ(unfused_nodes.first, gemm_nodes.first + 2);
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (fp::DType d : {fp::DType::F32, fp::DType::F16, fp::DType::BF16}) {
    for (const auto& s : std::vector<std::vector<int>>{{128, 128, 128}, {64, 128, 256}, {77, 136, 72}, {77, 131, 59}}) {
      out.push_back({d, s[0], s[1], s[2]});
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Shapes, Peers, ::testing::ValuesIn(cases()), [](const auto& p) {
  return std::string(fp::dtype_name(p.param.dtype)) + "_M" + std::to_string(p.param.M) + "_N" +
         std::to_string(p.param.N) + "_K" + std::to_string(p.param.K);
});

class PeersArgs : public ::testing::Test {
 protected:
  void SetUp() override { FUSELENS_SKIP_WITHOUT_GPU(); }
};

TEST_F(PeersArgs, MisalignedPointerAndNegativeSizeThrow) {
  fk::DeviceBuffer<float> a(64 * 64), b(64 * 64), bias(64), c(64 * 64);
  fp::CublasLtGemm lt(fp::DType::F32, fp::Epilogue::ReluBias, 64, 64, 64);
  EXPECT_THROW(lt.run(a.data() + 1, b.data(), bias.data(), c.data()), std::invalid_argument);
  EXPECT_THROW(fp::CublasLtGemm(fp::DType::F16, fp::Epilogue::None, -1, 8, 8), std::invalid_argument);
  fp::CublasGemm gemm(fp::DType::F32);
  EXPECT_THROW(gemm.run(a.data(), b.data(), c.data(), 4, -4, 4), std::invalid_argument);
}

}  // namespace
