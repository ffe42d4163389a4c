#pragma once
// CompareFormat: writes a CompareReport (Compare.h) as text, CSV or JSON.
//
// Table: a header (baseline and candidate: file and pattern), "Comparison (medians per
//   iteration)" with one line per gate statistic: Op, Shape, Baseline and Candidate with their
//   median GPU time per iteration, Speedup, Span/iter (median GPU span per iteration, baseline
//   -> candidate), Span speedup, Interval ("[low x, high x]"), Noise (CV, baseline ->
//   candidate), Verdict (" (medians)" when decided without an interval),
//   kernels and launches per iteration (baseline -> candidate), bytes moved per iteration, peak
//   device memory, throughput (on GPU time); then,
//   for two captures, "Kernel diff (threshold +-P %)" with Change, counts, medians, Change (%).
// CSV (RFC 4180): sections as SummaryFormat's, each "# <section>", a header row, rows:
//   comparisons: op,shape,key,baseline_range,candidate_range,baseline_ns_per_iter,
//                candidate_ns_per_iter,speedup,baseline_kernels_per_iter,
//                candidate_kernels_per_iter,baseline_launches_per_iter,
//                candidate_launches_per_iter,baseline_span_ns_per_iter,
//                candidate_span_ns_per_iter,span_speedup,time_basis,baseline_instances,
//                candidate_instances,speedup_ci_low,speedup_ci_high,baseline_cv,candidate_cv,
//                baseline_iqr_over_median,candidate_iqr_over_median,mann_whitney_p,verdict,
//                verdict_note
//                (the CI gate's columns from time_basis on: CompareGate.h, on the report's
//                GateOptions; empty for unpaired rows, the interval and noise empty where
//                there is none, e.g. one instance)
//   matrix:      op,shape,variant,role,range,instances,iterations,median_gpu_ns_per_iter,
//                kernels_per_iter,launches_per_iter,memcpy_bytes_per_iter,memset_bytes_per_iter,
//                peak_device_bytes,iterations_per_s,items_per_s,speedup_vs_baseline,
//                median_span_ns_per_iter,span_speedup_vs_baseline,projection,left_out_kernels
//                (projection: "process" or "thread", how the range's GPU work was found,
//                CompareProjection.h; left_out_kernels: kernels launched inside its instances
//                by other threads that the thread projection left out, 0 under process)
//                (one row per variant of each op x shape: data for heatmaps; the speedup, the
//                throughput and iterations_per_s are on GPU time whatever --time says, the
//                span's speedup has its own column)
//   kernel_diff: change,name,baseline_count,candidate_count,baseline_median_ns,
//                candidate_median_ns,change_percent,baseline_total_ns,candidate_total_ns
//                (two captures only)
//   Missing values (unpaired sides, no speedup, no items) are empty fields.
// Table: the comparison's heading says the projection and how many kernels it left out.
// JSON: {"baseline": {"path", "pattern"}, "candidate": {...}, "two_captures", "projection",
//   "diff_threshold_percent", "gate": {time_basis, threshold_percent, confidence, interval,
//   resamples, seed, rank_test} (null before judge()), "comparisons": [...], "matrix": [...],
//   "kernel_diff": [...]};
//   rows are objects with the CSV keys (null for missing values); matrix rows also carry
//   "peak_device_bytes_by_device": {"<device>": bytes}.
//
// Errors: none of its own; stream errors are left in the stream's state.

#include <iosfwd>

#include <nlohmann/json.hpp>

#include "compare/Compare.h"
#include "summary/SummaryFormat.h"

namespace fuselens::analyzer {

/// Writes `report` to `out` in `format`.
void write_compare(std::ostream& out, const CompareReport& report, OutputFormat format);

/// The JSON document that write_compare writes for OutputFormat::Json.
nlohmann::json compare_to_json(const CompareReport& report);

}  // namespace fuselens::analyzer
