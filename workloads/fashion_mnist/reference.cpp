#include "reference.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <tuple>

namespace fuselens::workloads::fmnist {
namespace {

using Matrix = std::vector<double>;  // row-major

/// C[M×N] = op(A)·op(B) (+ bias), the GPU kernels' layouts: A [M×K] or [K×M] (ta), B [K×N] or [N×K]
/// (tb).
Matrix gemm(const Matrix& A, const Matrix& B, int M, int N, int K, bool ta, bool tb,
            const Matrix* bias = nullptr) {
  Matrix C(static_cast<std::size_t>(M) * N, 0.0);
  for (int m = 0; m < M; ++m) {
    for (int k = 0; k < K; ++k) {
      const double a =
          ta ? A[static_cast<std::size_t>(k) * M + m] : A[static_cast<std::size_t>(m) * K + k];
      if (a == 0.0) continue;
      double* c = &C[static_cast<std::size_t>(m) * N];
      for (int n = 0; n < N; ++n)
        c[n] += a * (tb ? B[static_cast<std::size_t>(n) * K + k]
                        : B[static_cast<std::size_t>(k) * N + n]);
    }
    if (bias) {
      for (int n = 0; n < N; ++n)
        C[static_cast<std::size_t>(m) * N + n] += (*bias)[static_cast<std::size_t>(n)];
    }
  }
  return C;
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

}  // namespace

struct ReferenceModel::Pass {
  int rows = 0;
  Matrix x, h1, z2, xhat, rstd, n2, a2, probs;
  double loss = 0;
  int correct = 0;
};

ReferenceModel::ReferenceModel(const Parameters& initial) {
  Parameters p = initial;
  for (auto* t : p.tensors()) {
    params_.emplace_back(t->begin(), t->end());
    momentum_.emplace_back(t->size(), 0.0);
  }
}

ReferenceModel::Pass ReferenceModel::forward(std::span<const float> x,
                                             std::span<const std::int32_t> labels) const {
  const int rows = static_cast<int>(labels.size());
  if (rows < 1 || x.size() != static_cast<std::size_t>(rows) * kInputs) {
    throw std::invalid_argument(
        "ReferenceModel: x must be rows × 784 with rows = labels.size() >= 1");
  }
  const auto& [w1, b1, w2, b2, gamma, beta, w3, b3] =
      std::tie(params_[0], params_[1], params_[2], params_[3], params_[4], params_[5], params_[6],
               params_[7]);
  Pass p;
  p.rows = rows;
  p.x.assign(x.begin(), x.end());
  p.h1 = gemm(p.x, w1, rows, kHidden, kInputs, false, false, &b1);
  for (double& v : p.h1) v = v < 0 ? 0 : v;
  p.z2 = gemm(p.h1, w2, rows, kHidden, kHidden, false, false, &b2);
  p.xhat.resize(p.z2.size());
  p.n2.resize(p.z2.size());
  p.a2.resize(p.z2.size());
  p.rstd.resize(static_cast<std::size_t>(rows));
  for (int r = 0; r < rows; ++r) {
    const double* z = &p.z2[static_cast<std::size_t>(r) * kHidden];
    double mean = 0, var = 0;
    for (int c = 0; c < kHidden; ++c) mean += z[c];
    mean /= kHidden;
    for (int c = 0; c < kHidden; ++c) var += (z[c] - mean) * (z[c] - mean);
    var /= kHidden;
    const double rstd = 1.0 / std::sqrt(var + static_cast<double>(kLayerNormEpsilon));
    p.rstd[static_cast<std::size_t>(r)] = rstd;
    for (int c = 0; c < kHidden; ++c) {
      const std::size_t i = static_cast<std::size_t>(r) * kHidden + static_cast<std::size_t>(c);
      p.xhat[i] = (z[c] - mean) * rstd;
      p.n2[i] = p.xhat[i] * gamma[static_cast<std::size_t>(c)] + beta[static_cast<std::size_t>(c)];
      p.a2[i] = p.n2[i] * sigmoid(p.n2[i]);
    }
  }
  p.probs = gemm(p.a2, w3, rows, kClasses, kHidden, false, false, &b3);
  for (int r = 0; r < rows; ++r) {
    double* z = &p.probs[static_cast<std::size_t>(r) * kClasses];
    const double m = *std::max_element(z, z + kClasses);
    const int best = static_cast<int>(std::max_element(z, z + kClasses) - z);
    double sum = 0;
    for (int c = 0; c < kClasses; ++c) sum += (z[c] = std::exp(z[c] - m));
    for (int c = 0; c < kClasses; ++c) z[c] /= sum;
    const int t = labels[static_cast<std::size_t>(r)];
    p.loss += -std::log(z[t]);
    p.correct += best == t ? 1 : 0;
  }
  p.loss /= rows;
  return p;
}

ReferenceModel::Evaluation ReferenceModel::evaluate(std::span<const float> x,
                                                    std::span<const std::int32_t> labels) const {
  const Pass p = forward(x, labels);
  return {p.loss, p.correct};
}

std::vector<std::vector<double>> ReferenceModel::gradients(
    std::span<const float> x, std::span<const std::int32_t> labels) const {
  const Pass p = forward(x, labels);
  const int rows = p.rows;
  const auto& w2 = params_[2];
  const auto& gamma = params_[4];
  const auto& w3 = params_[6];
  std::vector<std::vector<double>> g(params_.size());
  // dz3 = (p − onehot) / rows
  Matrix dz3 = p.probs;
  for (int r = 0; r < rows; ++r) {
    dz3[static_cast<std::size_t>(r) * kClasses +
        static_cast<std::size_t>(labels[static_cast<std::size_t>(r)])] -= 1.0;
  }
  for (double& v : dz3) v /= rows;
  auto column_sum = [&](const Matrix& m, int cols) {
    std::vector<double> s(static_cast<std::size_t>(cols), 0.0);
    for (std::size_t i = 0; i < m.size(); ++i) s[i % static_cast<std::size_t>(cols)] += m[i];
    return s;
  };
  g[6] = gemm(p.a2, dz3, kHidden, kClasses, rows, true, false);
  g[7] = column_sum(dz3, kClasses);
  Matrix da2 = gemm(dz3, w3, rows, kHidden, kClasses, false, true);
  // Swish and LayerNorm backward.
  Matrix dn2(da2.size()), dz2(da2.size());
  g[4].assign(kHidden, 0.0);
  g[5].assign(kHidden, 0.0);
  for (int r = 0; r < rows; ++r) {
    double mean_g = 0, mean_gx = 0;
    for (int c = 0; c < kHidden; ++c) {
      const std::size_t i = static_cast<std::size_t>(r) * kHidden + static_cast<std::size_t>(c);
      const double s = sigmoid(p.n2[i]);
      dn2[i] = da2[i] * (s + p.n2[i] * s * (1 - s));
      const double gi = dn2[i] * gamma[static_cast<std::size_t>(c)];
      mean_g += gi;
      mean_gx += gi * p.xhat[i];
      g[4][static_cast<std::size_t>(c)] += dn2[i] * p.xhat[i];
      g[5][static_cast<std::size_t>(c)] += dn2[i];
    }
    mean_g /= kHidden;
    mean_gx /= kHidden;
    for (int c = 0; c < kHidden; ++c) {
      const std::size_t i = static_cast<std::size_t>(r) * kHidden + static_cast<std::size_t>(c);
      const double gi = dn2[i] * gamma[static_cast<std::size_t>(c)];
      dz2[i] = p.rstd[static_cast<std::size_t>(r)] * (gi - mean_g - p.xhat[i] * mean_gx);
    }
  }
  g[2] = gemm(p.h1, dz2, kHidden, kHidden, rows, true, false);
  g[3] = column_sum(dz2, kHidden);
  Matrix dr1 = gemm(dz2, w2, rows, kHidden, kHidden, false, true);
  for (std::size_t i = 0; i < dr1.size(); ++i) dr1[i] = p.h1[i] > 0 ? dr1[i] : 0.0;
  g[0] = gemm(p.x, dr1, kInputs, kHidden, rows, true, false);
  g[1] = column_sum(dr1, kHidden);
  return g;
}

double ReferenceModel::train_step(std::span<const float> x, std::span<const std::int32_t> labels,
                                  double lr, double momentum) {
  const double loss = forward(x, labels).loss;
  const auto g = gradients(x, labels);
  for (std::size_t t = 0; t < params_.size(); ++t) {
    for (std::size_t i = 0; i < params_[t].size(); ++i) {
      momentum_[t][i] = momentum * momentum_[t][i] + g[t][i];
      params_[t][i] -= lr * momentum_[t][i];
    }
  }
  return loss;
}

}  // namespace fuselens::workloads::fmnist
