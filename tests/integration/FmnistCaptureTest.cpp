// The H100 capture of the Fashion-MNIST training (tests/data/fmnist_epoch.sqlite: 100 steps and one
// evaluation of each build; command in tests/data/README.md): the summary, calling-context and
// comparison views show where the fused build saves time (issue #10).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "cct/CallingContext.h"
#include "compare/Compare.h"
#include "summary/Summary.h"
#include "fuselens/db/Reader.h"

namespace fa = fuselens::analyzer;

namespace {

const std::string kCapture = std::string(FUSELENS_TEST_DATA_DIR) + "/fmnist_epoch.sqlite";

TEST(FmnistCapture, ComparisonShowsTheFusedStepsFewerKernelsAndFaster) {
  fuselens::db::Reader reader(kCapture);
  const auto report = fa::compare_ranges(reader, "fmnist/unfused/*", "fmnist/fused/*");
  bool epoch = false, eval = false;
  for (const auto& e : report.entries) {
    ASSERT_TRUE(e.baseline && e.candidate) << e.key;
    if (e.shape == "epoch1") {
      epoch = true;
      // 100 steps: 42 launches per unfused step, 20 per fused step (workloads/fashion_mnist/model.h).
      EXPECT_DOUBLE_EQ(e.baseline->kernels_per_iter, 4200);
      EXPECT_DOUBLE_EQ(e.candidate->kernels_per_iter, 2000);
      ASSERT_TRUE(e.speedup);
      EXPECT_GT(*e.speedup, 1.05) << "fused GPU time per epoch should be lower";
    }
    if (e.shape == "eval") {
      eval = true;
      // 10 evaluation batches: 18 forward kernels + 2 gathers unfused, 6 + 2 fused.
      EXPECT_DOUBLE_EQ(e.baseline->kernels_per_iter, 200);
      EXPECT_DOUBLE_EQ(e.candidate->kernels_per_iter, 80);
    }
  }
  EXPECT_TRUE(epoch);
  EXPECT_TRUE(eval);
}

TEST(FmnistCapture, SummaryCountsEachBuildsKernels) {
  fuselens::db::Reader reader(kCapture);
  const auto summary = fa::summarize(reader);
  auto count = [&](const std::string& needle) {
    std::int64_t n = 0;
    for (const auto& k : summary.kernels)
      if (k.name.find(needle) != std::string::npos) n += k.stats.count;
    return n;
  };
  EXPECT_EQ(count("gemm_bias_relu_fused_kernel"), 110);   // 100 steps + 10 eval batches, fused build
  EXPECT_EQ(count("softmax_xent_fused_kernel"), 110);
  EXPECT_EQ(count("sgd_multi_kernel"), 100);
  EXPECT_EQ(count("::sgd_kernel"), 800);                  // 8 tensors x 100 steps, unfused build
  EXPECT_EQ(count("layernorm_mean_kernel"), 110);
  EXPECT_EQ(count("relu_backward_kernel"), 100);
}

TEST(FmnistCapture, CallingContextChargesTheModelsOwnFunctions) {
  fuselens::db::Reader reader(kCapture);
  const auto report = fa::calling_context_report(reader, fa::CctOptions{});
  ASSERT_TRUE(report.available) << report.unavailable_reason;
  const fa::CctRow* train = nullptr;
  for (const auto& row : report.rows) {
    if (row.kind == fa::CctRow::Kind::Frame && row.label.starts_with("fuselens::workloads::fmnist::Trainer::train(")) {
      train = &row;
    }
  }
  ASSERT_NE(train, nullptr);
  std::map<std::string, std::int64_t> children;  // function name (up to the '(') -> launches
  for (int c : train->children) {
    const auto& row = report.rows[static_cast<std::size_t>(c)];
    children[row.label.substr(0, row.label.find('('))] += row.inclusive.launches;
  }
  const std::string ns = "fuselens::workloads::fmnist::";
  // Per training step: forward 19 (unfused) + 6 (fused), backward 13 + 11, update 8 + 1; per
  // evaluation batch forward 18 + 6; 100 steps and 10 batches per build. Two launches end their
  // function with a call the compiler turned into a jump (a sibling call), so the calling function's
  // frame is gone from the stack and the launch is charged to its caller, Trainer::train, as the
  // stack really was: launch_xent_grad at the end of the unfused forward, launch_column_sum (db1) at
  // the end of both backward passes.
  EXPECT_EQ(children[ns + "GpuModel::forward"], 100 * (19 + 6) + 10 * (18 + 6) - 100);
  EXPECT_EQ(children[ns + "launch_xent_grad"], 100);
  EXPECT_EQ(children[ns + "GpuModel::backward"], 100 * (13 + 11) - 200);
  EXPECT_EQ(children[ns + "launch_column_sum"], 200);
  EXPECT_EQ(children[ns + "GpuModel::update"], 100 * (8 + 1));
  EXPECT_EQ(children[ns + "launch_gather_normalize"], 220);
  EXPECT_EQ(children[ns + "launch_gather_labels"], 220);
}

}  // namespace
