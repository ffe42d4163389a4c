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

}  // namespace
}  // namespace fuselens::collector
