// prof-run --replay application's merge (tools/prof-run/ReplayMerge.h) on synthetic captures
// shaped like the collector writes them: run 1's capture holds the kernel rows and the first
// counter group, a later run's capture the same launches (other pids and correlation ids) with
// another group.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ReplayMerge.h"
#include "TempDir.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/RooflineStore.h"
#include "fuselens/db/Writer.h"

namespace fuselens::collector {
namespace {

struct Launch {
  std::uint32_t pid, correlation_id;
  std::string kernel;
};

/// A capture with `launches` as kernel rows (in this order of start time), each with `metric` =
/// correlation id * `scale`, and one ok application-replay session per pid listing `metrics`.
void write_run(const std::string& path, const std::vector<Launch>& launches, const std::string& metric,
               double scale, const std::vector<std::string>& metrics, std::int64_t runs) {
  db::Writer writer = db::Writer::create(path, db::RunInfo{});
  db::RecordBatch batch;
  std::vector<db::KernelMetricRecord> counters;
  std::uint64_t t = 1000;
  for (const auto& l : launches) {
    db::KernelRecord k;
    k.pid = l.pid;
    k.correlation_id = l.correlation_id;
    k.start_ns = t;
    k.end_ns = t + 10;
    t += 100;
    k.mangled_name = l.kernel;
    batch.kernels.push_back(k);
    counters.push_back({l.pid, l.correlation_id, {{metric, l.correlation_id * scale}}});
  }
  writer.write(batch);
  db::RooflineWriter roofline(path);
  roofline.write_kernel_metrics(counters);
  std::vector<std::uint32_t> pids;
  for (const auto& l : launches) {
    if (std::find(pids.begin(), pids.end(), l.pid) == pids.end()) pids.push_back(l.pid);
  }
  for (const auto pid : pids) {
    db::MetricSessionRecord s;
    s.pid = pid;
    s.metric_set = "roofline";
    s.metrics = metrics;
    s.passes = runs;
    s.ranges = 2;
    s.replay = "application";
    s.cache_control = "all";
    roofline.write_metric_session(s);
  }
}

double metric_of(const db::Reader& reader, std::uint32_t pid, std::uint32_t correlation_id, const std::string& metric) {
  auto s = reader.prepare(
      "SELECT m.value FROM kernel_metric m JOIN strings s ON s.id = m.metric_id"
      " WHERE m.pid = ? AND m.correlation_id = ? AND s.value = ?");
  s.bind(1, static_cast<std::int64_t>(pid));
  s.bind(2, static_cast<std::int64_t>(correlation_id));
  s.bind(3, std::string_view(metric));
  return s.step() ? s.real(0) : -1;
}

TEST(ReplayMerge, ALaterRunsCountersJoinTheFirstRunsLaunchesInLaunchOrder) {
  test::TempDir dir;
  const auto capture = dir.file("run.sqlite"), run2 = dir.file("run.sqlite.run2");
  // Two processes; the later run's pids and correlation ids differ, its launch order does not.
  write_run(capture, {{10, 5, "_Z1av"}, {10, 9, "_Z1bv"}, {20, 3, "_Z1av"}, {20, 4, "_Z1av"}},
            db::metric::kDramRead, 1, {db::metric::kDramRead, db::metric::kDuration}, 2);
  write_run(run2, {{31, 7, "_Z1av"}, {31, 8, "_Z1bv"}, {42, 2, "_Z1av"}, {42, 6, "_Z1av"}},
            db::metric::kFfma, 1000, {db::metric::kFfma}, 2);
  const auto result = merge_replay_run(capture, run2, 2);
  EXPECT_TRUE(result.error.empty()) << result.error;
  EXPECT_EQ(result.launches, 4);
  const db::Reader reader(capture);
  // Launch i of process p in run 1 gets launch i of process p in run 2.
  EXPECT_EQ(metric_of(reader, 10, 5, db::metric::kFfma), 7000);
  EXPECT_EQ(metric_of(reader, 10, 9, db::metric::kFfma), 8000);
  EXPECT_EQ(metric_of(reader, 20, 3, db::metric::kFfma), 2000);
  EXPECT_EQ(metric_of(reader, 20, 4, db::metric::kFfma), 6000);
  EXPECT_EQ(metric_of(reader, 10, 5, db::metric::kDramRead), 5);  // run 1's counters stay
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM kernel_metric WHERE pid IN (31, 42)"), 0);
  const auto sessions = db::read_metric_sessions(reader);
  ASSERT_EQ(sessions.size(), 2u);
  for (const auto& s : sessions) {
    EXPECT_EQ(s.status, "ok");
    EXPECT_EQ(s.replay, "application");
    EXPECT_EQ(s.metrics, (std::vector<std::string>{db::metric::kDramRead, db::metric::kDuration, db::metric::kFfma}));
  }
}

TEST(ReplayMerge, ARunThatLaunchedOtherKernelsMergesNothingAndSaysWhere) {
  test::TempDir dir;
  const auto capture = dir.file("run.sqlite"), run2 = dir.file("run.sqlite.run2");
  write_run(capture, {{10, 5, "_Z1av"}, {10, 9, "_Z1bv"}}, db::metric::kDramRead, 1, {db::metric::kDramRead}, 2);
  write_run(run2, {{31, 7, "_Z1av"}, {31, 8, "_Z1cv"}}, db::metric::kFfma, 1000, {db::metric::kFfma}, 2);
  const auto result = merge_replay_run(capture, run2, 2);
  EXPECT_EQ(result.launches, 0);
  EXPECT_NE(result.error.find("launch 2 of process 1 is _Z1cv, run 1 launched _Z1bv"), std::string::npos)
      << result.error;
  const db::Reader reader(capture);
  EXPECT_EQ(metric_of(reader, 10, 5, db::metric::kFfma), -1);
  const auto sessions = db::read_metric_sessions(reader);
  ASSERT_EQ(sessions.size(), 1u);
  EXPECT_EQ(sessions[0].status, result.error);
  EXPECT_EQ(sessions[0].metrics, std::vector<std::string>{db::metric::kDramRead});
}

TEST(ReplayMerge, ARunWithADifferentLaunchCountMergesNothing) {
  test::TempDir dir;
  const auto capture = dir.file("run.sqlite"), run3 = dir.file("run.sqlite.run3");
  write_run(capture, {{10, 5, "_Z1av"}, {10, 9, "_Z1bv"}}, db::metric::kDramRead, 1, {db::metric::kDramRead}, 3);
  write_run(run3, {{31, 7, "_Z1av"}}, db::metric::kFfma, 1000, {db::metric::kFfma}, 3);
  const auto result = merge_replay_run(capture, run3, 3);
  EXPECT_EQ(result.launches, 0);
  EXPECT_NE(result.error.find("application replay run 3: process 1 made 1 profiled launches, run 1 made 2"),
            std::string::npos)
      << result.error;
}

}  // namespace
}  // namespace fuselens::collector
