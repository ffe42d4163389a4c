#pragma once
// Roofline: how close each kernel and each NVTX range of a capture comes to the GPU's limits,
// as plain value structs for `prof-analyze roofline` and the GUI's roofline chart.
//
// Work comes from two sources, shown side by side where both exist:
//  - counters: hardware counters per kernel launch (`prof-run --metrics roofline`, table
//    kernel_metric), turned into FLOPs and bytes by work_from_counters (formulas in
//    fuselens/db/RooflineStore.h, namespace metric);
//  - annotations: FLOPs and bytes a program declares for an NVTX range with
//    fuselens/annotate.h (an NVTX mark in domain "fuselens", text
//    "fuselens:work flops=F bytes=B precision=P"). Declared bytes are the compulsory
//    device-memory traffic, so they are compared with the DRAM level.
// A mark counts toward every range of the same (pid, tid) whose [start, end] holds its timestamp:
// it is declared in the innermost one and, like the GPU projection of nested ranges, included in
// the ranges around it.
//
// Rows: one per kernel name (kernels with counters only) and one per NVTX range name (text,
// prefixed "domain:" outside the default domain; ranges of domain "fuselens" are skipped). Time
// is GPU time: the sum of the durations of the kernels (of a range: launched inside it by any
// thread of its process, by the launching API call's start, as RangeProjection's default process
// projection; when that counts launches of other threads than the range's own, a note says how
// many). A kernel's duration is its activity record's; under `--metrics` CUPTI records kernels
// with zero timestamps (kernel replay), and the duration of the profiled pass
// (gpu__time_duration.sum) is used instead. Every figure is evaluated by RooflineMath.h's
// `evaluate` against the chosen ceilings (Peaks.h's choose_peaks).
// Projection: when the chosen ceilings are not the capture device's own (its measured ceilings,
// else its datasheet), projected_ns = floor time at the chosen ceilings / efficiency measured
// against the device's own: the time the same work would take on the chosen GPU if it reached
// the same fraction of that GPU's limits (an H100 capture projected on a T4).
//
// Units: ns, FLOP, bytes, FLOP/s, bytes/s, FLOP/byte; differences are fractions (0.02 = 2 %).
// Errors: db::Error (a corrupt capture), PeaksError (Peaks.h).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "roofline/Peaks.h"
#include "roofline/RooflineMath.h"
#include "summary/Summary.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/RooflineStore.h"

namespace fuselens::analyzer {

/// The NVTX domain and text prefix of work annotations (fuselens/annotate.h).
inline constexpr const char* kAnnotationDomain = "fuselens";
inline constexpr const char* kAnnotationPrefix = "fuselens:work";

/// Parses "fuselens:work flops=F bytes=B precision=P" (keys in any order; precision defaults
/// to fp32; bytes go to the DRAM level). nullopt for any other text or a malformed value.
std::optional<Work> parse_work_annotation(const std::string& text);

/// FLOPs and bytes of one launch from its counters (CUPTI metric name -> value). Missing FLOP
/// counters count 0; a memory level is absent unless its counters are present.
Work work_from_counters(const std::map<std::string, double>& counters);

enum class WorkSource { Counters, Annotation };
const char* to_string(WorkSource source);  ///< "counters", "annotation"

/// One source of work for one row, evaluated against the chosen ceilings.
struct RooflineEntry {
  WorkSource source = WorkSource::Counters;
  Work work;
  RooflineResult result;
  std::optional<double> projected_ns;  ///< see the projection above
};

struct RooflineRow {
  std::string name;
  std::int64_t instances = 0;  ///< kernel launches (kernel rows) or ended ranges (range rows)
  std::int64_t kernels = 0;    ///< kernels counted in gpu_time_ns
  std::int64_t kernels_with_counters = 0;
  double gpu_time_ns = 0;
  /// Sum of gpu__time_duration.sum over the kernels with counters: the duration CUPTI measured
  /// in its profiling pass (0 when not collected).
  double counter_time_ns = 0;
  std::optional<RooflineEntry> counters;
  std::optional<RooflineEntry> annotation;
  /// (annotation - counters) / counters for total FLOPs and DRAM bytes, when both exist and the
  /// counted figure is not 0.
  std::optional<double> flops_difference;
  std::optional<double> dram_bytes_difference;
};

/// Data for a roofline chart: horizontal compute roofs, slanted memory roofs, and one point per
/// row and source at its DRAM intensity (points without DRAM bytes or FLOPs are left out).
struct RooflineChart {
  struct Roof {
    std::string label;  ///< "fp32", "tensor", "dram", "l2"
    double value = 0;   ///< FLOP/s (compute) or bytes/s (memory)
  };
  struct Point {
    std::string label;  ///< the row name
    bool is_range = false;
    WorkSource source = WorkSource::Counters;
    double intensity = 0;     ///< FLOP per DRAM byte
    double flops_per_s = 0;   ///< achieved
    double efficiency = 0;
  };
  std::vector<Roof> compute;
  std::vector<Roof> memory;
  std::vector<Point> points;
};

struct RooflineReport {
  std::string path;
  std::vector<db::DeviceInfo> devices;
  PeaksChoice peaks;                        ///< what efficiency is computed against
  std::optional<Ceilings> device_ceilings;  ///< the device's own, for the projection
  std::vector<db::CeilingRecord> measured;  ///< the capture's ceiling rows
  std::vector<db::MetricSessionRecord> metric_sessions;
  bool has_counters = false;
  bool has_annotations = false;
  std::vector<RooflineRow> kernels;  ///< by GPU time descending, then name
  std::vector<RooflineRow> ranges;   ///< by GPU time descending, then name
  RooflineChart chart;
  std::vector<std::string> notes;    ///< what is missing and why, one line each
};

struct RooflineOptions {
  std::string peaks = "auto";  ///< "auto", "measured" or a profile id (Peaks.h)
  const std::vector<PeakProfile>* profiles = nullptr;  ///< nullptr: builtin_peaks()
  NameKind kernel_names = NameKind::Demangled;
};

/// Reads the capture and computes every row. O(n log n) in kernels, API calls, ranges and marks.
RooflineReport analyze_roofline(const db::Reader& reader, const RooflineOptions& options = {});

}  // namespace fuselens::analyzer
