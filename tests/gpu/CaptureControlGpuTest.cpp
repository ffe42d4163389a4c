// Capture control on a real GPU (prof-run --capture-range, --steps; docs/capture-control.md):
// step_loop reports what it launched in each step and outside them; the capture must hold exactly
// the kernels of the steps inside the window, and none of the start-up or the tail.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "Binaries.h"
#include "GpuSkip.h"
#include "Subprocess.h"
#include "TempDir.h"
#include "fuselens/db/Reader.h"

using fuselens::test::binary;
using fuselens::test::run;
using fuselens::test::TempDir;

namespace {

class CaptureControlGpu : public ::testing::Test {
 protected:
  void SetUp() override { FUSELENS_SKIP_WITHOUT_GPU(); }

  // Runs step_loop under prof-run with `options`; returns the workload's JSON report.
  nlohmann::json capture(const std::vector<std::string>& options,
                         const std::vector<std::string>& workload) {
    std::vector<std::string> argv = {binary("prof-run", PROF_RUN_PATH), "-o", dir.file("c.sqlite"),
                                     "--force"};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.insert(argv.end(),
                {"--", binary("step_loop", STEP_LOOP_PATH), "--json", dir.file("launched.json")});
    argv.insert(argv.end(), workload.begin(), workload.end());
    const auto r = run(argv);
    EXPECT_EQ(r.status, 0) << r.err;
    std::ifstream in(dir.file("launched.json"));
    return nlohmann::json::parse(in);
  }

  // Kernels per name the launched report says steps `recorded` hold.
  static std::map<std::string, long> expected(const nlohmann::json& launched,
                                              const std::set<int>& recorded) {
    std::map<std::string, long> counts;
    for (int s : recorded) {
      for (const auto& [name, n] : launched["steps"][s]["kernels"].items())
        counts[name] += n.get<long>();
    }
    return counts;
  }

  // Kernels per name in the capture.
  std::map<std::string, long> recorded_kernels() {
    fuselens::db::Reader reader(dir.file("c.sqlite"));
    EXPECT_EQ(reader.run().dropped_records, 0u);
    // every recorded kernel comes with its launch call (API activity is switched with the window)
    EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM kernel k WHERE NOT EXISTS (SELECT 1 FROM "
                               "api_call a WHERE a.pid = k.pid AND a.correlation_id = "
                               "k.correlation_id)"),
              0);
    std::map<std::string, long> counts;
    for (const char* name : {"warmup_kernel", "scale_kernel", "add_kernel", "reduce_kernel",
                             "tiny_kernel", "log_kernel", "tail_kernel"}) {
      const long n = reader.query_int(
          std::string("SELECT COUNT(*) FROM kernel k JOIN strings s ON s.id = k.short_name_id"
                      " WHERE s.value = '") +
          name + "'");
      if (n) counts[name] = n;
    }
    return counts;
  }

  TempDir dir;
};

std::set<int> range(int first, int last) {
  std::set<int> s;
  for (int i = first; i <= last; ++i) s.insert(i);
  return s;
}

}  // namespace

TEST_F(CaptureControlGpu, NvtxRangeRecordsTheStepsInsideItAndNothingOfStartUpOrTail) {
  const auto launched = capture({"--capture-range", "nvtx:train"}, {"--steps", "6"});
  EXPECT_EQ(recorded_kernels(), expected(launched, range(0, 5)));
}

TEST_F(CaptureControlGpu, NvtxRangeInADomainMatchesOnlyThatDomain) {
  const auto launched =
      capture({"--capture-range", "nvtx:train@loop"}, {"--steps", "4", "--domain", "loop"});
  EXPECT_EQ(recorded_kernels(), expected(launched, range(0, 3)));
  capture({"--capture-range", "nvtx:train@other"}, {"--steps", "4", "--domain", "loop"});
  EXPECT_TRUE(recorded_kernels().empty());  // the range never opens: nothing recorded
}

TEST_F(CaptureControlGpu, NvtxStopRecordsTheFirstRangeOnlyAndRepeatEveryRange) {
  // Each step is its own range "step#<i>": stop records step#2 alone.
  auto launched =
      capture({"--capture-range", "nvtx:step#2", "--capture-range-end", "stop"}, {"--steps", "5"});
  EXPECT_EQ(recorded_kernels(), expected(launched, {2}));
  launched = capture({"--capture-range", "nvtx:step#2", "--capture-range-end", "repeat:3"},
                     {"--steps", "5"});
  EXPECT_EQ(recorded_kernels(), expected(launched, {2}));
}

TEST_F(CaptureControlGpu, ProfilerApiRecordsBetweenStartAndStop) {
  const auto launched =
      capture({"--capture-range", "cudaProfilerApi"}, {"--steps", "8", "--profiler-api", "2-4"});
  EXPECT_EQ(recorded_kernels(), expected(launched, range(2, 4)));
}

TEST_F(CaptureControlGpu, StepScheduleSkipsWaitAndWarmupAndRepeats) {
  // 2:1:3:2 -> cycle of 6 steps: skip 0-1 (wait), 2 (warm-up), record 3-5; again 8, record 9-11.
  const auto launched = capture({"--steps", "2:1:3:2"}, {"--steps", "16"});
  std::set<int> recorded = range(3, 5);
  recorded.merge(range(9, 11));
  EXPECT_EQ(recorded_kernels(), expected(launched, recorded));
}

TEST_F(CaptureControlGpu, DelayLeavesOutTheStartUp) {
  // Approximate by nature: a delay longer than the start-up and shorter than the loop records the
  // warm-up kernel never and the tail always.
  capture({"--delay", "1.5"}, {"--steps", "100000"});
  const auto counts = recorded_kernels();
  EXPECT_EQ(counts.count("warmup_kernel"), 0u);
  EXPECT_EQ(counts.count("tail_kernel"), 1u);
}

// --sample 1/N (docs/capture-control.md, "Sampled tracing"): steps 4, 8, 12, 16 (1-based) traced
// of 16, and every step's launch calls counted from the callbacks, traced or not.
TEST_F(CaptureControlGpu, SampleTracesOneStepInNAndCountsEveryStepsLaunches) {
  const auto launched = capture({"--sample", "1/4"}, {"--steps", "16"});
  EXPECT_EQ(recorded_kernels(), expected(launched, {3, 7, 11, 15}));
  fuselens::db::Reader reader(dir.file("c.sqlite"));
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM sampling WHERE every = 4 AND steps = 16 AND "
                             "steps_lost = 0"),
            1);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM sample_step"), 16);
  for (int s = 0; s < 16; ++s) {
    SCOPED_TRACE(s);
    const std::string step = std::to_string(s);
    EXPECT_EQ(reader.query_int("SELECT traced FROM sample_step WHERE step = " + step),
              s % 4 == 3 ? 1 : 0);
    long calls = launched["steps"][s]["copies"].get<long>();
    for (const auto& [name, n] : launched["steps"][s]["kernels"].items()) calls += n.get<long>();
    EXPECT_EQ(reader.query_int("SELECT COALESCE(SUM(calls), 0) FROM sample_step_api WHERE step = " +
                               step),
              calls);
  }
  // Every analysis says what was sampled.
  const auto r = run({binary("prof-analyze", PROF_ANALYZE_PATH), "summary", dir.file("c.sqlite")});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("sampled: 1 step in 4 traced (steps 4, 8, 12 …: 4 of 16)"),
            std::string::npos)
      << r.out;
}
