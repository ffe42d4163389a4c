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
  EXPECT_EQ(config.metric_replay, "kernel");
  EXPECT_EQ(config.cache_control, "none");
  config.metrics = "roofline";
  config.metric_replay = "application";
  config.cache_control = "all";
  config.validate();
  config.cache_control = "none";
  config.validate();
  config.metric_replay = "range";
  EXPECT_THROW(config.validate(), ConfigError);
  config.metric_replay = "application";
  config.cache_control = "some";
  EXPECT_THROW(config.validate(), ConfigError);
  // Kernel replay's passes run inside CUPTI: nothing can flush between them.
  config.metric_replay = "kernel";
  config.cache_control = "all";
  try {
    config.validate();
    FAIL() << "cache control 'all' was accepted with kernel replay";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("application replay"), std::string::npos) << e.what();
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
