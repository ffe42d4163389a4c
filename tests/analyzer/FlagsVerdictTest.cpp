// Flags inside a window and the verdict first (FlagsVerdict.h, issue 19): on the committed
// PyTorch training capture (tests/data/train_steps.sqlite: a real start-up, then 65
// ProfilerStep#N steps) the steady window's first hit is a steady-state finding repeated every
// step and start-up is reported once; on the program without repetition the verdict covers the
// whole capture; synthetic captures give each verdict class, the start-up line and the merging
// of one finding over the steps' ranges.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "Subprocess.h"
#include "TestSupport.h"
#include "flags/Flags.h"
#include "flags/FlagsFormat.h"
#include "fuselens/db/Reader.h"
#include "window/Window.h"

#ifndef PROF_ANALYZE_PATH
#error "PROF_ANALYZE_PATH must name the prof-analyze binary"
#endif

using namespace fuselens;
using namespace fuselens::analyzer;
using fuselens::analyzer::test::FlagsCapture;
using fuselens::analyzer::test::TempDir;
using fuselens::analyzer::test::us;

namespace {

std::string data(const std::string& name) {
  return std::string(FUSELENS_TEST_DATA_DIR) + "/" + name;
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

/// Runs the flags in `spec` on `path` as `prof-analyze flags` does.
FlagsReport windowed_flags(const std::string& path, const std::string& spec, Window& window) {
  db::Reader reader(path);
  window = resolve_window(reader, parse_window(spec));
  apply_window(reader, window);
  return run_flags(reader, FlagsConfig{}, NameKind::Short, &window);
}

/// `steps` steps of `wall_us` marked ProfilerStep#N, starting at `start_us`; `body` adds each
/// step's work at its start `s` (us).
template <typename Body>
void add_steps(FlagsCapture& c, int steps, std::int64_t start_us, std::int64_t wall_us, Body body) {
  for (int i = 0; i < steps; ++i) {
    const std::int64_t s = start_us + i * wall_us;
    c.range("ProfilerStep#" + std::to_string(i), us(s), us(s + wall_us));
    body(s);
  }
}

FlagsReport whole_flags(const FlagsCapture& c) { return analyzer::test::flags_of(c); }

}  // namespace

// The steady window of the real training capture: a host-bound verdict over its steps, the
// first hit repeated every step with its per-step cost, nothing from start-up.
TEST(FlagsVerdictTrain, SteadyWindowRanksASteadyStateFindingFirst) {
  Window window;
  const FlagsReport r = windowed_flags(data("train_steps.sqlite"), "steady", window);
  ASSERT_GT(window.first_step, 1);  // warm-up steps left out
  EXPECT_EQ(r.verdict.steps, window.last_step - window.first_step + 1);
  EXPECT_EQ(r.verdict.kind, "host-bound") << r.verdict.headline;
  EXPECT_LT(r.verdict.busy_percent, kBusyPercent);
  EXPECT_GT(r.verdict.host_wait_percent, r.verdict.other_wait_percent);
  EXPECT_EQ(r.verdict.startup_ns, window.startup_ns);
  ASSERT_FALSE(r.hits.empty());
  ASSERT_FALSE(r.verdict.causes.empty());
  const Hit& first = r.hits.front();
  EXPECT_TRUE(first.rule == "stream_idle" || first.rule == "launch_short" ||
              first.rule == "fusion_chain")
      << first.rule;
  EXPECT_GT(first.metric("per_step_ns"), 0) << first.detail;  // repeated every step
  EXPECT_EQ(first.metric("steps_with"), r.verdict.steps);
  EXPECT_EQ(first.detail.rfind("every step", 0), 0u) << first.detail;
  EXPECT_EQ(r.verdict.causes.front().rfind(first.rule + ":", 0), 0u) << r.verdict.causes.front();
  // Ranked across rules: never increasing time at stake (gpu_utilization, restating the
  // verdict, last).
  for (std::size_t i = 1; i < r.hits.size(); ++i) {
    if (r.hits[i].rule == "gpu_utilization") continue;
    EXPECT_GE(r.hits[i - 1].time_ns, r.hits[i].time_ns) << i;
  }
  // Time at stake relative to the window, not the capture.
  for (const Hit& h : r.hits) {
    EXPECT_NEAR(h.metric("window_percent"),
                100.0 * static_cast<double>(h.time_ns) / static_cast<double>(window.inside_ns),
                1e-9)
        << h.rule;
  }
  // One finding per step range: no hit names a single ProfilerStep#N range.
  for (const Hit& h : r.hits) {
    EXPECT_TRUE(h.range.empty() || h.range == "ProfilerStep#*") << h.range;
  }
  EXPECT_LE(r.hit_count("gpu_utilization"), 1u);  // its chunks are one hit per device
}

// The whole capture: start-up (before the first step) is one line; the idle rules leave it out.
TEST(FlagsVerdictTrain, WholeCaptureReportsStartUpOnce) {
  Window window;
  const FlagsReport r = windowed_flags(data("train_steps.sqlite"), "all", window);
  ASSERT_FALSE(r.window.steps.empty());
  const std::int64_t first_step = r.window.steps.front().start_ns;
  EXPECT_EQ(r.verdict.startup_ns, first_step - r.origin_ns);
  EXPECT_GT(r.verdict.startup_ns, 0);
  for (const Hit& h : r.hits) {
    if (h.rule == "gpu_gaps" || h.rule == "gpu_utilization" || h.rule == "stream_idle") {
      EXPECT_GE(h.first_ns, first_step) << h.rule << ": " << h.detail;
    }
  }
  // The command line: one start-up line in every window, whether it is the verdict's (whole
  // capture) or the window line's (steady).
  for (const char* spec : {"all", "steady"}) {
    const auto out = fuselens::test::run_cli(
        TempDir{}, {"flags", data("train_steps.sqlite"), "--window", spec, "--limit", "0"});
    ASSERT_EQ(out.status, 0) << out.err;
    EXPECT_EQ(occurrences(out.out, "start-up"), 1u) << spec;
    EXPECT_LT(out.out.find("Verdict: host-bound"), out.out.find("Summary:")) << spec;
  }
}

// Without steps the verdict covers the whole capture: its span is the first to the last GPU
// operation.
TEST(FlagsVerdictNoSteps, VerdictCoversTheWholeCapture) {
  Window window;
  const std::string path = data("no_repetition.sqlite");
  const FlagsReport r = windowed_flags(path, "steady", window);
  EXPECT_TRUE(window.whole);
  EXPECT_EQ(r.verdict.steps, 0);
  EXPECT_TRUE(r.window.steps.empty());
  EXPECT_EQ(r.verdict.startup_ns, 0);
  const FlagsTrace trace = load_flags_trace(db::Reader(path));
  ASSERT_FALSE(trace.ops.empty());
  std::int64_t first = trace.ops.front().start_ns, last = 0;
  for (const TraceOp& op : trace.ops) last = std::max(last, op.end_ns);
  EXPECT_EQ(r.verdict.span_ns, last - first);
  EXPECT_NE(r.verdict.headline.find("of the window's GPU span"), std::string::npos)
      << r.verdict.headline;
  for (const Hit& h : r.hits) EXPECT_EQ(h.metric("per_step_ns"), 0) << h.rule;
}

// Each verdict class from a capture built for it: eight 1000 us steps.
TEST(FlagsVerdictClasses, GpuBoundCopyBoundSyncBoundAndHostBound) {
  {  // one 900 us kernel per step
    FlagsCapture c;
    add_steps(c, 8, 0, 1000,
              [&](std::int64_t s) { c.kernel("gemm", us(s + 20), us(900), us(s + 5), us(5)); });
    const FlagsReport r = whole_flags(c);
    EXPECT_EQ(r.verdict.kind, "GPU-bound") << r.verdict.headline;
    ASSERT_FALSE(r.verdict.causes.empty());
    EXPECT_EQ(r.verdict.causes.front().rfind("gemm:", 0), 0u) << r.verdict.causes.front();
  }
  {  // one 800 us copy and a 20 us kernel per step
    FlagsCapture c;
    add_steps(c, 8, 0, 1000, [&](std::int64_t s) {
      c.copy(db::MemcpyKind::HostToDevice, 64 << 20, us(s + 20), us(800), true,
             db::MemoryKind::Pinned, db::MemoryKind::Device);
      c.kernel("scale", us(s + 830), us(20), us(s + 825), us(5));
    });
    const FlagsReport r = whole_flags(c);
    EXPECT_EQ(r.verdict.kind, "copy-bound") << r.verdict.headline;
    EXPECT_GT(r.verdict.non_compute_percent, r.verdict.compute_percent);
  }
  {  // a 100 us kernel, then the host synchronizes for most of the step
    FlagsCapture c;
    add_steps(c, 8, 0, 1000, [&](std::int64_t s) {
      c.kernel("step_kernel", us(s + 20), us(100), us(s + 5), us(5));
      c.call("cudaDeviceSynchronize", us(s + 15), us(s + 900));
    });
    const FlagsReport r = whole_flags(c);
    EXPECT_EQ(r.verdict.kind, "sync-bound") << r.verdict.headline;
    EXPECT_GT(r.verdict.sync_percent, r.verdict.busy_percent);
  }
  {  // ten 10 us kernels per step, each launched 90 us after the previous one ended
    FlagsCapture c;
    add_steps(c, 8, 0, 1000, [&](std::int64_t s) {
      for (int k = 0; k < 10; ++k) {
        c.kernel("tiny", us(s + 5 + 100 * k + 10), us(10), us(s + 5 + 100 * k), us(8));
      }
    });
    const FlagsReport r = whole_flags(c);
    EXPECT_EQ(r.verdict.kind, "host-bound") << r.verdict.headline;
    EXPECT_GT(r.verdict.host_wait_percent, 50);
    EXPECT_EQ(r.verdict.steps, 8);
  }
  {  // no GPU work
    FlagsCapture c;
    c.call("cudaGetDeviceCount", us(0), us(10));
    EXPECT_EQ(whole_flags(c).verdict.kind, "no GPU work");
  }
}

// Start-up before the first step: one line, never a gap or utilization hit; a finding in every
// step's range is one hit with its per-step cost.
TEST(FlagsVerdictWindow, StartUpOnceAndOneHitPerFindingOverTheSteps) {
  FlagsCapture c;
  c.kernel("init", us(0), us(10), us(0), us(2));  // start-up work, then 2 s of nothing
  constexpr int kSteps = 8;
  add_steps(c, kSteps, 2'000'000, 1000, [&](std::int64_t s) {
    for (int k = 0; k < 4; ++k) {
      c.kernel("tiny", us(s + 50 + 200 * k), us(2), us(s + 40 + 200 * k), us(20));
    }
  });
  const FlagsReport r = whole_flags(c);
  EXPECT_EQ(r.hit_count("gpu_gaps"), 0u);
  EXPECT_EQ(r.verdict.startup_ns, us(2'000'000));
  EXPECT_EQ(r.verdict.startup.rfind("start-up: ", 0), 0u) << r.verdict.startup;
  for (const Hit& h : r.hits) EXPECT_GE(h.first_ns, r.window.steps.front().start_ns) << h.rule;
  const auto shorts = analyzer::test::hits_of(r, "launch_short");
  ASSERT_EQ(shorts.size(), 1u);  // one finding, not one per ProfilerStep#N range
  const Hit& h = *shorts.front();
  EXPECT_EQ(h.range, "ProfilerStep#*");
  EXPECT_EQ(h.count, 4 * kSteps);
  EXPECT_EQ(h.metric("steps_with"), kSteps);
  EXPECT_DOUBLE_EQ(h.metric("per_step_count"), 4);
  EXPECT_DOUBLE_EQ(h.metric("per_step_ns"), static_cast<double>(h.time_ns) / kSteps);
  std::ostringstream table, csv, json;
  write_flags(table, r, OutputFormat::Table);
  write_flags(csv, r, OutputFormat::Csv);
  write_flags(json, r, OutputFormat::Json);
  EXPECT_EQ(occurrences(table.str(), "start-up"), 1u) << table.str();
  EXPECT_EQ(table.str().rfind("Verdict: ", table.str().find("Summary:")),
            table.str().find("Verdict: "));
  const auto rows = analyzer::test::parse_csv(csv.str());
  ASSERT_GE(rows.size(), 3u);
  EXPECT_EQ(rows[1][0], "verdict");
  EXPECT_EQ(rows[2][0], "startup");
  EXPECT_EQ(rows[2][1], std::to_string(us(2'000'000)));
  const auto doc = nlohmann::json::parse(json.str());
  EXPECT_EQ(doc["verdict"]["kind"], r.verdict.kind);
  EXPECT_EQ(doc["verdict"]["startup_ns"], us(2'000'000));
  EXPECT_EQ(doc["verdict"]["steps"], kSteps);
}

// --rules filters the ranked hits; the verdict is the window's, whatever the filter.
TEST(FlagsVerdictWindow, RuleFilterKeepsTheVerdict) {
  FlagsCapture c;
  add_steps(c, 8, 0, 1000, [&](std::int64_t s) {
    for (int k = 0; k < 4; ++k) {
      c.kernel("tiny", us(s + 50 + 200 * k), us(2), us(s + 40 + 200 * k), us(20));
    }
  });
  FlagsConfig only;
  only.select_rules({"launch_short"});
  const FlagsReport all = whole_flags(c), filtered = analyzer::test::flags_of(c, only);
  EXPECT_EQ(analyzer::test::fired(filtered), (std::set<std::string>{"launch_short"}));
  EXPECT_EQ(filtered.verdict.kind, all.verdict.kind);
  EXPECT_EQ(filtered.verdict.busy_percent, all.verdict.busy_percent);
}

// The HTML report's flags section opens with the verdict, then the ranked hits.
TEST(FlagsVerdictHtml, FlagsSectionOpensWithTheVerdict) {
  TempDir dir;
  const std::string out = dir.file("report.html");
  const auto r = fuselens::test::run_cli(
      dir, {"export", data("train_steps.sqlite"), "--format", "html", "-o", out});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string html = fuselens::test::slurp(out);
  const auto section = html.find("id=\"flags\"");
  const auto verdict = html.find("id=\"flags-verdict\"");
  const auto table = html.find("id=\"flags-table\"");
  ASSERT_NE(section, std::string::npos);
  ASSERT_NE(verdict, std::string::npos);
  ASSERT_NE(table, std::string::npos);
  EXPECT_LT(section, verdict);
  EXPECT_LT(verdict, table);
  EXPECT_EQ(occurrences(html, "Verdict:"), 1u);
  EXPECT_NE(html.find("host-bound: GPU busy", verdict), std::string::npos);
  EXPECT_NE(html.find("Per step (share of the step)", verdict), std::string::npos);
}

// --limit cuts the ranked list across rules; --rules filters it.
TEST(FlagsVerdictCli, LimitCountsHitsAcrossRules) {
  const std::string path = data("train_steps.sqlite");
  const auto one = fuselens::test::run_cli(TempDir{}, {"flags", path, "--limit", "1"});
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_EQ(occurrences(one.out, "   1. ["), 1u);
  EXPECT_EQ(occurrences(one.out, "   2. ["), 0u);
  EXPECT_NE(one.out.find("more hits (--limit 0 shows all"), std::string::npos);
  const auto only = fuselens::test::run_cli(
      TempDir{}, {"flags", path, "--rules", "launch_short", "--format", "json"});
  ASSERT_EQ(only.status, 0) << only.err;
  const auto doc = nlohmann::json::parse(only.out);
  ASSERT_FALSE(doc["hits"].empty());
  for (const auto& h : doc["hits"]) EXPECT_EQ(h["rule"], "launch_short");
  EXPECT_EQ(doc["verdict"]["kind"], "host-bound");
}
