#include "fuselens/db/DDSketch.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace fuselens::db {
namespace {

constexpr char kMagic[4] = {'D', 'D', 'S', '1'};
constexpr std::size_t kHeaderBytes = 52;
constexpr double kMinAlpha = 1e-4, kMaxAlpha = 0.5;

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return a > std::numeric_limits<std::uint64_t>::max() - b
             ? std::numeric_limits<std::uint64_t>::max()
             : a + b;
}

void put(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

std::uint64_t get(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  return v;
}

bool valid_parameters(double alpha, std::uint32_t max_bins) {
  return std::isfinite(alpha) && alpha >= kMinAlpha && alpha <= kMaxAlpha && max_bins >= 16 &&
         max_bins <= DDSketch::kMaxBins;
}

}  // namespace

DDSketch::DDSketch(double alpha, std::uint32_t max_bins) : alpha_(alpha), max_bins_(max_bins) {
  if (!valid_parameters(alpha, max_bins))
    throw std::invalid_argument(
        "DDSketch: alpha must lie in [1e-4, 0.5] and max_bins in [16, 65536]");
  gamma_ = (1 + alpha) / (1 - alpha);
  log_gamma_ = std::log(gamma_);
}

int DDSketch::index_of(std::uint64_t value) const {
  // value >= 1: ceil(log_gamma(value)); at most log(2^64) / log(1.0002) ~ 2.2e5, fits an int.
  return static_cast<int>(std::ceil(std::log(static_cast<double>(value)) / log_gamma_));
}

double DDSketch::value_of(int index) const { return 2 * std::pow(gamma_, index) / (gamma_ + 1); }

void DDSketch::add(std::uint64_t value, std::uint64_t count) {
  if (count == 0) return;
  if (count_ == 0) {
    min_ = max_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  count_ = saturating_add(count_, count);
  if (value == 0) {
    zero_count_ = saturating_add(zero_count_, count);
    return;
  }
  add_at(index_of(value), count);
}

void DDSketch::add_at(int index, std::uint64_t count) {
  if (counts_.empty()) {
    first_ = index;
    counts_.assign(1, count);
    return;
  }
  const int last = first_ + static_cast<int>(counts_.size()) - 1;
  const int bins = static_cast<int>(max_bins_);
  if (index < first_) {
    if (last - index + 1 > bins) {  // below the kept range: into the lowest kept bucket
      const int low = last - bins + 1;
      if (low < first_) {
        counts_.insert(counts_.begin(), static_cast<std::size_t>(first_ - low), 0);
        first_ = low;
      }
      counts_[0] = saturating_add(counts_[0], count);
      collapsed_ = true;
      return;
    }
    counts_.insert(counts_.begin(), static_cast<std::size_t>(first_ - index), 0);
    first_ = index;
  } else if (index > last) {
    const int low = index - bins + 1;
    if (low > first_) {  // keep the top max_bins buckets: fold those below `low` into it
      const std::size_t drop = static_cast<std::size_t>(std::min(low, last + 1) - first_);
      std::uint64_t folded = 0;
      for (std::size_t i = 0; i < drop; ++i) folded = saturating_add(folded, counts_[i]);
      counts_.erase(counts_.begin(), counts_.begin() + static_cast<std::ptrdiff_t>(drop));
      first_ += static_cast<int>(drop);
      if (counts_.empty()) {  // everything was below `low`
        counts_.assign(1, 0);
        first_ = low;
      }
      counts_[0] = saturating_add(counts_[0], folded);
      collapsed_ = collapsed_ || folded > 0;
    }
    counts_.resize(static_cast<std::size_t>(index - first_ + 1), 0);
  }
  auto& bucket = counts_[static_cast<std::size_t>(index - first_)];
  bucket = saturating_add(bucket, count);
}

void DDSketch::merge(const DDSketch& other) {
  if (other.alpha_ != alpha_)
    throw std::invalid_argument("DDSketch: merging sketches of another alpha");
  if (other.count_ == 0) return;
  min_ = count_ == 0 ? other.min_ : std::min(min_, other.min_);
  max_ = count_ == 0 ? other.max_ : std::max(max_, other.max_);
  count_ = saturating_add(count_, other.count_);
  zero_count_ = saturating_add(zero_count_, other.zero_count_);
  // Same gamma: bucket i of the other is bucket i here.
  for (std::size_t i = 0; i < other.counts_.size(); ++i) {
    if (other.counts_[i] > 0) add_at(other.first_ + static_cast<int>(i), other.counts_[i]);
  }
  collapsed_ = collapsed_ || other.collapsed_;
}

double DDSketch::quantile(double q) const {
  if (count_ == 0) return 0;
  if (!(q >= 0)) q = 0;  // NaN too
  q = std::min(q, 1.0);
  const auto rank = static_cast<std::uint64_t>(std::floor(q * static_cast<double>(count_ - 1)));
  double estimate = static_cast<double>(max_);
  if (rank < zero_count_) {
    estimate = 0;
  } else {
    std::uint64_t seen = zero_count_;
    for (std::size_t i = 0; i < counts_.size(); ++i) {
      seen = saturating_add(seen, counts_[i]);
      if (seen > rank) {
        estimate = value_of(first_ + static_cast<int>(i));
        break;
      }
    }
  }
  return std::clamp(estimate, static_cast<double>(min_), static_cast<double>(max_));
}

std::string DDSketch::encode() const {
  std::string out(kMagic, sizeof kMagic);
  std::uint64_t alpha_bits = 0;
  std::memcpy(&alpha_bits, &alpha_, sizeof alpha_bits);
  put(out, alpha_bits, 8);
  put(out, max_bins_, 4);
  put(out, zero_count_, 8);
  put(out, min_, 8);
  put(out, max_, 8);
  put(out, static_cast<std::uint32_t>(first_), 4);
  put(out, counts_.size(), 4);
  put(out, collapsed_ ? 1 : 0, 4);
  for (const auto c : counts_) put(out, c, 8);
  return out;
}

std::optional<DDSketch> DDSketch::decode(const void* data, std::size_t size) {
  if (!data || size < kHeaderBytes) return std::nullopt;
  const auto* p = static_cast<const unsigned char*>(data);
  if (std::memcmp(p, kMagic, sizeof kMagic) != 0) return std::nullopt;
  const std::uint64_t alpha_bits = get(p + 4, 8);
  double alpha = 0;
  std::memcpy(&alpha, &alpha_bits, sizeof alpha);
  const auto max_bins = static_cast<std::uint32_t>(get(p + 12, 4));
  if (!valid_parameters(alpha, max_bins)) return std::nullopt;
  const auto n = get(p + 44, 4);
  if (n > max_bins || size != kHeaderBytes + 8 * n) return std::nullopt;
  DDSketch s(alpha, max_bins);
  s.zero_count_ = get(p + 16, 8);
  s.min_ = get(p + 24, 8);
  s.max_ = get(p + 32, 8);
  s.first_ = static_cast<std::int32_t>(static_cast<std::uint32_t>(get(p + 40, 4)));
  const auto flags = get(p + 48, 4);
  if (flags > 1) return std::nullopt;
  s.collapsed_ = flags == 1;
  // The indices a uint64 value can have: 0 .. index_of(2^64 - 1).
  const int top = s.index_of(std::numeric_limits<std::uint64_t>::max());
  if (n > 0 && (s.first_ < 0 || s.first_ > top ||
                static_cast<std::int64_t>(s.first_) + static_cast<std::int64_t>(n) - 1 > top))
    return std::nullopt;
  s.counts_.resize(n);
  std::uint64_t total = s.zero_count_;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t c = get(p + kHeaderBytes + 8 * i, 8);
    if (c > std::numeric_limits<std::uint64_t>::max() - total) return std::nullopt;
    total += c;
    s.counts_[i] = c;
  }
  s.count_ = total;
  if (total == 0 ? (s.min_ != 0 || s.max_ != 0) : s.min_ > s.max_) return std::nullopt;
  if (s.zero_count_ > 0 && s.min_ != 0) return std::nullopt;
  return s;
}

}  // namespace fuselens::db
