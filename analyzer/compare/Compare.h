#pragma once
// Compare: baseline vs candidate, per op and shape, from NVTX ranges.
//
// Two modes:
//  - one capture, two sets of NVTX ranges chosen by glob patterns (`*` any text, `?` one
//    character): a baseline range and a candidate range are paired when their wildcards matched
//    the same text (the key; the texts of several wildcards are joined with '/'), e.g.
//    'gemm_bias_relu/unfused/*' and 'gemm_bias_relu/fused/*' pair on "M64_N128_K256";
//  - two captures (A = baseline, B = candidate): ranges paired by their full name, plus a
//    kernel diff (HTA's trace diff: kernels added, removed, faster, slower, unchanged).
//
// Per range name (all its instances, RangeStats):
//  - GPU time of an instance = sum of the durations of the kernels launched inside it (the
//    projection of RangeProjection, CompareProjection.h, as Summary's NVTX rows: by any thread
//    of the range's process by default, NvtxProjection::Thread for its own thread); divided by
//    its iterations: the range's integer NVTX payload when present and > 0, else 1; the
//    median over instances is the op's time per iteration;
//  - GPU span of an instance = from the earliest start to the latest end of the GPU work
//    (kernels, copies and memsets) launched inside it (same projection rule; SpanProjection,
//    CompareProjection.h), 0 when nothing was launched; divided by its iterations, the median
//    over instances is the span per iteration. It is the extent of Nsight Systems' projected
//    NVTX range (nvtx_gpu_proj_trace) and what CUDA events recorded around the loop of
//    iterations measure (fusion_bench's and a benchmark's figure): launch gaps, idle time and
//    copies count, overlapping work counts once. GPU time (the sum of kernel durations) says
//    what the kernels cost; span says what a caller waits for. Both are reported. (A
//    benchmark's events usually give the median of per-iteration differences; the span is the
//    whole instance over its iterations, a mean: the two differ by iteration-to-iteration noise);
//  - kernels, launches, and bytes moved by memcpy and memset launched inside, per iteration
//    (totals over instances / total iterations);
//  - peak device memory per device: the maximum of the running sum of device-memory
//    allocations minus releases (memory_event, kind Device, of the range's process, in
//    (timestamp, id) order; the sum starts at the capture's start, so memory allocated before
//    the range counts) at the range's start and at every event up to its end; the maximum
//    over instances;
//  - throughput: iterations per second = 1e9 / median GPU ns per iteration; items per second when
//    the range name's last '/'-segment is "batch<N>" (N items per iteration) = N x that.
// op = the first '/'-segment of the range name; shape = the key (two captures: the rest of the
// name) without a leading "op/"; variant = the range name's segments that are neither the op
// nor wildcard-matched (e.g. "unfused"), else "baseline" / "candidate".
// speedup = baseline median / candidate median GPU time per iteration (> 1: the candidate is
// faster); span speedup = the same ratio of the median spans per iteration. TimeBasis picks
// which of the two slowdown_percent / slower_than (--fail-if-slower) use; GPU time by default.
// The matrix for heatmaps (CompareFormat.h) carries both: speedup_vs_baseline on GPU time,
// span_speedup_vs_baseline on the span.
//
// Units: ns, bytes, items and iterations per second.
// Errors: CompareError for a pattern that matches no range, or ranges of the two patterns that
// share no key; db::Error from reading a capture.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compare/CompareProjection.h"
#include "compare/Significance.h"
#include "fuselens/db/Reader.h"
#include "summary/Summary.h"

namespace fuselens::analyzer {

class CompareError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The texts the wildcards of `pattern` matched in `text` (leftmost, shortest first), or
/// nullopt when it does not match. A pattern without wildcards yields an empty vector on an
/// exact match.
std::optional<std::vector<std::string>> glob_match(std::string_view pattern, std::string_view text);

/// Statistics of all instances of one NVTX range name (ended ranges only).
struct RangeStats {
  std::string name;
  std::int64_t instances = 0;
  std::int64_t iterations = 0;         ///< summed over instances
  double median_gpu_ns_per_iter = 0;   ///< median over instances of gpu_ns / iterations
  std::int64_t gpu_ns = 0;             ///< summed over instances
  double median_span_ns_per_iter = 0;  ///< median over instances of GPU span / iterations
  std::int64_t span_ns = 0;            ///< GPU spans summed over instances
  double kernels_per_iter = 0;
  double launches_per_iter = 0;
  double memcpy_bytes_per_iter = 0;
  double memset_bytes_per_iter = 0;
  std::vector<std::pair<std::uint32_t, std::int64_t>> peak_device_bytes;  ///< (device, bytes)
  std::int64_t items_per_iter = 0;    ///< N of a trailing "batch<N>" segment, else 0
  double iterations_per_s = 0;        ///< 0 when the median is 0
  std::optional<double> items_per_s;  ///< only with items_per_iter > 0
  NvtxProjection projection = NvtxProjection::Process;  ///< how the figures above were projected
  /// Kernels launched inside the instances' spans by other threads of the process that the
  /// projection left out (summed over instances; always 0 under Process).
  std::int64_t left_out_kernels = 0;
  /// Per instance (one value per ended instance, in the order the capture lists them): GPU time
  /// and GPU span divided by the instance's iterations, ns. The medians above are theirs; the
  /// CI gate (CompareGate.h) resamples them.
  std::vector<double> gpu_ns_per_iter_samples, span_ns_per_iter_samples;

  /// Largest peak over devices (0 without device-memory events).
  std::int64_t max_peak_bytes() const;
};

/// Stats of every NVTX range name of the capture, sorted by name, projected by `projection`.
std::vector<RangeStats> range_stats(const db::Reader& reader,
                                    NvtxProjection projection = NvtxProjection::Process);

/// Every variant of every op and shape side by side, for heatmaps: range names
/// "op/variant/shape…" (three or more '/'-segments; others are left out) give row "op · shape"
/// (shape = the segments after the second, joined by '/') and column "variant". Rows are sorted;
/// columns are `leading` (those present, in that order) then the others sorted. cells[row][column]
/// points into the `ranges` given (null where that variant has no range for the row); the
/// matrix is valid while `ranges` lives.
struct VariantMatrix {
  std::vector<std::string> rows, columns;
  std::vector<std::vector<const RangeStats*>> cells;
};
VariantMatrix variant_matrix(const std::vector<RangeStats>& ranges,
                             const std::vector<std::string>& leading = {"unfused", "fused"});

/// Which time a slowdown is judged on: the GPU time (sum of kernel durations) or the GPU span.
enum class TimeBasis { Gpu, Span };

/// RangeStats' median per iteration on `basis`.
double median_ns_per_iter(const RangeStats& stats, TimeBasis basis);
/// RangeStats' per-instance samples on `basis`.
const std::vector<double>& samples_ns_per_iter(const RangeStats& stats, TimeBasis basis);

/// The CI gate's answer for one paired entry (CompareGate.h): is the candidate slower than its
/// baseline by more than the threshold?
enum class GateVerdict {
  NotSlower,     ///< the interval lies above the threshold's speedup (or the medians say so)
  Slower,        ///< the interval lies below it (or the medians say so)
  Inconclusive,  ///< the interval contains it: the noise is too large to decide
};
/// "not slower", "slower", "inconclusive".
const char* to_string(GateVerdict verdict);

/// How the gate judges (prof-analyze compare --fail-if-slower, --confidence, --time).
struct GateOptions {
  TimeBasis basis = TimeBasis::Gpu;
  double threshold_percent = 0;  ///< slower by more than this; 0 when no gate was asked for
  BootstrapOptions bootstrap;    ///< bootstrap.level is the confidence level
};

/// The gate's figures for one paired entry, on GateOptions::basis.
struct EntryGate {
  Noise baseline_noise, candidate_noise;  ///< over the instances' times per iteration
  std::optional<RatioInterval> interval;  ///< of the speedup; nullopt with a problem
  SampleProblem problem = SampleProblem::None;
  std::optional<RankTest> rank_test;  ///< Mann-Whitney, candidate against baseline
  GateVerdict verdict = GateVerdict::NotSlower;
  bool by_medians = false;  ///< no interval: decided on the medians, as before the gate
};

/// One paired row.
struct CompareEntry {
  std::string key;  ///< pairing key (wildcard texts, or the full name for two captures)
  std::string op, shape;
  std::string baseline_variant, candidate_variant;
  std::optional<RangeStats> baseline, candidate;  ///< one is missing for unpaired ranges
  std::optional<double> speedup;       ///< baseline / candidate median GPU time per iteration
  std::optional<double> span_speedup;  ///< baseline / candidate median span per iteration
  std::optional<EntryGate> gate;       ///< paired entries, once judge() ran (CompareGate.h)

  /// (candidate / baseline - 1) x 100 of the median per iteration on `basis`; nullopt when
  /// unpaired or the baseline's median is 0.
  std::optional<double> slowdown_percent(TimeBasis basis = TimeBasis::Gpu) const;
};

enum class KernelChange { Added, Removed, Faster, Slower, Unchanged };
const char* to_string(KernelChange change);

/// One kernel name in the two-capture diff. Faster / slower when the median duration changed by
/// more than the threshold (default 5 %), relative to the baseline.
struct KernelDiffRow {
  std::string name;
  KernelChange change = KernelChange::Unchanged;
  std::int64_t baseline_count = 0, candidate_count = 0;
  double baseline_median_ns = 0, candidate_median_ns = 0;
  std::int64_t baseline_total_ns = 0, candidate_total_ns = 0;
  std::optional<double> change_percent;  ///< of the median; nullopt for added / removed
};

struct CompareOptions {
  NameKind kernel_names = NameKind::Short;  ///< names in the kernel diff
  double diff_threshold_percent = 5;        ///< faster / slower beyond +-this (HTA-style diff)
  NvtxProjection projection = NvtxProjection::Process;  ///< of the ranges (range_stats)
};

struct CompareReport {
  std::string baseline_path, candidate_path;
  std::string baseline_pattern, candidate_pattern;  ///< empty for two captures
  bool two_captures = false;
  double diff_threshold_percent = 5;
  NvtxProjection projection = NvtxProjection::Process;  ///< of the ranges (range_stats)
  /// Paired rows first, then unpaired ones; each sorted by op, then shape, in natural order
  /// (digit runs compare as numbers: "M64" before "M128").
  std::vector<CompareEntry> entries;
  /// Two captures only; sorted by |candidate_total_ns - baseline_total_ns| descending.
  std::vector<KernelDiffRow> kernel_diff;
  /// How the entries' gates were judged; nullopt until judge() ran (CompareGate.h).
  std::optional<GateOptions> gate;

  /// Paired entries whose candidate is slower than the baseline by more than `percent` on
  /// `basis`.
  std::vector<const CompareEntry*> slower_than(double percent,
                                               TimeBasis basis = TimeBasis::Gpu) const;
};

/// Pairs the ranges of one capture matched by two patterns, and judges the pairs with the default
/// GateOptions (GPU time, threshold 0 %, 95 %; CompareGate.h: call judge() again for others).
/// Throws CompareError when a pattern matches no range or no key is shared.
CompareReport compare_ranges(const db::Reader& reader, std::string_view baseline_pattern,
                             std::string_view candidate_pattern,
                             NvtxProjection projection = NvtxProjection::Process);

/// Pairs the ranges of two captures by name and diffs their kernels, and judges the pairs with
/// the default GateOptions (as compare_ranges). Ranges only in one capture are listed unpaired.
/// Does not throw for captures without ranges (the diff still applies).
CompareReport compare_captures(const db::Reader& baseline, const db::Reader& candidate,
                               const CompareOptions& options = {});

}  // namespace fuselens::analyzer
