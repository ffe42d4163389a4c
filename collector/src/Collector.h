#pragma once
// Collector: the CUPTI activity collector injected into a CUDA process.
//
// Lifecycle: InitializeInjection (called by the CUDA driver during cuInit because
// CUDA_INJECTION64_PATH names this library) calls Collector::start(), which reads the
// configuration from the environment, opens the capture made by prof-run, registers the
// activity buffer callbacks and enables the requested activity kinds. CUPTI fills buffers from a
// capped BufferPool; completed buffers go to one writer thread that converts them
// (ActivityConverter) and appends them to the capture (db::Writer), a transaction per buffer.
// A flusher thread asks CUPTI for the completed buffers every flush period, so a process killed
// without warning (SIGKILL, _exit) loses about one period of activity. At exit (atexit), on
// SIGINT/SIGTERM/SIGHUP, and on the fatal signals SIGSEGV/SIGABRT/SIGBUS/SIGFPE/SIGILL, each when
// the program left it at its default action, the collector flushes CUPTI (forced), drains the
// writer and records its totals; a signal is then re-raised with its default action, so the exit
// status is the program's own. A fatal signal waits at most kFatalFlushSeconds for that flush on
// the faulting thread. Handlers reached in a forked child (which has no collector) only re-raise.
// Nothing here aborts the host program: errors are logged with a
// "[fuselens]" prefix and collection degrades; records that cannot be kept are counted as dropped.
// CUPTI callbacks are thin static trampolines; no lock is held across a CUPTI call.

#include <cupti.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "ActivityConverter.h"
#include "BufferPool.h"
#include "CallingContext.h"
#include "ContextCapture.h"
#include "fuselens/collector/Config.h"
#include "fuselens/db/Writer.h"

namespace fuselens::collector {

class Collector {
 public:
  /// Starts collection in this process. Returns false (and logs why) when disabled or broken;
  /// the host program runs on either way.
  static bool start() noexcept;

  /// The longest a thread that received a fatal signal waits for the capture to be flushed
  /// before the signal is re-raised.
  static constexpr int kFatalFlushSeconds = 10;

 private:
  struct Completed {
    std::uint8_t* buffer;
    std::size_t valid_size;
  };

  explicit Collector(CollectorConfig config);
  bool enable_cupti() noexcept;
  /// Selects the runtime API calls of kRuntimeWork for activity records; returns how many.
  int enable_work_runtime_api() noexcept;
  void enable_work_driver_api() noexcept;
  void enable_calling_contexts() noexcept;
  void on_api_enter(const CUpti_CallbackData& data) noexcept;
  void writer_loop() noexcept;
  void write_batch(db::RecordBatch& batch) noexcept;
  void write_process_row(bool final) noexcept;
  void shutdown(int signal) noexcept;
  void flusher_loop() noexcept;
  void stop_flusher() noexcept;
  void on_context_created(CUcontext context) noexcept;

  static void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size,
                                        std::size_t* max_records);
  static void CUPTIAPI buffer_completed(CUcontext context, std::uint32_t stream_id,
                                        std::uint8_t* buffer, std::size_t size,
                                        std::size_t valid_size);
  static void CUPTIAPI on_callback(void* userdata, CUpti_CallbackDomain domain,
                                   CUpti_CallbackId id, const void* data);
  static void at_exit() noexcept;
  static void install_signal_handlers() noexcept;
  static void on_signal(int signal) noexcept;
  static void on_fatal_signal(int signal) noexcept;
  static void signal_thread_main() noexcept;

  CollectorConfig config_;
  std::uint32_t pid_;
  std::uint64_t start_utc_ns_ = 0;
  std::int64_t clock_offset_ns_ = 0;
  BufferPool pool_;
  std::unique_ptr<db::Writer> writer_;
  ActivityConverter converter_;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  CallingContextRegistry contexts_;
  std::unique_ptr<ContextCapture> capture_;  // set before contexts_enabled_
  std::atomic<bool> contexts_enabled_{false};

  std::mutex mutex_;  // guards queue_, devices_, stop_, writer_done_
  std::condition_variable wake_;
  std::vector<Completed> queue_;
  std::vector<db::DeviceInfo> devices_;
  std::uint64_t devices_seen_ = 0;  // bit per ordinal < 64
  bool stop_ = false;
  bool writer_done_ = false;
  std::thread writer_thread_;

  std::mutex flusher_mutex_;  // guards flusher_stop_
  std::condition_variable flusher_wake_;
  bool flusher_stop_ = false;
  std::thread flusher_thread_;  // periodic default flush (flusher_loop)

  std::atomic<std::uint64_t> cupti_dropped_{0};
  std::atomic<std::uint64_t> discarded_{0};   // records converted but not stored (write errors)
  // Records CUPTI wrote into the pool's overflow buffers (pool full): counted, not stored.
  std::atomic<std::uint64_t> overflow_kernels_{0}, overflow_api_{0}, overflow_other_{0};
  std::atomic<std::uint64_t> written_{0};
  std::atomic<int> runtime_version_{0};
  std::atomic<bool> shut_down_{false};
  bool writer_broken_ = false;  // writer thread only
  bool write_contexts_ = false;  // set by shutdown() before it wakes the writer to stop
};

}  // namespace fuselens::collector
