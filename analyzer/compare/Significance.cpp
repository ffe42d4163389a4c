#include "compare/Significance.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace fuselens::analyzer {
namespace {

/// Median of `v` (non-empty), reordering it: O(n) by selection.
double median_in_place(std::vector<double>& v) {
  const std::size_t n = v.size();
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (n % 2 == 1) return *mid;
  const double upper = *mid;
  const double lower = *std::max_element(v.begin(), mid);  // the largest of the lower half
  return lower / 2 + upper / 2;  // halves first: no overflow to infinity near DBL_MAX
}

/// At most kMaxBootstrapSamples evenly spaced order statistics of `samples` (sorted copy).
std::vector<double> thinned(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  if (samples.size() <= kMaxBootstrapSamples) return samples;
  std::vector<double> out(kMaxBootstrapSamples);
  const std::size_t last = samples.size() - 1;
  for (std::size_t i = 0; i < out.size(); ++i) {
    // i * last / (m - 1) without overflow: last < 2^63 / m for any sample that fits in memory.
    out[i] = samples[i * last / (out.size() - 1)];
  }
  return out;
}

}  // namespace

const char* describe(SampleProblem problem) {
  switch (problem) {
    case SampleProblem::None:
      return "";
    case SampleProblem::TooFew:
      return "one iteration: no interval";
    case SampleProblem::NotFinite:
      return "a time is not finite: no interval";
    case SampleProblem::Negative:
      return "a time is negative: no interval";
    case SampleProblem::ZeroMedian:
      return "a median time is 0: no interval";
  }
  return "";
}

SampleProblem check_samples(const std::vector<double>& samples) {
  for (const double x : samples) {
    if (!std::isfinite(x)) return SampleProblem::NotFinite;
  }
  for (const double x : samples) {
    if (x < 0) return SampleProblem::Negative;
  }
  return samples.size() < 2 ? SampleProblem::TooFew : SampleProblem::None;
}

double median_of(std::vector<double> samples) {
  return samples.empty() ? 0 : median_in_place(samples);
}

double quantile_sorted(const std::vector<double>& sorted, double p) {
  const std::size_t n = sorted.size();
  if (n == 1 || !(p > 0)) return sorted.front();
  if (p >= 1) return sorted.back();
  const double h = static_cast<double>(n - 1) * p;  // 0-based position
  const auto lo = static_cast<std::size_t>(std::floor(h));
  if (lo + 1 >= n) return sorted.back();
  const double frac = h - static_cast<double>(lo);
  return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

Noise noise_of(const std::vector<double>& samples) {
  Noise noise;
  if (samples.empty() || check_samples(samples) == SampleProblem::NotFinite) return noise;
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  noise.n = sorted.size();
  noise.median = quantile_sorted(sorted, 0.5);
  // Mean and spread of x / scale: values near DBL_MAX neither overflow the sum nor the squares.
  const double scale = std::max(std::abs(sorted.front()), std::abs(sorted.back()));
  double mean = 0;
  for (const double x : sorted) mean += (scale > 0 ? x / scale : 0) / static_cast<double>(noise.n);
  noise.mean = mean * scale;
  if (noise.n < 2) return noise;  // one value: no spread to speak of
  if (noise.mean > 0) {
    double ss = 0;
    for (const double x : sorted) {
      const double d = (scale > 0 ? x / scale : 0) - mean;
      ss += d * d;
    }
    const double sd = std::sqrt(ss / static_cast<double>(noise.n - 1));
    noise.cv = sd / mean;  // both divided by scale
  }
  if (noise.median > 0) {
    noise.iqr_over_median =
        (quantile_sorted(sorted, 0.75) - quantile_sorted(sorted, 0.25)) / noise.median;
  }
  return noise;
}

std::pair<double, double> percentile_interval(std::vector<double> replicates, double level) {
  std::sort(replicates.begin(), replicates.end());
  const std::size_t b = replicates.size();
  const double alpha = 1 - level;
  auto k = static_cast<std::size_t>(std::floor(static_cast<double>(b + 1) * alpha / 2));
  k = std::clamp<std::size_t>(k, 1, (b + 1) / 2);
  return {replicates[k - 1], replicates[b - k]};
}

RatioResult bootstrap_median_ratio(const std::vector<double>& baseline,
                                   const std::vector<double>& candidate,
                                   const BootstrapOptions& options) {
  RatioResult result;
  for (const auto* side : {&baseline, &candidate}) {
    const SampleProblem problem = check_samples(*side);
    // Not finite or negative outranks "too few": it says what is wrong with the data.
    if (problem != SampleProblem::None &&
        (result.problem == SampleProblem::None || result.problem == SampleProblem::TooFew)) {
      result.problem = problem;
    }
  }
  if (result.problem != SampleProblem::None) return result;
  const double level = std::isfinite(options.level) && options.level > 0 && options.level < 1
                           ? options.level
                           : BootstrapOptions{}.level;
  const std::vector<double> b = thinned(baseline), c = thinned(candidate);
  const double mb = median_of(b), mc = median_of(c);
  if (!(mb > 0) || !(mc > 0)) {
    result.problem = SampleProblem::ZeroMedian;
    return result;
  }
  const int resamples = std::max(options.resamples, 100);
  std::mt19937_64 engine(options.seed);
  std::vector<double> replicates;
  replicates.reserve(static_cast<std::size_t>(resamples));
  std::vector<double> draw_b(b.size()), draw_c(c.size());
  for (int r = 0; r < resamples; ++r) {
    for (auto& x : draw_b) x = b[uniform_index(engine, b.size())];
    for (auto& x : draw_c) x = c[uniform_index(engine, c.size())];
    const double rb = median_in_place(draw_b), rc = median_in_place(draw_c);
    if (!(rc > 0) || !(rb > 0)) {
      // A resample made of zeros: the ratio is 0 or infinite. Intervals are not defined on
      // such samples (mostly zeros); say so rather than report a meaningless bound.
      result.problem = SampleProblem::ZeroMedian;
      return result;
    }
    replicates.push_back(rb / rc);
  }
  const auto [low, high] = percentile_interval(std::move(replicates), level);
  result.interval = RatioInterval{mb / mc, low, high, level, resamples};
  return result;
}

std::optional<RankTest> mann_whitney(const std::vector<double>& baseline,
                                     const std::vector<double>& candidate) {
  if (baseline.empty() || candidate.empty()) return std::nullopt;
  if (check_samples(baseline) == SampleProblem::NotFinite ||
      check_samples(candidate) == SampleProblem::NotFinite) {
    return std::nullopt;
  }
  struct Value {
    double x;
    bool candidate;
  };
  std::vector<Value> pooled;
  pooled.reserve(baseline.size() + candidate.size());
  for (const double x : baseline) pooled.push_back({x, false});
  for (const double x : candidate) pooled.push_back({x, true});
  std::sort(pooled.begin(), pooled.end(), [](const Value& a, const Value& b) { return a.x < b.x; });
  const auto total = static_cast<double>(pooled.size());
  double rank_sum = 0, ties = 0;
  for (std::size_t i = 0; i < pooled.size();) {
    std::size_t j = i;
    while (j < pooled.size() && pooled[j].x == pooled[i].x) ++j;
    const double t = static_cast<double>(j - i);
    const double mean_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;  // 1-based
    for (std::size_t k = i; k < j; ++k) rank_sum += pooled[k].candidate ? mean_rank : 0;
    ties += t * t * t - t;
    i = j;
  }
  const auto nb = static_cast<double>(baseline.size()), nc = static_cast<double>(candidate.size());
  RankTest test;
  test.u = rank_sum - nc * (nc + 1) / 2;
  const double mean = nb * nc / 2;
  const double variance =
      nb * nc / 12 * ((total + 1) - (total > 1 ? ties / (total * (total - 1)) : 0));
  if (!(variance > 0)) return test;  // every value tied: no evidence of a difference, p = 1
  const double d = test.u - mean;
  const double corrected = std::abs(d) <= 0.5 ? 0 : d - (d > 0 ? 0.5 : -0.5);
  test.z = corrected / std::sqrt(variance);
  test.p_two_sided = std::erfc(std::abs(test.z) / std::sqrt(2.0));
  return test;
}

}  // namespace fuselens::analyzer
