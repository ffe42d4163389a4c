#pragma once
// The range profiler's internals shared by its two files (not a public header): RangeProfiler.cpp
// drives the profiler per launch (configure, start, stop, decode, the collector's replay),
// RangeProfilerSetup.cpp sets a context's session up (chip, counter availability, metrics,
// config image and passes, application replay's single-pass groups, the L2 flush). Everything
// here runs inside CUPTI callbacks or at start and finish: no exception leaves the collector
// (Failure is caught in RangeProfiler.cpp and ends the session with its message).

#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_range_profiler.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "CounterFilter.h"
#include "DeviceCheckpoint.h"
#include "L2Flush.h"
#include "fuselens/db/RooflineStore.h"
#include "fuselens/db/Writer.h"

namespace fuselens::collector {
namespace range_profiler {

inline constexpr std::size_t kMaxRanges = 16;  // per decode; one launch normally makes one

/// "CALL failed: CUPTI's text", with the remedy when counters are restricted to administrators.
std::string cupti_message(CUptiResult result, const char* call);

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

inline void call(CUptiResult result, const char* what) {
  if (result != CUPTI_SUCCESS) throw Failure{cupti_message(result, what)};
}
#define FUSELENS_RP_CALL(expr) call((expr), #expr)

/// The range profiler of one CUDA context.
struct Session {
  CUcontext context = nullptr;
  CUpti_Profiler_Host_Object* host = nullptr;
  CUpti_RangeProfiler_Object* profiler = nullptr;
  std::string chip;  // the host object keeps pointers to these two
  std::vector<std::uint8_t> availability;
  std::vector<std::string> metrics;
  std::vector<const char*> metric_names;
  std::vector<std::uint8_t> config, counter_data;
  db::MetricSessionRecord record;
  std::unique_ptr<L2Flush> flush;  // cache control "all"
  bool started = false;            // gated modes: a launch's pass is open
  // Kernel replay with cache control "all" (LaunchReplay.h): the launch in progress is replayed
  // by the collector; its passes' memory is saved in `memory`.
  bool user_replay = false;
  bool awaiting_decode = false;  // all passes ran before the program's launch: decode at its exit
  bool warmed_up = false;        // the context's first replay ran its passes once, uncounted
  DeviceCheckpoint memory;
  std::int64_t cupti_replayed = 0;  // cache control "all", but CUPTI's kernel replay (fallbacks)
  bool save_failure_logged = false;
  bool relaunch_failure_logged = false;
  std::int64_t launches_without_range = 0;
  std::int64_t launches_in_capture = 0;  // made while a stream capture was open: no counters
  int captures_open = 0;                 // cuStreamBeginCapture .. cuStreamEndCapture pairs
  bool active = false;
};

// What a driver callback id is to the range profiler, by its name: a kernel launch (cuLaunch*,
// not cuLaunchHostFunc) or the start / end of a stream capture. Classified once at start into
// State::kinds (the callback runs on every launch; a name lookup there would be per launch).
enum class CallbackKind : std::uint8_t { Other, KernelLaunch, CaptureBegin, CaptureEnd };

}  // namespace range_profiler

/// Everything the range profiler keeps; one per RangeProfiler, made by start().
struct RangeProfilerState {
  using Session = range_profiler::Session;
  using CallbackKind = range_profiler::CallbackKind;
  std::mutex mutex;
  std::string capture;
  std::uint32_t pid = 0;
  db::MetricSet set;
  bool application = false;   // --replay application (RangeProfiler.h)
  std::uint32_t pass = 0;     // application replay: the counter group this run collects
  bool flush_caches = false;  // --cache-control all (both replay modes)
  // Which launches get counters, and progress lines (CounterFilter.h); set by start().
  std::unique_ptr<CounterFilter> filter;
  // Kernel replay with launch filters or cache control "all": the profiler runs only from a
  // chosen launch's entry to its exit (as under application replay), so the other launches are
  // not replayed, and the collector can act between passes.
  bool gated = false;
  std::atomic<bool> exhausted{false};  // --launch-count reached: later launches are left alone
  std::mutex launch_gate;  // application replay, gated kernel replay: a launch's entry to exit
  std::vector<std::unique_ptr<Session>> sessions;
  std::vector<db::KernelMetricRecord> pending;
  db::RecordBatch kernels;  // kernel rows of the profiled launches (see RangeProfiler.h)
  std::unique_ptr<db::RooflineWriter> writer;
  std::unique_ptr<db::Writer> kernel_writer;
  bool profiler_initialized = false;
  bool finished = false;
  std::array<CallbackKind, CUPTI_DRIVER_TRACE_CBID_SIZE> kinds{};  // by driver callback id
};

namespace range_profiler {

using State = RangeProfilerState;

/// Sets up the session of context `s.context`: initializes the profiler once per process, reads
/// the chip and counter availability, keeps the set's supported metrics (a required one missing
/// throws Failure), builds the config image and counts its passes (application replay: this run's
/// single-pass group), creates the L2 flush under cache control "all", enables the range profiler
/// and sizes the counter data; logs one line describing it. Throws Failure.
void initialize(State& state, Session& s);

/// What driver callback `id` is to the range profiler, by its name (called once per id at start).
CallbackKind classify(CUpti_CallbackId id);

}  // namespace range_profiler
}  // namespace fuselens::collector
