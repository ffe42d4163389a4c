// The datasheet peaks file, device matching and the choice behind --peaks (Peaks.h).
#include <gtest/gtest.h>

#include <cmath>

#include "roofline/Peaks.h"
#include "fuselens/db/Reader.h"

namespace fuselens::analyzer {
namespace {

TEST(Peaks, BuiltinProfilesCoverTheDocumentedGpus) {
  const auto& peaks = builtin_peaks();
  for (const char* id : {"t4", "a100-sxm", "h100-sxm", "h100-pcie", "h200", "l4"}) {
    const PeakProfile* p = find_peaks(peaks, id);
    ASSERT_NE(p, nullptr) << id;
    EXPECT_FALSE(p->source.empty()) << id;
    EXPECT_TRUE(p->fp32 && p->dram_bandwidth && p->tensor_fp16 && p->int8_tensor) << id;
  }
  const PeakProfile& t4 = *find_peaks(peaks, "t4");
  EXPECT_DOUBLE_EQ(*t4.fp32, 8.1e12);
  EXPECT_DOUBLE_EQ(*t4.tensor_fp16, 65e12);
  EXPECT_DOUBLE_EQ(*t4.dram_bandwidth, 320e9);
  EXPECT_FALSE(t4.tensor_bf16.has_value());  // Turing has no BF16 tensor path
  const PeakProfile& h100 = *find_peaks(peaks, "h100-sxm");
  EXPECT_DOUBLE_EQ(*h100.dram_bandwidth, 3350e9);
  EXPECT_NEAR(*h100.tensor_bf16, 989e12, 1e12);
}

TEST(Peaks, Fp32PeaksAgreeWithLanesTimesSmsTimesBoostClock) {
  // FP32 lanes per SM: 64 on Turing (T4) and GA100, 128 on Ada and Hopper; an FMA is 2 FLOP.
  for (const auto& p : builtin_peaks()) {
    const int lanes = (p.id == "t4" || p.id == "a100-sxm") ? 64 : 128;
    const double derived = p.sm_count * lanes * 2.0 * p.boost_clock_mhz * 1e6;
    EXPECT_NEAR(*p.fp32 / derived, 1.0, 0.01) << p.id;
  }
}

TEST(Peaks, MatchesDevicesByNameAndSmCount) {
  const auto& peaks = builtin_peaks();
  auto id = [&](const char* name, int sms) {
    const PeakProfile* p = match_device(peaks, name, sms);
    return p ? p->id : std::string("none");
  };
  EXPECT_EQ(id("NVIDIA H100 80GB HBM3", 132), "h100-sxm");
  EXPECT_EQ(id("NVIDIA H100 PCIe", 114), "h100-pcie");
  EXPECT_EQ(id("NVIDIA H200", 132), "h200");
  EXPECT_EQ(id("Tesla T4", 40), "t4");
  EXPECT_EQ(id("NVIDIA A100-SXM4-80GB", 108), "a100-sxm");
  EXPECT_EQ(id("NVIDIA L4", 58), "l4");
  EXPECT_EQ(id("NVIDIA H100 80GB HBM3", 114), "none");  // a cut-down part is not the SXM
  EXPECT_EQ(id("NVIDIA GeForce RTX 4090", 128), "none");
}

TEST(Peaks, MalformedFilesAreRefusedNamingTheFault) {
  EXPECT_THROW(parse_peaks("{"), PeaksError);
  EXPECT_THROW(parse_peaks(R"({"gpus": 3})"), PeaksError);
  try {
    parse_peaks(R"({"gpus": [{"id": "x", "name": "X", "match": [], "sm_count": 1,
                  "boost_clock_mhz": 1, "source": "s", "fp64_tflops": null, "fp32_tflops": -1}]})");
    FAIL() << "a negative peak was accepted";
  } catch (const PeaksError& e) {
    EXPECT_NE(std::string(e.what()).find("fp32_tflops"), std::string::npos) << e.what();
  }
}

TEST(Peaks, AutoMatchesTheCommittedH100CaptureAndMeasuredNeedsCeilings) {
  const db::Reader reader(std::string(FUSELENS_TEST_DATA_DIR) + "/fusion_bench.sqlite");
  const PeaksChoice choice = choose_peaks("auto", reader, builtin_peaks());
  EXPECT_EQ(choice.ceilings.id, "h100-sxm");
  EXPECT_NE(choice.reason.find("H100"), std::string::npos);
  EXPECT_EQ(choose_peaks("t4", reader, builtin_peaks()).ceilings.id, "t4");
  EXPECT_THROW(choose_peaks("measured", reader, builtin_peaks()), PeaksError);
  try {
    choose_peaks("v100", reader, builtin_peaks());
    FAIL();
  } catch (const PeaksError& e) {
    EXPECT_NE(std::string(e.what()).find("h100-sxm"), std::string::npos) << "lists the known ids";
  }
}

}  // namespace
}  // namespace fuselens::analyzer
