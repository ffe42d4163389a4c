#include "model.h"

#include <stdexcept>
#include <string>

#include "common/cuda_check.h"
#include "common/device_buffer.h"
#include "elementwise/elementwise.cuh"
#include "gemm_bias_relu/gemm_bias_relu.cuh"
#include "layernorm/layernorm.cuh"
#include "softmax/softmax.cuh"

namespace fk = fuselens::kernels;

namespace fuselens::workloads::fmnist {

namespace {
using Buf = fk::DeviceBuffer<float>;
constexpr int kTensors = 8;
}  // namespace

struct GpuModel::Buffers {
  // Parameters, their gradients and momentum buffers, in Parameters::tensors() order.
  Buf param[kTensors], grad[kTensors], momentum[kTensors];
  // Activations [rows × width].
  Buf h1, z2, n2, sig, a2, z3, probs, dz3;
  // Unfused scratch: LayerNorm statistics and x̂, softmax row max / sum / exponentials.
  Buf ln_mean, ln_var, ln_xhat, sm_max, sm_sum, sm_exps;
  // Backward.
  Buf da2, dn2, dz2, xhat, dh1, dr1;
};

GpuModel::GpuModel(const Parameters& initial, int max_rows, Build build)
    : b_(std::make_unique<Buffers>()), max_rows_(max_rows), build_(build) {
  if (max_rows < 1) throw std::invalid_argument("GpuModel: max_rows must be >= 1");
  Parameters p = initial;
  const auto tensors = p.tensors();
  for (int i = 0; i < kTensors; ++i) {
    const std::vector<float>& host = *tensors[static_cast<std::size_t>(i)];
    b_->param[i] = Buf(host.size());
    b_->param[i].copy_from_host(host);
    b_->grad[i] = Buf(host.size());
    b_->momentum[i] = Buf(host.size());
    FUSELENS_CUDA_CHECK(cudaMemset(b_->momentum[i].data(), 0, b_->momentum[i].bytes()));
  }
  const auto rows = static_cast<std::size_t>(max_rows);
  const std::size_t hidden = rows * kHidden, logits = rows * kClasses;
  for (Buf* buf : {&b_->h1, &b_->z2, &b_->n2, &b_->sig, &b_->a2, &b_->ln_xhat, &b_->da2, &b_->dn2,
                   &b_->dz2, &b_->xhat, &b_->dh1, &b_->dr1})
    *buf = Buf(hidden);
  for (Buf* buf : {&b_->z3, &b_->probs, &b_->dz3, &b_->sm_exps}) *buf = Buf(logits);
  for (Buf* buf : {&b_->ln_mean, &b_->ln_var, &b_->sm_max, &b_->sm_sum}) *buf = Buf(rows);
}

GpuModel::~GpuModel() = default;

void GpuModel::forward(const float* x, const std::int32_t* labels, int rows, LossAccumulator acc,
                       bool train) {
  if (rows < 1 || rows > max_rows_) {
    throw std::invalid_argument("GpuModel::forward: rows " + std::to_string(rows) +
                                " outside [1, " + std::to_string(max_rows_) + "]");
  }
  Buffers& b = *b_;
  const std::size_t hidden = static_cast<std::size_t>(rows) * kHidden;
  if (build_ == Build::Unfused) {
    fk::launch_gemm_bias_relu_unfused(x, b.param[0].data(), b.param[1].data(), b.h1.data(), rows,
                                      kHidden, kInputs);
    fk::launch_gemm(b.h1.data(), b.param[2].data(), b.z2.data(), rows, kHidden, kHidden);
    fk::launch_add_bias(b.z2.data(), b.param[3].data(), rows, kHidden);
    fk::launch_layernorm_unfused(
        b.z2.data(), b.param[4].data(), b.param[5].data(), b.n2.data(), rows, kHidden,
        fk::LayerNormScratch{b.ln_mean.data(), b.ln_var.data(), b.ln_xhat.data()},
        kLayerNormEpsilon);
    fk::launch_swish_unfused(b.n2.data(), b.sig.data(), b.a2.data(), hidden);
    fk::launch_gemm(b.a2.data(), b.param[6].data(), b.z3.data(), rows, kClasses, kHidden);
    fk::launch_add_bias(b.z3.data(), b.param[7].data(), rows, kClasses);
    fk::launch_softmax_unfused(
        b.z3.data(), b.probs.data(), rows, kClasses,
        fk::SoftmaxScratch{b.sm_max.data(), b.sm_sum.data(), b.sm_exps.data()});
    launch_nll_loss(b.probs.data(), labels, rows, kClasses, acc);
    if (train) launch_xent_grad(b.probs.data(), labels, b.dz3.data(), rows, kClasses);
  } else {
    fk::launch_gemm_bias_relu_fused(x, b.param[0].data(), b.param[1].data(), b.h1.data(), rows,
                                    kHidden, kInputs);
    fk::launch_gemm_bias_fused(b.h1.data(), b.param[2].data(), b.param[3].data(), b.z2.data(), rows,
                               kHidden, kHidden);
    fk::launch_layernorm_fused(b.z2.data(), b.param[4].data(), b.param[5].data(), b.n2.data(), rows,
                               kHidden, kLayerNormEpsilon);
    fk::launch_swish_fused(b.n2.data(), b.a2.data(), hidden);
    fk::launch_gemm_bias_fused(b.a2.data(), b.param[6].data(), b.param[7].data(), b.z3.data(), rows,
                               kClasses, kHidden);
    launch_softmax_xent_fused(b.z3.data(), labels, train ? b.dz3.data() : nullptr, rows, kClasses,
                              acc);
  }
}

void GpuModel::backward(const float* x, int rows) {
  Buffers& b = *b_;
  const bool fused = build_ == Build::Fused;
  // Output layer: dW3 = a2ᵀ·dz3, db3 = Σ dz3, da2 = dz3·W3ᵀ.
  launch_gemm_tn(b.a2.data(), b.dz3.data(), b.grad[6].data(), kHidden, kClasses, rows);
  launch_column_sum(b.dz3.data(), nullptr, b.grad[7].data(), rows, kClasses);
  launch_gemm_nt(b.dz3.data(), b.param[6].data(), b.da2.data(), rows, kHidden, kClasses);
  // Swish and LayerNorm: dn2 = da2·swish'(n2); dz2 = LayerNorm'(dn2); dγ = Σ dn2·x̂, dβ = Σ dn2.
  if (fused) {
    launch_layernorm_backward(b.da2.data(), b.z2.data(), b.param[4].data(), b.dz2.data(),
                              b.xhat.data(), rows, kHidden, kLayerNormEpsilon, b.n2.data(),
                              b.dn2.data());
  } else {
    launch_swish_backward(b.da2.data(), b.n2.data(), b.dn2.data(), rows * kHidden);
    launch_layernorm_backward(b.dn2.data(), b.z2.data(), b.param[4].data(), b.dz2.data(),
                              b.xhat.data(), rows, kHidden, kLayerNormEpsilon);
  }
  launch_column_sum(b.dn2.data(), b.xhat.data(), b.grad[4].data(), rows, kHidden);
  launch_column_sum(b.dn2.data(), nullptr, b.grad[5].data(), rows, kHidden);
  // Hidden layer: dW2 = h1ᵀ·dz2, db2 = Σ dz2, dr1 = (dz2·W2ᵀ)·[h1 > 0].
  launch_gemm_tn(b.h1.data(), b.dz2.data(), b.grad[2].data(), kHidden, kHidden, rows);
  launch_column_sum(b.dz2.data(), nullptr, b.grad[3].data(), rows, kHidden);
  if (fused) {
    launch_gemm_nt_relu_backward(b.dz2.data(), b.param[2].data(), b.h1.data(), b.dr1.data(), rows,
                                 kHidden, kHidden);
  } else {
    launch_gemm_nt(b.dz2.data(), b.param[2].data(), b.dh1.data(), rows, kHidden, kHidden);
    launch_relu_backward(b.dh1.data(), b.h1.data(), b.dr1.data(), rows * kHidden);
  }
  // Input layer: dW1 = xᵀ·dr1, db1 = Σ dr1.
  launch_gemm_tn(x, b.dr1.data(), b.grad[0].data(), kInputs, kHidden, rows);
  launch_column_sum(b.dr1.data(), nullptr, b.grad[1].data(), rows, kHidden);
}

void GpuModel::update(float lr, float momentum) {
  Buffers& b = *b_;
  if (build_ == Build::Fused) {
    SgdTensor tensors[kTensors];
    for (int i = 0; i < kTensors; ++i) {
      tensors[i] = SgdTensor{b.param[i].data(), b.momentum[i].data(), b.grad[i].data(),
                             static_cast<int>(b.param[i].size())};
    }
    launch_sgd_multi(tensors, kTensors, lr, momentum);
  } else {
    for (int i = 0; i < kTensors; ++i) {
      launch_sgd(b.param[i].data(), b.momentum[i].data(), b.grad[i].data(),
                 static_cast<int>(b.param[i].size()), lr, momentum);
    }
  }
}

Parameters GpuModel::parameters() const {
  Parameters p;
  const auto tensors = p.tensors();
  for (int i = 0; i < kTensors; ++i)
    *tensors[static_cast<std::size_t>(i)] = b_->param[i].copy_to_host();
  return p;
}

}  // namespace fuselens::workloads::fmnist
