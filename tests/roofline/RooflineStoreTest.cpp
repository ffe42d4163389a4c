// The roofline tables of a capture (RooflineStore.h): written beside the activity writer, read
// back, and refused for version-1 captures, which have none.
#include <gtest/gtest.h>

#include <filesystem>

#include "TempDir.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/RooflineStore.h"
#include "fuselens/db/Writer.h"

namespace fuselens::db {
namespace {

TEST(RooflineStore, CeilingsAndSessionsRoundTrip) {
  test::TempDir dir;
  const auto path = dir.file("c.sqlite");
  { Writer::create(path, RunInfo{}); }
  {
    RooflineWriter w(path);
    w.write_ceilings({{0, "GPU", kCeilingDramBandwidth, 3.0e12, "copy 2 GiB", 7},
                      {0, "GPU", kCeilingFp32, 6.0e13, "fma chains", 8}});
    MetricSessionRecord s;
    s.pid = 5;
    s.device_id = 0;
    s.metric_set = "roofline";
    s.metrics = {metric::kFfma, metric::kDramRead};
    s.passes = 5;
    s.ranges = 12;
    s.status = "ok";
    w.write_metric_session(s);
    w.write_kernel_metrics({{5, 42, {{metric::kFfma, 100}, {metric::kDramRead, 64}}}});
  }
  const Reader reader(path);
  const auto ceilings = read_ceilings(reader);
  ASSERT_EQ(ceilings.size(), 2u);
  EXPECT_EQ(ceilings[0].name, kCeilingDramBandwidth);
  EXPECT_EQ(ceilings[0].value, 3.0e12);
  EXPECT_EQ(ceilings[1].method, "fma chains");
  const auto sessions = read_metric_sessions(reader);
  ASSERT_EQ(sessions.size(), 1u);
  EXPECT_EQ(sessions[0].metrics.size(), 2u);
  EXPECT_EQ(sessions[0].passes, 5);
  EXPECT_TRUE(has_kernel_metrics(reader));
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM kernel_metric WHERE correlation_id = 42"), 2);
}

TEST(RooflineStore, SessionsKeepHowTheirCountersWereReplayed) {
  test::TempDir dir;
  const auto path = dir.file("r.sqlite");
  { Writer::create(path, RunInfo{}); }
  MetricSessionRecord s;
  s.pid = 5;
  s.metric_set = "roofline";
  s.metrics = {metric::kDramRead};
  s.passes = 4;
  s.replay = "application";
  s.cache_control = "all";
  RooflineWriter(path).write_metric_session(s);
  s.pid = 6;
  s.replay = "kernel";
  s.cache_control = "none";
  s.passes = 5;
  RooflineWriter(path).write_metric_session(s);
  const auto sessions = read_metric_sessions(Reader(path));
  ASSERT_EQ(sessions.size(), 2u);
  EXPECT_EQ(sessions[0].replay, "application");
  EXPECT_EQ(sessions[0].cache_control, "all");
  EXPECT_EQ(describe_replay(sessions[0]), "application replay, 4 runs, L2 flushed before each launch");
  EXPECT_EQ(describe_replay(sessions[1]), "5 kernel replay passes per launch");
  // The default since issue 22: kernel replay by the collector, caches flushed before each pass.
  s.pid = 7;
  s.cache_control = "all";
  RooflineWriter(path).write_metric_session(s);
  const auto flushed = read_metric_sessions(Reader(path));
  ASSERT_EQ(flushed.size(), 3u);
  EXPECT_EQ(describe_replay(flushed[2]),
            "5 kernel replay passes per launch, memory restored and L2 flushed before each");
}

TEST(RooflineStore, SessionsOfCapturesBeforeVersionFiveWereKernelReplayed) {
  // The committed H100 counter capture (schema version 4, no metric_replay table).
  const Reader reader(std::string(FUSELENS_TEST_DATA_DIR) + "/fusion_bench_roofline.sqlite");
  ASSERT_LT(reader.schema_version(), 5);
  ASSERT_FALSE(reader.has_table("metric_replay"));
  const auto sessions = read_metric_sessions(reader);
  ASSERT_FALSE(sessions.empty());
  for (const auto& s : sessions) {
    EXPECT_EQ(s.replay, "kernel");
    EXPECT_EQ(s.cache_control, "none");
  }
}

TEST(RooflineStore, VersionOneCapturesReadAsEmptyAndRefuseWrites) {
  test::TempDir dir;
  const auto copy = dir.file("v1.sqlite");
  std::filesystem::copy_file(std::string(FUSELENS_TEST_DATA_DIR) + "/fusion_bench_schema_v1.sqlite", copy);
  const Reader reader(copy);
  EXPECT_EQ(reader.schema_version(), 1);
  EXPECT_TRUE(read_ceilings(reader).empty());
  EXPECT_TRUE(read_metric_sessions(reader).empty());
  EXPECT_FALSE(has_kernel_metrics(reader));
  try {
    RooflineWriter w(copy);
    FAIL() << "a version-1 capture was opened for roofline rows";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("version 1"), std::string::npos) << e.what();
  }
}

TEST(RooflineStore, TheRooflineSetCoversTheAnchorCounters) {
  const MetricSet set = roofline_metric_set();
  EXPECT_EQ(set.name, "roofline");
  auto has = [&](const char* name) {
    for (const auto& m : set.required) {
      if (m == name) return true;
    }
    return false;
  };
  for (const char* m : {metric::kFadd, metric::kFmul, metric::kFfma, metric::kDramRead,
                        metric::kDramWrite, metric::kL2Bytes, metric::kL1Bytes}) {
    EXPECT_TRUE(has(m)) << m;
  }
  EXPECT_FALSE(set.optional.empty());  // tensor paths, absent on Turing
}

}  // namespace
}  // namespace fuselens::db
