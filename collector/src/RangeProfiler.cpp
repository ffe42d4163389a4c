#include "RangeProfiler.h"

#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <algorithm>
#include <array>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "Log.h"
#include "fuselens/db/RooflineStore.h"
#include "fuselens/db/Writer.h"

namespace fuselens::collector {
namespace {

constexpr std::size_t kMaxRanges = 16;        // per decode; one launch normally makes one
constexpr std::size_t kFlushEvery = 512;      // launches per database transaction

std::string cupti_message(CUptiResult result, const char* call) {
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  std::string message = std::string(call) + " failed: " + (text ? text : "unknown CUPTI error");
  if (result == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
    message += " (GPU performance counters are restricted to administrators: run as root or set "
               "the nvidia module option NVreg_RestrictProfilingToAdminUsers=0)";
  }
  return message;
}

/// A CUPTI parameter struct, zeroed, with its structSize set.
template <typename T>
T params(std::size_t struct_size) {
  T p{};
  p.structSize = struct_size;
  return p;
}

/// Thrown inside this file only: a CUPTI call failed; the message ends up in the session row.
struct Failure {
  std::string message;
};

void call(CUptiResult result, const char* what) {
  if (result != CUPTI_SUCCESS) throw Failure{cupti_message(result, what)};
}
#define FUSELENS_RP_CALL(expr) call((expr), #expr)

/// The range profiler of one CUDA context.
struct Session {
  CUcontext context = nullptr;
  CUpti_Profiler_Host_Object* host = nullptr;
  CUpti_RangeProfiler_Object* profiler = nullptr;
  std::string chip;                          // the host object keeps pointers to these two
  std::vector<std::uint8_t> availability;
  std::vector<std::string> metrics;
  std::vector<const char*> metric_names;
  std::vector<std::uint8_t> config, counter_data;
  db::MetricSessionRecord record;
  std::int64_t launches_without_range = 0;
  std::int64_t launches_in_capture = 0;  // made while a stream capture was open: no counters
  int captures_open = 0;                 // cuStreamBeginCapture .. cuStreamEndCapture pairs
  bool active = false;
};

struct State {
  std::mutex mutex;
  std::string capture;
  std::uint32_t pid = 0;
  db::MetricSet set;
  std::vector<std::unique_ptr<Session>> sessions;
  std::vector<db::KernelMetricRecord> pending;
  db::RecordBatch kernels;  // kernel rows of the profiled launches (see RangeProfiler.h)
  std::unique_ptr<db::RooflineWriter> writer;
  std::unique_ptr<db::Writer> kernel_writer;
  bool profiler_initialized = false;
  bool finished = false;
};

State* g_state = nullptr;  // set once by start(); never destroyed (reached from atexit)

// What a driver callback id is to the range profiler, by its name: a kernel launch (cuLaunch*,
// not cuLaunchHostFunc) or the start / end of a stream capture. Classified once at start into
// g_kinds (the callback runs on every launch; a name lookup there would be per launch).
enum class CallbackKind : std::uint8_t { Other, KernelLaunch, CaptureBegin, CaptureEnd };
std::array<CallbackKind, CUPTI_DRIVER_TRACE_CBID_SIZE> g_kinds{};

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

CallbackKind kind_of(CUpti_CallbackId id) {
  return id < g_kinds.size() ? g_kinds[id] : CallbackKind::Other;
}

void initialize(State& state, Session& s) {
  if (!state.profiler_initialized) {
    auto init = params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
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

  auto availability = params<CUpti_Profiler_GetCounterAvailability_Params>(CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
  availability.ctx = s.context;
  FUSELENS_RP_CALL(cuptiProfilerGetCounterAvailability(&availability));
  s.availability.resize(availability.counterAvailabilityImageSize);
  availability.pCounterAvailabilityImage = s.availability.data();
  FUSELENS_RP_CALL(cuptiProfilerGetCounterAvailability(&availability));

  auto host = params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  host.pChipName = s.chip.c_str();
  host.pCounterAvailabilityImage = s.availability.data();
  FUSELENS_RP_CALL(cuptiProfilerHostInitialize(&host));
  s.host = host.pHostObject;

  auto supported = [&](const std::string& metric) {
    auto p = params<CUpti_Profiler_Host_GetMetricProperties_Params>(CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE);
    p.pHostObject = s.host;
    p.pMetricName = metric.c_str();
    return cuptiProfilerHostGetMetricProperties(&p) == CUPTI_SUCCESS;
  };
  for (const auto& m : state.set.required) {
    if (!supported(m)) {
      throw Failure{"metric '" + m + "' of set '" + state.set.name + "' is not supported on chip " + chip_name};
    }
    s.metrics.push_back(m);
  }
  for (const auto& m : state.set.optional) {
    if (supported(m)) s.metrics.push_back(m);
  }
  for (const auto& m : s.metrics) s.metric_names.push_back(m.c_str());
  s.record.metrics = s.metrics;

  auto add = params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  add.pHostObject = s.host;
  add.ppMetricNames = s.metric_names.data();
  add.numMetrics = s.metric_names.size();
  FUSELENS_RP_CALL(cuptiProfilerHostConfigAddMetrics(&add));
  auto size = params<CUpti_Profiler_Host_GetConfigImageSize_Params>(CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  size.pHostObject = s.host;
  FUSELENS_RP_CALL(cuptiProfilerHostGetConfigImageSize(&size));
  s.config.resize(size.configImageSize);
  auto image = params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  image.pHostObject = s.host;
  image.configImageSize = s.config.size();
  image.pConfigImage = s.config.data();
  FUSELENS_RP_CALL(cuptiProfilerHostGetConfigImage(&image));
  auto passes = params<CUpti_Profiler_Host_GetNumOfPasses_Params>(CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  passes.configImageSize = s.config.size();
  passes.pConfigImage = s.config.data();
  FUSELENS_RP_CALL(cuptiProfilerHostGetNumOfPasses(&passes));
  s.record.passes = static_cast<std::int64_t>(passes.numOfPasses);

  auto enable = params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
  enable.ctx = s.context;
  FUSELENS_RP_CALL(cuptiRangeProfilerEnable(&enable));
  s.profiler = enable.pRangeProfilerObject;

  auto data = params<CUpti_RangeProfiler_GetCounterDataSize_Params>(CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  data.pRangeProfilerObject = s.profiler;
  data.pMetricNames = s.metric_names.data();
  data.numMetrics = s.metric_names.size();
  data.maxNumOfRanges = kMaxRanges;
  data.maxNumRangeTreeNodes = kMaxRanges;
  FUSELENS_RP_CALL(cuptiRangeProfilerGetCounterDataSize(&data));
  s.counter_data.resize(data.counterDataSize);
  log("counters: set '{}' ({} metrics) on device {} ({}): {} kernel replay passes per launch",
      state.set.name, s.metrics.size(), device, chip_name, s.record.passes);
}

void configure_and_start(Session& s) {
  auto init = params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  init.pRangeProfilerObject = s.profiler;
  init.counterDataSize = s.counter_data.size();
  init.pCounterData = s.counter_data.data();
  FUSELENS_RP_CALL(cuptiRangeProfilerCounterDataImageInitialize(&init));
  auto config = params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  config.pRangeProfilerObject = s.profiler;
  config.configSize = s.config.size();
  config.pConfig = s.config.data();
  config.counterDataImageSize = s.counter_data.size();
  config.pCounterDataImage = s.counter_data.data();
  config.range = CUPTI_AutoRange;
  config.replayMode = CUPTI_KernelReplay;
  config.maxRangesPerPass = kMaxRanges;
  config.numNestingLevels = 1;
  config.minNestingLevel = 1;
  config.passIndex = 0;
  config.targetNestingLevel = 1;
  FUSELENS_RP_CALL(cuptiRangeProfilerSetConfig(&config));
  auto start = params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
  start.pRangeProfilerObject = s.profiler;
  FUSELENS_RP_CALL(cuptiRangeProfilerStart(&start));
}

/// Stops, decodes and stores the last range as the counters of the launch `cb`, and its kernel row.
void collect(State& state, Session& s, const CUpti_CallbackData& cb) {
  const std::uint32_t correlation_id = cb.correlationId;
  std::uint64_t end_ns = 0;
  cuptiGetTimestamp(&end_ns);
  auto stop = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
  stop.pRangeProfilerObject = s.profiler;
  FUSELENS_RP_CALL(cuptiRangeProfilerStop(&stop));
  auto decode = params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  decode.pRangeProfilerObject = s.profiler;
  FUSELENS_RP_CALL(cuptiRangeProfilerDecodeData(&decode));
  auto info = params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  info.pCounterDataImage = s.counter_data.data();
  info.counterDataImageSize = s.counter_data.size();
  FUSELENS_RP_CALL(cuptiRangeProfilerGetCounterDataInfo(&info));
  s.record.unattributed_ranges += static_cast<std::int64_t>(decode.numOfRangeDropped);
  if (info.numTotalRanges == 0) {
    if (s.launches_without_range++ == 0) log("counters: a kernel launch produced no profiler range");
  } else {
    std::vector<double> values(s.metric_names.size());
    auto eval = params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
    eval.pHostObject = s.host;
    eval.pCounterDataImage = s.counter_data.data();
    eval.counterDataImageSize = s.counter_data.size();
    eval.rangeIndex = info.numTotalRanges - 1;
    eval.ppMetricNames = s.metric_names.data();
    eval.numMetrics = s.metric_names.size();
    eval.pMetricValues = values.data();
    FUSELENS_RP_CALL(cuptiProfilerHostEvaluateToGpuValues(&eval));
    db::KernelMetricRecord record{state.pid, correlation_id, {}};
    double duration_ns = 0;
    for (std::size_t i = 0; i < values.size(); ++i) {
      record.values.emplace_back(s.metrics[i], values[i]);
      if (s.metrics[i] == db::metric::kDuration) duration_ns = values[i];
    }
    db::KernelRecord k;
    k.pid = state.pid;
    k.end_ns = end_ns;
    k.start_ns = end_ns - std::min<std::uint64_t>(end_ns, static_cast<std::uint64_t>(duration_ns));
    k.device_id = s.record.device_id;
    cuptiGetContextId(s.context, &k.context_id);
    k.correlation_id = correlation_id;
    k.mangled_name = cb.symbolName ? cb.symbolName : "(unknown kernel)";
    state.kernels.kernels.push_back(std::move(k));
    state.pending.push_back(std::move(record));
    ++s.record.ranges;
    s.record.unattributed_ranges += static_cast<std::int64_t>(info.numTotalRanges - 1);
  }
  configure_and_start(s);
}

/// Stops the profiler for a stream capture (its ranges since the last launch are dropped: none).
void pause(Session& s) {
  auto stop = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
  stop.pRangeProfilerObject = s.profiler;
  FUSELENS_RP_CALL(cuptiRangeProfilerStop(&stop));
}

void disable(Session& s) {
  s.active = false;
  if (s.profiler) {
    auto stop = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    stop.pRangeProfilerObject = s.profiler;
    cuptiRangeProfilerStop(&stop);
    auto disable = params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
    disable.pRangeProfilerObject = s.profiler;
    cuptiRangeProfilerDisable(&disable);
    s.profiler = nullptr;
  }
  if (s.host) {
    auto deinit = params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
    deinit.pHostObject = s.host;
    cuptiProfilerHostDeinitialize(&deinit);
    s.host = nullptr;
  }
}

void fail(Session& s, const Failure& f) {
  s.record.status = f.message;
  log("counters stop on device {}: {}", s.record.device_id, f.message);
  disable(s);
}

void write_pending(State& state) noexcept {
  if (state.pending.empty() && !state.finished) return;
  try {
    if (!state.kernels.kernels.empty()) {
      if (!state.kernel_writer) state.kernel_writer = std::make_unique<db::Writer>(db::Writer::open(state.capture));
      state.kernel_writer->write(state.kernels);
    }
  } catch (const std::exception& e) {
    log("counters: cannot store {} kernel rows: {}", state.kernels.kernels.size(), e.what());
  }
  state.kernels.clear();
  try {
    if (!state.writer) state.writer = std::make_unique<db::RooflineWriter>(state.capture);
    state.writer->write_kernel_metrics(state.pending);
  } catch (const std::exception& e) {
    log("counters: cannot store {} launches: {}", state.pending.size(), e.what());
  }
  state.pending.clear();
}

Session* session_of(State& state, CUcontext context) {
  for (auto& s : state.sessions) {
    if (s->context == context) return s.get();
  }
  auto s = std::make_unique<Session>();
  s->context = context;
  s->record.pid = state.pid;
  s->record.metric_set = state.set.name;
  try {
    initialize(state, *s);
    configure_and_start(*s);
    s->active = true;
  } catch (const Failure& f) {
    fail(*s, f);
  }
  state.sessions.push_back(std::move(s));
  return state.sessions.back().get();
}

}  // namespace

bool RangeProfiler::start(const std::string& metric_set, const std::string& capture,
                          CUpti_SubscriberHandle subscriber, std::uint32_t pid) noexcept {
  try {
    if (g_state) return true;
    if (metric_set != "roofline") {
      log("unknown metric set '{}' (known: roofline); no counters", metric_set);
      return false;
    }
    auto* state = new State;
    state->capture = capture;
    state->pid = pid;
    state->set = db::roofline_metric_set();
    int enabled = 0;
    for (CUpti_CallbackId id = 1; id < CUPTI_DRIVER_TRACE_CBID_SIZE; ++id) {
      g_kinds[id] = classify(id);
      if (g_kinds[id] == CallbackKind::Other) continue;
      const bool on =
          cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id) == CUPTI_SUCCESS;
      if (on && g_kinds[id] == CallbackKind::KernelLaunch) ++enabled;
    }
    cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
    if (enabled == 0) {
      log("counters: cannot subscribe to kernel launches; no counters");
      delete state;
      return false;
    }
    g_state = state;
    return true;
  } catch (...) {
    log("counters: start failed; no counters");
    return false;
  }
}

void RangeProfiler::on_callback(CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* data) noexcept {
  State* state = g_state;
  if (!state || !data) return;
  try {
    if (domain == CUPTI_CB_DOMAIN_RESOURCE && id == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
      const auto* r = static_cast<const CUpti_ResourceData*>(data);
      std::lock_guard lock(state->mutex);
      for (auto& s : state->sessions) {
        if (s->context == r->context && s->active) disable(*s);
      }
      write_pending(*state);
      return;
    }
    if (domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
    const CallbackKind kind = kind_of(id);
    if (kind == CallbackKind::CaptureBegin || kind == CallbackKind::CaptureEnd) {
      // Kernel replay cannot replay a launch that stream capture records into a graph (the
      // range profiler fails and the capture is invalidated): the profiler stops before a
      // capture begins and starts again once the last open capture has ended.
      const auto* cb = static_cast<const CUpti_CallbackData*>(data);
      std::lock_guard lock(state->mutex);
      if (state->finished || !cb->context) return;
      Session* s = session_of(*state, cb->context);
      if (!s->active) return;
      const bool begin = kind == CallbackKind::CaptureBegin;
      try {
        if (begin && cb->callbackSite == CUPTI_API_ENTER && s->captures_open++ == 0) {
          pause(*s);
        } else if (!begin && cb->callbackSite == CUPTI_API_EXIT && s->captures_open > 0 &&
                   --s->captures_open == 0) {
          configure_and_start(*s);
        }
      } catch (const Failure& f) {
        fail(*s, f);
      }
      return;
    }
    if (kind != CallbackKind::KernelLaunch) return;
    const auto* cb = static_cast<const CUpti_CallbackData*>(data);
    std::lock_guard lock(state->mutex);
    if (state->finished || !cb->context) return;
    Session* s = session_of(*state, cb->context);
    if (!s->active || cb->callbackSite != CUPTI_API_EXIT) return;
    if (s->captures_open > 0) {
      if (s->launches_in_capture++ == 0) {
        log("counters: kernel launches while a stream capture is open get no counters (the "
            "profiler pauses for captures)");
      }
      return;
    }
    try {
      collect(*state, *s, *cb);
    } catch (const Failure& f) {
      fail(*s, f);
    }
    if (state->pending.size() >= kFlushEvery) write_pending(*state);
  } catch (...) {
  }
}

void RangeProfiler::finish() noexcept {
  State* state = g_state;
  if (!state) return;
  std::lock_guard lock(state->mutex);
  if (state->finished) return;
  state->finished = true;
  write_pending(*state);
  for (auto& s : state->sessions) {
    if (s->active || s->host) disable(*s);  // leave nothing enabled for CUPTI's teardown
    if (s->launches_in_capture > 0) {
      log("counters: {} launches on device {} were made while a stream capture was open (no counters)",
          s->launches_in_capture, s->record.device_id);
    }
    if (s->launches_without_range > 0) {
      log("counters: {} launches on device {} produced no profiler range", s->launches_without_range,
          s->record.device_id);
    }
    try {
      if (state->writer) state->writer->write_metric_session(s->record);
    } catch (const std::exception& e) {
      log("counters: cannot store the session: {}", e.what());
    }
  }
  if (state->profiler_initialized) {
    auto deinit = params<CUpti_Profiler_DeInitialize_Params>(CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
    cuptiProfilerDeInitialize(&deinit);
    state->profiler_initialized = false;
  }
}

}  // namespace fuselens::collector
