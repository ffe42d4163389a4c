// CompareGate (analyzer/compare/CompareGate.h): compare over repeated NVTX range instances with
// a bootstrap interval of each speedup, the noise of each side and a verdict against
// --fail-if-slower, on synthetic captures whose instance times follow known distributions; and
// `prof-analyze compare --fail-if-slower` run as a program for its exit statuses.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "Subprocess.h"
#include "TestSupport.h"
#include "compare/Compare.h"
#include "compare/CompareFormat.h"
#include "compare/CompareGate.h"
#include "compare/CompareSteps.h"
#include "fuselens/db/Reader.h"
#include "steps/Steps.h"

#ifndef PROF_ANALYZE_PATH
#error "PROF_ANALYZE_PATH must name the prof-analyze binary"
#endif

namespace fuselens::analyzer {
namespace {

using fuselens::test::Result;
using fuselens::test::run_cli;
using test::FlagsCapture;
using test::TempDir;

/// `n` kernel durations (ns) spread evenly over center (1 +- spread), shuffled by `seed`.
std::vector<std::int64_t> durations(double center, double spread, int n, std::uint32_t seed) {
  std::vector<std::int64_t> v;
  for (int i = 0; i < n; ++i) {
    v.push_back(std::llround(center * (1 - spread + 2 * spread * (i + 0.5) / n)));
  }
  std::mt19937 engine(seed);
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[engine() % i]);
  return v;
}

std::vector<double> as_doubles(const std::vector<std::int64_t>& v) { return {v.begin(), v.end()}; }

/// One instance of range `name` per duration: the range, and one kernel of that duration
/// launched inside it (so the instance's GPU time per iteration is the duration). `t` advances.
void instances(FlagsCapture& c, const std::string& name, const std::vector<std::int64_t>& ns,
               std::int64_t& t) {
  for (const auto d : ns) {
    c.range(name, t, t + d + 2000);
    c.kernel("k_" + name.substr(name.rfind('/') + 1), t + 500, d, t + 100, 50);
    t += d + 3000;
  }
}

/// A capture with op/base/s and op/cand/s instances; returns the compare report judged on
/// `percent`.
struct Gated {
  TempDir dir;
  std::string path;
  CompareReport report;
  Gated(const std::vector<std::int64_t>& base, const std::vector<std::int64_t>& cand,
        double percent) {
    FlagsCapture c;
    std::int64_t t = 0;
    instances(c, "op/base/s", base, t);
    instances(c, "op/cand/s", cand, t);
    path = dir.file("gate.sqlite");
    c.write(path);
    const db::Reader reader(path);
    report = compare_ranges(reader, "op/base/*", "op/cand/*");
    GateOptions options;
    options.threshold_percent = percent;
    judge(report, options);
  }
  const CompareEntry& entry() const { return report.entries.at(0); }
  const EntryGate& gate() const { return *report.entries.at(0).gate; }
};

TEST(CompareGate, InstancesAreTheSamplesAndTheirNoiseIsReported) {
  const auto base = durations(10000, 0.1, 25, 1), cand = durations(8000, 0.2, 30, 2);
  const Gated g(base, cand, 5);
  const CompareEntry& e = g.entry();
  ASSERT_TRUE(e.baseline && e.candidate && e.gate);
  EXPECT_EQ(e.baseline->instances, 25);
  EXPECT_EQ(e.baseline->gpu_ns_per_iter_samples.size(), 25U);
  EXPECT_EQ(e.candidate->gpu_ns_per_iter_samples.size(), 30U);
  // Each instance's GPU time is its kernel's duration: the noise is that of the durations.
  const Noise nb = noise_of(as_doubles(base)), nc = noise_of(as_doubles(cand));
  EXPECT_NEAR(*g.gate().baseline_noise.cv, *nb.cv, 1e-12);
  EXPECT_NEAR(*g.gate().candidate_noise.cv, *nc.cv, 1e-12);
  EXPECT_NEAR(*g.gate().candidate_noise.iqr_over_median, *nc.iqr_over_median, 1e-12);
  ASSERT_TRUE(g.gate().interval);
  EXPECT_DOUBLE_EQ(g.gate().interval->estimate, *e.speedup);
  EXPECT_DOUBLE_EQ(*e.speedup, median_of(as_doubles(base)) / median_of(as_doubles(cand)));
  ASSERT_TRUE(g.gate().rank_test);
  EXPECT_LT(g.gate().rank_test->p_two_sided, 0.001);  // clearly different
  EXPECT_FALSE(g.gate().by_medians);
  EXPECT_EQ(g.report.gate->threshold_percent, 5);
}

TEST(CompareGate, ClearlySlowerIsSignificantlySlower) {
  // +30 % with +-2 % noise against a 5 % threshold.
  const Gated g(durations(10000, 0.02, 30, 3), durations(13000, 0.02, 30, 4), 5);
  ASSERT_TRUE(g.gate().interval);
  EXPECT_LT(g.gate().interval->high, threshold_speedup(5));
  EXPECT_EQ(g.gate().verdict, GateVerdict::Slower);
  EXPECT_EQ(entries_with(g.report, GateVerdict::Slower).size(), 1U);
}

TEST(CompareGate, SameDistributionWithNoisePasses) {
  // Both sides from one distribution (+-3 %), different counts and orders: the interval holds 1
  // and stays clear of the 5 % threshold.
  const Gated g(durations(10000, 0.03, 40, 5), durations(10000, 0.03, 37, 6), 5);
  ASSERT_TRUE(g.gate().interval);
  EXPECT_LE(g.gate().interval->low, 1.0);
  EXPECT_GE(g.gate().interval->high, 1.0);
  EXPECT_GT(g.gate().interval->low, threshold_speedup(5));
  EXPECT_EQ(g.gate().verdict, GateVerdict::NotSlower);
  EXPECT_GT(g.gate().rank_test->p_two_sided, 0.05);
}

TEST(CompareGate, WideNoiseAndASmallShiftIsInconclusive) {
  // +6 % (beyond the 5 % threshold) with +-50 % noise: the interval holds the threshold.
  const Gated g(durations(10000, 0.5, 20, 7), durations(10600, 0.5, 20, 8), 5);
  ASSERT_TRUE(g.gate().interval);
  EXPECT_LE(g.gate().interval->low, threshold_speedup(5));
  EXPECT_GE(g.gate().interval->high, threshold_speedup(5));
  EXPECT_EQ(g.gate().verdict, GateVerdict::Inconclusive);
  // The medians alone would have failed it: the old gate flipped on such noise.
  ASSERT_TRUE(g.entry().slowdown_percent());
  EXPECT_GT(*g.entry().slowdown_percent(), 5);
  // A threshold far beyond the noise decides it.
  GateOptions generous;
  generous.threshold_percent = 200;
  EXPECT_EQ(judge_entry(g.entry(), generous)->verdict, GateVerdict::NotSlower);
}

TEST(CompareGate, AHigherConfidenceLevelWidensTheIntervalIntoInconclusive) {
  // +8 % with +-10 % noise, threshold 0 %: the level moves the interval and so the verdict,
  // never the estimate.
  const Gated g(durations(10000, 0.1, 30, 9), durations(10800, 0.1, 30, 10), 0);
  GateOptions at;
  at.threshold_percent = 0;
  at.bootstrap.level = 0.5;
  const auto loose = judge_entry(g.entry(), at);
  at.bootstrap.level = 0.999;
  const auto strict = judge_entry(g.entry(), at);
  ASSERT_TRUE(loose->interval && strict->interval);
  EXPECT_DOUBLE_EQ(loose->interval->estimate, strict->interval->estimate);
  EXPECT_LE(strict->interval->low, loose->interval->low);
  EXPECT_GE(strict->interval->high, loose->interval->high);
  // Each verdict is the one its interval gives against the threshold 1.
  for (const auto* gate : {&*loose, &*strict}) {
    const auto expected = gate->interval->high < 1  ? GateVerdict::Slower
                          : gate->interval->low > 1 ? GateVerdict::NotSlower
                                                    : GateVerdict::Inconclusive;
    EXPECT_EQ(gate->verdict, expected);
  }
}

TEST(CompareGate, OneIterationDecidesOnTheMediansAsBefore) {
  // One candidate instance: no interval; the medians decide, as the gate did before intervals.
  const Gated slower(durations(10000, 0.02, 10, 11), {12000}, 5);
  EXPECT_FALSE(slower.gate().interval);
  EXPECT_EQ(slower.gate().problem, SampleProblem::TooFew);
  EXPECT_TRUE(slower.gate().by_medians);
  EXPECT_GT(*slower.entry().slowdown_percent(), 5);
  EXPECT_EQ(slower.gate().verdict, GateVerdict::Slower);
  const Gated fine({10000}, {10100}, 5);
  EXPECT_TRUE(fine.gate().by_medians);
  EXPECT_EQ(fine.gate().verdict, GateVerdict::NotSlower);
  EXPECT_FALSE(fine.gate().baseline_noise.cv);  // one value: no noise figure
  const auto row = compare_to_json(fine.report)["comparisons"][0];
  EXPECT_TRUE(row["speedup_ci_low"].is_null());
  EXPECT_EQ(row["verdict"], "not slower");
  EXPECT_EQ(row["verdict_note"], "one iteration: no interval; decided on the medians");
}

TEST(CompareGate, ZeroTimesGiveNoIntervalAndNoFalseFailure) {
  // Baseline instances that launch nothing: GPU time 0, so no ratio; the medians decide and a
  // zero baseline median has no slowdown (as before).
  FlagsCapture c;
  for (int i = 0; i < 5; ++i) c.range("z/base/s", i * 1000, i * 1000 + 500);
  std::int64_t t = 10000;
  instances(c, "z/cand/s", durations(5000, 0.1, 5, 12), t);
  TempDir dir;
  c.write(dir.file("z.sqlite"));
  const db::Reader reader(dir.file("z.sqlite"));
  CompareReport r = compare_ranges(reader, "z/base/*", "z/cand/*");
  GateOptions options;
  options.threshold_percent = 5;
  judge(r, options);
  const EntryGate& g = *r.entries.at(0).gate;
  EXPECT_EQ(g.problem, SampleProblem::ZeroMedian);
  EXPECT_TRUE(g.by_medians);
  EXPECT_EQ(g.verdict, GateVerdict::NotSlower);
  EXPECT_FALSE(g.baseline_noise.cv);  // a mean of 0: no coefficient of variation
}

TEST(CompareGate, HugeDurationsStayFinite) {
  // Kernels of ~2^59 ns (within a capture's plausible times): ratios, not sums, are resampled.
  const std::int64_t big = std::int64_t{1} << 59;
  const Gated g({big, big + 1000, big - 1000}, {big / 2, big / 2 + 10, big / 2 - 10}, 5);
  ASSERT_TRUE(g.gate().interval) << describe(g.gate().problem);
  EXPECT_TRUE(std::isfinite(g.gate().interval->low) && std::isfinite(g.gate().interval->high));
  EXPECT_NEAR(g.gate().interval->estimate, 2, 1e-6);
  EXPECT_EQ(g.gate().verdict, GateVerdict::NotSlower);  // twice as fast
  EXPECT_TRUE(std::isfinite(*g.gate().baseline_noise.cv));
}

TEST(CompareGate, KernelsThatEndBeforeTheyStartAreACaptureErrorNotAVerdict) {
  // A hostile capture: the baseline's kernels end before they start (negative durations). The
  // reader refuses the rows (db::Error), so no negative time reaches the statistics (which refuse
  // them too: Significance.BootstrapRefusesSamplesThatCannotGiveAnInterval); the gate answers
  // with status 1 and one line, never 0, 3 or 5.
  FlagsCapture c;
  std::int64_t t = 0;
  for (int i = 0; i < 5; ++i) {
    c.range("neg/base/s", t, t + 5000);
    c.kernel("k_neg", t + 3000, -1000, t + 100, 50);
    t += 10000;
  }
  instances(c, "neg/cand/s", durations(1000, 0.05, 5, 34), t);
  TempDir dir;
  c.write(dir.file("neg.sqlite"));
  EXPECT_THROW(
      {
        const db::Reader reader(dir.file("neg.sqlite"));
        (void)compare_ranges(reader, "neg/base/*", "neg/cand/*");
      },
      db::Error);
  const Result r = run_cli(dir, {"compare", dir.file("neg.sqlite"), "--baseline", "neg/base/*",
                                 "--candidate", "neg/cand/*", "--fail-if-slower", "5"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.err_lines().size(), 1U) << r.err;
  EXPECT_EQ(r.err.rfind("prof-analyze: error: ", 0), 0U) << r.err;
}

TEST(CompareGate, UnpairedItemsAreNotJudged) {
  // op/base has shapes s and t, op/cand only s: t is listed, unjudged, and never fails the gate.
  FlagsCapture c;
  std::int64_t t = 0;
  instances(c, "op/base/s", durations(1000, 0.05, 5, 13), t);
  instances(c, "op/base/t", durations(1000, 0.05, 5, 14), t);
  instances(c, "op/cand/s", durations(1000, 0.05, 5, 15), t);
  TempDir dir;
  c.write(dir.file("u.sqlite"));
  const db::Reader reader(dir.file("u.sqlite"));
  const CompareReport r = compare_ranges(reader, "op/base/*", "op/cand/*");  // default gate
  ASSERT_EQ(r.entries.size(), 2U);
  EXPECT_TRUE(r.entries[0].gate);
  EXPECT_FALSE(r.entries[1].gate);
  ASSERT_TRUE(r.gate);
  EXPECT_EQ(r.gate->threshold_percent, 0);
  const auto rows = compare_to_json(r)["comparisons"];
  EXPECT_TRUE(rows[1]["verdict"].is_null());
  EXPECT_TRUE(rows[1]["speedup_ci_low"].is_null());
  EXPECT_EQ(rows[1]["baseline_instances"], 5);
  EXPECT_TRUE(rows[1]["candidate_instances"].is_null());
}

TEST(CompareGate, TwoCapturesAreJudgedOnTheSameRangeName) {
  TempDir dir;
  FlagsCapture a, b;
  std::int64_t ta = 0, tb = 0;
  instances(a, "train/s", durations(10000, 0.02, 20, 16), ta);
  instances(b, "train/s", durations(12500, 0.02, 20, 17), tb);
  a.write(dir.file("a.sqlite"));
  b.write(dir.file("b.sqlite"));
  const db::Reader ra(dir.file("a.sqlite")), rb(dir.file("b.sqlite"));
  CompareReport r = compare_captures(ra, rb);
  GateOptions options;
  options.threshold_percent = 10;
  judge(r, options);
  ASSERT_EQ(r.entries.size(), 1U);
  EXPECT_EQ(r.entries[0].gate->verdict, GateVerdict::Slower);
  EXPECT_LT(r.entries[0].gate->interval->high, threshold_speedup(10));
}

TEST(CompareGate, CsvAndJsonCarryTheIntervalAndTheNoise) {
  const Gated g(durations(10000, 0.1, 20, 18), durations(9000, 0.1, 20, 19), 5);
  const EntryGate& gate = g.gate();
  const auto doc = compare_to_json(g.report);
  EXPECT_EQ(doc["gate"]["threshold_percent"], 5.0);
  EXPECT_EQ(doc["gate"]["confidence"], 0.95);
  EXPECT_EQ(doc["gate"]["time_basis"], "gpu");
  const auto row = doc["comparisons"][0];
  EXPECT_EQ(row["speedup_ci_low"], gate.interval->low);
  EXPECT_EQ(row["speedup_ci_high"], gate.interval->high);
  EXPECT_EQ(row["baseline_cv"], *gate.baseline_noise.cv);
  EXPECT_EQ(row["candidate_iqr_over_median"], *gate.candidate_noise.iqr_over_median);
  EXPECT_EQ(row["mann_whitney_p"], gate.rank_test->p_two_sided);
  EXPECT_EQ(row["verdict"], to_string(gate.verdict));
  EXPECT_EQ(row["baseline_instances"], 20);

  std::ostringstream csv;
  write_compare(csv, g.report, OutputFormat::Csv);
  const auto records = test::parse_csv(csv.str());
  ASSERT_GE(records.size(), 3U);
  const auto& header = records[1];
  const auto column = [&](const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    EXPECT_NE(it, header.end()) << name;
    return records[2].at(static_cast<std::size_t>(it - header.begin()));
  };
  EXPECT_DOUBLE_EQ(std::stod(column("speedup_ci_low")), gate.interval->low);
  EXPECT_DOUBLE_EQ(std::stod(column("speedup_ci_high")), gate.interval->high);
  EXPECT_DOUBLE_EQ(std::stod(column("candidate_cv")), *gate.candidate_noise.cv);
  EXPECT_EQ(column("verdict"), to_string(gate.verdict));
  EXPECT_EQ(column("time_basis"), "gpu");

  std::ostringstream table;
  write_compare(table, g.report, OutputFormat::Table);
  EXPECT_NE(
      table.str().find(fmt::format("[{:.2f}x, {:.2f}x]", gate.interval->low, gate.interval->high)),
      std::string::npos)
      << table.str();
  EXPECT_NE(table.str().find("percentile bootstrap"), std::string::npos);
  EXPECT_NE(table.str().find(fmt::format("{:.1f} %", *gate.baseline_noise.cv * 100)),
            std::string::npos);
}

TEST(CompareGate, StepsAreOneMoreItemWithEachStepAnInstance) {
  StepReport a, b;
  const auto base = durations(10000, 0.02, 12, 29), cand = durations(13000, 0.02, 12, 30);
  for (int i = 0; i < 12; ++i) {
    Step s;
    s.index = i + 1;
    s.compute_ns = base[static_cast<std::size_t>(i)];
    s.span_ns = 2 * s.compute_ns;
    s.kernels = 3;
    s.launches = i % 2 ? 2 : 4;
    a.steps.push_back(s);
    s.compute_ns = cand[static_cast<std::size_t>(i)];
    s.span_ns = 2 * s.compute_ns;
    b.steps.push_back(s);
  }
  // Steps 2-12: the first is left out as a steady window would.
  const auto sa = step_range_stats(a, 2, 12, "steps 2-12"), sb = step_range_stats(b, 2, 12, "x");
  ASSERT_TRUE(sa && sb);
  EXPECT_EQ(sa->instances, 11);
  EXPECT_DOUBLE_EQ(sa->kernels_per_iter, 3);
  // Steps 2..12 are i = 1..11: six odd i (2 launches), five even (4).
  EXPECT_DOUBLE_EQ(sa->launches_per_iter, (6 * 2 + 5 * 4) / 11.0);
  const std::vector<double> kept(base.begin() + 1, base.end());
  EXPECT_DOUBLE_EQ(sa->median_gpu_ns_per_iter, median_of(kept));
  EXPECT_DOUBLE_EQ(sa->median_span_ns_per_iter, 2 * median_of(kept));
  EXPECT_FALSE(step_range_stats(a, 13, 20, "none"));
  // Huge step times saturate the sums instead of overflowing.
  StepReport h;
  for (int i = 1; i <= 3; ++i) {
    Step s;
    s.index = i;
    s.compute_ns = s.span_ns = INT64_MAX / 2;
    h.steps.push_back(s);
  }
  EXPECT_EQ(step_range_stats(h, 1, 3, "h")->gpu_ns, INT64_MAX);

  CompareReport report;
  report.gate = GateOptions{};
  report.gate->threshold_percent = 5;
  report.entries.resize(1);  // an unpaired range entry already there
  add_steps_entry(report, *sa, *sb);
  ASSERT_EQ(report.entries.size(), 2U);
  const CompareEntry& e = report.entries.front();
  EXPECT_EQ(e.key, "(steps)");
  EXPECT_DOUBLE_EQ(*e.speedup, sa->median_gpu_ns_per_iter / sb->median_gpu_ns_per_iter);
  ASSERT_TRUE(e.gate && e.gate->interval);
  EXPECT_EQ(e.gate->verdict, GateVerdict::Slower);  // +30 % with 2 % noise
}

// --- prof-analyze compare --fail-if-slower, run as a program -------------------------------

struct GateCapture {
  TempDir dir;
  std::string path;
  GateCapture() : path(dir.file("cli.sqlite")) {
    FlagsCapture c;
    std::int64_t t = 0;
    instances(c, "base/x/s", durations(10000, 0.02, 30, 20), t);
    instances(c, "slow/x/s", durations(13000, 0.02, 30, 21), t);  // +30 %, tight
    instances(c, "same/x/s", durations(10000, 0.03, 33, 22), t);  // same distribution
    instances(c, "noisy/x/s", durations(10600, 0.5, 20, 23), t);  // +6 %, +-50 %
    instances(c, "wild/x/s", durations(10000, 0.5, 20, 24), t);   // the noisy one's baseline
    c.write(path);
  }
  Result run(const std::string& base, const std::string& cand,
             std::vector<std::string> extra = {"--fail-if-slower", "5"}) const {
    std::vector<std::string> args{"compare",     path,          "--baseline",
                                  base + "/*/s", "--candidate", cand + "/*/s"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(dir, args);
  }
};

TEST(CompareGateCli, ExitStatusesSayNotSlowerSlowerOrInconclusive) {
  const GateCapture c;
  const Result same = c.run("base", "same");
  EXPECT_EQ(same.status, 0) << same.err;
  EXPECT_EQ(same.err, "");
  EXPECT_NE(same.out.find("not slower"), std::string::npos) << same.out;

  const Result slow = c.run("base", "slow");
  EXPECT_EQ(slow.status, 3) << slow.err;
  EXPECT_NE(slow.err.find("slow/x/s (+"), std::string::npos) << slow.err;
  EXPECT_NE(slow.err.find("speedup interval"), std::string::npos) << slow.err;

  const Result noisy = c.run("wild", "noisy");
  EXPECT_EQ(noisy.status, 5) << noisy.err;
  EXPECT_NE(noisy.err.find("inconclusive"), std::string::npos) << noisy.err;
  EXPECT_NE(noisy.err.find("noisy/x/s"), std::string::npos) << noisy.err;

  // Without --fail-if-slower the verdicts are printed and the status is 0.
  const Result plain = c.run("base", "slow", {"--format", "json"});
  EXPECT_EQ(plain.status, 0) << plain.err;
  const auto doc = nlohmann::json::parse(plain.out);
  EXPECT_EQ(doc["comparisons"][0]["verdict"], "slower");
  EXPECT_EQ(doc["gate"]["threshold_percent"], 0.0);

  // A generous threshold passes the slow one; an odd confidence is a usage error.
  EXPECT_EQ(c.run("base", "slow", {"--fail-if-slower", "50"}).status, 0);
  for (const char* level : {"1.5", "0", "nan", "x"}) {
    const Result bad = c.run("base", "same", {"--fail-if-slower", "5", "--confidence", level});
    EXPECT_EQ(bad.status, 2) << level << ": " << bad.err;
  }
  // "nan" passed CLI::Range (NaN compares false) and switched the gate off with status 0.
  for (const char* pct : {"nan", "inf", "-1"}) {
    const Result bad = c.run("base", "slow", {"--fail-if-slower", pct});
    EXPECT_EQ(bad.status, 2) << pct << ": " << bad.err;
  }
  const Result strict = c.run("base", "same", {"--fail-if-slower", "5", "--confidence", "0.99"});
  EXPECT_EQ(strict.status, 0) << strict.err;
}

TEST(CompareGateCli, TwoCapturesCompareTheirStepsAsInstances) {
  // ProfilerStep#N ranges (a new name per step, so no range pairs with more than one instance);
  // the steady steps of each capture are the "(steps)" item's instances.
  TempDir dir;
  const auto write = [&](const std::string& file, double center, std::uint32_t seed) {
    FlagsCapture c;
    std::int64_t t = 0;
    const auto ns = durations(center, 0.01, 20, seed);
    for (std::size_t i = 0; i < ns.size(); ++i) {
      instances(c, "ProfilerStep#" + std::to_string(i + 1), {ns[i]}, t);
    }
    c.write(dir.file(file));
  };
  write("a.sqlite", 10000, 31);
  write("b.sqlite", 10000, 32);
  write("slow.sqlite", 13000, 33);
  const auto steps_row = [&](const Result& r) {
    const auto doc = nlohmann::json::parse(r.out);
    for (const auto& row : doc.at("comparisons")) {
      if (row.at("key") == "(steps)") return row;
    }
    ADD_FAILURE() << r.out;
    return nlohmann::json();
  };
  const Result same = run_cli(dir, {"compare", dir.file("a.sqlite"), dir.file("b.sqlite"),
                                    "--fail-if-slower", "5", "--format", "json"});
  EXPECT_EQ(same.status, 0) << same.err;
  const auto row = steps_row(same);
  EXPECT_EQ(row["verdict"], "not slower");
  EXPECT_GE(row["baseline_instances"].get<int>(), 15);  // steady steps, most of the 20
  EXPECT_TRUE(row["speedup_ci_low"].is_number());
  const Result slow = run_cli(dir, {"compare", dir.file("a.sqlite"), dir.file("slow.sqlite"),
                                    "--fail-if-slower", "5", "--format", "json"});
  EXPECT_EQ(slow.status, 3) << slow.err;
  EXPECT_EQ(steps_row(slow)["verdict"], "slower");
  EXPECT_NE(slow.err.find("speedup interval"), std::string::npos) << slow.err;
}

TEST(CompareGateCli, SlowerOutranksInconclusiveAndHelpNamesStatusFive) {
  // Two pairs under one pattern pair: "slow" is slower, "noisy" inconclusive against "wild";
  // with both present in one run the status is 3.
  TempDir dir;
  FlagsCapture c;
  std::int64_t t = 0;
  instances(c, "op/base/a", durations(10000, 0.02, 30, 25), t);
  instances(c, "op/cand/a", durations(13000, 0.02, 30, 26), t);
  instances(c, "op/base/b", durations(10000, 0.5, 20, 27), t);
  instances(c, "op/cand/b", durations(10600, 0.5, 20, 28), t);
  c.write(dir.file("two.sqlite"));
  const Result r = run_cli(dir, {"compare", dir.file("two.sqlite"), "--baseline", "op/base/*",
                                 "--candidate", "op/cand/*", "--fail-if-slower", "5"});
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_NE(r.err.find("op/cand/a"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("inconclusive"), std::string::npos) << r.err;  // said too
  const Result help = run_cli(dir, {"compare", "--help"});
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("--confidence"), std::string::npos);
  EXPECT_NE(help.out.find("  5  "), std::string::npos) << help.out;
}

}  // namespace
}  // namespace fuselens::analyzer
