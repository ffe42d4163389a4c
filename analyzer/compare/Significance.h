#pragma once
// Significance: the statistics of compare's CI gate (CompareGate.h), over repeated measurements
// of one quantity (the time per iteration of each instance of an NVTX range, ns): run-to-run
// noise, a bootstrap confidence interval of the ratio of two medians, and the Mann-Whitney rank
// test. Pure functions of the samples given; nothing here reads a capture.
//
// Noise of one sample x_1..x_n (n >= 2; one value has no spread: both ratios nullopt):
//   cv               = s / mean, s = sqrt(sum (x_i - mean)^2 / (n - 1)) (0 when every value is
//                      equal; nullopt when the mean is <= 0);
//   iqr_over_median  = (Q3 - Q1) / median, quartiles by linear interpolation between order
//                      statistics (Hyndman & Fan 1996, definition 7, R's and NumPy's default:
//                      Q(p) = x_(floor(h)) + (h - floor(h)) (x_(floor(h)+1) - x_(floor(h))),
//                      h = (n - 1) p + 1, 1-based order statistics); nullopt when the median is
//                      <= 0.
//
// Bootstrap interval of the speedup (Efron & Tibshirani, "An Introduction to the Bootstrap",
// Chapman & Hall 1993: ch. 6 for bootstrap replications, ch. 13 for the percentile interval;
// the two-sample case resamples each sample independently, ch. 8):
//   theta      = median(baseline) / median(candidate)
//   replicate  = median(baseline*) / median(candidate*), where baseline* (candidate*) is a draw
//                with replacement of n_b (n_c) values from the baseline (candidate) sample;
//   B replicates (default 2000) sorted, the level-(1 - alpha) interval is
//   [theta*_(k), theta*_(B + 1 - k)], k = max(1, floor((B + 1) alpha / 2)) (the alpha/2 and
//   1 - alpha/2 percentiles of the replicates, with the (B + 1) order-statistic convention of
//   Davison & Hinkley, "Bootstrap Methods and their Application", 1997, ch. 5).
//   The draws come from std::mt19937_64 (its output sequence is fixed by the C++ standard) seeded
//   with BootstrapOptions::seed, mapped to indexes by rejection sampling (no modulo bias, and not
//   std::uniform_int_distribution, whose mapping differs between standard libraries): the same
//   samples and options give the same interval on every platform. The percentile interval is
//   known to be too narrow for small samples (Efron & Tibshirani ch. 13-14); read intervals from
//   fewer than about 10 values per side with care.
//   Samples longer than kMaxBootstrapSamples are thinned before resampling to that many evenly
//   spaced order statistics (a quantile sketch: the median moves by at most one rank step), which
//   widens the interval (fewer values), never narrows it: the gate errs towards "inconclusive".
//
// Mann-Whitney U (Mann & Whitney 1947, "On a test of whether one of two random variables is
// stochastically larger than the other"), normal approximation with tie correction and continuity
// correction (Lehmann, "Nonparametrics", 1975, ch. 1):
//   U          = R_c - n_c (n_c + 1) / 2, R_c = the sum of the candidate's ranks in the pooled
//                sample (tied values get the mean of their ranks): the number of (baseline,
//                candidate) pairs with the candidate larger, ties counting 1/2;
//   mean       = n_b n_c / 2
//   variance   = n_b n_c / 12 * ((N + 1) - sum_t (t^3 - t) / (N (N - 1))), N = n_b + n_c, t the
//                size of each group of tied values;
//   z          = (U - mean - 0.5 sign(U - mean)) / sqrt(variance)  (0 when |U - mean| <= 0.5)
//   p          = erfc(|z| / sqrt(2)), two-sided: the chance of a U this far from its mean when
//                both samples come from one distribution (1 when the variance is 0: all tied).
//   The approximation is poor for tiny samples (n_b or n_c under about 8); the gate does not
//   decide on it, it is reported beside the interval.
//
// Errors: none thrown. Samples with a value that is not finite or is negative give nullopt
// (SampleProblem says which); every function accepts empty samples.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace fuselens::analyzer {

/// Resampling works on at most this many values per side (see the header comment).
inline constexpr std::size_t kMaxBootstrapSamples = 20000;

/// Why a sample cannot give an interval.
enum class SampleProblem {
  None,
  TooFew,      ///< fewer than 2 values on a side ("one iteration: no interval")
  NotFinite,   ///< a value is NaN or infinite
  Negative,    ///< a value is < 0
  ZeroMedian,  ///< a median (of a sample, or of a resample) is 0: no ratio
};
/// "", "one iteration: no interval", "a time is not finite: no interval", "a time is negative:
/// no interval", "a median time is 0: no interval".
const char* describe(SampleProblem problem);

/// The problem of `samples` for an interval (None, TooFew, NotFinite or Negative; ZeroMedian is
/// found while resampling).
SampleProblem check_samples(const std::vector<double>& samples);

/// Median (the mean of the two middle values for an even count); 0 for an empty sample.
double median_of(std::vector<double> samples);

/// Quantile p in [0, 1] by linear interpolation (Hyndman & Fan definition 7) of `sorted`
/// (ascending, non-empty).
double quantile_sorted(const std::vector<double>& sorted, double p);

/// Run-to-run noise of one sample (see the header comment).
struct Noise {
  std::size_t n = 0;
  double median = 0, mean = 0;
  std::optional<double> cv;               ///< coefficient of variation, a fraction (0.05 = 5 %)
  std::optional<double> iqr_over_median;  ///< a fraction
};
/// Noise of `samples`; n = 0 and no ratios for an empty sample, or one with a value that is not
/// finite; n = 1 and no ratios for one value.
Noise noise_of(const std::vector<double>& samples);

struct BootstrapOptions {
  int resamples = 2000;             ///< B; values below 100 are raised to 100
  double level = 0.95;              ///< 1 - alpha, in (0, 1)
  std::uint64_t seed = 0x46757365;  ///< "Fuse": fixed, so the output is deterministic
};

/// A two-sided interval of the speedup median(baseline) / median(candidate).
struct RatioInterval {
  double estimate = 0;  ///< theta on the full samples
  double low = 0, high = 0;
  double level = 0.95;
  int resamples = 0;
};

/// The interval, or the problem that prevents one (exactly one of the two is set).
struct RatioResult {
  std::optional<RatioInterval> interval;
  SampleProblem problem = SampleProblem::None;
};

/// Percentile bootstrap interval of median(baseline) / median(candidate). Needs >= 2 finite,
/// non-negative values on each side and every resampled median > 0 (else `problem`).
RatioResult bootstrap_median_ratio(const std::vector<double>& baseline,
                                   const std::vector<double>& candidate,
                                   const BootstrapOptions& options = {});

/// [theta*_(k), theta*_(B + 1 - k)] of `replicates` (any order, non-empty), k = max(1,
/// floor((B + 1) (1 - level) / 2)): the percentile interval's two order statistics.
std::pair<double, double> percentile_interval(std::vector<double> replicates, double level);

/// A uniform index in [0, n) from `next` (a 64-bit generator's output), by rejection: values of
/// `next` at or above the largest multiple of n are drawn again. n >= 1.
template <typename Generator>
std::size_t uniform_index(Generator& next, std::size_t n) {
  const std::uint64_t range = n;
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % range;  // draws below: unbiased
  std::uint64_t x;
  do {
    x = next();
  } while (x >= limit);
  return static_cast<std::size_t>(x % range);
}

/// The Mann-Whitney rank test of candidate against baseline (see the header comment).
struct RankTest {
  double u = 0;  ///< pairs with the candidate larger (ties 1/2)
  double z = 0;
  double p_two_sided = 1;
};
/// nullopt when a side is empty or a value is not finite.
std::optional<RankTest> mann_whitney(const std::vector<double>& baseline,
                                     const std::vector<double>& candidate);

}  // namespace fuselens::analyzer
