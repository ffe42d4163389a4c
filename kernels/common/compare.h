#pragma once
// Comparing a kernel's output with a CPU reference (pure C++, part of fuselens_kernels_reference).
//
// relative_l2 = ||out - ref||_2 / ||ref||_2, accumulated in double. When ||ref||_2 == 0 the
// absolute
// ||out - ref||_2 is reported instead (so an all-zero reference still catches wrong output).
// Non-finite outputs (NaN, +-Inf; e.g. the 0xFF poison pattern left in an unwritten element) are
// counted separately and always fail the check.

#include <cstddef>
#include <span>

namespace fuselens::kernels {

/// Tolerance for FP32 kernels checked against a double-precision reference.
inline constexpr double kFp32RelativeTolerance = 1e-5;
/// FP16 storage (unit roundoff 2^-11 ≈ 4.9e-4) with FP32 accumulation: rounding the inputs and the
/// output each contributes at most u per element, so a relative L2 error above 2e-3 is a bug.
inline constexpr double kFp16RelativeTolerance = 2e-3;
/// BF16 storage (unit roundoff 2^-8 ≈ 3.9e-3) with FP32 accumulation: same argument, bound 1.6e-2.
inline constexpr double kBf16RelativeTolerance = 1.6e-2;

/// Result of compare_relative_l2.
struct Comparison {
  double relative_l2 = 0.0;  ///< ||out - ref|| / ||ref|| over the finite outputs (see above).
  std::size_t nonfinite_count = 0;  ///< Outputs that are NaN or infinite.

  /// True when there are no non-finite outputs and relative_l2 <= tolerance.
  [[nodiscard]] bool passes(double tolerance = kFp32RelativeTolerance) const noexcept {
    return nonfinite_count == 0 && relative_l2 <= tolerance;
  }
};

/// Compares `out` with `ref` element by element.
/// Throws std::invalid_argument when the sizes differ.
[[nodiscard]] Comparison compare_relative_l2(std::span<const float> out,
                                             std::span<const float> ref);

}  // namespace fuselens::kernels
