// --metrics: the collector configuration accepts the known counter sets and refuses others with
// a message naming them (prof-run exits 2 on it before the workload starts).
#include <gtest/gtest.h>

#include <cstdlib>

#include "fuselens/collector/Config.h"

namespace fuselens::collector {
namespace {

TEST(MetricsConfig, AcceptsTheRooflineSetAndRefusesUnknownOnes) {
  CollectorConfig config;
  config.validate();  // no counters by default
  config.metrics = "roofline";
  config.validate();
  config.metrics = "rooflines";
  try {
    config.validate();
    FAIL() << "an unknown metric set was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("known: roofline"), std::string::npos) << e.what();
  }
}

TEST(MetricsConfig, TheCollectorReadsTheSetFromItsEnvironment) {
  ::setenv(kEnvMetrics, "roofline", 1);
  EXPECT_EQ(CollectorConfig::from_environment().metrics, "roofline");
  ::setenv(kEnvMetrics, "bogus", 1);
  EXPECT_THROW(CollectorConfig::from_environment(), ConfigError);
  ::unsetenv(kEnvMetrics);
  EXPECT_TRUE(CollectorConfig::from_environment().metrics.empty());
}

TEST(MetricsConfig, ReplayAndCacheControlFollowNsightComputesModes) {
  CollectorConfig config;
  // Nsight Compute's defaults: kernel replay, caches flushed before every pass (issue 22).
  EXPECT_EQ(config.metric_replay, "kernel");
  EXPECT_EQ(config.cache_control, "all");
  config.metrics = "roofline";
  for (const char* replay : {"kernel", "application"}) {
    for (const char* cache : {"all", "none"}) {
      config.metric_replay = replay;
      config.cache_control = cache;
      EXPECT_NO_THROW(config.validate()) << replay << " " << cache;
    }
  }
  config.metric_replay = "range";
  EXPECT_THROW(config.validate(), ConfigError);
  config.metric_replay = "kernel";
  config.cache_control = "some";
  try {
    config.validate();
    FAIL() << "cache control 'some' was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("known: all, none"), std::string::npos) << e.what();
  }
}

TEST(MetricsConfig, TheCollectorReadsReplayRunAndCacheControlFromItsEnvironment) {
  ::setenv(kEnvMetrics, "roofline", 1);
  ::setenv(kEnvMetricReplay, "application", 1);
  ::setenv(kEnvMetricPass, "3", 1);
  ::setenv(kEnvCacheControl, "all", 1);
  const auto config = CollectorConfig::from_environment();
  EXPECT_EQ(config.metric_replay, "application");
  EXPECT_EQ(config.metric_pass, 3u);
  EXPECT_EQ(config.cache_control, "all");
  ::setenv(kEnvMetricPass, "x", 1);
  EXPECT_THROW(CollectorConfig::from_environment(), ConfigError);
  for (const char* name : {kEnvMetrics, kEnvMetricReplay, kEnvMetricPass, kEnvCacheControl}) ::unsetenv(name);
}

}  // namespace
}  // namespace fuselens::collector
