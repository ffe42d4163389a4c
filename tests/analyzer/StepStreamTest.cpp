// The streamed step statistics (analyzer/steps/StepStream.cpp, issue 21): equal to those computed
// with every launch in memory on each committed H100 capture, the fallback when launches arrive
// out of call order, and `prof-analyze steps` answering from the steps stored when the run ended.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "Subprocess.h"
#include "TestSupport.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/Sqlite.h"
#include "steps/Steps.h"
#include "steps/StepsData.h"

#ifndef PROF_ANALYZE_PATH
#error "PROF_ANALYZE_PATH must name the prof-analyze binary"
#endif

using namespace fuselens;
using namespace fuselens::analyzer;
using fuselens::analyzer::test::FlagsCapture;
using fuselens::analyzer::test::TempDir;
using fuselens::analyzer::test::us;

namespace {

/// The windows of `steps` with every statistic cleared.
std::vector<Step> bare(const std::vector<Step>& steps) {
  std::vector<Step> out;
  for (const Step& s : steps) {
    Step w;
    w.index = s.index;
    w.pid = s.pid;
    w.tid = s.tid;
    w.start_ns = s.start_ns;
    w.end_ns = s.end_ns;
    w.label = s.label;
    out.push_back(w);
  }
  return out;
}

void expect_same_statistics(const std::vector<Step>& a, const std::vector<Step>& b,
                            const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const Step& x = a[i];
    const Step& y = b[i];
    const std::string at = what + " step " + std::to_string(i + 1);
    EXPECT_EQ(x.gpu_busy_ns, y.gpu_busy_ns) << at;
    EXPECT_EQ(x.compute_ns, y.compute_ns) << at;
    EXPECT_EQ(x.non_compute_ns, y.non_compute_ns) << at;
    EXPECT_EQ(x.span_ns, y.span_ns) << at;
    EXPECT_EQ(x.idle_ns, y.idle_ns) << at;
    EXPECT_EQ(x.host_wait_ns, y.host_wait_ns) << at;
    EXPECT_EQ(x.kernel_wait_ns, y.kernel_wait_ns) << at;
    EXPECT_EQ(x.other_wait_ns, y.other_wait_ns) << at;
    EXPECT_EQ(x.launches, y.launches) << at;
    EXPECT_EQ(x.kernels, y.kernels) << at;
    EXPECT_EQ(x.copies, y.copies) << at;
    EXPECT_EQ(x.memsets, y.memsets) << at;
    EXPECT_EQ(x.syncs, y.syncs) << at;
    EXPECT_EQ(x.allocations, y.allocations) << at;
    EXPECT_EQ(x.peak_memory_bytes, y.peak_memory_bytes) << at;
    EXPECT_EQ(x.top_kernel, y.top_kernel) << at;
    EXPECT_EQ(x.top_kernel_ns, y.top_kernel_ns) << at;
    EXPECT_EQ(x.kernel_counts, y.kernel_counts) << at;
  }
}

}  // namespace

TEST(StepStream, EqualsTheStatisticsOfEveryLaunchInMemoryOnTheCommittedCaptures) {
  int compared = 0;
  for (const auto& entry : std::filesystem::directory_iterator(FUSELENS_TEST_DATA_DIR)) {
    if (entry.path().extension() != ".sqlite") continue;
    const std::string name = entry.path().filename().string();
    const db::Reader reader(entry.path().string());
    if (reader.processes().empty()) continue;
    // The steps every method finds: the default (NVTX ranges where a default pattern matches,
    // else the period) and the period alone.
    StepOptions automatic;
    automatic.automatic = true;
    for (const StepOptions& options : {StepOptions{}, automatic}) {
      const StepReport report = analyze_steps(reader, options);
      if (report.steps.empty()) continue;
      const steps_detail::StepContext context(reader);
      std::vector<Step> in_memory = bare(report.steps);
      steps_detail::fill_steps(context, steps_detail::read_launches(reader),
                               options.consecutive_kernel_delay_ns, in_memory);
      std::vector<Step> streamed = bare(report.steps);
      ASSERT_TRUE(steps_detail::stream_steps(reader, context, options.consecutive_kernel_delay_ns,
                                             streamed))
          << name << ": launches out of call order";
      expect_same_statistics(in_memory, streamed, name);
      expect_same_statistics(in_memory, report.steps, name + " (analyze_steps)");
      ++compared;
    }
  }
  EXPECT_GE(compared, 10);  // tests/data holds more than ten captures with steps
}

namespace {

// Two steps [0, 1000) and [1000, 2000) us; the kernel with the smaller correlation id was
// launched in the second step, the next one in the first: correlation order against call order.
FlagsCapture out_of_order_capture() {
  FlagsCapture c;
  c.range("step 1", us(0), us(1000));
  c.range("step 2", us(1000), us(2000));
  c.kernel("late", us(1600), us(100), us(1500), us(5));
  c.kernel("early", us(600), us(100), us(500), us(5));
  return c;
}

}  // namespace

TEST(StepStream, LaunchesOutOfCallOrderFallBackToEveryLaunchInMemory) {
  TempDir dir;
  const std::string path = (dir.path() / "order.sqlite").string();
  out_of_order_capture().write(path);
  const db::Reader reader(path);
  StepOptions options;
  options.range_glob = "step *";
  const StepReport report = analyze_steps(reader, options);  // falls back: still exact
  // The streamed pass sees "late" (step 2) first, fills step 1, then meets "early" in it.
  std::vector<Step> windows = bare(report.steps);
  const steps_detail::StepContext context(reader);
  EXPECT_FALSE(steps_detail::stream_steps(reader, context, 30, windows));
  ASSERT_EQ(report.steps.size(), 2u);
  EXPECT_EQ(report.steps[0].kernels, 1);
  EXPECT_EQ(report.steps[0].top_kernel, "early");
  EXPECT_EQ(report.steps[1].kernels, 1);
  EXPECT_EQ(report.steps[1].top_kernel, "late");
}

TEST(StepStream, ProfAnalyzeStepsAnswersFromTheStoredSteps) {
  TempDir dir;
  const std::string path = (dir.path() / "stored.sqlite").string();
  FlagsCapture c;
  for (int i = 0; i < 4; ++i) {
    c.range("train step " + std::to_string(i), us(1000 * i), us(1000 * i + 900));
    c.kernel("k", us(1000 * i + 100), us(50), us(1000 * i + 50), us(5));
  }
  c.write(path);
  {
    db::Reader reader(db::Connection(path, db::Connection::Mode::ReadWrite));
    ASSERT_EQ(store_steps(reader), "");
  }
  // A stored label no search would find: the default method prints what was stored.
  db::Connection(path, db::Connection::Mode::ReadWrite)
      .exec("UPDATE step SET label = 'stored label' WHERE id = 1");
  const auto stored = fuselens::test::run_cli(TempDir{}, {"steps", path, "--format", "json"});
  EXPECT_EQ(stored.status, 0) << stored.err;
  EXPECT_NE(stored.out.find("stored label"), std::string::npos) << stored.out;
  // A named method searches the launches again.
  const auto searched = fuselens::test::run_cli(
      TempDir{}, {"steps", path, "--step-range", "*step*", "--format", "json"});
  EXPECT_EQ(searched.status, 0) << searched.err;
  EXPECT_EQ(searched.out.find("stored label"), std::string::npos) << searched.out;
  EXPECT_NE(searched.out.find("train step 0"), std::string::npos) << searched.out;
}
