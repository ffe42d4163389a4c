// FP32 3-layer MLP (kernels/mlp): unfused (9 launches), per-layer fused (3), fully fused (1) and the
// per-layer cuBLASLt bias+ReLU peer (3) against the double-precision reference (mlp/reference.h), at
// the study's batches 1/16/64/256 with widths 256, at odd batches and odd widths that are multiples of
// neither the 64×64 GEMM tile nor the fully fused kernel's 8-CTA × 32-column split, with every
// rows-per-cluster instantiation of the fully fused kernel, and its limits.
//
// Tolerance: FP32 storage and FMA accumulation against a double reference that keeps the hidden
// activations in double: relative L2 <= kFp32RelativeTolerance (1e-5, kernels/common/compare.h).
// Inputs: X uniform in [-1, 1), W_l and b_l uniform in [-1/sqrt(w_l), 1/sqrt(w_l)) (PyTorch's Linear
// initialisation bound), zeros redrawn; the output is poisoned (0xFF, NaN) before every run.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "GpuSkip.h"
#include "KernelTestSupport.h"
#include "common/compare.h"
#include "mlp/mlp.cuh"
#include "mlp/mlp_cublaslt.h"
#include "mlp/reference.h"

namespace fk = fuselens::kernels;
namespace ft = fuselens::test;

namespace {

using Widths = std::array<int, fk::kMlpLayers + 1>;
using Case = std::tuple<int, Widths>;  // batch, widths

constexpr Widths kStudyWidths{256, 256, 256, 256};

/// Host and device copies of one MLP's inputs, the reference output and the device outputs.
class MlpFixture {
public:
    MlpFixture(int batch, const Widths& widths) : batch_(batch), widths_(widths) {
        const auto rows = static_cast<std::size_t>(batch);
        x_ = ft::random_floats(rows * static_cast<std::size_t>(widths[0]), 31);
        for (int l = 0; l < fk::kMlpLayers; ++l) {
            const auto k = static_cast<std::size_t>(widths[l]);
            const auto n = static_cast<std::size_t>(widths[l + 1]);
            const float bound = 1.0f / std::sqrt(static_cast<float>(k));
            w_[l] = ft::random_floats(k * n, 32 + 2 * static_cast<std::uint32_t>(l), -bound, bound);
            b_[l] = ft::random_floats(n, 33 + 2 * static_cast<std::uint32_t>(l), -bound, bound);
            d_w_[l] = fk::DeviceBuffer<float>(w_[l].size());
            d_b_[l] = fk::DeviceBuffer<float>(b_[l].size());
            d_w_[l].copy_from_host(w_[l]);
            d_b_[l].copy_from_host(b_[l]);
            layers_.weights[l] = d_w_[l].data();
            layers_.biases[l] = d_b_[l].data();
        }
        layers_.widths = widths;
        d_x_ = fk::DeviceBuffer<float>(x_.size());
        d_x_.copy_from_host(x_);
        d_h1_ = fk::DeviceBuffer<float>(rows * static_cast<std::size_t>(widths[1]));
        d_h2_ = fk::DeviceBuffer<float>(rows * static_cast<std::size_t>(widths[2]));
        d_y_ = fk::DeviceBuffer<float>(rows * static_cast<std::size_t>(widths[3]));
        reference_ = fk::mlp_reference(x_, {w_[0], w_[1], w_[2]}, {b_[0], b_[1], b_[2]}, widths, batch);
    }

    /// Poisons Y (and the scratch), runs `launch(layers, X, h1, h2, Y, batch)`, compares Y.
    template <typename Launch>
    fk::Comparison check(Launch launch) {
        ft::poison(d_h1_);
        ft::poison(d_h2_);
        ft::poison(d_y_);
        launch(layers_, d_x_.data(), d_h1_.data(), d_h2_.data(), d_y_.data(), batch_);
        FUSELENS_CUDA_CHECK(cudaDeviceSynchronize());
        return fk::compare_relative_l2(d_y_.copy_to_host(), reference_);
    }

    [[nodiscard]] const fk::MlpLayers& layers() const { return layers_; }

private:
    int batch_;
    Widths widths_;
    std::vector<float> x_, reference_;
    std::array<std::vector<float>, fk::kMlpLayers> w_, b_;
    std::array<fk::DeviceBuffer<float>, fk::kMlpLayers> d_w_, d_b_;
    fk::DeviceBuffer<float> d_x_, d_h1_, d_h2_, d_y_;
    fk::MlpLayers layers_;
};

std::string case_name(const Case& c) {
    const Widths& w = std::get<1>(c);
    return "batch" + std::to_string(std::get<0>(c)) + "_" + std::to_string(w[0]) + "x" + std::to_string(w[1]) +
           "x" + std::to_string(w[2]) + "x" + std::to_string(w[3]);
}

class MlpFp32 : public ::testing::TestWithParam<Case> {
protected:
    void SetUp() override { FUSELENS_SKIP_WITHOUT_GPU(); }

    MlpFixture make() const { return MlpFixture(std::get<0>(GetParam()), std::get<1>(GetParam())); }
};

#define EXPECT_MATCHES_REFERENCE(c) \
    EXPECT_TRUE((c).passes(fk::kFp32RelativeTolerance)) << "rel L2 " << (c).relative_l2 << ", non-finite " << (c).nonfinite_count

TEST_P(MlpFp32, UnfusedMatchesReference) {
    auto f = make();
    const auto c = f.check([](auto... args) { fk::launch_mlp_unfused(args...); });
    EXPECT_MATCHES_REFERENCE(c);
}

TEST_P(MlpFp32, LayerFusedMatchesReference) {
    auto f = make();
    const auto c = f.check([](auto... args) { fk::launch_mlp_layer_fused(args...); });
    EXPECT_MATCHES_REFERENCE(c);
}

TEST_P(MlpFp32, FullyFusedMatchesReference) {
    const auto [batch, widths] = GetParam();
    if (!fk::mlp_fully_fused_supports(widths, batch)) GTEST_SKIP() << "beyond the fully fused kernel's limits";
    auto f = make();
    const auto c = f.check([](const fk::MlpLayers& layers, const float* x, float*, float*, float* y, int b) {
        fk::launch_mlp_fully_fused(layers, x, y, b);
    });
    EXPECT_MATCHES_REFERENCE(c);
}

TEST_P(MlpFp32, FullyFusedEveryConfigurationMatchesReference) {
    const auto [batch, widths] = GetParam();
    if (!fk::mlp_fully_fused_supports(widths, batch)) GTEST_SKIP() << "beyond the fully fused kernel's limits";
    auto f = make();
    for (int cluster : {8, 16}) {
        for (int rows : {1, 2, 4, 8, 16}) {
            const fk::MlpFusedConfig config{cluster, rows};
            const auto c = f.check([config](const fk::MlpLayers& layers, const float* x, float*, float*, float* y, int b) {
                fk::launch_mlp_fully_fused(layers, x, y, b, nullptr, config);
            });
            EXPECT_MATCHES_REFERENCE(c) << " (cluster " << cluster << ", rows per cluster " << rows << ")";
        }
    }
}

TEST_P(MlpFp32, CublasLtPeerMatchesReference) {
    const auto [batch, widths] = GetParam();
    auto f = make();
    fk::MlpCublasLt peer(widths, batch);
    const auto c = f.check([&peer](const fk::MlpLayers& layers, const float* x, float* h1, float* h2, float* y, int) {
        peer.run(layers, x, h1, h2, y);
    });
    EXPECT_MATCHES_REFERENCE(c);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, MlpFp32,
    ::testing::Values(Case{1, kStudyWidths}, Case{16, kStudyWidths}, Case{64, kStudyWidths},
                      Case{256, kStudyWidths}, Case{7, kStudyWidths}, Case{7, Widths{37, 129, 255, 61}},
                      Case{131, Widths{200, 33, 256, 1}}, Case{300, kStudyWidths}),
    [](const auto& p) { return case_name(p.param); });

TEST(MlpFullyFusedLimits, AutomaticConfigurationKeepsTheGridSmall) {
    for (int batch : {1, 7, 8, 9, 16, 64, 128, 129, 256}) {
        const fk::MlpFusedConfig c = fk::mlp_fully_fused_config(batch);
        EXPECT_EQ(c.cluster_size, fk::kMlpFusedDefaultClusterSize);
        const int clusters = (batch + c.rows_per_cluster - 1) / c.rows_per_cluster;
        EXPECT_TRUE(clusters <= fk::kMlpFusedTargetClusters || c.rows_per_cluster == fk::kMlpFusedMaxRowsPerCluster)
            << "batch " << batch;
        EXPECT_TRUE(c.rows_per_cluster == 1 || (batch + c.rows_per_cluster / 2 - 1) / (c.rows_per_cluster / 2) >
                                                   fk::kMlpFusedTargetClusters)
            << "batch " << batch << ": R is not the smallest";
    }
}

TEST(MlpFullyFusedLimits, SupportsUpToBatch256AndWidth256) {
    EXPECT_TRUE(fk::mlp_fully_fused_supports(kStudyWidths, 256));
    EXPECT_FALSE(fk::mlp_fully_fused_supports(kStudyWidths, 257));
    EXPECT_FALSE(fk::mlp_fully_fused_supports(Widths{256, 257, 256, 256}, 1));
    EXPECT_FALSE(fk::mlp_fully_fused_supports(Widths{256, 0, 256, 256}, 1));
}

TEST(MlpFullyFusedLimits, ThrowsBeyondItsLimitsBeforeLaunching) {
    // Validation happens on the host before any launch, so fake non-null pointers are enough.
    fk::MlpLayers layers;
    layers.widths = kStudyWidths;
    static float dummy[1];
    for (int l = 0; l < fk::kMlpLayers; ++l) {
        layers.weights[l] = dummy;
        layers.biases[l] = dummy;
    }
    EXPECT_THROW(fk::launch_mlp_fully_fused(layers, dummy, dummy, 257), std::invalid_argument);
    EXPECT_THROW(fk::launch_mlp_fully_fused(layers, dummy, dummy, -1), std::invalid_argument);
    EXPECT_THROW(fk::launch_mlp_fully_fused(layers, dummy, dummy, 4, nullptr, {8, 3}), std::invalid_argument);
    EXPECT_THROW(fk::launch_mlp_fully_fused(layers, dummy, dummy, 4, nullptr, {4, 1}), std::invalid_argument);
    layers.widths[2] = 512;
    EXPECT_THROW(fk::launch_mlp_fully_fused(layers, dummy, dummy, 1), std::invalid_argument);
    layers.widths[2] = 256;
    layers.biases[1] = nullptr;
    EXPECT_THROW(fk::launch_mlp_unfused(layers, dummy, dummy, dummy, dummy, 1), std::invalid_argument);
    EXPECT_THROW(fk::launch_mlp_layer_fused(layers, dummy, dummy, dummy, dummy, 1), std::invalid_argument);
}

}  // namespace
