// Significance (analyzer/compare/Significance.h): noise, the percentile bootstrap of a ratio of
// medians and the Mann-Whitney rank test, each checked against figures derived here by hand or by
// enumeration from the samples the test gives.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "compare/Significance.h"

namespace fuselens::analyzer {
namespace {

/// `n` values spread uniformly over [center (1 - spread), center (1 + spread)], in a shuffled
/// order fixed by `seed` (mt19937's sequence is fixed by the C++ standard).
std::vector<double> spread(double center, double spread, int n, std::uint32_t seed) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) {
    v.push_back(center * (1 - spread + 2 * spread * (i + 0.5) / n));
  }
  std::mt19937 engine(seed);
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[engine() % i]);
  return v;
}

TEST(Significance, QuantilesInterpolateBetweenOrderStatistics) {
  const std::vector<double> sorted{1, 2, 3, 4};
  // Hyndman & Fan 7: h = (n - 1) p; Q = x[floor h] + frac(h) (x[floor h + 1] - x[floor h]).
  EXPECT_DOUBLE_EQ(quantile_sorted(sorted, 0.25), 1 + 0.75 * (2 - 1));
  EXPECT_DOUBLE_EQ(quantile_sorted(sorted, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile_sorted(sorted, 0.75), 3 + 0.25 * (4 - 3));
  EXPECT_DOUBLE_EQ(quantile_sorted(sorted, 0), 1);
  EXPECT_DOUBLE_EQ(quantile_sorted(sorted, 1), 4);
  EXPECT_DOUBLE_EQ(quantile_sorted({7}, 0.3), 7);
  EXPECT_DOUBLE_EQ(median_of({5, 1, 3}), 3);
  EXPECT_DOUBLE_EQ(median_of({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median_of({}), 0);
}

TEST(Significance, NoiseIsTheCoefficientOfVariationAndIqrOverMedian) {
  const std::vector<double> x{4, 1, 3, 2};
  const double mean = (1 + 2 + 3 + 4) / 4.0;
  double ss = 0;
  for (const double v : x) ss += (v - mean) * (v - mean);
  const Noise n = noise_of(x);
  EXPECT_EQ(n.n, 4U);
  EXPECT_DOUBLE_EQ(n.mean, mean);
  EXPECT_DOUBLE_EQ(n.median, 2.5);
  ASSERT_TRUE(n.cv && n.iqr_over_median);
  EXPECT_NEAR(*n.cv, std::sqrt(ss / 3) / mean, 1e-12);
  EXPECT_NEAR(*n.iqr_over_median, (3.25 - 1.75) / 2.5, 1e-12);
  // Equal values: no spread. One value: none to measure. A zero mean or median: no ratio.
  const Noise flat = noise_of({5, 5, 5});
  EXPECT_DOUBLE_EQ(*flat.cv, 0);
  EXPECT_DOUBLE_EQ(*flat.iqr_over_median, 0);
  EXPECT_FALSE(noise_of({5}).cv);
  EXPECT_EQ(noise_of({5}).n, 1U);
  EXPECT_FALSE(noise_of({0, 0}).cv);
  EXPECT_FALSE(noise_of({0, 0, 1}).iqr_over_median);
  EXPECT_EQ(noise_of({1, std::nan("")}).n, 0U);
  EXPECT_EQ(noise_of({}).n, 0U);
  // Values near DBL_MAX: neither the mean nor the squares overflow.
  const Noise huge = noise_of({DBL_MAX, DBL_MAX / 2});
  ASSERT_TRUE(huge.cv);
  EXPECT_TRUE(std::isfinite(*huge.cv));
  EXPECT_NEAR(*huge.cv, noise_of({2, 1}).cv.value(), 1e-12);  // scale-free
}

TEST(Significance, UniformIndexRejectsTheBiasedTail) {
  // For n = 10 the largest multiple of n below 2^64 is UINT64_MAX - UINT64_MAX % 10: draws at or
  // above it would make small indexes more likely, so they are drawn again.
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % 10;
  std::vector<std::uint64_t> script{UINT64_MAX, limit, limit - 1, 23};
  std::size_t at = 0;
  auto next = [&] { return script[at++]; };
  EXPECT_EQ(uniform_index(next, 10), static_cast<std::size_t>((limit - 1) % 10));
  EXPECT_EQ(at, 3U);
  EXPECT_EQ(uniform_index(next, 10), 3U);
  auto zero = [] { return std::uint64_t{0}; };
  EXPECT_EQ(uniform_index(zero, 1), 0U);
}

TEST(Significance, PercentileIntervalTakesTheKthOrderStatisticsFromEachEnd) {
  for (const int b : {100, 1000, 2000, 2001}) {
    std::vector<double> replicates(static_cast<std::size_t>(b));
    std::iota(replicates.begin(), replicates.end(), 1.0);  // the i-th smallest is i
    std::reverse(replicates.begin(), replicates.end());
    const auto k = static_cast<double>(std::max(1, static_cast<int>((b + 1) * 0.05 / 2)));
    const auto [low, high] = percentile_interval(replicates, 0.95);
    EXPECT_DOUBLE_EQ(low, k) << b;
    EXPECT_DOUBLE_EQ(high, b + 1 - k) << b;
  }
  // A level so close to 1 that k would be 0: the extremes.
  const auto [low, high] = percentile_interval({3, 1, 2}, 0.999);
  EXPECT_DOUBLE_EQ(low, 1);
  EXPECT_DOUBLE_EQ(high, 3);
}

TEST(Significance, BootstrapOfConstantSamplesIsTheirRatio) {
  const RatioResult r = bootstrap_median_ratio({200, 200, 200}, {100, 100});
  ASSERT_TRUE(r.interval) << describe(r.problem);
  EXPECT_DOUBLE_EQ(r.interval->estimate, 2);
  EXPECT_DOUBLE_EQ(r.interval->low, 2);
  EXPECT_DOUBLE_EQ(r.interval->high, 2);
  EXPECT_EQ(r.interval->resamples, BootstrapOptions{}.resamples);
  EXPECT_DOUBLE_EQ(r.interval->level, 0.95);
}

TEST(Significance, BootstrapIntervalMatchesTheEnumeratedDistribution) {
  // Baseline {1, 3}: a resample of two values is {1,1} (p 1/4, median 1), {1,3} or {3,1} (p 1/2,
  // median 2) or {3,3} (p 1/4, median 3); the candidate {1, 1} always has median 1. So the
  // replicates are 1, 2, 3 with chances 1/4, 1/2, 1/4: each end holds far more than the 2.5 %
  // the 95 % interval cuts off, so the interval is [1, 3], around the estimate 2.
  const RatioResult r = bootstrap_median_ratio({1, 3}, {1, 1});
  ASSERT_TRUE(r.interval);
  EXPECT_DOUBLE_EQ(r.interval->estimate, 2);
  EXPECT_DOUBLE_EQ(r.interval->low, 1);
  EXPECT_DOUBLE_EQ(r.interval->high, 3);
  // At level 0.4 the interval cuts 30 % off each end: both ends fall on the middle value 2
  // (1/4 < 30 % < 3/4 of the mass lies at or below 2).
  BootstrapOptions narrow;
  narrow.level = 0.4;
  const RatioResult n = bootstrap_median_ratio({1, 3}, {1, 1}, narrow);
  ASSERT_TRUE(n.interval);
  EXPECT_DOUBLE_EQ(n.interval->low, 2);
  EXPECT_DOUBLE_EQ(n.interval->high, 2);
}

TEST(Significance, BootstrapIsDeterministicAndBracketsTheEstimate) {
  const auto b = spread(1000, 0.2, 40, 1), c = spread(900, 0.2, 30, 2);
  const RatioResult one = bootstrap_median_ratio(b, c);
  const RatioResult two = bootstrap_median_ratio(b, c);
  ASSERT_TRUE(one.interval && two.interval);
  EXPECT_EQ(one.interval->low, two.interval->low);  // bit for bit: fixed seed
  EXPECT_EQ(one.interval->high, two.interval->high);
  EXPECT_DOUBLE_EQ(one.interval->estimate, median_of(b) / median_of(c));
  EXPECT_LT(one.interval->low, one.interval->estimate);
  EXPECT_GT(one.interval->high, one.interval->estimate);
  // A wider level gives a wider (or equal) interval; so does noisier data.
  BootstrapOptions wide;
  wide.level = 0.99;
  const RatioResult w = bootstrap_median_ratio(b, c, wide);
  EXPECT_LE(w.interval->low, one.interval->low);
  EXPECT_GE(w.interval->high, one.interval->high);
  const RatioResult noisy =
      bootstrap_median_ratio(spread(1000, 0.6, 40, 1), spread(900, 0.6, 30, 2));
  EXPECT_GT(noisy.interval->high - noisy.interval->low, one.interval->high - one.interval->low);
}

TEST(Significance, BootstrapRefusesSamplesThatCannotGiveAnInterval) {
  EXPECT_EQ(bootstrap_median_ratio({100}, {100, 100}).problem, SampleProblem::TooFew);
  EXPECT_EQ(bootstrap_median_ratio({100, 100}, {}).problem, SampleProblem::TooFew);
  EXPECT_EQ(bootstrap_median_ratio({100, std::nan("")}, {1, 2}).problem, SampleProblem::NotFinite);
  EXPECT_EQ(bootstrap_median_ratio({100, 1}, {1, std::numeric_limits<double>::infinity()}).problem,
            SampleProblem::NotFinite);
  EXPECT_EQ(bootstrap_median_ratio({100, -1}, {1, 2}).problem, SampleProblem::Negative);
  // One bad value outranks "too few": it says what is wrong.
  EXPECT_EQ(bootstrap_median_ratio({-5}, {1, 2}).problem, SampleProblem::Negative);
  EXPECT_EQ(bootstrap_median_ratio({0, 0, 0}, {1, 2}).problem, SampleProblem::ZeroMedian);
  EXPECT_EQ(bootstrap_median_ratio({1, 2}, {0, 0, 5}).problem, SampleProblem::ZeroMedian);
  EXPECT_FALSE(bootstrap_median_ratio({}, {}).interval);
  for (const auto problem : {SampleProblem::TooFew, SampleProblem::NotFinite,
                             SampleProblem::Negative, SampleProblem::ZeroMedian}) {
    EXPECT_NE(std::string(describe(problem)).find("no interval"), std::string::npos);
  }
  EXPECT_EQ(std::string(describe(SampleProblem::TooFew)), "one iteration: no interval");
}

TEST(Significance, BootstrapOfHugeAndManyValuesStaysFinite) {
  // Times near the largest double, and near int64's range: the ratio is still right.
  const RatioResult huge =
      bootstrap_median_ratio({DBL_MAX, DBL_MAX / 2, DBL_MAX / 4}, {DBL_MAX / 2, DBL_MAX / 2});
  ASSERT_TRUE(huge.interval);
  EXPECT_DOUBLE_EQ(huge.interval->estimate, 1);
  EXPECT_TRUE(std::isfinite(huge.interval->low) && std::isfinite(huge.interval->high));
  const double big = 9.2e18;
  const RatioResult ns = bootstrap_median_ratio({big, big}, {big / 2, big / 2});
  EXPECT_DOUBLE_EQ(ns.interval->low, 2);
  // More values than are resampled: thinned to evenly spaced order statistics, the estimate
  // stays the ratio of (nearly) the medians and the interval brackets it.
  const int n = static_cast<int>(kMaxBootstrapSamples) * 3 + 7;
  const auto b = spread(2000, 0.1, n, 3), c = spread(1000, 0.1, n, 4);
  BootstrapOptions quick;
  quick.resamples = 100;
  const RatioResult many = bootstrap_median_ratio(b, c, quick);
  ASSERT_TRUE(many.interval);
  EXPECT_NEAR(many.interval->estimate, 2, 1e-3);
  EXPECT_LE(many.interval->low, many.interval->estimate);
  EXPECT_GE(many.interval->high, many.interval->estimate);
  EXPECT_EQ(many.interval->resamples, 100);
  quick.resamples = 3;  // raised to 100
  EXPECT_EQ(bootstrap_median_ratio({1, 2}, {1, 2}, quick).interval->resamples, 100);
}

TEST(Significance, MannWhitneyUCountsThePairsWithTheCandidateLarger) {
  const std::vector<double> b{1, 2, 2, 5, 7}, c{2, 3, 8, 9};
  double pairs = 0;  // brute force: candidate larger counts 1, a tie 1/2
  for (const double x : b)
    for (const double y : c) pairs += y > x ? 1 : y == x ? 0.5 : 0;
  const auto t = mann_whitney(b, c);
  ASSERT_TRUE(t);
  EXPECT_DOUBLE_EQ(t->u, pairs);
  // Normal approximation by hand: N = 9, one group of 3 tied values (the 2s): t^3 - t = 24.
  const double nb = 5, nc = 4, total = 9;
  const double var = nb * nc / 12 * ((total + 1) - 24 / (total * (total - 1)));
  const double d = pairs - nb * nc / 2;
  const double z = (d - (d > 0 ? 0.5 : -0.5)) / std::sqrt(var);
  EXPECT_NEAR(t->z, z, 1e-12);
  EXPECT_NEAR(t->p_two_sided, std::erfc(std::abs(z) / std::sqrt(2.0)), 1e-12);
  // Swapping the sides mirrors U and keeps p.
  const auto swapped = mann_whitney(c, b);
  EXPECT_DOUBLE_EQ(swapped->u, nb * nc - pairs);
  EXPECT_NEAR(swapped->p_two_sided, t->p_two_sided, 1e-12);
}

TEST(Significance, MannWhitneySeparatesShiftedSamplesAndNotEqualOnes) {
  const auto b = spread(1000, 0.05, 30, 5);
  EXPECT_DOUBLE_EQ(mann_whitney(b, b)->p_two_sided, 1);  // U is exactly its mean
  const auto shifted = mann_whitney(b, spread(1200, 0.05, 30, 6));
  EXPECT_DOUBLE_EQ(shifted->u, 30.0 * 30.0);  // every candidate value is larger
  EXPECT_LT(shifted->p_two_sided, 1e-6);
  EXPECT_GT(shifted->z, 0);
  EXPECT_DOUBLE_EQ(mann_whitney({4, 4}, {4, 4, 4})->p_two_sided, 1);  // all tied
  EXPECT_FALSE(mann_whitney({}, {1}));
  EXPECT_FALSE(mann_whitney({1, std::nan("")}, {1}));
}

}  // namespace
}  // namespace fuselens::analyzer
