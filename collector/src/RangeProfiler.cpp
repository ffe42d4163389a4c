#include "RangeProfiler.h"

#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "CounterFilter.h"
#include "DeviceCheckpoint.h"
#include "InternalCalls.h"
#include "L2Flush.h"
#include "LaunchReplay.h"
#include "Log.h"
#include "RangeProfilerSession.h"
#include "fuselens/db/RooflineStore.h"
#include "fuselens/db/Writer.h"

namespace fuselens::collector {
namespace {

using namespace range_profiler;

constexpr std::size_t kFlushEvery = 512;  // launches per database transaction

// Application replay or gated kernel replay: this thread holds State::launch_gate (taken at a
// launch's entry).
thread_local bool t_holds_gate = false;

CallbackKind kind_of(const State& state, CUpti_CallbackId id) {
  return id < state.kinds.size() ? state.kinds[id] : CallbackKind::Other;
}

/// Initializes the counter data and sets the profiler's configuration for one launch (or, ungated
/// kernel replay, for the launches up to the next stop) in `mode`.
void configure(Session& s, CUpti_ProfilerReplayMode mode) {
  auto init = params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  init.pRangeProfilerObject = s.profiler;
  init.counterDataSize = s.counter_data.size();
  init.pCounterData = s.counter_data.data();
  FUSELENS_RP_CALL(cuptiRangeProfilerCounterDataImageInitialize(&init));
  auto config = params<CUpti_RangeProfiler_SetConfig_Params>(
      CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  config.pRangeProfilerObject = s.profiler;
  config.configSize = s.config.size();
  config.pConfig = s.config.data();
  config.counterDataImageSize = s.counter_data.size();
  config.pCounterDataImage = s.counter_data.data();
  config.range = CUPTI_AutoRange;
  config.replayMode = mode;
  config.maxRangesPerPass = kMaxRanges;
  config.numNestingLevels = 1;
  config.minNestingLevel = 1;
  config.passIndex = 0;
  config.targetNestingLevel = 1;
  FUSELENS_RP_CALL(cuptiRangeProfilerSetConfig(&config));
}

void start(Session& s) {
  auto start =
      params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
  start.pRangeProfilerObject = s.profiler;
  FUSELENS_RP_CALL(cuptiRangeProfilerStart(&start));
  s.started = true;
}

/// Stops the profiler; true when all passes of the configuration were submitted.
bool stop(Session& s) {
  auto stop = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
  stop.pRangeProfilerObject = s.profiler;
  s.started = false;
  FUSELENS_RP_CALL(cuptiRangeProfilerStop(&stop));
  return stop.isAllPassSubmitted != 0;
}

void configure_and_start(const State& state, Session& s) {
  // Application replay: one pass per launch (single_pass_groups), replayed by nobody: the run
  // collects its group from the launch as the program makes it.
  configure(s, state.application ? CUPTI_UserReplay : CUPTI_KernelReplay);
  start(s);
}

/// Stops, decodes and stores the last range as the counters of the launch `cb`, and its kernel row.
/// Kernel replay restarts the profiler for the next launch; application replay and gated kernel
/// replay start it at the next chosen launch's entry.
void collect(State& state, Session& s, const CUpti_CallbackData& cb) {
  const std::uint32_t correlation_id = cb.correlationId;
  std::uint64_t end_ns = 0;
  cuptiGetTimestamp(&end_ns);  // CUPTI's kernel replay: the launch call returns after its last pass
  // The collector's replay or application replay: the launch call returned before the kernel ran.
  const bool asynchronous = state.application || s.user_replay;
  const bool stopped = s.awaiting_decode;  // its passes all ran before the program's launch
  s.awaiting_decode = false;
  s.user_replay = false;
  if (!stopped && !stop(s) && asynchronous) {
    throw Failure{
        state.application
            ? "application replay: the range profiler wants more than the one pass configured"
            : "kernel replay: the range profiler wants more passes than it reported"};
  }
  auto decode = params<CUpti_RangeProfiler_DecodeData_Params>(
      CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  decode.pRangeProfilerObject = s.profiler;
  FUSELENS_RP_CALL(cuptiRangeProfilerDecodeData(&decode));
  s.memory.release();
  // Asynchronous: decoding waited for the kernel.
  if (asynchronous) cuptiGetTimestamp(&end_ns);
  auto info = params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
      CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  info.pCounterDataImage = s.counter_data.data();
  info.counterDataImageSize = s.counter_data.size();
  FUSELENS_RP_CALL(cuptiRangeProfilerGetCounterDataInfo(&info));
  s.record.unattributed_ranges += static_cast<std::int64_t>(decode.numOfRangeDropped);
  if (info.numTotalRanges == 0) {
    if (s.launches_without_range++ == 0)
      log("counters: a kernel launch produced no profiler range");
  } else {
    std::vector<double> values(s.metric_names.size());
    auto eval = params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
        CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
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
  if (!state.application && !state.gated) configure_and_start(state, s);
}

void run_flush(Session& s) {
  const InternalCalls internal;
  try {
    s.flush->run();
  } catch (const std::exception& e) {
    throw Failure{e.what()};
  }
}

/// The collector's replay: saves the context's device memory (false when the checkpoint cannot:
/// logged once, the launch falls back to CUPTI's replay).
bool save_memory(Session& s) {
  const CUptiResult result = s.memory.save(s.context);
  if (result == CUPTI_SUCCESS) return true;
  if (!s.save_failure_logged) {
    s.save_failure_logged = true;
    log("counters: {}; such launches get CUPTI's kernel replay (no cache control between its "
        "passes)",
        DeviceCheckpoint::available()
            ? cupti_message(result, "saving device memory for the replay (cuptiCheckpointSave)")
            : std::string(
                  "CUPTI's libcheckpoint.so was not found (device memory cannot be saved)"));
  }
  return false;
}

void restore_memory(Session& s) {
  if (const CUptiResult result = s.memory.restore(); result != CUPTI_SUCCESS) {
    throw Failure{cupti_message(result,
                                "restoring device memory between replay passes "
                                "(cuptiCheckpointRestore); the program's memory may differ "
                                "from an unprofiled run")};
  }
}

/// A launch that cache control "all" cannot replay itself: flushed once, then CUPTI's replay.
void cupti_replay(Session& s, const char* why) {
  if (s.cupti_replayed++ == 0 && why) {
    log("counters: a launch cannot be made again by the collector ({}): CUPTI replays it, its "
        "caches flushed before the first pass only",
        why);
  }
  run_flush(s);
  configure(s, CUPTI_KernelReplay);
  start(s);
}

/// Decodes what the profiler collected and drops it (the warm-up's passes).
void discard_ranges(Session& s) {
  auto decode = params<CUpti_RangeProfiler_DecodeData_Params>(
      CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  decode.pRangeProfilerObject = s.profiler;
  FUSELENS_RP_CALL(cuptiRangeProfilerDecodeData(&decode));
}

/// The context's first replay runs all its passes once before the counted one (one pass more
/// than the configuration has, so every pass relaunches), their counters decoded and dropped,
/// the memory put back. Without it the first profiled launch of a process counted 18-20 MB more
/// DRAM writes than ncu and than the same kernel's later launches, whichever kernel came first,
/// on the H100 (docs/measurements/2026-11-27-h100-first-launch-writes.md): the writes belong to
/// the profiler's first passes on the context, not to the kernel. Throws what `ops` throw.
void warm_up(Session& s, const ReplayOps& ops) {
  s.warmed_up = true;
  configure(s, CUPTI_UserReplay);
  const auto passes = static_cast<std::size_t>(std::max<std::int64_t>(1, s.record.passes)) + 1;
  switch (run_replay(passes, ops)) {
    case ReplayOutcome::NotReplayed:  // memory cannot be saved: the counted replay falls back
      return;
    case ReplayOutcome::LaunchIsLastPass:  // its last pass started, nothing launched in it
      stop(s);
      break;
    case ReplayOutcome::AllPassesDone:
      break;
  }
  discard_ranges(s);
  s.memory.release();
}

/// Application replay and gated kernel replay, at a chosen launch's entry (driver callback `id`,
/// `cb`). Application replay: flush (cache control "all") and start this launch's single pass.
/// Kernel replay with cache control "all": the collector's replay (LaunchReplay.h) runs every pass
/// but the last, and starts the last for the program's own launch. Kernel replay with "none":
/// CUPTI's replay of this launch.
void begin_launch(State& state, Session& s, CUpti_CallbackId id, const CUpti_CallbackData& cb) {
  s.user_replay = false;
  s.awaiting_decode = false;
  if (state.application || !s.flush) {
    if (s.flush) run_flush(s);
    configure_and_start(state, s);
    return;
  }
  const LaunchCall call = read_launch_call(id, cb.functionParams);
  if (call.form == RelaunchForm::None) {
    cupti_replay(s, call.why_not);
    return;
  }
  ReplayOps ops;
  ops.save = [&] { return save_memory(s); };
  ops.restore = [&] { restore_memory(s); };
  ops.flush = [&] { run_flush(s); };
  ops.start = [&] { start(s); };
  struct RelaunchFailed {
    CUresult result;
  };
  ops.relaunch = [&] {
    const InternalCalls internal;
    if (const CUresult r = relaunch(call); r != CUDA_SUCCESS) throw RelaunchFailed{r};
  };
  ops.stop = [&] { return stop(s); };
  ReplayOutcome outcome = ReplayOutcome::NotReplayed;
  try {
    if (!s.warmed_up) warm_up(s, ops);
    configure(s, CUPTI_UserReplay);
    outcome = run_replay(static_cast<std::size_t>(std::max<std::int64_t>(1, s.record.passes)), ops);
  } catch (const RelaunchFailed& f) {
    // run_replay put the memory back; this launch gets CUPTI's replay instead.
    if (s.started) stop(s);
    s.memory.release();
    if (!s.relaunch_failure_logged) {
      s.relaunch_failure_logged = true;
      log("counters: launching a kernel again for its replay failed (CUresult {}); such launches "
          "get CUPTI's kernel replay",
          static_cast<int>(f.result));
    }
    cupti_replay(s, nullptr);
    return;
  }
  switch (outcome) {
    case ReplayOutcome::NotReplayed:
      cupti_replay(s, nullptr);
      break;
    case ReplayOutcome::LaunchIsLastPass:
      s.user_replay = true;
      break;
    case ReplayOutcome::AllPassesDone:
      s.user_replay = true;
      s.awaiting_decode = true;
      break;
  }
}

/// Stops the profiler for a stream capture (its ranges since the last launch are dropped: none).
void pause(Session& s) { stop(s); }

void disable(Session& s) {
  s.active = false;
  s.started = false;
  s.awaiting_decode = false;
  s.memory.release();
  if (s.profiler) {
    auto stop =
        params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    stop.pRangeProfilerObject = s.profiler;
    cuptiRangeProfilerStop(&stop);
    auto disable =
        params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
    disable.pRangeProfilerObject = s.profiler;
    cuptiRangeProfilerDisable(&disable);
    s.profiler = nullptr;
  }
  if (s.host) {
    auto deinit = params<CUpti_Profiler_Host_Deinitialize_Params>(
        CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
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
      if (!state.kernel_writer)
        state.kernel_writer = std::make_unique<db::Writer>(db::Writer::open(state.capture));
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
    if (!state.application && !state.gated) configure_and_start(state, *s);
    s->active = true;
  } catch (const Failure& f) {
    fail(*s, f);
  }
  state.sessions.push_back(std::move(s));
  return state.sessions.back().get();
}

}  // namespace

RangeProfiler::RangeProfiler() = default;

RangeProfiler::~RangeProfiler() = default;

bool RangeProfiler::start(const CollectorConfig& config, const std::string& capture,
                          CUpti_SubscriberHandle subscriber, std::uint32_t pid) noexcept {
  try {
    if (state_) return true;
    if (config.metrics != "roofline") {
      log("unknown metric set '{}' (known: roofline); no counters", config.metrics);
      return false;
    }
    auto state = std::make_unique<State>();
    state->capture = capture;
    state->pid = pid;
    state->application = config.metric_replay == "application";
    state->pass = config.metric_pass;
    state->flush_caches = config.cache_control == "all";
    state->set = db::roofline_metric_set();
    try {
      state->filter = std::make_unique<CounterFilter>(config);
    } catch (const std::exception& e) {
      log("counters: {}; no counters", e.what());
      return false;
    }
    // Cache control "all" under kernel replay: the collector replays each launch from its entry.
    state->gated = !state->application && (state->filter->gated() || state->flush_caches);
    state->filter->start(subscriber);
    int enabled = 0;
    for (CUpti_CallbackId id = 1; id < CUPTI_DRIVER_TRACE_CBID_SIZE; ++id) {
      state->kinds[id] = classify(id);
      if (state->kinds[id] == CallbackKind::Other) continue;
      const bool on =
          cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id) == CUPTI_SUCCESS;
      if (on && state->kinds[id] == CallbackKind::KernelLaunch) ++enabled;
    }
    cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                        CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
    if (enabled == 0) {
      log("counters: cannot subscribe to kernel launches; no counters");
      return false;
    }
    state_ = std::move(state);
    return true;
  } catch (...) {
    log("counters: start failed; no counters");
    return false;
  }
}

namespace {

void note_capture_launch(Session& s) {
  if (s.launches_in_capture++ == 0) {
    log("counters: kernel launches while a stream capture is open get no counters (the "
        "profiler pauses for captures)");
  }
}

/// After a profiled launch's counters were read: its progress line, and the pending rows stored
/// every kFlushEvery launches.
void after_collect(State& state, const Session& s) {
  state.filter->print_progress(s.record.passes, state.application, state.pass);
  if (state.pending.size() >= kFlushEvery) write_pending(state);
}

/// Application replay and gated kernel replay: at a launch's entry take the launch gate (one
/// launch at a time per process, from its entry to its exit), decide whether to profile it
/// (CounterFilter), and if so flush and start; at its exit collect and release. Once
/// --launch-count launches were profiled, later launches skip all of it.
void on_gated_launch(State& state, CUpti_CallbackId id, const CUpti_CallbackData& cb) {
  if (cb.callbackSite == CUPTI_API_ENTER) {
    if (state.exhausted.load(std::memory_order_relaxed)) return;
    if (!t_holds_gate) {  // not a launch made inside another launch's callbacks
      state.launch_gate.lock();
      t_holds_gate = true;
    }
    std::lock_guard lock(state.mutex);
    if (state.finished || !cb.context) return;
    Session* s = session_of(state, cb.context);
    if (!s->active || s->captures_open > 0) return;
    const bool chosen = state.filter->decide(id, cb);
    if (state.filter->exhausted()) state.exhausted.store(true, std::memory_order_relaxed);
    if (!chosen) return;
    try {
      begin_launch(state, *s, id, cb);
    } catch (const Failure& f) {
      fail(*s, f);
    }
    return;
  }
  if (!t_holds_gate && state.exhausted.load(std::memory_order_relaxed)) return;
  {
    std::lock_guard lock(state.mutex);
    Session* s = nullptr;
    if (!state.finished && cb.context) s = session_of(state, cb.context);
    if (s && s->active && s->captures_open > 0 && !s->started) note_capture_launch(*s);
    if (s && s->active && (s->started || s->awaiting_decode)) {
      try {
        collect(state, *s, cb);
      } catch (const Failure& f) {
        fail(*s, f);
      }
      after_collect(state, *s);
    }
  }
  if (t_holds_gate) {
    t_holds_gate = false;
    state.launch_gate.unlock();
  }
}

}  // namespace

void RangeProfiler::on_callback(CUpti_CallbackDomain domain, CUpti_CallbackId id,
                                const void* data) noexcept {
  State* state = state_.get();
  if (!state || !data || InternalCalls::active()) return;
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
    if (domain == CUPTI_CB_DOMAIN_NVTX) {  // --nvtx-include / --nvtx-exclude only
      state->filter->on_nvtx(id, data);
      return;
    }
    if (domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
    const CallbackKind kind = kind_of(*state, id);
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
          if (s->started) pause(*s);  // application replay: stopped between launches already
        } else if (!begin && cb->callbackSite == CUPTI_API_EXIT && s->captures_open > 0 &&
                   --s->captures_open == 0 && !state->application && !state->gated) {
          configure_and_start(*state, *s);
        }
      } catch (const Failure& f) {
        fail(*s, f);
      }
      return;
    }
    if (kind != CallbackKind::KernelLaunch) return;
    const auto* cb = static_cast<const CUpti_CallbackData*>(data);
    if (state->application || state->gated) {
      on_gated_launch(*state, id, *cb);
      return;
    }
    std::lock_guard lock(state->mutex);
    if (state->finished || !cb->context) return;
    Session* s = session_of(*state, cb->context);
    if (!s->active || cb->callbackSite != CUPTI_API_EXIT) return;
    if (s->captures_open > 0) {
      note_capture_launch(*s);
      return;
    }
    state->filter->decide(id, *cb);  // no filters here: counts it, names it for the progress line
    try {
      collect(*state, *s, *cb);
    } catch (const Failure& f) {
      fail(*s, f);
    }
    after_collect(*state, *s);
  } catch (...) {
  }
}

void RangeProfiler::finish() noexcept {
  State* state = state_.get();
  if (!state) return;
  std::lock_guard lock(state->mutex);
  if (state->finished) return;
  state->finished = true;
  write_pending(*state);
  state->filter->log_summary();
  for (auto& s : state->sessions) {
    if (s->active || s->host) disable(*s);  // leave nothing enabled for CUPTI's teardown
    if (s->launches_in_capture > 0) {
      log("counters: {} launches on device {} were made while a stream capture was open (no "
          "counters)",
          s->launches_in_capture, s->record.device_id);
    }
    if (s->cupti_replayed > 0) {
      log("counters: {} launches on device {} got CUPTI's kernel replay instead of the collector's "
          "(caches flushed before their first pass only)",
          s->cupti_replayed, s->record.device_id);
    }
    if (s->launches_without_range > 0) {
      log("counters: {} launches on device {} produced no profiler range",
          s->launches_without_range, s->record.device_id);
    }
    try {
      if (state->writer) state->writer->write_metric_session(s->record);
    } catch (const std::exception& e) {
      log("counters: cannot store the session: {}", e.what());
    }
  }
  if (state->profiler_initialized) {
    auto deinit =
        params<CUpti_Profiler_DeInitialize_Params>(CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
    cuptiProfilerDeInitialize(&deinit);
    state->profiler_initialized = false;
  }
}

}  // namespace fuselens::collector
