#include "Environment.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <utility>
#include <vector>

namespace fuselens::collector {
namespace {

/// Sets variables for its lifetime and puts back what was there before.
class ScopedEnvironment {
 public:
  void set(const char* name, const std::string& value) {
    const char* old = std::getenv(name);
    saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnvironment() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) {
        ::setenv(it->first, it->second->c_str(), 1);
      } else {
        ::unsetenv(it->first);
      }
    }
  }

 private:
  std::vector<std::pair<const char*, std::optional<std::string>>> saved_;
};

std::string lower_trimmed(std::string text) {
  const auto space = [](unsigned char c) { return std::isspace(c) != 0; };
  text.erase(text.begin(), std::find_if_not(text.begin(), text.end(), space));
  text.erase(std::find_if_not(text.rbegin(), text.rend(), space).base(), text.end());
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

std::string check_user_environment(const CollectorConfig& config, bool metrics_from_options,
                                   bool torch_modules_from_options) {
  std::vector<const char*> passed_on = {kEnvContextMethod, kEnvPythonFrames, kEnvContextStats,
                                        kEnvExitShim,      kEnvApiSelect,    kEnvControlApi,
                                        kEnvProgress};
  if (!metrics_from_options) {
    passed_on.insert(passed_on.end(),
                     {kEnvMetrics, kEnvMetricReplay, kEnvMetricPass, kEnvCacheControl});
  }
  std::string given;  // the user's variables that reach the collector, for the message
  for (const char* name : passed_on) {
    if (const char* value = std::getenv(name)) {
      given += std::string(given.empty() ? "" : ", ") + name + "='" + value + "'";
    }
  }
  if (!torch_modules_from_options) {
    if (const char* value = std::getenv("FUSELENS_TORCH_MODULES")) {
      static const char* const kKnown[] = {"0", "1", "on", "off", "true", "false", "yes", "no"};
      const std::string v = lower_trimmed(value);
      if (std::find(std::begin(kKnown), std::end(kKnown), v) == std::end(kKnown)) {
        return std::string("environment: FUSELENS_TORCH_MODULES='") + value +
               "' is not one of 0, 1, on, off, true, false, yes, no";
      }
    }
  }
  ScopedEnvironment env;
  // What prof-run gives the workload in place of the user's values (run_workload).
  env.set(kEnvOutput, "/prof-run-check.sqlite");
  env.set(kEnvTrace, trace_to_string(config.trace));
  env.set(kEnvBufferKiB, std::to_string(config.buffer_kib));
  env.set(kEnvMaxBuffers, std::to_string(config.max_buffers));
  env.set(kEnvFlushMs, std::to_string(config.flush_period_ms));
  env.set(kEnvPerProcess, config.per_process ? "1" : "0");
  env.set(kEnvMode, "trace");  // prof-run's --mode replaces the user's value
  if (metrics_from_options) {
    env.set(kEnvMetrics, config.metrics);
    env.set(kEnvMetricReplay, config.metric_replay);
    env.set(kEnvMetricPass, "0");
    env.set(kEnvCacheControl, config.cache_control);
  }
  // The launch filters are prof-run's own (checked by validate()); here they are left out.
  for (const char* name : {kEnvKernelName, kEnvLaunchSkip, kEnvLaunchSkipBeforeMatch,
                           kEnvLaunchCount, kEnvNvtxInclude, kEnvNvtxExclude}) {
    env.set(name, "");
  }
  env.set(kEnvKernelNameBase, "function");
  // Capture control is checked with prof-run's options (validate()); here it is left out.
  for (const char* name : {kEnvCaptureRange, kEnvSteps, kEnvStepRange, kEnvSample}) {
    env.set(name, "");
  }
  env.set(kEnvCaptureRangeEnd, "stop");
  for (const char* name : {kEnvDelayMs, kEnvDurationMs, kEnvStartUtcNs}) env.set(name, "0");
  try {
    (void)CollectorConfig::from_environment();
  } catch (const ConfigError& e) {
    return "environment" + (given.empty() ? std::string() : " (" + given + ")") + ": " + e.what();
  }
  return std::string();
}

}  // namespace fuselens::collector
