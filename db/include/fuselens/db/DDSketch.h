#pragma once
// DDSketch: a quantile sketch of non-negative integer values (durations in ns) with a relative
// error guarantee, after Masson, Rim and Lee, "DDSketch: A Fast and Fully-Mergeable Quantile
// Sketch with Relative-Error Guarantees", PVLDB 12(12), 2019 (arXiv:1908.10693). No C/C++
// implementation is packaged for Debian or pip (HdrHistogram is Go/Java there, DataDog's ddsketch
// is Python), so this is the paper's algorithm written for FuseLens; aggregate mode
// (docs/aggregate.md) stores one per aggregate row.
//
// Buckets: with gamma = (1 + alpha) / (1 - alpha), a value x >= 1 falls in bucket
// i = ceil(log_gamma(x)), which holds the values in (gamma^(i-1), gamma^i]; the bucket's estimate
// 2 gamma^i / (gamma + 1) is within relative error alpha of every value in it (the paper's
// Lemma 2). Values 0 are counted apart (exact). Buckets are stored densely from the lowest index
// seen; when the indices seen span more than max_bins, the lowest buckets are collapsed into the
// lowest kept one (the paper's "collapsing lowest buckets", section 2.2): quantiles whose rank
// falls into the collapsed buckets lose the guarantee, every other keeps it. The exact minimum
// and maximum are kept too, and estimates are clamped to [min, max].
//
// quantile(q): the value of rank floor(q (n - 1)) from 0 in sorted order (the paper's lower
// quantile), estimated; within relative error alpha of the exact one unless collapsed.
//
// Binary form (encode/decode; the BLOB columns of db/schema.sql's aggregate tables), all
// integers little-endian:
//   bytes 0-3   "DDS1"
//   bytes 4-11  alpha, IEEE-754 binary64
//   bytes 12-15 max_bins (uint32)
//   bytes 16-23 count of zero values (uint64)
//   bytes 24-31 minimum value (uint64; 0 when empty)
//   bytes 32-39 maximum value (uint64; 0 when empty)
//   bytes 40-43 index of the first bucket (int32)
//   bytes 44-47 number of buckets n (uint32, at most max_bins)
//   bytes 48-51 flags (uint32): 1 when lower buckets were collapsed, else 0
//   then n uint64 counts, the buckets first index .. first index + n - 1.
// decode() refuses (nullopt) anything else: a wrong length or magic, alpha outside
// [1e-4, 0.5], max_bins outside [16, kMaxBins], other flags, more buckets than max_bins, indices out of range,
// counts whose sum overflows, min > max, or an empty sketch with a nonzero min or max.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fuselens::db {

class DDSketch {
 public:
  static constexpr double kDefaultAlpha = 0.01;           ///< 1 % relative accuracy
  static constexpr std::uint32_t kDefaultMaxBins = 2048;  ///< 1 ns .. 1e17 ns at 1 %: 1,000 bins
  static constexpr std::uint32_t kMaxBins = 1u << 16;

  /// alpha in [1e-4, 0.5] and max_bins in [16, kMaxBins]; std::invalid_argument otherwise.
  explicit DDSketch(double alpha = kDefaultAlpha, std::uint32_t max_bins = kDefaultMaxBins);

  /// Adds `count` occurrences of `value` (ns). O(1) amortized; grows the dense store when the
  /// value falls outside it (collapsing the lowest buckets past max_bins).
  void add(std::uint64_t value, std::uint64_t count = 1);
  /// Adds every value of `other`. Throws std::invalid_argument when alpha differs.
  void merge(const DDSketch& other);

  std::uint64_t count() const { return count_; }
  std::uint64_t min() const { return min_; }
  std::uint64_t max() const { return max_; }
  double alpha() const { return alpha_; }
  std::uint32_t max_bins() const { return max_bins_; }
  std::size_t bins() const { return counts_.size(); }
  /// Whether some values were collapsed into a lower bucket (the guarantee is lost for quantiles
  /// whose rank falls there).
  bool collapsed() const { return collapsed_; }

  /// The estimated quantile q in [0, 1] (clamped) as defined above; 0 for an empty sketch.
  double quantile(double q) const;

  std::string encode() const;
  static std::optional<DDSketch> decode(const void* data, std::size_t size);

 private:
  int index_of(std::uint64_t value) const;
  void add_at(int index, std::uint64_t count);  // the bucket's count only
  double value_of(int index) const;

  double alpha_, gamma_, log_gamma_;
  std::uint32_t max_bins_;
  std::uint64_t zero_count_ = 0, count_ = 0, min_ = 0, max_ = 0;
  int first_ = 0;                      // index of counts_[0]
  std::vector<std::uint64_t> counts_;  // dense buckets first_ .. first_ + size - 1
  bool collapsed_ = false;
};

}  // namespace fuselens::db
