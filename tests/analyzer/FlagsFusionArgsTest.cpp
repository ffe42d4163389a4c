// fusion_chain on the H100 capture of fusion_bench --quick with kernel arguments
// (tests/data/fusion_bench_args.sqlite, `prof-run --trace +args`; tests/data/README.md): the
// unfused GEMM+bias+ReLU and Swish chains at the small shapes are fusion opportunities whose
// output feeds the next (they pass the intermediate C, or s, from kernel to kernel), memory-bound
// by the benchmark's work annotations; the fused variants never form a chain. Skips while the
// capture is missing.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "flags/Flags.h"
#include "fuselens/db/Reader.h"

#ifndef FUSELENS_TEST_DATA_DIR
#error "FUSELENS_TEST_DATA_DIR must name tests/data"
#endif

namespace fuselens::analyzer {
namespace {

const std::string kCapture = std::string(FUSELENS_TEST_DATA_DIR) + "/fusion_bench_args.sqlite";

class FusionBenchArgs : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!std::filesystem::exists(kCapture)) return;
    const db::Reader reader(kCapture);
    args_rows_ =
        reader.has_table("kernel_arg") ? reader.query_int("SELECT COUNT(*) FROM kernel_arg") : 0;
    report_ = new FlagsReport(run_flags(reader, FlagsConfig{}));
  }
  static void TearDownTestSuite() {
    delete report_;
    report_ = nullptr;
  }
  void SetUp() override {
    if (report_ == nullptr) GTEST_SKIP() << kCapture << " is missing (tests/data/README.md)";
  }

  static const Hit* chain(const std::string& subject, const std::string& range) {
    for (const Hit& h : report_->hits) {
      if (h.rule == "fusion_chain" && h.subject == subject && h.range == range) return &h;
    }
    return nullptr;
  }

  static FlagsReport* report_;
  static std::int64_t args_rows_;
};

FlagsReport* FusionBenchArgs::report_ = nullptr;
std::int64_t FusionBenchArgs::args_rows_ = 0;

TEST_F(FusionBenchArgs, TheCaptureHoldsKernelArguments) { EXPECT_GT(args_rows_, 0); }

TEST_F(FusionBenchArgs, UnfusedSmallGemmChainsFeedTheNextAndAreFusionCandidates) {
  struct Shape {
    const char* label;
    double m, n;
  };
  for (const Shape& s : {Shape{"M64_N128_K256", 64, 128}, Shape{"M128_N256_K256", 128, 256}}) {
    const Hit* h = chain("gemm_kernel -> add_bias_kernel -> relu_kernel",
                         std::string("gemm_bias_relu/unfused/") + s.label);
    ASSERT_NE(h, nullptr) << s.label;
    EXPECT_GE(h->count, 3) << "--quick: 5 iterations";
    EXPECT_DOUBLE_EQ(h->metric("output_feeds_next"), 1) << h->detail;
    EXPECT_DOUBLE_EQ(h->metric("memory_bound"), 1) << h->detail;  // annotation: 11.6, 16 FLOP/B
    EXPECT_DOUBLE_EQ(h->metric("fusion_candidate"), 1) << h->detail;
    // C (M x N floats) passes gemm -> add_bias -> relu: two pairs, each 2 x C per occurrence.
    const double per_occurrence = 2 * 2 * 4 * s.m * s.n;
    EXPECT_GE(h->metric("intermediate_bytes"), per_occurrence * static_cast<double>(h->count));
    EXPECT_GT(h->metric("byte_saving_ns"), 0);
    EXPECT_FALSE(h->context.empty());
  }
}

TEST_F(FusionBenchArgs, UnfusedSmallSwishChainFeedsTheNext) {
  const Hit* h = chain("sigmoid_kernel -> multiply_kernel", "swish/unfused/1024x1024");
  ASSERT_NE(h, nullptr);
  EXPECT_GE(h->count, 3);
  EXPECT_DOUBLE_EQ(h->metric("output_feeds_next"), 1) << h->detail;  // s, and x read twice
  EXPECT_DOUBLE_EQ(h->metric("memory_bound"), 1) << h->detail;       // 0.2 FLOP/B
  EXPECT_DOUBLE_EQ(h->metric("fusion_candidate"), 1) << h->detail;
  EXPECT_GE(h->metric("intermediate_bytes"), 2 * 4.0 * 1024 * 1024 * static_cast<double>(h->count));
}

TEST_F(FusionBenchArgs, FusedVariantsAreNeverFusionOpportunities) {
  for (const Hit& h : report_->hits) {
    if (h.rule != "fusion_chain") continue;
    EXPECT_EQ(h.range.find("/fused/"), std::string::npos) << h.subject << " in " << h.range;
    EXPECT_EQ(h.subject.find("fused_kernel"), std::string::npos) << h.subject;
    EXPECT_EQ(h.subject.find("swish_kernel"), std::string::npos) << h.subject;
  }
}

}  // namespace
}  // namespace fuselens::analyzer
