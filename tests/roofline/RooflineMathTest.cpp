// The roofline arithmetic against hand-computed cases (RooflineMath.h).
#include <gtest/gtest.h>

#include "roofline/Peaks.h"
#include "roofline/RooflineMath.h"

namespace fuselens::analyzer {
namespace {

Ceilings t4() { return find_peaks(builtin_peaks(), "t4")->ceilings(); }

Work fp32_work(double flops, double dram_bytes) {
  Work w;
  w.flops[static_cast<std::size_t>(Precision::Fp32)] = flops;
  w.bytes[static_cast<std::size_t>(MemoryLevel::Dram)] = dram_bytes;
  return w;
}

TEST(RooflineMath, T4RidgePointsMatchTheDatasheetRatios) {
  // 8.1e12 / 320e9 = 25.3125 FLOP/byte; 65e12 / 320e9 = 203.125 FLOP/byte.
  EXPECT_DOUBLE_EQ(ridge_point(8.1e12, 320e9), 25.3125);
  EXPECT_DOUBLE_EQ(ridge_point(65e12, 320e9), 203.125);
  const Ceilings c = t4();
  EXPECT_NEAR(ridge_point(*c.flops(Precision::Fp32), *c.bandwidth(MemoryLevel::Dram)), 25.3, 0.05);
  EXPECT_NEAR(ridge_point(*c.flops(Precision::Tensor), *c.bandwidth(MemoryLevel::Dram)), 203.1, 0.05);
}

TEST(RooflineMath, AttainableIsTheLowerOfTheTwoRoofs) {
  EXPECT_DOUBLE_EQ(attainable_flops_per_s(10, 8.1e12, 320e9), 3.2e12);    // under the slope
  EXPECT_DOUBLE_EQ(attainable_flops_per_s(100, 8.1e12, 320e9), 8.1e12);  // under the flat roof
  EXPECT_DOUBLE_EQ(attainable_flops_per_s(25.3125, 8.1e12, 320e9), 8.1e12);  // at the ridge
}

TEST(RooflineMath, MemoryBoundSwishOnT4) {
  // Fused swish at 4096^2: 3 FLOP and 8 compulsory bytes per element.
  const double n = 4096.0 * 4096.0;
  const Work w = fp32_work(3 * n, 8 * n);
  const RooflineResult r = evaluate(w, 500'000, t4());  // measured 500 us
  EXPECT_EQ(r.bound, "memory:dram");
  EXPECT_NEAR(r.floor_ns, 8 * n / 320e9 * 1e9, 1e-6);  // 419.43 us
  EXPECT_NEAR(r.floor_ns, 419'430.4, 0.1);
  EXPECT_NEAR(*r.intensity[0], 0.375, 1e-12);
  EXPECT_NEAR(r.attainable_flops_per_s, 0.375 * 320e9, 1e-3);  // = min(8.1e12, 0.375 x 320e9)
  EXPECT_NEAR(r.achieved_flops_per_s, 3 * n / 500e-6, 1e-3);
  EXPECT_NEAR(r.efficiency, 419'430.4 / 500'000, 1e-9);
  EXPECT_NEAR(r.efficiency, r.achieved_flops_per_s / r.attainable_flops_per_s, 1e-12);
  EXPECT_NEAR(*r.achieved_bytes_per_s[0], 8 * n / 500e-6, 1e-3);
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.dominant, Precision::Fp32);
}

TEST(RooflineMath, ComputeBoundGemmOnT4) {
  // Fused GEMM + bias + ReLU at 1024^3: 2 M N K + M N FLOP; A, B, bias read, C written.
  const double flops = 2.0 * 1024 * 1024 * 1024 + 1024.0 * 1024;
  const double bytes = 4.0 * (3 * 1024 * 1024) + 4 * 1024;
  const RooflineResult r = evaluate(fp32_work(flops, bytes), 300'000, t4());
  EXPECT_EQ(r.bound, "compute:fp32");
  EXPECT_NEAR(*r.intensity[0], flops / bytes, 1e-9);  // about 170.7 > 25.3
  EXPECT_NEAR(r.floor_ns, flops / 8.1e12 * 1e9, 1e-6);  // 265.25 us
  EXPECT_NEAR(r.attainable_flops_per_s, 8.1e12, 1e-3);
  EXPECT_NEAR(r.efficiency, flops / 8.1e12 / 300e-6, 1e-9);
}

TEST(RooflineMath, PrecisionClassesAddTheirComputeTimes) {
  Work w;
  w.flops[static_cast<std::size_t>(Precision::Fp32)] = 8.1e9;    // 1 ms at 8.1 TFLOP/s
  w.flops[static_cast<std::size_t>(Precision::Tensor)] = 65e9;   // 1 ms at 65 TFLOP/s
  w.bytes[static_cast<std::size_t>(MemoryLevel::Dram)] = 320e6;  // 1 ms at 320 GB/s
  const RooflineResult r = evaluate(w, 4e6, t4());
  EXPECT_EQ(r.bound, "compute:tensor");  // 2 ms of compute beats 1 ms of DRAM
  EXPECT_NEAR(r.floor_ns, 2e6, 1e-3);
  EXPECT_NEAR(r.efficiency, 0.5, 1e-12);
}

TEST(RooflineMath, WorkWithoutACeilingIsFlaggedIncomplete) {
  Work w;
  w.flops[static_cast<std::size_t>(Precision::Fp64)] = 1e9;
  Ceilings c;  // nothing at all
  const RooflineResult r = evaluate(w, 1000, c);
  EXPECT_FALSE(r.complete);
  EXPECT_EQ(r.bound, "none");
  EXPECT_EQ(r.efficiency, 0);
  EXPECT_NEAR(r.achieved_flops_per_s, 1e15, 1.0);  // 1e9 FLOP in 1 us
}

TEST(RooflineMath, ACopyHasABandwidthEfficiencyButNoAttainableFlops) {
  Work w;
  w.bytes[static_cast<std::size_t>(MemoryLevel::Dram)] = 3.2e9;  // 10 ms at 320 GB/s
  const RooflineResult r = evaluate(w, 20e6, t4());
  EXPECT_EQ(r.bound, "memory:dram");
  EXPECT_NEAR(r.efficiency, 0.5, 1e-12);
  EXPECT_EQ(r.attainable_flops_per_s, 0);
  EXPECT_FALSE(r.intensity[0].has_value());
  EXPECT_FALSE(r.dominant.has_value());
}

TEST(RooflineMath, TheSlowestMemoryLevelSetsTheFloor) {
  Ceilings c;
  c.bytes_per_s[0] = 1e9;   // DRAM
  c.bytes_per_s[1] = 10e9;  // L2
  Work w;
  w.bytes[0] = 1e6;   // 1 ms at DRAM
  w.bytes[1] = 50e6;  // 5 ms at L2
  w.bytes[2] = 1e12;  // L1: no ceiling, ignored
  const RooflineResult r = evaluate(w, 10e6, c);
  EXPECT_EQ(r.bound, "memory:l2");
  EXPECT_NEAR(r.floor_ns, 5e6, 1e-6);
  EXPECT_TRUE(r.complete);
}

TEST(RooflineMath, WorkAddsAndScales) {
  Work a = fp32_work(10, 4);
  Work b;
  b.flops[static_cast<std::size_t>(Precision::Fp16)] = 6;
  b.bytes[static_cast<std::size_t>(MemoryLevel::L2)] = 8;
  a += b;
  EXPECT_EQ(a.total_flops(), 16);
  EXPECT_EQ(*a.bytes_at(MemoryLevel::Dram), 4);
  EXPECT_EQ(*a.bytes_at(MemoryLevel::L2), 8);
  EXPECT_FALSE(a.bytes_at(MemoryLevel::L1).has_value());
  const Work s = a.scaled(3);
  EXPECT_EQ(s.total_flops(), 48);
  EXPECT_EQ(*s.bytes_at(MemoryLevel::L2), 24);
}

TEST(RooflineMath, PrecisionNamesRoundTrip) {
  for (std::size_t i = 0; i < kPrecisions; ++i) {
    const auto p = static_cast<Precision>(i);
    EXPECT_EQ(parse_precision(to_string(p)), p);
  }
  EXPECT_FALSE(parse_precision("fp8").has_value());
}

}  // namespace
}  // namespace fuselens::analyzer
