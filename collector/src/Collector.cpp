#include "Collector.h"

#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>

#include "ContextCapture.h"
#include "DeviceQuery.h"
#include "KernelArgs.h"
#include "RangeProfiler.h"
#include "Log.h"
#include "fuselens/db/Reader.h"

namespace fuselens::collector {
namespace {

// The one collector of this process. Intentionally never destroyed: atexit handlers, CUPTI's
// threads and the writer thread may all still reach it while static destructors run.
std::atomic<Collector*> g_collector{nullptr};
int g_signal_pipe[2] = {-1, -1};
constexpr int kHandledSignals[] = {SIGINT, SIGTERM, SIGHUP};
// Signals of a fault in the program (synchronous, or abort()): flushed on the faulting thread's
// behalf by the signal thread, then re-raised there.
constexpr int kFatalSignals[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL};
int g_done_pipe[2] = {-1, -1};      // the signal thread writes a byte here when the flush is over
std::atomic<pid_t> g_owner_pid{0};  // the process the handlers belong to (not a forked child)
std::atomic<bool> g_signal_thread_running{false};
// The collector's own threads: a fault on one of them must not wait for a flush it blocks.
std::atomic<pthread_t> g_writer_thread{}, g_flusher_thread{}, g_signal_thread{};

bool is_fatal(int signal) {
  for (const int s : kFatalSignals) {
    if (s == signal) return true;
  }
  return false;
}

// Async-signal-safe: restores the default action of `signal` and raises it again. Called from a
// handler (where `signal` is blocked), the signal is delivered when the handler returns.
void reraise_with_default(int signal) {
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  sigaction(signal, &action, nullptr);
  ::raise(signal);
}

// Async-signal-safe: waits until g_done_pipe is readable or `seconds` have passed.
void wait_for_flush(int seconds) {
  timespec start{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  while (true) {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    const long long elapsed_ms =
        (now.tv_sec - start.tv_sec) * 1000LL + (now.tv_nsec - start.tv_nsec) / 1'000'000;
    const long long left_ms = seconds * 1000LL - elapsed_ms;
    if (left_ms <= 0) return;
    pollfd done{g_done_pipe[0], POLLIN, 0};
    const int n = ::poll(&done, 1, static_cast<int>(left_ms));
    if (n > 0 || (n < 0 && errno != EINTR)) return;
  }
}

// The capture this process appends to: prof-run's, or under --per-process its own, created with
// the run row of prof-run's (Config.h per_process_output).
db::Writer open_capture(const CollectorConfig& config, std::uint32_t pid) {
  if (!config.per_process) return db::Writer::open(config.output);
  const db::RunInfo run = db::Reader(config.output).run().info;
  return db::Writer::create(per_process_output(config.output, pid), run);
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

bool cupti_ok(CUptiResult result, const char* call) noexcept {
  if (result == CUPTI_SUCCESS) return true;
  const char* message = nullptr;
  cuptiGetResultString(result, &message);
  log("CUPTI error in {}: {}", call, message ? message : "unknown");
  return false;
}
#define FUSELENS_CUPTI_OK(call) cupti_ok((call), #call)

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
      pool_(std::size_t{config_.buffer_kib} * 1024, config_.max_buffers, 2),
      converter_(pid_, &ActivityConverter::cupti_api_name) {
  queue_.reserve(config_.max_buffers);
}

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
      collector->writer_ = std::make_unique<db::Writer>(open_capture(collector->config_, collector->pid_));
    } catch (const std::exception& e) {
      log("cannot open the capture: {}; not collecting", e.what());
      delete collector;
      return false;
    }
    collector->start_utc_ns_ = utc_now_ns();
    std::uint64_t cupti_now = 0;
    if (cuptiGetTimestamp(&cupti_now) == CUPTI_SUCCESS) {
      collector->clock_offset_ns_ =
          static_cast<std::int64_t>(utc_now_ns()) - static_cast<std::int64_t>(cupti_now);
    }
    collector->write_process_row(false);
    point_nvtx_at_loaded_cupti();
    g_collector.store(collector);
    collector->writer_thread_ = std::thread([collector] { collector->writer_loop(); });
    g_writer_thread = collector->writer_thread_.native_handle();
    if (!collector->enable_cupti()) {
      log("collection could not start; the program runs unprofiled");
      collector->shutdown(0);
      return false;
    }
    std::atexit(&Collector::at_exit);
    try {
      collector->flusher_thread_ = std::thread([collector] { collector->flusher_loop(); });
    } catch (...) {
      log("cannot start the flush thread: a process killed without warning loses its last buffers");
    }
    install_signal_handlers();
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
  if (!FUSELENS_CUPTI_OK(cuptiActivityRegisterCallbacks(&buffer_requested, &buffer_completed))) {
    return false;
  }
  if (FUSELENS_CUPTI_OK(cuptiSubscribe(&subscriber_, &on_callback, this))) {
    FUSELENS_CUPTI_OK(cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE,
                                          CUPTI_CBID_RESOURCE_CONTEXT_CREATED));
    if (!config_.metrics.empty()) RangeProfiler::start(config_, config_.output, subscriber_, pid_);
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
      {kTraceCuda, CUPTI_ACTIVITY_KIND_MEMSET, "memset"},
      {kTraceSync, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "synchronization"},
      {kTraceMemory, CUPTI_ACTIVITY_KIND_MEMORY2, "memory"},
      {kTraceRuntime, CUPTI_ACTIVITY_KIND_RUNTIME, "runtime API"},
      {kTraceDriver, CUPTI_ACTIVITY_KIND_DRIVER, "driver API"},
      {kTraceNvtx, CUPTI_ACTIVITY_KIND_MARKER, "NVTX markers"},
      {kTraceNvtx, CUPTI_ACTIVITY_KIND_MARKER_DATA, "NVTX marker data"},
      {kTraceOverhead, CUPTI_ACTIVITY_KIND_OVERHEAD, "overhead"},
  };
  int enabled = 0;
  for (const auto& k : kinds) {
    if (!(config_.trace & k.group)) continue;
    // --metrics: no kernel/copy/memset/sync activity (it breaks the range profiler, see
    // RangeProfiler.h); RangeProfiler writes the kernel rows itself.
    if (!config_.metrics.empty() && (k.group == kTraceCuda || k.group == kTraceSync)) continue;
    const CUptiResult result = cuptiActivityEnable(k.kind);
    if (result == CUPTI_SUCCESS) {
      ++enabled;
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
  if (config_.trace & kTraceArgs) KernelArgs::start(subscriber_);  // kernel parameter values
  FUSELENS_CUPTI_OK(cuptiActivityFlushPeriod(config_.flush_period_ms));
  return enabled > 0;
}

namespace {

// API calls that put work on the GPU, allocate for it or wait for it, selected by name.
constexpr std::string_view kDriverWork[] = {
    "cuLaunch", "cuGraphLaunch", "cuMemcpy", "cuMemset", "cuMemAlloc", "cuMemFree",
    "cuMemHostAlloc", "cuMemCreate", "cuStreamSynchronize", "cuCtxSynchronize",
    "cuEventSynchronize"};
constexpr std::string_view kRuntimeWork[] = {
    "cudaLaunch", "cudaGraphLaunch", "cudaMemcpy", "cudaMemset", "cudaMalloc", "cudaFree",
    "cudaHostAlloc", "cudaDeviceSynchronize", "cudaThreadSynchronize", "cudaStreamSynchronize",
    "cudaEventSynchronize"};

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

}  // namespace

void Collector::enable_work_driver_api() noexcept {
  const int selected = for_each_named_callback(
      CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE, kDriverWork,
      [](CUpti_CallbackId cbid) { return cuptiActivityEnableDriverApi(cbid, 1) == CUPTI_SUCCESS; });
  if (selected == 0) {
    log("cannot trace driver API launches: kernels launched through the driver API will have no "
        "launch call");
  }
}

int Collector::enable_work_runtime_api() noexcept {
  // Without CUPTI_ACTIVITY_KIND_RUNTIME, which would override this selection (cupti_activity.h).
  const int selected = for_each_named_callback(
      CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE, kRuntimeWork,
      [](CUpti_CallbackId id) { return cuptiActivityEnableRuntimeApi(id, 1) == CUPTI_SUCCESS; });
  if (selected == 0) {
    log("cannot select runtime API calls: tracing every runtime API call instead");
    if (cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME) != CUPTI_SUCCESS) {
      log("cannot trace runtime API activity: kernels will have no launch call");
      return 0;
    }
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
    capture_ = std::make_unique<ContextCapture>(contexts_, config_.context_method, std::move(python),
                                                config_.context_stats);
  } catch (...) {
    log("calling contexts will not be recorded (out of memory)");
    return;
  }
  auto enable = [this](CUpti_CallbackDomain domain) {
    return [this, domain](CUpti_CallbackId cbid) {
      return cuptiEnableCallback(1, subscriber_, domain, cbid) == CUPTI_SUCCESS;
    };
  };
  // The driver calls only: the runtime's launches, copies, sets, allocations and syncs go through
  // them with the runtime call's correlation id, so one callback per call is enough (subscribing
  // to both domains made two callbacks and two unwinds per runtime launch). The runtime callbacks
  // are the fallback when the driver's cannot be enabled.
  int enabled = for_each_named_callback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE,
                                        kDriverWork, enable(CUPTI_CB_DOMAIN_DRIVER_API));
  if (enabled == 0) {
    enabled = for_each_named_callback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE,
                                      kRuntimeWork, enable(CUPTI_CB_DOMAIN_RUNTIME_API));
  }
  contexts_enabled_ = enabled > 0;
  if (!contexts_enabled_) log("cannot enable API callbacks: calling contexts will not be recorded");
}

void Collector::on_api_enter(const CUpti_CallbackData& data) noexcept {
  // The launch path: a checked stack-cache lookup (an unwind on a miss), the Python frames when
  // this thread holds the GIL, prefix-shared interning in this thread's tree, no lock.
  capture_->record(data.correlationId);
}

void CUPTIAPI Collector::buffer_requested(std::uint8_t** buffer, std::size_t* size,
                                          std::size_t* max_records) {
  Collector* self = g_collector.load();
  *buffer = self ? self->pool_.acquire() : nullptr;
  *size = *buffer ? self->pool_.buffer_bytes() : 0;
  *max_records = 0;
}

void CUPTIAPI Collector::buffer_completed(CUcontext context, std::uint32_t stream_id,
                                          std::uint8_t* buffer, std::size_t, std::size_t valid_size) {
  Collector* self = g_collector.load();
  if (!self) return;
  // A null context names CUPTI's global queue, where the kernel records of current CUPTI
  // versions go: skipping it (as this did) missed every drop of a full pool (H100, 1M launches).
  std::size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS) {
    self->cupti_dropped_ += dropped;
  }
  if (!buffer) return;
  if (self->pool_.is_overflow(buffer)) {
    // The pool was full when CUPTI asked for this buffer: count its records as dropped.
    CUpti_Activity* record = nullptr;
    std::uint64_t kernels = 0, api = 0, other = 0;
    while (valid_size > 0 &&
           cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
      switch (record->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
          ++kernels;
          break;
        case CUPTI_ACTIVITY_KIND_RUNTIME:
        case CUPTI_ACTIVITY_KIND_DRIVER:
          ++api;
          break;
        default:
          ++other;
      }
    }
    self->overflow_kernels_ += kernels;
    self->overflow_api_ += api;
    self->overflow_other_ += other;
    self->pool_.release(buffer);
    return;
  }
  if (valid_size == 0) {
    self->pool_.release(buffer);
    return;
  }
  {
    std::lock_guard lock(self->mutex_);
    self->queue_.push_back({buffer, valid_size});  // capacity reserved for every pool buffer
  }
  self->wake_.notify_one();
}

void CUPTIAPI Collector::on_callback(void* userdata, CUpti_CallbackDomain domain,
                                     CUpti_CallbackId id, const void* data) {
  if (!data || RangeProfiler::internal_call()) return;  // the L2 flush's own driver calls
  RangeProfiler::on_callback(domain, id, data);  // --metrics: counters per kernel launch
  KernelArgs::on_callback(domain, id, data);     // --trace args: kernel parameter values
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    const auto& call = *static_cast<const CUpti_CallbackData*>(data);
    auto* self = static_cast<Collector*>(userdata);
    if (call.callbackSite == CUPTI_API_ENTER && self->contexts_enabled_.load(std::memory_order_relaxed)) {
      self->on_api_enter(call);
    }
    return;
  }
  if (domain == CUPTI_CB_DOMAIN_RESOURCE && id == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
    static_cast<Collector*>(userdata)->on_context_created(
        static_cast<const CUpti_ResourceData*>(data)->context);
  }
}

void Collector::on_context_created(CUcontext context) noexcept {
  std::uint32_t ordinal = 0;
  if (cuptiGetDeviceId(context, &ordinal) != CUPTI_SUCCESS) return;
  if (runtime_version_.load() == 0) runtime_version_ = runtime_version();
  {
    std::lock_guard lock(mutex_);
    if (ordinal < 64 && (devices_seen_ & (1ull << ordinal))) return;
    if (ordinal < 64) devices_seen_ |= 1ull << ordinal;
  }
  db::DeviceInfo device = query_device(static_cast<int>(ordinal));
  try {
    std::lock_guard lock(mutex_);
    devices_.push_back(std::move(device));
  } catch (...) {
  }
  wake_.notify_one();
}

void Collector::writer_loop() noexcept {
  // Named so that top -H, gdb and per-thread CPU accounting tell the collector's threads from
  // the program's (at most 15 characters).
  ::pthread_setname_np(::pthread_self(), "fuselens-write");
  db::RecordBatch batch;
  std::vector<Completed> work;
  std::vector<db::DeviceInfo> devices;
  work.reserve(config_.max_buffers);
  while (true) {
    bool stopping = false;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || !queue_.empty() || !devices_.empty(); });
      work.swap(queue_);
      devices.swap(devices_);
      stopping = stop_;
    }
    for (const auto& device : devices) {
      try {
        if (!writer_broken_ && !device.name.empty()) writer_->write_device(device);
      } catch (const std::exception& e) {
        log("cannot record device {}: {}", device.id, e.what());
      }
    }
    devices.clear();
    for (const auto& item : work) {
      try {
        converter_.convert_buffer(item.buffer, item.valid_size, batch);
      } catch (const std::exception& e) {
        log("cannot convert an activity buffer: {}", e.what());
      }
      pool_.release(item.buffer);
      write_batch(batch);
    }
    work.clear();
    if (stopping) break;
  }
  try {
    converter_.flush_open_ranges(batch);
  } catch (...) {
  }
  write_batch(batch);
  if (write_contexts_ && !writer_broken_) {
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
      writer_->write_calling_contexts(
          contexts_.merge_and_symbolize(pid_, capture_ ? capture_->python() : nullptr));
    } catch (const std::exception& e) {
      log("cannot record calling contexts: {}", e.what());
    }
  }
  if (!writer_broken_) KernelArgs::write(*writer_, pid_);  // --trace args, at exit
  write_process_row(true);
  {
    std::lock_guard lock(mutex_);
    writer_done_ = true;
  }
  wake_.notify_all();
}

void Collector::write_batch(db::RecordBatch& batch) noexcept {
  if (batch.empty()) return;
  const std::size_t n = batch.size();
  if (writer_broken_) {
    discarded_ += n;
  } else {
    try {
      writer_->write(batch);
      written_ += n;
    } catch (const std::exception& e) {
      log("cannot write to the capture ({}); further records are counted as dropped", e.what());
      writer_broken_ = true;
      discarded_ += n;
    }
  }
  batch.clear();
}

void Collector::write_process_row(bool final) noexcept {
  if (writer_broken_) return;
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
    p.dropped_records = cupti_dropped_.load() + discarded_.load() + overflow_kernels_.load() +
                        overflow_api_.load() + overflow_other_.load();
    p.buffers_used = pool_.acquisitions();
    p.records_written = written_.load();
    if (final) {
      p.end_utc_ns = utc_now_ns();
      std::vector<db::ThreadInfo> threads;
      for (const auto tid : converter_.threads()) {
        threads.push_back({pid_, tid,
                           read_first_line("/proc/self/task/" + std::to_string(tid) + "/comm")});
      }
      writer_->write_threads(threads);
      if (pool_.refusals() > 0) {
        log("the activity buffer pool ({} x {} KiB) was full {} times; records dropped: {} kernel, "
            "{} API, {} other (counted in the overflow buffers), {} more reported by CUPTI",
            config_.max_buffers, config_.buffer_kib, pool_.refusals(), overflow_kernels_.load(),
            overflow_api_.load(), overflow_other_.load(), cupti_dropped_.load());
      }
    }
    writer_->write_process(p);
  } catch (const std::exception& e) {
    log("cannot record the process: {}", e.what());
  }
}

void Collector::shutdown(int signal) noexcept {
  if (shut_down_.exchange(true)) return;
  if (static_cast<std::uint32_t>(::getpid()) != pid_) return;  // a forked child: not ours
  stop_flusher();
  RangeProfiler::finish();  // stores the counters still pending and the session rows
  KernelArgs::stop();
  // Stop recording calling contexts before the writer merges the threads' trees.
  if (contexts_enabled_.exchange(false) && subscriber_) {
    cuptiEnableDomain(0, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API);
    cuptiEnableDomain(0, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API);
    write_contexts_ = true;
  }
  // Flush outside any lock of ours: CUPTI calls buffer_completed for every pending buffer.
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  // Never hang the host program: give the writer a bounded time to finish.
  std::unique_lock lock(mutex_);
  const bool done = wake_.wait_for(lock, std::chrono::seconds(30), [&] { return writer_done_; });
  lock.unlock();
  if (done && writer_thread_.joinable()) {
    writer_thread_.join();
  } else if (!done) {
    log("the capture writer did not finish in 30 s; the capture may miss the last records");
    writer_thread_.detach();
  }
  if (signal != 0) log("flushed on signal {}", signal);
}

void Collector::flusher_loop() noexcept {
  g_flusher_thread = ::pthread_self();
  ::pthread_setname_np(::pthread_self(), "fuselens-flush");
  const auto period = std::chrono::milliseconds(config_.flush_period_ms);
  std::unique_lock lock(flusher_mutex_);
  while (!flusher_wake_.wait_for(lock, period, [&] { return flusher_stop_; })) {
    lock.unlock();
    // Default flush: every buffer whose records are all complete, full or not. No lock of ours is
    // held: CUPTI calls buffer_completed from here.
    cuptiActivityFlushAll(0);
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
  if (flusher_thread_.joinable() && !::pthread_equal(flusher_thread_.native_handle(), ::pthread_self())) {
    flusher_thread_.join();
  }
}

void Collector::at_exit() noexcept {
  if (Collector* self = g_collector.load()) self->shutdown(0);
}

void Collector::on_signal(int signal) noexcept {
  const int saved_errno = errno;
  if (::getpid() != g_owner_pid.load()) {
    reraise_with_default(signal);  // a forked child inherited the handler, not the collector
  } else {
    const unsigned char byte = static_cast<unsigned char>(signal);
    [[maybe_unused]] const auto n = ::write(g_signal_pipe[1], &byte, 1);
  }
  errno = saved_errno;
}

void Collector::on_fatal_signal(int signal) noexcept {
  // Runs on the thread that faulted (or called abort()), which may hold any lock: it only asks the
  // signal thread to flush, waits a bounded time, and re-raises with the default action.
  const int saved_errno = errno;
  const pthread_t self = ::pthread_self();
  const bool own_thread = ::pthread_equal(self, g_writer_thread.load()) ||
                          ::pthread_equal(self, g_flusher_thread.load()) ||
                          ::pthread_equal(self, g_signal_thread.load());
  if (::getpid() == g_owner_pid.load() && !own_thread && g_signal_thread_running.load()) {
    static std::atomic<bool> requested{false};
    if (!requested.exchange(true)) {
      const unsigned char byte = static_cast<unsigned char>(signal);
      [[maybe_unused]] const auto n = ::write(g_signal_pipe[1], &byte, 1);
    }
    wait_for_flush(kFatalFlushSeconds);  // other threads faulting meanwhile wait for it too
  }
  reraise_with_default(signal);
  errno = saved_errno;
}

void Collector::signal_thread_main() noexcept {
  g_signal_thread = ::pthread_self();
  ::pthread_setname_np(::pthread_self(), "fuselens-signal");
  unsigned char byte = 0;
  ssize_t n = 0;
  while ((n = ::read(g_signal_pipe[0], &byte, 1)) != 1) {
    if (n == 0 || errno != EINTR) {
      g_signal_thread_running = false;
      return;
    }
  }
  const int signal = byte;
  if (Collector* self = g_collector.load()) self->shutdown(signal);
  const unsigned char done = 1;
  [[maybe_unused]] const auto written = ::write(g_done_pipe[1], &done, 1);
  if (is_fatal(signal)) return;  // the faulting thread re-raises it
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  sigaction(signal, &action, nullptr);
  ::kill(::getpid(), signal);
}

void Collector::install_signal_handlers() noexcept {
  // Only signals the program left at their default action: a program's own handler (Python's
  // SIGINT handler, say) ends the program through exit(), and the atexit flush covers it.
  // Fatal signals likewise: a program with its own SIGSEGV handler (a crash reporter, the JVM)
  // keeps it.
  if (::pipe2(g_signal_pipe, O_CLOEXEC) != 0) return;
  if (::pipe2(g_done_pipe, O_CLOEXEC) != 0) return;
  g_owner_pid = ::getpid();
  try {
    g_signal_thread_running = true;
    std::thread(&Collector::signal_thread_main).detach();
  } catch (...) {
    g_signal_thread_running = false;
    return;  // no thread to flush: leave every signal at its default
  }
  auto install = [](int signal, void (*handler)(int), int flags) {
    struct sigaction current {};
    if (sigaction(signal, nullptr, &current) != 0 || current.sa_handler != SIG_DFL ||
        (current.sa_flags & SA_SIGINFO)) {
      return;
    }
    struct sigaction action {};
    action.sa_handler = handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = flags;
    sigaction(signal, &action, nullptr);
  };
  for (const int signal : kHandledSignals) install(signal, &Collector::on_signal, SA_RESTART);
  for (const int signal : kFatalSignals) install(signal, &Collector::on_fatal_signal, SA_ONSTACK);
}

}  // namespace fuselens::collector
