#pragma once
// Collector: the session of the CUPTI activity collector injected into a CUDA process (after
// libkineto's CuptiActivityProfiler: the session logic, with the buffers, the output sink and
// the child profilers in classes of their own).
//
// Lifecycle: InitializeInjection (called by the CUDA driver during cuInit because
// CUDA_INJECTION64_PATH names this library) calls Collector::start(), which reads the
// configuration from the environment, opens the capture made by prof-run, starts its sink and
// enables the requested activity kinds:
// - ActivityBuffers (ActivityBuffers.h): CUPTI fills buffers from a capped BufferPool;
//   completed buffers go to the sink, and records that cannot be kept are counted as dropped.
// - CaptureWriter (CaptureWriter.h), the CaptureSink: one writer thread converts the buffers
//   (ActivityConverter) and appends them to the capture (db::Writer), a transaction per buffer.
// - CallbackHandler (CallbackHandler.h): the session subscribes to CUPTI's callbacks once; its
//   trampoline walks the handlers registered at start (RangeProfiler for --metrics, KernelArgs
//   for --trace args), records calling contexts (ContextCapture) at API entry, which call made
//   each CUDA graph node (GraphNodes) and device properties when a context is created.
// - ExitGuard (ExitGuard.h): at exit (atexit), on SIGINT/SIGTERM/SIGHUP and on the fatal signals
//   SIGSEGV/SIGABRT/SIGBUS/SIGFPE/SIGILL, each when the program left it at its default action,
//   and before _exit, exit_group and exec (through the exit shim prof-run preloads), it calls
//   shutdown(), which flushes CUPTI (forced), drains the writer and records the totals; a signal
//   is then re-raised with its default action, so the exit status is the program's own.
// A flusher thread ("fuselens-flush") asks CUPTI for the completed buffers every flush period, so
// a process killed without warning (SIGKILL, or _exit without the shim) loses about one period of
// activity.
// Nothing here aborts the host program: errors are logged with a "[fuselens]" prefix and
// collection degrades; records that cannot be kept are counted as dropped. CUPTI callbacks are
// thin static trampolines; no lock is held across a CUPTI call.

#include <cupti.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "ActivityBuffers.h"
#include "CallbackHandlers.h"
#include "CallingContext.h"
#include "CaptureControl.h"
#include "CaptureSink.h"
#include "CaptureWriter.h"
#include "ContextCapture.h"
#include "ExitGuard.h"
#include "GraphNodes.h"
#include "fuselens/collector/Config.h"

namespace fuselens::collector {

class Collector final : private ExitGuard::Target,
                        private CaptureSink::Epilogue,
                        private CaptureControl::Switch {
 public:
  /// Starts collection in this process. Returns false (and logs why) when disabled or broken;
  /// the host program runs on either way.
  static bool start() noexcept;

 private:
  explicit Collector(CollectorConfig config);
  bool enable_cupti() noexcept;
  /// Selects the runtime API calls of kRuntimeWork for activity records; returns how many.
  int enable_work_runtime_api() noexcept;
  void enable_work_driver_api() noexcept;
  void enable_calling_contexts() noexcept;
  /// With calling contexts: records which traced call made each CUDA graph node (GraphNodes.h).
  void enable_graph_nodes() noexcept;
  void on_api_enter(const CUpti_CallbackData& data) noexcept;
  /// Capture control (CaptureControl.h): turns the activity kinds (but NVTX markers), the API
  /// activity selection and the calling-context callbacks on or off.
  void set_recording(bool on) noexcept override;
  void on_context_created(CUcontext context) noexcept;
  void write_process_row(bool final) noexcept;
  // Stores the rank a distributed launcher gave this process (RankEnv.h), when it set one.
  void write_rank_row() noexcept;
  /// Once per process (the first exit path); a second caller on another thread waits for the
  /// first to finish (bounded), a forked child returns at once.
  void shutdown(int signal) noexcept override;
  void shutdown_body(int signal) noexcept;
  void wait_for_shutdown() noexcept;
  /// The end-of-process records, on the writer thread: calling contexts, the handlers' rows,
  /// threads and the final process row.
  void write_final(CaptureSink& sink) noexcept override;
  void flusher_loop() noexcept;
  void stop_flusher() noexcept;

  static void CUPTIAPI on_callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                                   const void* data);

  CollectorConfig config_;
  std::uint32_t pid_;
  std::uint64_t start_utc_ns_ = 0;
  std::int64_t clock_offset_ns_ = 0;
  ActivityBuffers buffers_;
  std::unique_ptr<CaptureWriter> sink_;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  CallingContextRegistry contexts_;
  std::unique_ptr<ContextCapture> capture_;  // set before contexts_enabled_
  std::unique_ptr<GraphNodes> graph_nodes_;  // with capture_, when its callbacks could be enabled
  std::atomic<bool> contexts_enabled_{false};
  // Whether recording is on (set_recording): under --sample the launch callbacks stay enabled
  // while it is off, to count, and the calling contexts are not recorded then.
  std::atomic<bool> recording_{true};

  CallbackHandlers handlers_;  // the callback walk, filled at start (enable_cupti)

  // What capture control switches (filled once in enable_cupti, read by set_recording)
  bool controlled_ = false;
  const CaptureControl* control_ = nullptr;  // owned by handlers_ once started; null otherwise
  // How API activity follows the windows (CollectorConfig::window_api): the runtime selection
  // switched with them unless "filter"; the driver selection too only in "both" (otherwise left
  // on, its records outside windows dropped by the writer).
  bool switch_api_ = true;
  bool switch_driver_api_ = false;
  std::vector<CUpti_ActivityKind> switched_kinds_;
  std::vector<CUpti_CallbackId> runtime_api_ids_, driver_api_ids_, context_ids_;
  CUpti_CallbackDomain context_domain_ = CUPTI_CB_DOMAIN_DRIVER_API;

  std::atomic<std::uint64_t> devices_seen_{0};  // bit per ordinal < 64

  std::mutex flusher_mutex_;  // guards flusher_stop_
  std::condition_variable flusher_wake_;
  bool flusher_stop_ = false;
  std::thread flusher_thread_;  // periodic default flush (flusher_loop)

  std::atomic<int> runtime_version_{0};
  std::atomic<bool> shut_down_{false};
  std::atomic<pthread_t> shutdown_thread_{};  // the thread running shutdown_body
  std::atomic<bool> shutdown_done_{false};
  bool write_contexts_ = false;  // set by shutdown() before it finalizes the sink
};

}  // namespace fuselens::collector
