#pragma once
// saturating_add: a + b clamped to the int64 range. Times, sizes and counts come from the capture
// file, and a damaged capture can hold values whose sum does not fit (found by
// fuzz/capture_fuzzer); a sum that overflows upward gives INT64_MAX, downward INT64_MIN.

#include <cstdint>
#include <limits>

namespace fuselens::db {

inline std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  std::int64_t sum = 0;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? std::numeric_limits<std::int64_t>::max()
               : std::numeric_limits<std::int64_t>::min();
}

}  // namespace fuselens::db
