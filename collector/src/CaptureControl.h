#pragma once
// CaptureControl: which spans of the run the collector records (prof-run --capture-range,
// --capture-range-end, --delay, --duration, --steps; docs/capture-control.md), with Nsight
// Systems' semantics where nsys has them and torch.profiler.schedule's for --steps.
//
// A window opens and closes on the program's thread that makes the triggering call, inside the
// CUPTI callback of that call: the push (or start) of an NVTX range whose message is the capture
// range's NAME, cuProfilerStart (cudaProfilerStart goes through it), the push of a step range
// that begins an active step; it closes at the matching pop (or end), cuProfilerStop, the pop of
// the last active step of a cycle. Time windows (--delay/--duration) open and close on a timer
// thread. Opening and closing call Switch::set_recording, which turns the collector's activity
// kinds, API activity and calling-context callbacks on or off; outside windows only the
// callbacks that detect the next window remain (NVTX, the profiler API). A compare-and-swap on
// the state makes one thread do each switch; no lock is held across a CUPTI call, nothing is
// allocated on a callback (the window log is a fixed array).
//
// --sample 1/N is the schedule N-1:0:1 of --steps (step k, 1-based, traced when k % N == 0),
// plus StepLaunchCounts: the driver API callbacks of the launch calls (cuLaunch*, cuGraphLaunch*,
// cuMemcpy*, cuMemset*) stay enabled between the traced steps, and every step's calls are counted
// (counts_callback tells the session which callback ids to leave on when recording stops).
//
// NVTX: ASCII messages (nvtxRangePushA/StartA, and the Ex forms with NVTX_MESSAGE_TYPE_ASCII),
// domains named by nvtxDomainCreateA; registered and wide-character messages are not matched.
// Nesting is tracked per thread up to depth 64 across all domains.

#include <cupti.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "CallbackHandler.h"
#include "CaptureWriter.h"
#include "StepLaunchCounts.h"
#include "fuselens/collector/Config.h"

namespace fuselens::collector {

class CaptureControl final : public CallbackHandler, public CaptureWriter::ApiFilter {
 public:
  /// What a window switches (the session, Collector.h).
  class Switch {
   public:
    /// Turns recording on or off; called by one thread at a time.
    virtual void set_recording(bool on) noexcept = 0;

   protected:
    ~Switch() = default;
  };

  CaptureControl(const CollectorConfig& config, Switch& target, std::uint32_t pid);
  ~CaptureControl() override;

  /// Enables the callbacks the windows need on `subscriber` and starts the timer thread for
  /// --delay/--duration. Returns false (and logs) when the triggers cannot be observed.
  bool start(CUpti_SubscriberHandle subscriber) noexcept;
  /// Whether the run starts inside a window (--duration without --delay).
  bool records_at_start() const noexcept;

  void on_callback(CUpti_CallbackDomain domain, CUpti_CallbackId id,
                   const void* data) noexcept override;
  void finish() noexcept override;
  void write_final(CaptureSink& sink) noexcept override;
  /// True when `start_ns` (CUPTI ns) lies in a window opened so far (an open one has no end).
  bool keeps(std::uint64_t start_ns) const noexcept override;
  /// --sample: true for a driver API callback id whose calls are counted (its callback must stay
  /// enabled while recording is off).
  bool counts_callback(CUpti_CallbackDomain domain, CUpti_CallbackId id) const noexcept;

 private:
  struct WindowEntry {  // written by the switching thread, read by the writer thread
    std::atomic<std::uint64_t> start_ns{0}, end_ns{0};
  };
  static constexpr std::size_t kMaxWindows = 4096;
  static constexpr std::size_t kMaxDomains = 64;

  void open() noexcept;
  void close() noexcept;
  void on_nvtx(CUpti_CallbackId id, const void* data) noexcept;
  void on_push(const void* domain, bool named_domain, const char* message) noexcept;
  void on_pop() noexcept;
  void on_start(const void* domain, bool named_domain, const char* message,
                std::uint64_t range_id) noexcept;
  void on_end(std::uint64_t range_id) noexcept;
  bool capture_range_matches(const void* domain, bool named_domain,
                             const char* message) const noexcept;
  bool step_matches(const char* message) noexcept;
  /// A step begins: whether it is active under the schedule (and opens the window if so).
  bool step_begins() noexcept;
  void step_ends(bool active, std::uint64_t position) noexcept;
  void timer_loop() noexcept;

  CollectorConfig config_;
  Switch& target_;
  std::uint32_t pid_;
  std::string reason_;

  std::atomic<int> state_{0};  // 0 off, 1 on, 2 switching
  std::atomic<std::uint32_t> windows_opened_{0};
  std::atomic<bool> finished_{false};
  std::array<WindowEntry, kMaxWindows> windows_;
  std::atomic<std::size_t> window_count_{0};  // entries [0, count) started
  std::atomic<std::uint64_t> windows_lost_{0};

  // nvtxDomainCreateA: handle -> name (names copied at creation, off the launch path)
  std::array<std::atomic<const void*>, kMaxDomains> domain_handles_{};
  std::array<std::string, kMaxDomains> domain_names_;
  std::atomic<std::size_t> domain_count_{0};

  // nvtx start/end ranges that opened the window (0: none)
  std::atomic<std::uint64_t> open_range_id_{0};
  // --steps: the thread whose step ranges count, steps seen, the default pattern locked
  std::atomic<std::uint64_t> step_thread_{0};
  std::atomic<std::uint64_t> steps_seen_{0};
  std::atomic<int> step_pattern_{-1};

  // --sample: the launch calls of every step (null without --sample), and which driver callback
  // ids it counts (bit per id below StepLaunchCounts::kMaxIds; set in start, read-only after)
  std::unique_ptr<StepLaunchCounts> counts_;
  std::array<bool, StepLaunchCounts::kMaxIds> counted_{};

  std::mutex timer_mutex_;  // guards timer_stop_ (never held across a CUPTI call)
  std::condition_variable timer_wake_;
  bool timer_stop_ = false;
  std::thread timer_;
};

}  // namespace fuselens::collector
