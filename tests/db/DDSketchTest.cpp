// DDSketch (db/include/fuselens/db/DDSketch.h): quantiles within the relative accuracy of the
// exact ones on generated data, merging, the binary form and hostile inputs.
#include "fuselens/db/DDSketch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

using fuselens::db::DDSketch;

namespace {

// The exact lower quantile: the value of rank floor(q (n - 1)) in sorted order.
double exact_quantile(std::vector<std::uint64_t> values, double q) {
  std::sort(values.begin(), values.end());
  const auto rank =
      static_cast<std::size_t>(std::floor(q * static_cast<double>(values.size() - 1)));
  return static_cast<double>(values[rank]);
}

void expect_within_alpha(const DDSketch& sketch, const std::vector<std::uint64_t>& values) {
  for (const double q : {0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1.0}) {
    const double exact = exact_quantile(values, q);
    const double estimate = sketch.quantile(q);
    // alpha plus rounding of log() at bucket boundaries
    EXPECT_LE(std::abs(estimate - exact), sketch.alpha() * exact * (1 + 1e-9) + 1e-9)
        << "q " << q << " exact " << exact << " estimate " << estimate;
  }
}

std::vector<std::uint64_t> lognormal(std::size_t n, double mu, double sigma, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> d(mu, sigma);
  std::vector<std::uint64_t> v(n);
  for (auto& x : v) x = static_cast<std::uint64_t>(std::llround(d(rng)));
  return v;
}

}  // namespace

TEST(DDSketch, QuantilesAreWithinAlphaOfExactOnesForSeveralDistributions) {
  const std::vector<std::vector<std::uint64_t>> sets = {
      lognormal(100000, std::log(3000.0), 0.3, 1),  // kernels of about 3 us
      lognormal(50000, std::log(2e6), 2.0, 2),      // spread over decades
      [] {                                          // bimodal with zeros
        std::vector<std::uint64_t> v(20000, 0);
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = i % 3 == 0 ? 0 : (i % 2 ? 1500 : 900000);
        return v;
      }(),
      [] {  // uniform over 1 .. 10^6
        std::mt19937_64 rng(3);
        std::uniform_int_distribution<std::uint64_t> d(1, 1000000);
        std::vector<std::uint64_t> v(30000);
        for (auto& x : v) x = d(rng);
        return v;
      }(),
  };
  for (const auto& values : sets) {
    DDSketch s;
    for (const auto v : values) s.add(v);
    EXPECT_EQ(s.count(), values.size());
    EXPECT_EQ(s.min(), *std::min_element(values.begin(), values.end()));
    EXPECT_EQ(s.max(), *std::max_element(values.begin(), values.end()));
    EXPECT_FALSE(s.collapsed());
    expect_within_alpha(s, values);
  }
}

TEST(DDSketch, OtherAlphaKeepsItsOwnBound) {
  const auto values = lognormal(20000, std::log(50000.0), 1.0, 4);
  DDSketch s(0.05, 512);
  for (const auto v : values) s.add(v);
  expect_within_alpha(s, values);
  EXPECT_LT(s.bins(), DDSketch(0.01).max_bins());
}

TEST(DDSketch, MergedSketchEqualsTheSketchOfAllValues) {
  const auto a = lognormal(30000, std::log(1000.0), 0.5, 5);
  const auto b = lognormal(30000, std::log(1e7), 0.5, 6);
  DDSketch sa, sb, all;
  for (const auto v : a) sa.add(v), all.add(v);
  for (const auto v : b) sb.add(v), all.add(v);
  sa.merge(sb);
  EXPECT_EQ(sa.count(), all.count());
  EXPECT_EQ(sa.encode(), all.encode());  // the same buckets, min, max
  std::vector<std::uint64_t> both = a;
  both.insert(both.end(), b.begin(), b.end());
  expect_within_alpha(sa, both);
  DDSketch empty;
  sa.merge(empty);
  EXPECT_EQ(sa.encode(), all.encode());
  empty.merge(all);
  EXPECT_EQ(empty.encode(), all.encode());
  EXPECT_THROW(sa.merge(DDSketch(0.02)), std::invalid_argument);
}

TEST(DDSketch, CollapsesLowestBucketsBeyondMaxBinsAndKeepsHighQuantiles) {
  DDSketch s(0.01, 64);  // 64 buckets of 2 %: a factor of about 3.6 between lowest and highest
  std::vector<std::uint64_t> values;
  for (std::uint64_t v = 1; v <= 1000000; v = v * 11 / 10 + 1) values.push_back(v);
  for (const auto v : values) s.add(v);
  EXPECT_LE(s.bins(), 64u);
  EXPECT_TRUE(s.collapsed());
  EXPECT_EQ(s.count(), values.size());
  // The top quantiles fall in kept buckets: still within alpha.
  for (const double q : {0.97, 0.99, 1.0}) {
    const double exact = exact_quantile(values, q);
    EXPECT_LE(std::abs(s.quantile(q) - exact), 0.01 * exact * (1 + 1e-9)) << q;
  }
  // A value far below the kept range is collapsed too, in either order of arrival.
  DDSketch t(0.01, 16);
  t.add(1000000);
  t.add(1);
  EXPECT_LE(t.bins(), 16u);
  EXPECT_TRUE(t.collapsed());
  // The minimum lies in the collapsed bucket: its quantile lost the guarantee (but stays within
  // [min, max]); the maximum keeps it.
  EXPECT_GE(t.quantile(0), 1.0);
  EXPECT_LE(std::abs(t.quantile(1.0) - 1e6), 0.01 * 1e6);
}

TEST(DDSketch, BinaryFormRoundTripsAndHostileBytesAreRefused) {
  DDSketch s;
  for (const auto v : lognormal(5000, std::log(20000.0), 1.0, 7)) s.add(v);
  s.add(0, 3);
  const std::string bytes = s.encode();
  const auto back = DDSketch::decode(bytes.data(), bytes.size());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->encode(), bytes);
  EXPECT_EQ(back->count(), s.count());
  EXPECT_EQ(back->quantile(0.5), s.quantile(0.5));
  const auto empty = DDSketch().encode();
  ASSERT_TRUE(DDSketch::decode(empty.data(), empty.size()));
  EXPECT_EQ(DDSketch::decode(empty.data(), empty.size())->quantile(0.5), 0.0);

  EXPECT_FALSE(DDSketch::decode(nullptr, 0));
  EXPECT_FALSE(DDSketch::decode(bytes.data(), bytes.size() - 1));  // truncated
  EXPECT_FALSE(DDSketch::decode(bytes.data(), 10));
  auto patched = [&](std::size_t at, const void* v, std::size_t n) {
    std::string b = bytes;
    std::memcpy(b.data() + at, v, n);
    return DDSketch::decode(b.data(), b.size()).has_value();
  };
  EXPECT_FALSE(patched(0, "XXXX", 4));
  const double nan = std::numeric_limits<double>::quiet_NaN(), big = 2.0, tiny = 0.0;
  EXPECT_FALSE(patched(4, &nan, 8));
  EXPECT_FALSE(patched(4, &big, 8));
  EXPECT_FALSE(patched(4, &tiny, 8));
  const std::uint32_t huge_bins = 0xffffffffu, few_bins = 1;
  EXPECT_FALSE(patched(12, &huge_bins, 4));
  EXPECT_FALSE(patched(12, &few_bins, 4));
  const std::uint32_t more_buckets = 5000000;
  EXPECT_FALSE(patched(44, &more_buckets, 4));  // count disagrees with the length
  const std::int32_t negative_index = -5, far_index = 100000000;
  EXPECT_FALSE(patched(40, &negative_index, 4));
  EXPECT_FALSE(patched(40, &far_index, 4));
  const std::uint64_t max_count = std::numeric_limits<std::uint64_t>::max();
  EXPECT_FALSE(patched(52, &max_count, 8));  // bucket counts overflow the total
  const std::uint64_t min_above_max = std::numeric_limits<std::uint64_t>::max();
  EXPECT_FALSE(patched(24, &min_above_max, 8));
  const std::uint32_t other_flags = 6;
  EXPECT_FALSE(patched(48, &other_flags, 4));
}

TEST(DDSketch, HostileSizesAndParameters) {
  EXPECT_THROW(DDSketch(0.0), std::invalid_argument);
  EXPECT_THROW(DDSketch(0.9), std::invalid_argument);
  EXPECT_THROW(DDSketch(std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
  EXPECT_THROW(DDSketch(0.01, 0), std::invalid_argument);
  EXPECT_THROW(DDSketch(0.01, DDSketch::kMaxBins + 1), std::invalid_argument);
  DDSketch s;
  const std::uint64_t top = std::numeric_limits<std::uint64_t>::max();
  s.add(top);
  s.add(1);
  s.add(top, top);  // the count saturates instead of wrapping
  EXPECT_EQ(s.count(), top);
  EXPECT_EQ(s.max(), top);
  EXPECT_LE(s.quantile(1.0), static_cast<double>(top));
  EXPECT_EQ(DDSketch().quantile(0.5), 0.0);
  DDSketch one;
  one.add(777);
  EXPECT_EQ(one.quantile(std::numeric_limits<double>::quiet_NaN()), 777.0);
  EXPECT_EQ(one.quantile(-3), 777.0);
  EXPECT_EQ(one.quantile(7), 777.0);
  DDSketch extremes;
  extremes.add(top);
  extremes.add(1);
  const auto bytes = extremes.encode();
  const auto back = DDSketch::decode(bytes.data(), bytes.size());
  ASSERT_TRUE(back);
  EXPECT_LE(std::abs(back->quantile(1.0) - static_cast<double>(top)),
            0.01 * static_cast<double>(top));
  // 1 and 2^64 lie more than max_bins buckets apart: 1 was collapsed, and the flag is stored.
  EXPECT_TRUE(extremes.collapsed());
  EXPECT_TRUE(back->collapsed());
  EXPECT_GE(back->quantile(0.0), 1.0);
}
