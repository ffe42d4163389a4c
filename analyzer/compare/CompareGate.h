#pragma once
// CompareGate: compare as a CI gate that knows noise (issue 23). Each paired entry of a
// CompareReport (Compare.h) has one time per iteration per ended instance of its baseline and
// candidate ranges (RangeStats::gpu_ns_per_iter_samples / span_ns_per_iter_samples): the
// iterations the gate resamples. On GateOptions::basis (GPU time or GPU span):
//  - noise of each side: coefficient of variation and IQR / median over its instances
//    (Significance.h);
//  - the speedup median(baseline) / median(candidate) with a two-sided percentile bootstrap
//    interval at level GateOptions::bootstrap.level (default 0.95, 2000 resamples, fixed seed:
//    Efron & Tibshirani 1993, ch. 13; Significance.h);
//  - the Mann-Whitney rank test's two-sided p (normal approximation; reported, not decided on);
//  - the verdict against the threshold speedup t = 1 / (1 + P / 100), P = threshold_percent
//    (the candidate is slower by more than P % exactly when its speedup is below t):
//      high < t            -> Slower        (the whole interval is slower than P %: a one-sided
//                                            test at error (1 - level) / 2)
//      low > t             -> NotSlower
//      low <= t <= high    -> Inconclusive  (the spread is too wide to decide)
//    Without an interval (fewer than 2 instances on a side, "one iteration: no interval", or a
//    time that is not finite, negative, or a median of 0) the verdict is the one before the
//    gate: Slower when slowdown_percent(basis) > P, else NotSlower (by_medians = true).
//
// Units: ns; the interval and the noise are ratios. Errors: none thrown.

#include <vector>

#include "compare/Compare.h"

namespace fuselens::analyzer {

/// The speedup below which a candidate is slower than its baseline by more than `percent` %:
/// 1 / (1 + percent / 100).
double threshold_speedup(double percent);

/// The gate of one paired entry on `options`; nullopt for an unpaired entry.
std::optional<EntryGate> judge_entry(const CompareEntry& entry, const GateOptions& options);

/// Judges every paired entry of `report` (sets CompareEntry::gate) and records `options` in
/// CompareReport::gate.
void judge(CompareReport& report, const GateOptions& options);

/// The judged entries whose verdict is `verdict`, in report order.
std::vector<const CompareEntry*> entries_with(const CompareReport& report, GateVerdict verdict);

}  // namespace fuselens::analyzer
