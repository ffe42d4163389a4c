// The setup of a context's range profiler session (RangeProfilerSession.h).

#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <algorithm>
#include <string_view>

#include "InternalCalls.h"
#include "Log.h"
#include "RangeProfilerSession.h"

namespace fuselens::collector::range_profiler {

std::string cupti_message(CUptiResult result, const char* call) {
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  std::string message = std::string(call) + " failed: " + (text ? text : "unknown CUPTI error");
  if (result == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
    message +=
        " (GPU performance counters are restricted to administrators: run as root or set "
        "the nvidia module option NVreg_RestrictProfilingToAdminUsers=0)";
  }
  return message;
}

namespace {

/// A range-profiler host object for the session's chip and counter availability (the caller
/// deinitializes it). Throws Failure.
CUpti_Profiler_Host_Object* host_object(const Session& s) {
  auto host = params<CUpti_Profiler_Host_Initialize_Params>(
      CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  host.pChipName = s.chip.c_str();
  host.pCounterAvailabilityImage = s.availability.data();
  FUSELENS_RP_CALL(cuptiProfilerHostInitialize(&host));
  return host.pHostObject;
}

/// The config image of `metrics` on the session's chip and its number of passes; a host object
/// of its own, so that single-pass groups can be tried one metric at a time.
std::size_t config_image(const Session& s, const std::vector<const char*>& metrics,
                         std::vector<std::uint8_t>& image) {
  const auto host = host_object(s);
  struct Deinit {
    CUpti_Profiler_Host_Object* object;
    ~Deinit() {
      auto p = params<CUpti_Profiler_Host_Deinitialize_Params>(
          CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
      p.pHostObject = object;
      cuptiProfilerHostDeinitialize(&p);
    }
  } deinit{host};
  auto add = params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
      CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  add.pHostObject = host;
  add.ppMetricNames = const_cast<const char**>(metrics.data());
  add.numMetrics = metrics.size();
  FUSELENS_RP_CALL(cuptiProfilerHostConfigAddMetrics(&add));
  auto size = params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  size.pHostObject = host;
  FUSELENS_RP_CALL(cuptiProfilerHostGetConfigImageSize(&size));
  image.resize(size.configImageSize);
  auto get = params<CUpti_Profiler_Host_GetConfigImage_Params>(
      CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  get.pHostObject = host;
  get.configImageSize = image.size();
  get.pConfigImage = image.data();
  FUSELENS_RP_CALL(cuptiProfilerHostGetConfigImage(&get));
  auto passes = params<CUpti_Profiler_Host_GetNumOfPasses_Params>(
      CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  passes.configImageSize = image.size();
  passes.pConfigImage = image.data();
  FUSELENS_RP_CALL(cuptiProfilerHostGetNumOfPasses(&passes));
  return passes.numOfPasses;
}

/// Application replay: `metrics` split into groups that each take one pass, first fit in the
/// order given (the duration and DRAM counters first, so that run 0 times the kernels and counts
/// their DRAM bytes in the same pass). Deterministic: every run computes the same groups. A metric
/// that needs more than one pass on its own cannot be collected this way: a required one fails
/// the session, an optional one (`optional`) is left out and named in `left_out`.
std::vector<std::vector<std::string>> single_pass_groups(const Session& s,
                                                         std::vector<std::string> metrics,
                                                         const std::vector<std::string>& optional,
                                                         std::vector<std::string>& left_out) {
  std::stable_partition(metrics.begin(), metrics.end(), [](const std::string& m) {
    return m == db::metric::kDuration || m == db::metric::kDramRead || m == db::metric::kDramWrite;
  });
  std::vector<std::vector<std::string>> groups;
  std::vector<std::uint8_t> scratch;
  for (const auto& m : metrics) {
    bool placed = false;
    for (auto& g : groups) {
      std::vector<const char*> names;
      for (const auto& n : g) names.push_back(n.c_str());
      names.push_back(m.c_str());
      if (config_image(s, names, scratch) == 1) {
        g.push_back(m);
        placed = true;
        break;
      }
    }
    if (placed) continue;
    const std::vector<const char*> alone{m.c_str()};
    if (const std::size_t passes = config_image(s, alone, scratch); passes != 1) {
      if (std::find(optional.begin(), optional.end(), m) != optional.end()) {
        left_out.push_back(m + " (" + std::to_string(passes) + " passes)");
        continue;
      }
      throw Failure{"metric '" + m + "' needs " + std::to_string(passes) +
                    " passes on its own; "
                    "application replay collects each launch in one pass (use --replay kernel)"};
    }
    groups.push_back({m});
  }
  return groups;
}

}  // namespace

CallbackKind classify(CUpti_CallbackId id) {
  const char* name = nullptr;
  if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, id, &name) != CUPTI_SUCCESS || !name) {
    return CallbackKind::Other;
  }
  const std::string_view n(name);
  if (n.starts_with("cuLaunch") && n.find("HostFunc") == std::string_view::npos) {
    return CallbackKind::KernelLaunch;
  }
  if (n.starts_with("cuStreamBeginCapture")) return CallbackKind::CaptureBegin;
  if (n.starts_with("cuStreamEndCapture")) return CallbackKind::CaptureEnd;
  return CallbackKind::Other;
}

void initialize(State& state, Session& s) {
  if (!state.profiler_initialized) {
    auto init =
        params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    FUSELENS_RP_CALL(cuptiProfilerInitialize(&init));
    state.profiler_initialized = true;
  }
  std::uint32_t device = 0;
  FUSELENS_RP_CALL(cuptiGetDeviceId(s.context, &device));
  s.record.device_id = device;
  auto chip = params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  chip.deviceIndex = device;
  FUSELENS_RP_CALL(cuptiDeviceGetChipName(&chip));
  s.chip = chip.pChipName ? chip.pChipName : "";
  const std::string& chip_name = s.chip;

  auto availability = params<CUpti_Profiler_GetCounterAvailability_Params>(
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
  availability.ctx = s.context;
  FUSELENS_RP_CALL(cuptiProfilerGetCounterAvailability(&availability));
  s.availability.resize(availability.counterAvailabilityImageSize);
  availability.pCounterAvailabilityImage = s.availability.data();
  FUSELENS_RP_CALL(cuptiProfilerGetCounterAvailability(&availability));

  s.host = host_object(s);

  auto supported = [&](const std::string& metric) {
    auto p = params<CUpti_Profiler_Host_GetMetricProperties_Params>(
        CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE);
    p.pHostObject = s.host;
    p.pMetricName = metric.c_str();
    return cuptiProfilerHostGetMetricProperties(&p) == CUPTI_SUCCESS;
  };
  for (const auto& m : state.set.required) {
    if (!supported(m)) {
      throw Failure{"metric '" + m + "' of set '" + state.set.name + "' is not supported on chip " +
                    chip_name};
    }
    s.metrics.push_back(m);
  }
  for (const auto& m : state.set.optional) {
    if (supported(m)) s.metrics.push_back(m);
  }
  s.record.replay = state.application ? "application" : "kernel";
  s.record.cache_control = state.flush_caches ? "all" : "none";
  if (state.application) {
    std::vector<std::string> left_out;
    const auto groups = single_pass_groups(s, s.metrics, state.set.optional, left_out);
    if (!left_out.empty() && state.pass == 0) {
      std::string names;
      for (const auto& m : left_out) names += (names.empty() ? "" : ", ") + m;
      log("counters: application replay leaves out what one pass cannot count: {} (--replay kernel "
          "collects them)",
          names);
    }
    if (state.pass >= groups.size()) {
      throw Failure{"application replay run " + std::to_string(state.pass) +
                    " asked for, but the set has " + std::to_string(groups.size()) +
                    " single-pass groups on chip " + chip_name};
    }
    s.metrics = groups[state.pass];
    s.record.passes = static_cast<std::int64_t>(groups.size());  // runs of the program
  }
  for (const auto& m : s.metrics) s.metric_names.push_back(m.c_str());
  s.record.metrics = s.metrics;
  const std::size_t passes = config_image(s, s.metric_names, s.config);
  auto add = params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
      CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  add.pHostObject = s.host;  // the metrics this host object evaluates
  add.ppMetricNames = s.metric_names.data();
  add.numMetrics = s.metric_names.size();
  FUSELENS_RP_CALL(cuptiProfilerHostConfigAddMetrics(&add));
  if (!state.application) s.record.passes = static_cast<std::int64_t>(passes);
  if (state.flush_caches) {
    const InternalCalls internal;
    try {
      s.flush = L2Flush::create(s.context);
    } catch (const std::exception& e) {
      throw Failure{e.what()};
    }
  }

  auto enable =
      params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
  enable.ctx = s.context;
  FUSELENS_RP_CALL(cuptiRangeProfilerEnable(&enable));
  s.profiler = enable.pRangeProfilerObject;

  auto data = params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  data.pRangeProfilerObject = s.profiler;
  data.pMetricNames = s.metric_names.data();
  data.numMetrics = s.metric_names.size();
  data.maxNumOfRanges = kMaxRanges;
  data.maxNumRangeTreeNodes = kMaxRanges;
  FUSELENS_RP_CALL(cuptiRangeProfilerGetCounterDataSize(&data));
  s.counter_data.resize(data.counterDataSize);
  if (state.application) {
    log("counters: set '{}' on device {} ({}): application replay, run {} of {} collects {} "
        "metrics in one pass per launch; cache control {}{}",
        state.set.name, device, chip_name, state.pass + 1, s.record.passes, s.metrics.size(),
        s.record.cache_control,
        s.flush ? " (L2 flushed by reading " + std::to_string(s.flush->bytes() >> 20) + " MiB)"
                : "");
  } else {
    log("counters: set '{}' ({} metrics) on device {} ({}): {} kernel replay passes per launch; "
        "cache control {}{}",
        state.set.name, s.metrics.size(), device, chip_name, s.record.passes,
        s.record.cache_control,
        s.flush ? " (memory restored and L2 flushed by the collector before every pass)"
                : " (CUPTI's replay: caches as its save and restore leave them)");
  }
}

}  // namespace fuselens::collector::range_profiler
