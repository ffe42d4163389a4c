#pragma once
// The analytic work model of fusion_bench's variants: the FLOPs and the compulsory device-memory
// bytes of ONE iteration, declared for every NVTX range with fuselens/annotate.h and compared
// with hardware counters by `prof-analyze roofline` (docs/BENCHMARKS.md).
//
// Bytes: each kernel of the variant reads each of its inputs once and writes each output once
// (so the unfused variants count their intermediates: kernels/*/README.md tables). FLOPs: an FMA
// is 2; GEMM 2·M·N·K, bias add 1 per element, ReLU 0 (a comparison); sigmoid 3 per element
// (exp, add, divide), multiply 1, fused swish x / (1 + exp(-x)) 3. The SASS of expf and of the
// IEEE division executes more FP32 instructions than this model counts; the kernels' READMEs
// give the measured ratio.

#include <cstddef>

namespace fuselens::workloads {

struct DeclaredWork {
  double flops = 0;  ///< FP32 FLOPs
  double bytes = 0;  ///< compulsory device-memory bytes
};

/// C = relu(A·B + bias), FP32, A [M×K], B [K×N], bias [N], C [M×N].
inline DeclaredWork gemm_bias_relu_work(bool fused, double M, double N, double K) {
  const double flops = 2 * M * N * K + M * N;
  const double inputs = 4 * (M * K + K * N + N);  // A, B, bias once
  // fused: C written once; unfused: gemm writes C, add_bias reads and writes it, relu too.
  return {flops, inputs + 4 * M * N * (fused ? 1 : 5)};
}

/// y = x · sigmoid(x) over n floats.
inline DeclaredWork swish_work(bool fused, double n) {
  // fused: read x, write y; unfused: sigmoid reads x, writes s; multiply reads x and s, writes y.
  return fused ? DeclaredWork{3 * n, 8 * n} : DeclaredWork{4 * n, 20 * n};
}

}  // namespace fuselens::workloads
