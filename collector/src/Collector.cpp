#include "Collector.h"

#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>
#include <pthread.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>
#include <string_view>

#include "CuptiCheck.h"
#include "DeviceQuery.h"
#include "InternalCalls.h"
#include "KernelArgs.h"
#include "Log.h"
#include "RangeProfiler.h"
#include "RankEnv.h"
#include "fuselens/db/Reader.h"

namespace fuselens::collector {
namespace {

// The one collector of this process. Intentionally never destroyed: atexit handlers, CUPTI's
// threads and the writer thread may all still reach it while static destructors run.
std::atomic<Collector*> g_collector{nullptr};

// The longest shutdown() waits for the writer thread to store what is left.
constexpr std::chrono::seconds kWriterFinishTimeout{30};

// The capture this process appends to: prof-run's, or under --per-process its own, created with
// the run row of prof-run's (Config.h per_process_output).
db::Writer open_capture(const CollectorConfig& config, std::uint32_t pid) {
  if (!config.per_process) return db::Writer::open(config.output);
  // The layout too is prof-run's capture's (prof-run --layout).
  const db::Reader reader(config.output);
  return db::Writer::create(per_process_output(config.output, pid), reader.run().info,
                            reader.lean() ? db::TraceLayout::Lean : db::TraceLayout::Full,
                            db::IndexBuild::WhileWriting);
}

std::uint64_t utc_now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string executable_path() {
  char buffer[PATH_MAX] = {};
  const auto n = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string();
}

// NVTX loads NVTX_INJECTION64_PATH on its first call. prof-run points it at the CUPTI it found;
// if this process resolved another copy (PyTorch ships its own libcupti), point NVTX at the copy
// in use, so markers reach the CUPTI instance that collects them. Programs that call NVTX before
// CUDA initializes keep prof-run's choice.
void point_nvtx_at_loaded_cupti() noexcept {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cuptiActivityEnable), &info) != 0 && info.dli_fname) {
    ::setenv("NVTX_INJECTION64_PATH", info.dli_fname, 1);
  }
}

}  // namespace

Collector::Collector(CollectorConfig config)
    : config_(std::move(config)),
      pid_(static_cast<std::uint32_t>(::getpid())),
      buffers_(std::size_t{config_.buffer_kib} * 1024, config_.max_buffers) {}

bool Collector::start() noexcept {
  try {
    if (g_collector.load() != nullptr) return true;
    CollectorConfig config = CollectorConfig::from_environment();
    if (config.output.empty()) {
      log("{} is not set: not collecting (run the program under prof-run)", kEnvOutput);
      return false;
    }
    auto* collector = new Collector(std::move(config));
    try {
      collector->sink_ = std::make_unique<CaptureWriter>(
          open_capture(collector->config_, collector->pid_), collector->buffers_, collector->pid_,
          collector->config_.max_buffers);
    } catch (const std::exception& e) {
      log("cannot open the capture: {}; not collecting", e.what());
      delete collector;
      return false;
    }
    if (collector->config_.aggregate) {
      collector->sink_->set_aggregate((collector->config_.trace & kTraceContext) != 0,
                                      collector->config_.aggregate_keep_trace);
    }
    collector->buffers_.attach(*collector->sink_);
    collector->start_utc_ns_ = utc_now_ns();
    std::uint64_t cupti_now = 0;
    if (cuptiGetTimestamp(&cupti_now) == CUPTI_SUCCESS) {
      collector->clock_offset_ns_ =
          static_cast<std::int64_t>(utc_now_ns()) - static_cast<std::int64_t>(cupti_now);
    }
    collector->write_process_row(false);
    collector->write_rank_row();  // also in --per-process captures: each has its own row
    point_nvtx_at_loaded_cupti();
    g_collector.store(collector);
    collector->sink_->start();
    ExitGuard::add_own_thread(collector->sink_->thread_handle());
    if (!collector->enable_cupti()) {
      log("collection could not start; the program runs unprofiled");
      collector->shutdown(0);
      return false;
    }
    ExitGuard::arm_at_exit(*collector);
    try {
      collector->flusher_thread_ = std::thread([collector] { collector->flusher_loop(); });
    } catch (...) {
      log("cannot start the flush thread: a process killed without warning loses its last buffers");
    }
    ExitGuard::install_signal_handlers();
    // _exit, exit_group and exec (issue 22: a worker ending in os._exit kept 1 of 1,201 kernels).
    const auto exit_calls = ExitGuard::arm_exit_calls();
    if (exit_calls == ExitGuard::ExitCalls::OtherVersion) {
      log("the exit shim loaded is of another version: _exit and exec are not flushed");
    } else if (exit_calls == ExitGuard::ExitCalls::NoShim && collector->config_.exit_shim) {
      log("the exit shim ({}) is not loaded: a process ending in _exit or exec loses up to one "
          "flush period",
          "libfuselens_exit_shim.so");
    }
    return true;
  } catch (const std::exception& e) {
    log("collector start failed: {}", e.what());
  } catch (...) {
    log("collector start failed");
  }
  return false;
}

bool Collector::enable_cupti() noexcept {
  FUSELENS_CUPTI_OK(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM));
  if (!buffers_.start()) return false;
  if (FUSELENS_CUPTI_OK(cuptiSubscribe(&subscriber_, &on_callback, this))) {
    FUSELENS_CUPTI_OK(cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE,
                                          CUPTI_CBID_RESOURCE_CONTEXT_CREATED));
    if (!config_.metrics.empty()) {  // --metrics: counters per kernel launch
      try {
        auto profiler = std::make_unique<RangeProfiler>();
        if (profiler->start(config_, config_.output, subscriber_, pid_)) {
          handlers_.add(std::move(profiler));
        }
      } catch (...) {
        log("counters: start failed; no counters");
      }
    }
  } else {
    log("another CUPTI subscriber is active: device properties will not be recorded");
  }
  struct Kind {
    std::uint32_t group;
    CUpti_ActivityKind kind;
    const char* name;
  };
  static constexpr Kind kinds[] = {
      {kTraceCuda, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kernel"},
      {kTraceCuda, CUPTI_ACTIVITY_KIND_MEMCPY, "memcpy"},
      // Copies between two devices (cudaMemcpyPeer*, NCCL's P2P transport when it uses copy
      // engines) come as their own kind, stored as memcpy rows of kind PeerToPeer.
      {kTraceCuda, CUPTI_ACTIVITY_KIND_MEMCPY2, "peer-to-peer memcpy"},
      {kTraceCuda, CUPTI_ACTIVITY_KIND_MEMSET, "memset"},
      {kTraceSync, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "synchronization"},
      {kTraceMemory, CUPTI_ACTIVITY_KIND_MEMORY2, "memory"},
      {kTraceRuntime, CUPTI_ACTIVITY_KIND_RUNTIME, "runtime API"},
      {kTraceDriver, CUPTI_ACTIVITY_KIND_DRIVER, "driver API"},
      {kTraceNvtx, CUPTI_ACTIVITY_KIND_MARKER, "NVTX markers"},
      {kTraceNvtx, CUPTI_ACTIVITY_KIND_MARKER_DATA, "NVTX marker data"},
      {kTraceOverhead, CUPTI_ACTIVITY_KIND_OVERHEAD, "overhead"},
  };
  // Capture control: the activity kinds, API selection and context callbacks are switched per
  // window (set_recording); NVTX markers stay on, since they are what opens windows.
  std::unique_ptr<CaptureControl> control;
  if (config_.controlled()) {
    controlled_ = true;
    try {
      control = std::make_unique<CaptureControl>(config_,
                                                 static_cast<CaptureControl::Switch&>(*this), pid_);
    } catch (...) {
      log("capture control: start failed; recording the whole run");
      controlled_ = false;
    }
  }
  int enabled = 0;
  for (const auto& k : kinds) {
    if (!(config_.trace & k.group)) continue;
    // --metrics: no kernel/copy/memset/sync activity (it breaks the range profiler, see
    // RangeProfiler.h); RangeProfiler writes the kernel rows itself.
    if (!config_.metrics.empty() && (k.group == kTraceCuda || k.group == kTraceSync)) continue;
    const CUptiResult result = cuptiActivityEnable(k.kind);
    if (result == CUPTI_SUCCESS) {
      ++enabled;
      // NVTX stays on outside windows (the ranges that open them are in the capture), except in
      // the measurement mode driver-ids, whose off state holds no activity kind at all.
      if (k.group != kTraceNvtx || config_.window_api == CollectorConfig::WindowApi::kDriverIds) {
        switched_kinds_.push_back(k.kind);
      }
    } else {
      const char* message = nullptr;
      cuptiGetResultString(result, &message);
      log("cannot trace {} activity: {}", k.name, message ? message : "unknown error");
    }
  }
  // "api" without "runtime" / "driver": only the calls that put work on the GPU, allocate or wait.
  if ((config_.trace & kTraceApi) && !(config_.trace & kTraceRuntime)) {
    enabled += enable_work_runtime_api();
  }
  if ((config_.trace & kTraceApi) && !(config_.trace & kTraceDriver)) enable_work_driver_api();
  if (config_.trace & kTraceContext) enable_calling_contexts();
  if (config_.trace & kTraceArgs) {  // --trace args: kernel parameter values
    try {
      auto args = std::make_unique<KernelArgs>(pid_);
      if (args->start(subscriber_)) handlers_.add(std::move(args));
    } catch (...) {
      log("kernel arguments: start failed; not recorded");
    }
  }
  if (controlled_ && control) {
    switch_api_ = config_.window_api != CollectorConfig::WindowApi::kFilter;
    switch_driver_api_ = config_.window_api == CollectorConfig::WindowApi::kBoth;
    // Records of a selection left on are dropped outside windows by the writer; in aggregate
    // mode every record outside windows (recording is never switched off there).
    if (config_.aggregate || config_.window_api != CollectorConfig::WindowApi::kBoth) {
      sink_->set_api_filter(control.get());
    }
    const bool at_start = control->records_at_start();
    if (!at_start) set_recording(false);  // off until the first window opens
    control_ = control.get();  // set_recording leaves the callbacks it counts on (--sample)
    const bool started = control->start(subscriber_);
    if (!started || !handlers_.add(std::move(control))) control_ = nullptr;
    if (!started && !at_start) {
      log("capture control: no window can open; the run is not recorded");
    }
  }
  FUSELENS_CUPTI_OK(cuptiActivityFlushPeriod(config_.flush_period_ms));
  return enabled > 0;
}

namespace {

// API calls that put work on the GPU, allocate for it or wait for it, selected by name.
constexpr std::string_view kDriverWork[] = {
    "cuLaunch",         "cuGraphLaunch",     "cuMemcpy",
    "cuMemset",         "cuMemAlloc",        "cuMemFree",
    "cuMemHostAlloc",   "cuMemCreate",       "cuStreamSynchronize",
    "cuCtxSynchronize", "cuEventSynchronize"};
constexpr std::string_view kRuntimeWork[] = {"cudaLaunch",
                                             "cudaGraphLaunch",
                                             "cudaMemcpy",
                                             "cudaMemset",
                                             "cudaMalloc",
                                             "cudaFree",
                                             "cudaHostAlloc",
                                             "cudaDeviceSynchronize",
                                             "cudaThreadSynchronize",
                                             "cudaStreamSynchronize",
                                             "cudaEventSynchronize"};
// The calls that add a kernel, copy or memset node to a graph explicitly: their calling context
// is where the node's replays are charged (GraphNodes.h). Stream capture needs nothing more: the
// launch, copy and memset calls above add the nodes.
constexpr std::string_view kDriverGraphNodeCalls[] = {
    "cuGraphAddKernelNode", "cuGraphAddMemcpyNode", "cuGraphAddMemsetNode", "cuGraphAddNode"};
constexpr std::string_view kRuntimeGraphNodeCalls[] = {
    "cudaGraphAddKernelNode", "cudaGraphAddMemcpyNode", "cudaGraphAddMemsetNode",
    "cudaGraphAddNode"};

// Calls `select(cbid)` for every callback of `domain` whose name starts with one of `prefixes`;
// returns how many it accepted.
template <std::size_t N, typename Select>
int for_each_named_callback(CUpti_CallbackDomain domain, CUpti_CallbackId size,
                            const std::string_view (&prefixes)[N], Select select) {
  int selected = 0;
  for (CUpti_CallbackId cbid = 1; cbid < size; ++cbid) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name) continue;
    const std::string_view n(name);
    for (const auto prefix : prefixes) {
      if (n.substr(0, prefix.size()) == prefix) {
        if (select(cbid)) ++selected;
        break;
      }
    }
  }
  return selected;
}

// Switches every call of a domain (ids 1..size-1) on when it is in `selected` (increasing ids,
// as for_each_named_callback gives them) and off otherwise.
void select_only(CUpti_CallbackId size, const std::vector<CUpti_CallbackId>& selected,
                 CUptiResult (*enable_one)(CUpti_CallbackId, uint8_t)) noexcept {
  std::size_t next = 0;
  for (CUpti_CallbackId id = 1; id < size; ++id) {
    const bool wanted = next < selected.size() && selected[next] == id;
    if (wanted) ++next;
    enable_one(id, wanted ? 1 : 0);
  }
}

}  // namespace

void Collector::enable_work_driver_api() noexcept {
  const int selected =
      for_each_named_callback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE, kDriverWork,
                              [this](CUpti_CallbackId cbid) {
                                if (cuptiActivityEnableDriverApi(cbid, 1) != CUPTI_SUCCESS)
                                  return false;
                                driver_api_ids_.push_back(cbid);
                                return true;
                              });
  if (selected == 0) {
    log("cannot trace driver API launches: kernels launched through the driver API will have no "
        "launch call");
  }
}

int Collector::enable_work_runtime_api() noexcept {
  // Without CUPTI_ACTIVITY_KIND_RUNTIME, which would override this selection (cupti_activity.h).
  const int selected =
      for_each_named_callback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE,
                              kRuntimeWork, [this](CUpti_CallbackId id) {
                                if (cuptiActivityEnableRuntimeApi(id, 1) != CUPTI_SUCCESS)
                                  return false;
                                runtime_api_ids_.push_back(id);
                                return true;
                              });
  // CollectorConfig::api_select "kind": the kind on and every call outside the selection off
  // again, as a capture window opens it (set_recording).
  // Not under --metrics: the counter runs were validated with the per-call selection, and a
  // replayed launch costs far more than either.
  if (selected > 0 && config_.api_select == CollectorConfig::ApiSelect::kKind &&
      config_.metrics.empty() &&
      cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME) == CUPTI_SUCCESS) {
    select_only(CUPTI_RUNTIME_TRACE_CBID_SIZE, runtime_api_ids_, &cuptiActivityEnableRuntimeApi);
  }
  if (selected == 0) {
    log("cannot select runtime API calls: tracing every runtime API call instead");
    if (cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME) != CUPTI_SUCCESS) {
      log("cannot trace runtime API activity: kernels will have no launch call");
      return 0;
    }
    switched_kinds_.push_back(CUPTI_ACTIVITY_KIND_RUNTIME);
    return 1;
  }
  return selected;
}

void Collector::enable_calling_contexts() noexcept {
  if (!subscriber_) {
    log("no CUPTI callback subscription: calling contexts will not be recorded");
    return;
  }
  unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
  std::unique_ptr<PythonFrames> python;
  if (config_.python_frames.value_or(true)) {
    python = std::make_unique<PythonFrames>(PythonFrames::from_process());
    if (!python->usable()) python.reset();  // not a CPython process
    // By default only where frames are read as memory (Config.h).
    if (python && !config_.python_frames && !python->reads_memory()) python.reset();
  }
  try {
    capture_ =
        std::make_unique<ContextCapture>(contexts_, config_.context_method, std::move(python),
                                         config_.context_stats, config_.torch_module_frames);
  } catch (...) {
    log("calling contexts will not be recorded (out of memory)");
    return;
  }
  auto enable = [this](CUpti_CallbackDomain domain) {
    return [this, domain](CUpti_CallbackId cbid) {
      if (cuptiEnableCallback(1, subscriber_, domain, cbid) != CUPTI_SUCCESS) return false;
      context_domain_ = domain;
      context_ids_.push_back(cbid);
      return true;
    };
  };
  // The driver calls only: the runtime's launches, copies, sets, allocations and syncs go through
  // them with the runtime call's correlation id, so one callback per call is enough (subscribing
  // to both domains made two callbacks and two unwinds per runtime launch). The runtime callbacks
  // are the fallback when the driver's cannot be enabled.
  int enabled = for_each_named_callback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE,
                                        kDriverWork, enable(CUPTI_CB_DOMAIN_DRIVER_API));
  if (enabled > 0) {
    for_each_named_callback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE,
                            kDriverGraphNodeCalls, enable(CUPTI_CB_DOMAIN_DRIVER_API));
  } else {
    context_ids_.clear();
    enabled = for_each_named_callback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE,
                                      kRuntimeWork, enable(CUPTI_CB_DOMAIN_RUNTIME_API));
    if (enabled > 0) {
      for_each_named_callback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE,
                              kRuntimeGraphNodeCalls, enable(CUPTI_CB_DOMAIN_RUNTIME_API));
    }
  }
  if (enabled > 0) enable_graph_nodes();
  contexts_enabled_ = enabled > 0;
  if (!contexts_enabled_) log("cannot enable API callbacks: calling contexts will not be recorded");
}

void Collector::enable_graph_nodes() noexcept {
  try {
    graph_nodes_ = std::make_unique<GraphNodes>(contexts_);
  } catch (...) {
    log("CUDA graph nodes will not be recorded (out of memory): replayed kernels stay under their "
        "graph launch");
    return;
  }
  for (const auto id : GraphNodes::kResourceCallbacks) {
    if (cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE, id) != CUPTI_SUCCESS) {
      log("cannot enable CUDA graph node callbacks: kernels replayed from a graph stay under "
          "their graph launch");
      return;
    }
  }
}

void Collector::set_recording(bool on) noexcept {
  // Aggregate mode: every record is aggregated, so recording stays on; the windows only choose
  // which records the writer also stores as rows (CaptureWriter::set_aggregate).
  if (config_.aggregate) return;
  // Called by CaptureControl, one thread at a time; no lock of ours is held. On opening, the API
  // activity comes first and the GPU kinds after it (a kernel recorded in the window has its
  // launch call); on closing, the reverse.
  const std::uint32_t flag = on ? 1 : 0;
  const auto kinds = [this, on] {
    for (const auto kind : switched_kinds_) {
      if (on) {
        cuptiActivityEnable(kind);
      } else {
        cuptiActivityDisable(kind);
      }
    }
  };
  // API activity: the per-call selection alone did not come back once every selected call was
  // switched off (measured on the H100: no api_call rows inside windows), so the kind is switched
  // too, and after enabling it (which selects every call) the calls outside the selection are
  // switched off again, as cupti_activity.h describes. The driver kind is switched only in the
  // "both" mode: enabled, it slows every driver call (CollectorConfig::window_api).
  const auto select = [on](CUpti_ActivityKind kind, CUpti_CallbackId size,
                           const std::vector<CUpti_CallbackId>& selected,
                           CUptiResult (*enable_one)(CUpti_CallbackId, uint8_t)) {
    if (selected.empty()) return;
    if (!on) {
      for (const auto id : selected) enable_one(id, 0);
      cuptiActivityDisable(kind);
      return;
    }
    cuptiActivityEnable(kind);
    select_only(size, selected, enable_one);
  };
  const auto api = [&] {
    if (!switch_api_) return;
    select(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_SIZE, runtime_api_ids_,
           &cuptiActivityEnableRuntimeApi);
    if (switch_driver_api_) {
      select(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_SIZE, driver_api_ids_,
             &cuptiActivityEnableDriverApi);
    } else if (config_.window_api == CollectorConfig::WindowApi::kDriverIds) {
      for (const auto id : driver_api_ids_) cuptiActivityEnableDriverApi(id, on ? 1 : 0);
    }
  };
  // Off: the calling-context path stops first; on: it starts once the activity is back (below).
  if (!on) recording_.store(false, std::memory_order_relaxed);
  if (subscriber_) {
    for (const auto id : context_ids_) {
      // --sample: a launch callback stays on to count the step's calls (CaptureControl).
      if (!on && control_ && control_->counts_callback(context_domain_, id)) continue;
      cuptiEnableCallback(flag, subscriber_, context_domain_, id);
    }
  }
  if (graph_nodes_) graph_nodes_->record_created(on);  // nodes made between windows: unknown
  if (on) {
    api();
    kinds();
    recording_.store(true, std::memory_order_relaxed);
  } else {
    kinds();
    api();
  }
  // The records of a window just closed reach the writer with the next periodic flush (a flush
  // from inside a CUPTI callback is not made).
}

void Collector::on_api_enter(const CUpti_CallbackData& data) noexcept {
  // The launch path: a checked stack-cache lookup (an unwind on a miss), the Python frames when
  // this thread holds the GIL, prefix-shared interning in this thread's tree, no lock.
  capture_->record(data.correlationId);
  // The call a graph node made inside it is charged to (stream capture, cuGraphAdd*Node).
  if (graph_nodes_) GraphNodes::enter(data.correlationId, data.correlationData);
}

void CUPTIAPI Collector::on_callback(void* userdata, CUpti_CallbackDomain domain,
                                     CUpti_CallbackId id, const void* data) {
  if (!data || InternalCalls::active()) return;  // the L2 flush's own driver calls
  auto* self = static_cast<Collector*>(userdata);
  // The handlers registered at start: --metrics counters per kernel launch, --trace args kernel
  // parameter values.
  self->handlers_.on_callback(domain, id, data);
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    const auto& call = *static_cast<const CUpti_CallbackData*>(data);
    if (!self->contexts_enabled_.load(std::memory_order_relaxed)) return;
    // --sample between traced steps: the call was counted (a handler above), nothing more.
    if (!self->recording_.load(std::memory_order_relaxed)) return;
    if (call.callbackSite == CUPTI_API_ENTER) {
      self->on_api_enter(call);
    } else if (self->graph_nodes_) {
      GraphNodes::exit(call.correlationData);
    }
    return;
  }
  if (domain != CUPTI_CB_DOMAIN_RESOURCE) return;
  if (id == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
    self->on_context_created(static_cast<const CUpti_ResourceData*>(data)->context);
  } else if (self->graph_nodes_ && self->contexts_enabled_.load(std::memory_order_relaxed)) {
    self->graph_nodes_->on_resource(id, static_cast<const CUpti_ResourceData*>(data));
  }
}

void Collector::on_context_created(CUcontext context) noexcept {
  std::uint32_t ordinal = 0;
  if (cuptiGetDeviceId(context, &ordinal) != CUPTI_SUCCESS) return;
  if (runtime_version_.load() == 0) runtime_version_ = runtime_version();
  if (ordinal < 64 && (devices_seen_.fetch_or(1ull << ordinal) & (1ull << ordinal))) return;
  sink_->handle_device(query_device(static_cast<int>(ordinal)));
}

void Collector::write_final(CaptureSink& sink) noexcept {
  if (write_contexts_ && sink.storing()) {
    try {
      if (config_.context_stats) {
        const auto [hits, misses] = contexts_.stack_cache_counts();
        log("calling contexts: {} API calls, {} stack-cache hits, {} misses; Python frames {}",
            contexts_.recorded_calls(), hits, misses,
            capture_ && capture_->python() ? "on" : "off");
        if (capture_) {
          const auto t = capture_->timing();
          auto mean = [](std::uint64_t ns, std::uint64_t calls) {
            return calls > 0 ? static_cast<double>(ns) / static_cast<double>(calls) : 0.0;
          };
          log("calling contexts, time in record() per call: steady state (stack-cache hit, no new "
              "node) {} calls, {:.0f} ns native + {:.0f} ns Python; first sight {} calls, {:.0f} + "
              "{:.0f} ns",
              t.steady.calls, mean(t.steady.native_ns, t.steady.calls),
              mean(t.steady.python_ns, t.steady.calls), t.first_sight.calls,
              mean(t.first_sight.native_ns, t.first_sight.calls),
              mean(t.first_sight.python_ns, t.first_sight.calls));
        }
      }
      sink.handle_calling_contexts(
          contexts_.merge_and_symbolize(pid_, capture_ ? capture_->python() : nullptr));
    } catch (const std::exception& e) {
      log("cannot record calling contexts: {}", e.what());
    }
  }
  if (sink.storing()) handlers_.write_final(sink);  // the handlers' rows (--trace args), at exit
  write_process_row(true);
}

void Collector::write_process_row(bool final) noexcept {
  if (!sink_->storing()) return;
  try {
    db::ProcessInfo p;
    p.pid = pid_;
    p.parent_pid = static_cast<std::uint32_t>(::getppid());
    p.executable = executable_path();
    p.start_utc_ns = start_utc_ns_;
    p.clock_offset_ns = clock_offset_ns_;
    p.cuda_driver_version = driver_version();
    p.cuda_runtime_version = runtime_version_.load();
    cuptiGetVersion(&p.cupti_version);
    p.dropped_records = buffers_.dropped_records() + sink_->records_discarded();
    p.buffers_used = buffers_.buffers_used();
    p.records_written = sink_->records_written();
    if (final) {
      p.end_utc_ns = utc_now_ns();
      std::vector<db::ThreadInfo> threads;
      for (const auto tid : sink_->threads()) {
        threads.push_back(
            {pid_, tid, read_first_line("/proc/self/task/" + std::to_string(tid) + "/comm")});
      }
      sink_->handle_threads(threads);
      buffers_.log_overflow();
    }
    sink_->handle_process(p);
  } catch (const std::exception& e) {
    log("cannot record the process: {}", e.what());
  }
}

void Collector::write_rank_row() noexcept {
  if (!sink_->storing()) return;
  try {
    const auto rank = rank_from_environment(
        pid_, [](const char* name) -> const char* { return std::getenv(name); },
        printable_host_name());
    if (rank) sink_->handle_process_rank(*rank);
  } catch (const std::exception& e) {
    log("cannot record the process's rank: {}", e.what());
  }
}

void Collector::shutdown(int signal) noexcept {
  // A forked child is not ours; checked before anything is written, since a vfork child shares
  // this memory.
  if (static_cast<std::uint32_t>(::getpid()) != pid_) return;
  if (shut_down_.exchange(true)) {
    wait_for_shutdown();
    return;
  }
  shutdown_thread_ = ::pthread_self();
  shutdown_body(signal);
}

void Collector::wait_for_shutdown() noexcept {
  // Another exit path is flushing (atexit on one thread, _exit or a signal on another): wait for
  // it, so the process does not end in the middle of the flush; bounded like the flush itself.
  // The thread that runs it (a re-entry) goes on at once.
  if (::pthread_equal(shutdown_thread_.load(), ::pthread_self())) return;
  const auto deadline =
      std::chrono::steady_clock::now() + kWriterFinishTimeout + std::chrono::seconds(5);
  while (!shutdown_done_.load() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void Collector::shutdown_body(int signal) noexcept {
  stop_flusher();
  // The handlers stop and store what they write themselves (RangeProfiler: the counters still
  // pending and the session rows; KernelArgs stops recording).
  handlers_.finish();
  // Stop recording calling contexts before the writer merges the threads' trees.
  if (contexts_enabled_.exchange(false) && subscriber_) {
    cuptiEnableDomain(0, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API);
    cuptiEnableDomain(0, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API);
    if (graph_nodes_) {
      for (const auto id : GraphNodes::kResourceCallbacks) {
        cuptiEnableCallback(0, subscriber_, CUPTI_CB_DOMAIN_RESOURCE, id);
      }
    }
    write_contexts_ = true;
  }
  // Flush outside any lock of ours: CUPTI calls buffer_completed for every pending buffer.
  ActivityBuffers::flush(true);
  // Never hang the host program: the writer gets a bounded time to finish.
  sink_->finalize(*this, kWriterFinishTimeout);
  shutdown_done_ = true;
  if (signal != 0) log("flushed on signal {}", signal);
}

void Collector::flusher_loop() noexcept {
  ExitGuard::add_own_thread(::pthread_self());
  ::pthread_setname_np(::pthread_self(), "fuselens-flush");
  const auto period = std::chrono::milliseconds(config_.flush_period_ms);
  std::unique_lock lock(flusher_mutex_);
  while (!flusher_wake_.wait_for(lock, period, [&] { return flusher_stop_; })) {
    lock.unlock();
    // Default flush: every buffer whose records are all complete, full or not. No lock of ours is
    // held: CUPTI calls buffer_completed from here.
    ActivityBuffers::flush(false);
    lock.lock();
  }
}

void Collector::stop_flusher() noexcept {
  {
    std::lock_guard lock(flusher_mutex_);
    flusher_stop_ = true;
  }
  flusher_wake_.notify_all();
  // The flusher holds no lock of ours while in CUPTI, so it returns unless CUPTI hangs, and then
  // the forced flush below would hang as well.
  if (flusher_thread_.joinable() &&
      !::pthread_equal(flusher_thread_.native_handle(), ::pthread_self())) {
    flusher_thread_.join();
  }
}

}  // namespace fuselens::collector
