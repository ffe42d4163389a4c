// Steps (analyzer/steps, docs/steps.md): marked steps, a step function and the automatic period on
// synthetic captures with known values, a program without repetition, the committed real captures
// (tests/data/pytorch_mlp.sqlite, fmnist_epoch.sqlite) and `prof-analyze steps`' errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "Subprocess.h"
#include "TestSupport.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/StepStore.h"
#include "fuselens/db/TraceCursors.h"
#include "steps/Steps.h"
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

// Eight steps: wall 3000 us (warm-up), then 1000 us, step 6 2000 us with two extra kernels and a
// synchronization. Each step: kernel A (100 us), B (50 us, 10 us after A: its call came before A
// ended: other wait), C (100 us, launched after B ended: 330 us host wait), one 20 us copy and a
// kernel "log" launched outside the step function.
constexpr std::int64_t kWalls[] = {3000, 1000, 1000, 1000, 1000, 2000, 1000, 1000};

FlagsCapture stepped_capture(bool ranges, bool contexts, bool extras = true) {
  FlagsCapture c;
  std::int64_t s = 0;
  int index = 0;
  for (std::int64_t wall : kWalls) {
    if (ranges) c.range("ProfilerStep#" + std::to_string(index), us(s), us(s + wall));
    const auto a = c.kernel("A", us(s + 20), us(100), us(s + 10), us(5));
    const auto b = c.kernel("B", us(s + 130), us(50), us(s + 30), us(5));
    const auto k = c.kernel("C", us(s + 510), us(100), us(s + 500), us(5));
    c.copy(db::MemcpyKind::HostToDevice, 1 << 20, us(s + 700), us(20), true, db::MemoryKind::Pinned,
           db::MemoryKind::Device);
    if (wall == 2000 && extras) {
      c.kernel("D", us(s + 1200), us(10), us(s + 1100), us(5));
      c.kernel("D", us(s + 1300), us(10), us(s + 1290), us(5));
      c.sync(db::SyncType::StreamSynchronize, us(s + 1400), us(s + 1450), 0);
      c.allocation(0x10000, 1 << 20, us(s + 1050), us(s + 1500));
    }
    const auto log = c.kernel("log", us(s + wall - 100), us(5), us(s + wall - 110), us(5));
    if (contexts) {
      c.context(a, {"main", "train_step", "forward"});
      c.context(b, {"main", "train_step", "forward"});
      c.context(k, {"main", "train_step", "backward"});
      c.context(log, {"main", "log_metrics"});
    }
    s += wall;
    ++index;
  }
  return c;
}

StepReport steps_of(const FlagsCapture& capture, const StepOptions& options = {}) {
  TempDir dir;
  const std::string path = (dir.path() / "steps.sqlite").string();
  capture.write(path);
  db::Reader reader(path);
  return analyze_steps(reader, options);
}

std::string data(const std::string& name) {
  return std::string(FUSELENS_TEST_DATA_DIR) + "/" + name;
}

}  // namespace

TEST(StepsGlob, MatchesAnyCaseWithStarsAndQuestionMarks) {
  EXPECT_TRUE(glob_match_nocase("ProfilerStep#*", "profilerstep#12"));
  EXPECT_TRUE(glob_match_nocase("*step*", "mlp/STEP0"));
  EXPECT_TRUE(glob_match_nocase("a?c", "abc"));
  EXPECT_FALSE(glob_match_nocase("*iteration*", "forward"));
  EXPECT_FALSE(glob_match_nocase("step", "step0"));
}

TEST(StepsSteady, SkipsTheFirstStepsUntilTimesSettle) {
  EXPECT_EQ(steady_start({10, 10}), 0u);
  EXPECT_EQ(steady_start({10, 10, 10}), 1u);  // at least one skipped from 3 steps on
  EXPECT_EQ(steady_start({90, 50, 30, 10, 10, 10, 10, 10, 10, 10, 10, 10}), 3u);
}

TEST(Steps, MarkedRangesAreTheStepsWithHtaBreakdowns) {
  const StepReport r = steps_of(stepped_capture(true, false));
  EXPECT_EQ(r.method, StepMethod::Range);
  EXPECT_EQ(r.pattern, "ProfilerStep#*");  // the first default pattern
  ASSERT_EQ(r.steps.size(), 8u);
  const Step& s = r.steps[1];
  EXPECT_EQ(s.label, "ProfilerStep#1");
  EXPECT_EQ(s.wall_ns(), us(1000));
  EXPECT_EQ(s.span_ns, us(1000));
  EXPECT_EQ(s.compute_ns, us(255));  // A, B, C, log
  EXPECT_EQ(s.non_compute_ns, us(20));
  EXPECT_EQ(s.gpu_busy_ns, us(275));
  EXPECT_EQ(s.idle_ns, us(1000 - 275));
  EXPECT_EQ(s.host_wait_ns, us(330 + 90 + 180));  // C after B, the copy after C, log after it
  EXPECT_EQ(s.other_wait_ns, us(10));
  EXPECT_EQ(s.kernel_wait_ns, 0);
  EXPECT_EQ(s.launches, 5);
  EXPECT_EQ(s.kernels, 4);
  EXPECT_EQ(s.copies, 1);
  EXPECT_EQ(s.top_kernel, "A");  // ties with C broken by name
  EXPECT_EQ(r.steady_first, 2);
  EXPECT_DOUBLE_EQ(r.distribution.median_ns, static_cast<double>(us(1000)));
  EXPECT_DOUBLE_EQ(r.distribution.max_ns, static_cast<double>(us(2000)));
  ASSERT_EQ(r.outliers.size(), 1u);
  EXPECT_EQ(r.outliers[0].index, 6);
  EXPECT_NE(r.outliers[0].differs.find("+1 syncs"), std::string::npos) << r.outliers[0].differs;
  EXPECT_NE(r.outliers[0].differs.find("+2 D"), std::string::npos) << r.outliers[0].differs;
  EXPECT_NE(r.outliers[0].differs.find("+1 allocations"), std::string::npos);
  EXPECT_EQ(r.steps[5].peak_memory_bytes, 1 << 20);
  EXPECT_EQ(r.steps[5].allocations, 1);
  EXPECT_EQ(r.steps[6].peak_memory_bytes, 0);  // released in step 6
  EXPECT_EQ(r.steady_ns, us(1000) * 6 + us(2000));
}

TEST(Steps, OnlyTheOutermostMatchingRangeOfAThreadIsAStep) {
  FlagsCapture c;
  c.range("train step 0", us(0), us(1000));
  c.range("substep", us(100), us(200), fuselens::analyzer::test::kFlagsTid,
          1);  // inside: not a step of its own
  c.range("train step 1", us(1000), us(2000));
  c.range("train step 0", us(0), us(2000), 2);  // another thread: its own step
  c.kernel("A", us(20), us(10), us(10), us(5));
  c.kernel("A", us(1020), us(10), us(1010), us(5));
  StepOptions options;
  options.range_glob = "*STEP*";
  const StepReport r = steps_of(c, options);
  ASSERT_EQ(r.steps.size(), 3u);
  EXPECT_EQ(r.steps[0].wall_ns(), us(1000));
  EXPECT_EQ(r.steps[0].label, "train step 0");
  EXPECT_EQ(r.steps[1].tid, 2);
  EXPECT_EQ(r.steps[2].label, "train step 1");
}

TEST(Steps, ANamedPatternThatMatchesNothingIsAnError) {
  StepOptions options;
  options.range_glob = "*epoch*";
  EXPECT_THROW(steps_of(stepped_capture(true, false), options), StepError);
  StepOptions two;
  two.range_glob = "*";
  two.automatic = true;
  EXPECT_THROW(steps_of(stepped_capture(true, false), two), std::invalid_argument);
}

TEST(Steps, AStepFunctionDelimitsStepsByItsLaunches) {
  StepOptions options;
  options.function = "train_step";
  const StepReport r = steps_of(stepped_capture(false, true), options);
  EXPECT_EQ(r.method, StepMethod::Function);
  ASSERT_EQ(r.steps.size(), 8u);
  // Each step runs from its first launch call (A's, 10 us in) to the next step's.
  EXPECT_EQ(r.steps[1].start_ns - r.steps[0].start_ns, us(3000));
  EXPECT_EQ(r.steps[1].wall_ns(), us(1000));
  EXPECT_EQ(r.steps[1].launches, 5);
  options.function = "nowhere";
  EXPECT_THROW(steps_of(stepped_capture(false, true), options), StepError);
}

TEST(Steps, AutomaticFindsThePeriodOfTheLaunchSequence) {
  // No ranges: automatic. (Eight steps are too few for the extra kernels of step 6: they break
  // the 0.9 match fraction; real runs have hundreds of steps.)
  const StepReport r = steps_of(stepped_capture(false, false, false));
  EXPECT_EQ(r.method, StepMethod::Auto);
  EXPECT_GE(r.confidence, 0.8);
  EXPECT_LE(r.confidence, 1.0);
  ASSERT_EQ(r.steps.size(), 8u) << r.note;
  EXPECT_EQ(r.steps[1].start_ns - r.steps[0].start_ns, us(3000));
  EXPECT_EQ(r.steps[1].launches, 5);
}

TEST(StepsPeriod, ARepetitionOverMostOfTheSequenceIsFoundAmongNoise) {
  // 30 % noise, 60 % of a 7-kernel step (s0 after the loop's host gap), 10 % noise.
  std::vector<std::string> names;
  std::vector<std::int64_t> gaps;
  std::uint64_t state = 12345;
  auto noise = [&](std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      names.push_back("n" + std::to_string((state >> 33) % 5000));
      gaps.push_back(10);
    }
  };
  noise(30000);
  for (int step = 0; step < 60000 / 7; ++step) {
    for (int k = 0; k < 7; ++k) {
      names.push_back("s" + std::to_string(k));
      gaps.push_back(k == 0 ? 500 : 10);
    }
  }
  noise(10000);
  const PeriodFit fit = find_period(names, gaps);
  EXPECT_EQ(fit.period, 7);
  EXPECT_EQ(fit.anchor, "s0");
  EXPECT_EQ(fit.starts.size(), 60000u / 7);
  EXPECT_GT(fit.confidence, 0.55);
  EXPECT_LT(fit.confidence, 0.65);
}

TEST(Steps, AProgramWithoutRepetitionHasNoSteps) {
  FlagsCapture c;
  for (int i = 0; i < 40; ++i) {
    c.kernel("k" + std::to_string(i), us(100 * i + 10), us(20), us(100 * i), us(5));
  }
  StepOptions options;
  options.automatic = true;
  const StepReport r = steps_of(c, options);
  EXPECT_TRUE(r.steps.empty());
  EXPECT_NE(r.note.find("no repetition"), std::string::npos) << r.note;
  EXPECT_EQ(r.steady_first, 0);
}

TEST(StepsRealCapture, PyTorchMlpMarkedAndAutomatic) {
  db::Reader reader(data("pytorch_mlp.sqlite"));
  const StepReport marked = analyze_steps(reader);
  EXPECT_EQ(marked.method, StepMethod::Range);
  EXPECT_EQ(marked.pattern, "*step*");
  ASSERT_EQ(marked.steps.size(), 10u);
  for (std::size_t i = 0; i < marked.steps.size(); ++i) {
    EXPECT_EQ(marked.steps[i].label, "mlp/step" + std::to_string(i));
    EXPECT_EQ(marked.steps[i].kernels, 28);  // 14 forward and optimizer, 14 from autograd's thread
  }
  EXPECT_GE(marked.steady_first, 2);

  StepOptions automatic;
  automatic.automatic = true;
  const StepReport found = analyze_steps(reader, automatic);
  EXPECT_EQ(found.method, StepMethod::Auto);
  EXPECT_GE(found.confidence, 0.9);
  // 13 = the 3 unmarked warm-up steps + the 10 marked ones: each marked range holds exactly one
  // automatic step start (the anchor kernel is not the range's first launch).
  ASSERT_EQ(found.steps.size(), 13u) << found.note;
  for (const Step& range : marked.steps) {
    int starts = 0;
    for (const Step& step : found.steps) {
      starts += step.start_ns >= range.start_ns && step.start_ns < range.end_ns ? 1 : 0;
    }
    EXPECT_EQ(starts, 1) << range.label;
  }
  EXPECT_GE(found.steady_first, 2);
  EXPECT_GT(found.steps[0].allocations, 0);  // the caching allocator fills up in the first step
  for (std::size_t i = 1; i < found.steps.size(); ++i) EXPECT_EQ(found.steps[i].allocations, 0);
  EXPECT_GT(found.steps[5].peak_memory_bytes, 0);
}

TEST(StepsRealCapture, CctTorchAutomaticCountEqualsTheMarkedCount) {
  db::Reader reader(data("cct_torch.sqlite"));
  const StepReport marked = analyze_steps(reader);  // its step ranges match *step*
  EXPECT_EQ(marked.method, StepMethod::Range);
  StepOptions automatic;
  automatic.automatic = true;
  const StepReport found = analyze_steps(reader, automatic);
  EXPECT_EQ(found.steps.size(), 5u) << found.note;  // 2 plain steps and 3 under emit_nvtx
  EXPECT_EQ(found.steps.size(), marked.steps.size());
}

// tests/data/train_steps.sqlite (H100, the collector with capture control): a PyTorch CNN training
// run with a real start-up (most of its first step) and 65 steps marked ProfilerStep#0..64. Every
// method finds the same 65 steps; the first, start-up, is never steady.
TEST(StepsRealCapture, TrainStepsMarkedFunctionAndAutomaticAgree) {
  db::Reader reader(data("train_steps.sqlite"));
  const StepReport marked = analyze_steps(reader);
  EXPECT_EQ(marked.method, StepMethod::Range);
  ASSERT_EQ(marked.steps.size(), 65u);
  EXPECT_EQ(marked.steps.front().label, "ProfilerStep#0");
  EXPECT_GT(marked.steady_first, 1);
  StepOptions automatic;
  automatic.automatic = true;
  const StepReport found = analyze_steps(reader, automatic);
  EXPECT_EQ(found.method, StepMethod::Auto);
  EXPECT_EQ(found.steps.size(), marked.steps.size()) << found.note;
  EXPECT_GE(found.confidence, 0.9);
  StepOptions function;
  function.function = "step";  // torch.optim's Optimizer.step, a Python frame named "step"
  const StepReport calls = analyze_steps(reader, function);
  EXPECT_EQ(calls.method, StepMethod::Function);
  EXPECT_EQ(calls.steps.size(), marked.steps.size());
}

TEST(StepsRealCapture, AProgramWithoutRepetitionSaysItHasNoSteps) {
  db::Reader reader(data("no_repetition.sqlite"));
  const StepReport found = analyze_steps(reader);
  EXPECT_EQ(found.method, StepMethod::Auto);
  EXPECT_TRUE(found.steps.empty());
  EXPECT_NE(found.note.find("no repetition"), std::string::npos) << found.note;
}

TEST(StepsRealCapture, ABenchmarkOfManyOpsHasNoSteps) {
  db::Reader reader(data("fusion_bench.sqlite"));
  StepOptions automatic;
  automatic.automatic = true;
  const StepReport found = analyze_steps(reader, automatic);
  EXPECT_TRUE(found.steps.empty());
  EXPECT_NE(found.note.find("no repetition"), std::string::npos) << found.note;
}

TEST(StepsRealCapture, FmnistForwardRangesAndStepFunction) {
  db::Reader reader(data("fmnist_epoch.sqlite"));
  StepOptions ranges;
  ranges.range_glob = "forward";
  const StepReport forward = analyze_steps(reader, ranges);
  ASSERT_EQ(forward.steps.size(), 200u);         // 100 unfused and 100 fused training steps
  EXPECT_EQ(forward.steps.front().kernels, 19);  // the unfused forward pass
  EXPECT_EQ(forward.steps.back().kernels, 6);    // the fused one
  StepOptions function;
  function.function = "GpuModel::forward";
  const StepReport calls = analyze_steps(reader, function);
  // 200 training steps and 2 x 10 evaluation batches, each entering forward() anew.
  EXPECT_EQ(calls.steps.size(), 220u);
  EXPECT_EQ(calls.steps[1].launches, 42);  // an unfused training step

  // No single period (unfused steps of 42 launches, then fused ones of 20): the longest exact
  // repetition (the unfused steps) gives the period and its anchor (the batch gather kernel, in
  // both builds and in evaluation), so the automatic steps are the step function's 220; the
  // confidence is the share of launches in that repetition.
  const StepReport found = analyze_steps(reader);
  EXPECT_EQ(found.method, StepMethod::Auto);
  EXPECT_EQ(found.period, 42);
  EXPECT_GT(found.confidence, 0.5);
  EXPECT_LT(found.confidence, 0.9);
  ASSERT_EQ(found.steps.size(), calls.steps.size()) << found.note;
  for (std::size_t i = 0; i < found.steps.size(); ++i) {  // the gather comes just before forward()
    EXPECT_LE(found.steps[i].start_ns, calls.steps[i].start_ns) << i;
    if (i > 0) {
      EXPECT_GT(found.steps[i].start_ns, calls.steps[i - 1].start_ns) << i;
    }
  }
}

TEST(StepsCli, PrintsTheStepsAndFailsOnBadInputWithOneLine) {
  const std::string mlp = data("pytorch_mlp.sqlite");
  const auto ok = fuselens::test::run_cli(TempDir{}, {"steps", mlp});
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_NE(ok.out.find("steps 2-10 of 10"), std::string::npos) << ok.out;
  const auto csv = fuselens::test::run_cli(TempDir{}, {"steps", mlp, "--format", "csv"});
  EXPECT_EQ(csv.status, 0);
  std::size_t records = 0;
  for (const auto& record : fuselens::analyzer::test::parse_csv(csv.out))
    records += record.size() > 1 ? 1 : 0;
  EXPECT_EQ(records, 11u);  // the header and 10 steps
  const auto json = fuselens::test::run_cli(TempDir{}, {"steps", mlp, "--format", "json"});
  EXPECT_EQ(json.status, 0);
  const auto doc = nlohmann::json::parse(json.out);
  EXPECT_EQ(doc["steps"].size(), 10u);
  EXPECT_EQ(doc["steady"], "steps 2-10 of 10, 0.015 s of 4.31 s captured");
  EXPECT_EQ(doc["window"]["label"], "whole capture");  // steps lists every step by default
  EXPECT_EQ(doc["method"], "range");
  const auto none = fuselens::test::run_cli(TempDir{}, {"steps", mlp, "--step-range", "*epoch*"});
  EXPECT_EQ(none.status, 4);
  EXPECT_TRUE(none.out.empty());
  EXPECT_EQ(none.err_lines().size(), 1u);
  TempDir dir;
  const std::string empty = (dir.path() / "no_cuda.sqlite").string();
  fuselens::analyzer::test::write_capture_without_process(empty);
  const auto no_cuda = fuselens::test::run_cli(dir, {"steps", empty});
  EXPECT_EQ(no_cuda.status, 1);
  EXPECT_TRUE(no_cuda.out.empty());
  EXPECT_EQ(no_cuda.err_lines().size(), 1u);
  const auto both =
      fuselens::test::run_cli(TempDir{}, {"steps", mlp, "--auto", "--step-range", "x"});
  EXPECT_EQ(both.status, 2);
  EXPECT_TRUE(both.out.empty());
  EXPECT_EQ(both.err_lines().size(), 1u);
}

// An error line quotes what the user typed; control characters in it (ESC sequences that clear
// or retitle a terminal, NUL, tabs) are written as \xNN, never raw (every subcommand's errors go
// through cli::fail).
TEST(StepsCli, ErrorLinesEscapeControlCharacters) {
  const std::string mlp = data("pytorch_mlp.sqlite");
  const auto r = fuselens::test::run_cli(TempDir{}, {"steps", mlp, "--step-function",
                                                     "a\x1b[2J\x07"
                                                     "b\tc"});
  EXPECT_EQ(r.status, 4);
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  for (const char c : r.err) {
    if (c != '\n') {
      EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 || c == 0x7f) << r.err;
    }
  }
  EXPECT_NE(r.err.find("a\\x1b[2J\\x07b\\x09c"), std::string::npos) << r.err;
}

// The steps prof-run stores when a run ends (schema 6, db/StepStore.h) are those `prof-analyze
// steps` finds with its default method, every field (but the kernel multiset) read back equal;
// the default window reads them instead of searching again.
TEST(StepsStore, StoredStepsEqualTheStepsFound) {
  TempDir dir;
  const std::string path = (dir.path() / "stored.sqlite").string();
  stepped_capture(true, false).write(path);
  StepReport found;
  {
    db::Reader reader(db::Connection(path, db::Connection::Mode::ReadWrite));
    EXPECT_FALSE(stored_step_report(reader).has_value());  // nothing stored yet
    found = analyze_steps(reader);
    EXPECT_EQ(store_steps(reader), "");
  }
  const db::Reader reader(path);
  const auto stored = stored_step_report(reader);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->method, found.method);
  EXPECT_EQ(stored->pattern, "ProfilerStep#*");
  EXPECT_EQ(stored->note, found.note);
  EXPECT_EQ(stored->steady_first, found.steady_first);
  EXPECT_EQ(stored->median_step, found.median_step);
  EXPECT_EQ(stored->captured_ns, found.captured_ns);
  EXPECT_EQ(stored->steady_ns, found.steady_ns);
  EXPECT_EQ(stored->distribution.median_ns, found.distribution.median_ns);
  EXPECT_EQ(stored->distribution.p90_ns, found.distribution.p90_ns);
  ASSERT_EQ(stored->steps.size(), 8u);
  ASSERT_EQ(stored->steps.size(), found.steps.size());
  for (std::size_t i = 0; i < found.steps.size(); ++i) {
    const Step& f = found.steps[i];
    const Step& s = stored->steps[i];
    EXPECT_EQ(
        std::tie(s.index, s.pid, s.tid, s.start_ns, s.end_ns, s.label, s.gpu_busy_ns, s.compute_ns,
                 s.non_compute_ns, s.span_ns, s.idle_ns, s.host_wait_ns, s.kernel_wait_ns,
                 s.other_wait_ns, s.launches, s.kernels, s.copies, s.memsets, s.syncs,
                 s.allocations, s.peak_memory_bytes, s.top_kernel, s.top_kernel_ns),
        std::tie(f.index, f.pid, f.tid, f.start_ns, f.end_ns, f.label, f.gpu_busy_ns, f.compute_ns,
                 f.non_compute_ns, f.span_ns, f.idle_ns, f.host_wait_ns, f.kernel_wait_ns,
                 f.other_wait_ns, f.launches, f.kernels, f.copies, f.memsets, f.syncs,
                 f.allocations, f.peak_memory_bytes, f.top_kernel, f.top_kernel_ns))
        << "step " << f.index;
  }
  ASSERT_EQ(stored->outliers.size(), found.outliers.size());
  ASSERT_FALSE(found.outliers.empty());
  EXPECT_EQ(stored->outliers[0].index, found.outliers[0].index);
  EXPECT_EQ(stored->outliers[0].differs, found.outliers[0].differs);
  // The steady window from the stored steps is the one the search gives.
  {
    db::Reader a(path);
    db::Reader b(path);
    StepOptions search;
    search.range_glob = "ProfilerStep#*";  // a named method always searches
    const Window from_store = resolve_window(a, parse_window("steady"));
    const Window from_search = resolve_window(b, parse_window("steady"), search);
    EXPECT_EQ(from_store.label, from_search.label);
    ASSERT_EQ(from_store.intervals.size(), from_search.intervals.size());
    EXPECT_EQ(from_store.intervals[0].start_ns, from_search.intervals[0].start_ns);
  }
  // A capture of an older schema has no step tables: one clear error, nothing changed.
  const std::string old = (dir.path() / "v5.sqlite").string();
  stepped_capture(true, false).write(old);
  {
    db::Connection c(old, db::Connection::Mode::ReadWrite);
    c.exec("DROP TABLE step; DROP TABLE step_detection; PRAGMA user_version = 5");
  }
  db::Reader v5(db::Connection(old, db::Connection::Mode::ReadWrite));
  EXPECT_THROW(store_steps(v5), db::Error);
  EXPECT_FALSE(stored_step_report(v5).has_value());
}

// A search skipped at the end of the run is stored as such: the default window is then the
// whole capture and says why.
TEST(StepsStore, ASkippedSearchMakesTheDefaultWindowTheWholeCapture) {
  TempDir dir;
  const std::string path = (dir.path() / "skipped.sqlite").string();
  stepped_capture(true, false).write(path);
  {
    db::Connection c(path, db::Connection::Mode::ReadWrite);
    db::StoredStepDetection none;
    none.method = "none";
    none.note = "steps not searched when the run ended: 12 GPU records, more than 10";
    db::write_steps(c, none, {});
  }
  db::Reader reader(path);
  const Window w = resolve_window(reader, parse_window("steady"));
  EXPECT_TRUE(w.whole);
  EXPECT_NE(w.label.find("steps not searched"), std::string::npos) << w.label;
  // a named method searches regardless
  db::Reader again(path);
  StepOptions named;
  named.range_glob = "ProfilerStep#*";
  EXPECT_FALSE(resolve_window(again, parse_window("steady"), named).whole);
}

// Stored rows a run cannot have written are refused with one message, not trusted.
TEST(StepsStore, ImplausibleStoredRowsAreRefused) {
  TempDir dir;
  const std::string path = (dir.path() / "hostile.sqlite").string();
  stepped_capture(true, false).write(path);
  {
    db::Reader reader(db::Connection(path, db::Connection::Mode::ReadWrite));
    store_steps(reader);
  }
  for (const char* sql : {"UPDATE step SET id = id + 10 WHERE id = 3",
                          "UPDATE step SET end_ns = start_ns - 1 WHERE id = 2",
                          "UPDATE step SET start_ns = -5 WHERE id = 1",
                          "UPDATE step_detection SET steady_first = 99"}) {
    const std::string copy = (dir.path() / "copy.sqlite").string();
    std::filesystem::copy_file(path, copy, std::filesystem::copy_options::overwrite_existing);
    {
      db::Connection c(copy, db::Connection::Mode::ReadWrite);
      c.exec(sql);
    }
    db::Reader reader(copy);
    EXPECT_THROW(stored_step_report(reader), db::Error) << sql;
  }
}

// Under prof-run's capture control (capture_window rows) the steps are those that start inside a
// recorded window: the step ranges outside are in the capture (they open windows) but hold no
// recorded work.
TEST(Steps, OnlyStepsInsideRecordedWindowsCount) {
  TempDir dir;
  const std::string path = (dir.path() / "windows.sqlite").string();
  stepped_capture(true, false).write(path);
  {
    db::Connection c(path, db::Connection::Mode::ReadWrite);
    // steps 3 and 4 (0-based 2 and 3) start at 4000 and 5000 us
    c.exec("INSERT INTO capture_window (pid, start_ns, end_ns, reason) VALUES (1, " +
           std::to_string(analyzer::test::kFlagsT0 + us(4000) + 300) + ", " +
           std::to_string(analyzer::test::kFlagsT0 + us(6000)) + ", 'steps')");
  }
  db::Reader reader(path);
  const StepReport r = analyze_steps(reader);
  ASSERT_EQ(r.steps.size(), 2u);
  EXPECT_EQ(r.steps[0].label, "ProfilerStep#2");
  EXPECT_EQ(r.steps[1].label, "ProfilerStep#3");
  EXPECT_EQ(r.steps[0].index, 1);
  EXPECT_NE(r.note.find("inside the 1 recorded window"), std::string::npos) << r.note;
}

// A step whose own push opened the window starts a moment before the window: it still counts.
TEST(Steps, AStepThatOpenedItsWindowCounts) {
  TempDir dir;
  const std::string path = (dir.path() / "opened.sqlite").string();
  stepped_capture(true, false).write(path);
  {
    db::Connection c(path, db::Connection::Mode::ReadWrite);
    c.exec("INSERT INTO capture_window (pid, start_ns, end_ns, reason) VALUES (1, " +
           std::to_string(analyzer::test::kFlagsT0 + us(4000) + 300) + ", " +
           std::to_string(analyzer::test::kFlagsT0 + us(5000) + 200) + ", 'steps')");
  }
  db::Reader reader(path);
  const StepReport r = analyze_steps(reader);
  ASSERT_EQ(r.steps.size(), 2u);  // the step that opened it, and the next, whose push is inside
  EXPECT_EQ(r.steps[0].label, "ProfilerStep#2");
}

// Above kMaxStoredStepRecords GPU records prof-run stores only the steps found in bounded memory
// (StepOptions::streamed_only): the NVTX steps, equal to the search's; a capture without step
// ranges gets the skipped search ("none") with why, not the launch sequence's search. The bound
// is read from the tables' largest row ids (db::Reader::gpu_record_bound): one kernel row moved
// to id 3,000,000 makes a small capture "large" without changing what it holds.
TEST(StepsStore, AboveTheBoundOnlyStreamedStepsAreStored) {
  TempDir dir;
  const std::string ranged = (dir.path() / "ranged.sqlite").string();
  const std::string unranged = (dir.path() / "unranged.sqlite").string();
  stepped_capture(true, false).write(ranged);
  stepped_capture(false, false).write(unranged);
  for (const std::string& path : {ranged, unranged}) {
    analyzer::test::exec_sql(path,
                             "UPDATE kernel SET id = 3000000 WHERE id = (SELECT MAX(id) "
                             "FROM kernel)");
  }
  StepReport found;
  {
    db::Reader reader(db::Connection(ranged, db::Connection::Mode::ReadWrite));
    ASSERT_GT(reader.gpu_record_bound(), kMaxStoredStepRecords);
    ASSERT_LT(reader.gpu_record_count(), 100);
    found = analyze_steps(reader);
    StepOptions streamed;
    streamed.streamed_only = true;
    const StepReport bounded = analyze_steps(reader, streamed);
    ASSERT_EQ(bounded.steps.size(), found.steps.size());
    EXPECT_EQ(bounded.note, found.note);
    EXPECT_EQ(bounded.steady_first, found.steady_first);
    EXPECT_EQ(store_steps(reader), "");
  }
  {
    const db::Reader reader(ranged);
    const auto stored = stored_step_report(reader);
    ASSERT_TRUE(stored.has_value());
    ASSERT_EQ(stored->steps.size(), found.steps.size());
    for (std::size_t i = 0; i < found.steps.size(); ++i) {
      EXPECT_EQ(stored->steps[i].start_ns, found.steps[i].start_ns) << i;
      EXPECT_EQ(stored->steps[i].kernels, found.steps[i].kernels) << i;
      EXPECT_EQ(stored->steps[i].gpu_busy_ns, found.steps[i].gpu_busy_ns) << i;
    }
  }
  db::Reader reader(db::Connection(unranged, db::Connection::Mode::ReadWrite));
  ASSERT_FALSE(analyze_steps(reader).steps.empty());  // the automatic method finds them
  StepOptions streamed;
  streamed.streamed_only = true;
  const StepReport bounded = analyze_steps(reader, streamed);
  EXPECT_TRUE(bounded.steps.empty());
  EXPECT_NE(bounded.note.find("no NVTX range matches"), std::string::npos) << bounded.note;
  const std::string skipped = store_steps(reader);
  EXPECT_NE(skipped.find("steps not searched when the run ended"), std::string::npos) << skipped;
  const auto stored = stored_step_report(reader);
  ASSERT_TRUE(stored.has_value());
  EXPECT_TRUE(stored->steps.empty());
  EXPECT_EQ(stored->note, skipped);
}

// A loop of one kernel (launch_overhead): whatever the period, no position of it holds a name
// once, so the automatic method finds no steps; it now says so from two index descents instead
// of reading every launch (db::single_kernel_name_id). A damaged kernel time proves no launch
// is read (the deferred check would refuse it: it did before). prof-run stores that answer at
// any size (not a skipped search), and `prof-analyze steps` prints it without a search.
TEST(StepsAuto, OneKernelNameHasNoStepsWithoutReadingTheLaunches) {
  TempDir dir;
  const std::string path = (dir.path() / "one.sqlite").string();
  FlagsCapture c;
  for (int i = 0; i < 400; ++i) c.kernel("empty", us(10 * i + 5), us(2), us(10 * i), us(3));
  c.write(path);
  {
    db::Reader reader(path);
    ASSERT_TRUE(db::single_kernel_name_id(reader).has_value());
    const StepReport r = analyze_steps(reader);
    EXPECT_EQ(r.method, StepMethod::Auto);
    EXPECT_TRUE(r.steps.empty());
    EXPECT_FALSE(r.skipped);
    EXPECT_NE(r.note.find("every kernel has one name"), std::string::npos) << r.note;
  }
  analyzer::test::exec_sql(path, "UPDATE kernel SET start_ns = 'x' WHERE id = 200");
  {
    db::Reader reader(path, db::TimestampCheck::DeferLargeTables);
    EXPECT_TRUE(analyze_steps(reader).steps.empty());
    StepOptions automatic;
    automatic.automatic = true;
    EXPECT_TRUE(analyze_steps(reader, automatic).steps.empty());
    EXPECT_THROW(reader.check_table_timestamps("kernel"), db::Error);  // the damage is there
  }
  analyzer::test::exec_sql(path,
                           "UPDATE kernel SET start_ns = 1995000 WHERE id = 200; "
                           "UPDATE kernel SET id = 3000000 WHERE id = 400");
  {
    db::Reader reader(db::Connection(path, db::Connection::Mode::ReadWrite));
    ASSERT_GT(reader.gpu_record_bound(), kMaxStoredStepRecords);
    EXPECT_EQ(store_steps(reader), "");  // the answer, stored: not a skipped search
  }
  const db::Reader reader(path);
  const auto stored = stored_step_report(reader);
  ASSERT_TRUE(stored.has_value());
  EXPECT_FALSE(stored->skipped);
  EXPECT_NE(stored->note.find("every kernel has one name"), std::string::npos);
  analyzer::test::exec_sql(path, "UPDATE kernel SET start_ns = 'x' WHERE id = 200");
  const auto cli = fuselens::test::run_cli(dir, {"steps", path});
  EXPECT_EQ(cli.status, 0) << cli.err;
  EXPECT_NE(cli.out.find("every kernel has one name"), std::string::npos) << cli.out;
  // A name id that is not an integer is not "one name": the search runs (and refuses nothing
  // it does not read).
  analyzer::test::exec_sql(path,
                           "UPDATE kernel SET start_ns = 1995000 WHERE id = 200; "
                           "UPDATE kernel SET demangled_name_id = 'x' WHERE id = 1");
  const db::Reader text_id(path);
  EXPECT_FALSE(db::single_kernel_name_id(text_id).has_value());
  StepOptions automatic;
  automatic.automatic = true;
  EXPECT_NO_THROW(analyze_steps(text_id, automatic));
}
