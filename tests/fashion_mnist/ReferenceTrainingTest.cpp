// The CPU reference of the Fashion-MNIST training step (workloads/fashion_mnist/reference.h): its
// gradients equal central finite differences of its loss, and SGD on a small slice of the real
// dataset lowers the loss step after step.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>
#include <vector>

#include "idx.h"
#include "reference.h"
#include "network.h"

namespace fm = fuselens::workloads::fmnist;

namespace {

class ReferenceTraining : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(std::filesystem::path(fm::kDefaultDataDir) / "train-images-idx3-ubyte.gz")) {
      GTEST_SKIP() << "dataset-fashion-mnist not installed (scripts/setup.sh installs it)";
    }
    data = fm::load_dataset(fm::kDefaultDataDir);
  }
  fm::Dataset data;
};

TEST_F(ReferenceTraining, GradientsEqualFiniteDifferences) {
  constexpr int kRows = 8;
  const auto x = fm::normalized_images(data.train, kRows);
  const std::vector<std::int32_t> labels(data.train.labels.begin(), data.train.labels.begin() + kRows);
  fm::ReferenceModel model(fm::Parameters::initial(7));
  const auto grads = model.gradients(x, labels);
  std::mt19937 rng(3);
  for (int t = 0; t < 8; ++t) {
    const auto& g = grads[static_cast<std::size_t>(t)];
    for (int probe = 0; probe < 6; ++probe) {
      const std::size_t i = std::uniform_int_distribution<std::size_t>(0, g.size() - 1)(rng);
      const double w = model.parameter(t, i);
      const double h = 1e-6;
      model.set_parameter(t, i, w + h);
      const double up = model.evaluate(x, labels).loss;
      model.set_parameter(t, i, w - h);
      const double down = model.evaluate(x, labels).loss;
      model.set_parameter(t, i, w);
      const double numeric = (up - down) / (2 * h);
      // Central differences in double are good to about 1e-9 absolute here; ReLU kinks are not
      // crossed by a step of 1e-6 except by bad luck, which the absolute floor also covers.
      EXPECT_NEAR(g[i], numeric, 1e-6 + 1e-4 * std::fabs(numeric)) << "tensor " << t << " element " << i;
    }
  }
}

TEST_F(ReferenceTraining, SgdLowersTheLossOnASlice) {
  constexpr int kRows = 64;
  const auto x = fm::normalized_images(data.train, kRows);
  const std::vector<std::int32_t> labels(data.train.labels.begin(), data.train.labels.begin() + kRows);
  fm::ReferenceModel model(fm::Parameters::initial(1));
  std::vector<double> losses;
  for (int step = 0; step < 15; ++step) losses.push_back(model.train_step(x, labels, 0.05, 0.9));
  EXPECT_NEAR(losses.front(), std::log(10.0), 0.35);  // near-uniform predictions at initialisation
  EXPECT_LT(losses.back(), 0.5 * losses.front());
  const auto after = model.evaluate(x, labels);
  EXPECT_GT(after.correct, kRows * 8 / 10);  // memorises most of its slice
}

}  // namespace
