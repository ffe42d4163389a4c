#pragma once
// RooflineMath: the arithmetic of the roofline model (Williams, Waterman and Patterson, "Roofline:
// an insightful visual performance model", CACM 2009), with one compute ceiling per class of
// floating-point work and one bandwidth ceiling per memory level.
//
//   arithmetic intensity I_l  = FLOPs / bytes moved at level l                 [FLOP/byte]
//   attainable(I)             = min(peak FLOP/s, I x bandwidth)                 [FLOP/s]
//   ridge point               = peak FLOP/s / bandwidth                         [FLOP/byte]
//   floor time                = max( sum_p FLOPs_p / peak_p , max_l bytes_l / bandwidth_l )
//   attainable FLOP/s         = total FLOPs / floor time   (= min(peak, I x bw) for one class
//                               and one level)
//   efficiency                = floor time / measured time = achieved / attainable
// The compute term sums over precision classes because one kernel's FP32 and tensor work share
// its time; the memory term takes the slowest level. `bound` names the term that sets the floor.
// Kernels that do no floating-point work (copies) still get a floor time, hence an efficiency.
//
// Units: FLOP/s, bytes/s, ns. No I/O, no exceptions; pure functions, unit-tested against hand
// computations (tests/analyzer/RooflineMathTest.cpp).

#include <array>
#include <cstddef>
#include <optional>
#include <string>

namespace fuselens::analyzer {

/// Classes of floating-point work, each with its own compute ceiling.
enum class Precision : std::size_t { Fp64 = 0, Fp32 = 1, Fp16 = 2, Tensor = 3 };
inline constexpr std::size_t kPrecisions = 4;
/// Memory levels with a bandwidth ceiling.
enum class MemoryLevel : std::size_t { Dram = 0, L2 = 1, L1 = 2 };
inline constexpr std::size_t kMemoryLevels = 3;

/// "fp64", "fp32", "fp16", "tensor" / "dram", "l2", "l1".
const char* to_string(Precision precision);
const char* to_string(MemoryLevel level);
/// Inverse of to_string(Precision); nullopt for an unknown name.
std::optional<Precision> parse_precision(const std::string& name);

/// The ceilings a roofline is drawn against; absent entries have no figure.
struct Ceilings {
  std::string id;      ///< "h100-sxm", "t4", "measured"
  std::string label;   ///< for people: "NVIDIA H100 SXM5 80 GB (datasheet)"
  std::string source;  ///< where the figures come from
  std::array<std::optional<double>, kPrecisions> flops_per_s{};
  std::array<std::optional<double>, kMemoryLevels> bytes_per_s{};

  std::optional<double> flops(Precision p) const { return flops_per_s[static_cast<std::size_t>(p)]; }
  std::optional<double> bandwidth(MemoryLevel l) const {
    return bytes_per_s[static_cast<std::size_t>(l)];
  }
};

/// Work done: FLOPs per class and bytes per level (absent: not counted or not declared).
struct Work {
  std::array<double, kPrecisions> flops{};
  std::array<std::optional<double>, kMemoryLevels> bytes{};

  double total_flops() const;
  double flops_of(Precision p) const { return flops[static_cast<std::size_t>(p)]; }
  std::optional<double> bytes_at(MemoryLevel l) const { return bytes[static_cast<std::size_t>(l)]; }
  /// Adds FLOPs class by class and bytes level by level (absent + x = x).
  Work& operator+=(const Work& other);
  /// Multiplies every figure by `factor` (e.g. the iterations of a range).
  Work scaled(double factor) const;
};

/// min(peak, intensity x bandwidth) in FLOP/s.
double attainable_flops_per_s(double intensity, double peak_flops_per_s, double bytes_per_s);
/// peak / bandwidth in FLOP/byte: the intensity above which a kernel can be compute-bound.
double ridge_point(double peak_flops_per_s, double bytes_per_s);

/// The roofline figures of `work` done in `time_ns` against `ceilings`.
struct RooflineResult {
  double time_ns = 0;
  double flops = 0;                  ///< total over classes
  double achieved_flops_per_s = 0;   ///< flops / time
  std::array<std::optional<double>, kMemoryLevels> intensity{};            ///< FLOP/byte
  std::array<std::optional<double>, kMemoryLevels> achieved_bytes_per_s{};  ///< bytes / time
  std::optional<Precision> dominant;  ///< class with the most FLOPs; none without FLOPs
  /// "compute:fp32", "memory:dram", ...: the ceiling that sets the floor time; "none" when no
  /// term of the work has a ceiling.
  std::string bound = "none";
  double floor_ns = 0;                 ///< the floor time above; 0 when bound is "none"
  double attainable_flops_per_s = 0;   ///< flops / floor (0 without FLOPs or floor)
  double efficiency = 0;               ///< floor / time; 0 when unknown
  /// False when some FLOPs or bytes of the work have no ceiling (their term is left out, so the
  /// floor and the efficiency are lower bounds).
  bool complete = true;
};

RooflineResult evaluate(const Work& work, double time_ns, const Ceilings& ceilings);

}  // namespace fuselens::analyzer
