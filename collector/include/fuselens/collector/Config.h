#pragma once
// Collector configuration: what `prof-run` passes to the injected collector through environment
// variables, parsed and validated on both sides by the same code. No CUDA or CUPTI here.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fuselens/db/Glob.h"

namespace fuselens::collector {

// Environment variables read by the collector (set by prof-run).
inline constexpr const char* kEnvOutput = "FUSELENS_OUTPUT";           // capture path (absolute)
inline constexpr const char* kEnvTrace = "FUSELENS_TRACE";             // trace groups, see below
inline constexpr const char* kEnvBufferKiB = "FUSELENS_BUFFER_KIB";    // one activity buffer
inline constexpr const char* kEnvMaxBuffers = "FUSELENS_MAX_BUFFERS";  // pool cap
inline constexpr const char* kEnvFlushMs = "FUSELENS_FLUSH_MS";        // periodic flush period
inline constexpr const char* kEnvMetrics = "FUSELENS_METRICS";  // counter set (RangeProfiler.h)
inline constexpr const char* kEnvMetricReplay = "FUSELENS_METRIC_REPLAY";  // kernel|application
inline constexpr const char* kEnvMetricPass = "FUSELENS_METRIC_PASS";      // application: run index
inline constexpr const char* kEnvCacheControl = "FUSELENS_CACHE_CONTROL";  // all|none
inline constexpr const char* kEnvContextMethod = "FUSELENS_CONTEXT_METHOD";  // cached|unwind|none
inline constexpr const char* kEnvTorchModules = "FUSELENS_TORCH_MODULES";    // frames|hooks|off
inline constexpr const char* kEnvPythonFrames = "FUSELENS_PYTHON_FRAMES";    // 1 or 0 (default)
inline constexpr const char* kEnvContextStats = "FUSELENS_CONTEXT_STATS";    // 1: log cache counts
inline constexpr const char* kEnvPerProcess = "FUSELENS_PER_PROCESS";  // 1: a capture per process
inline constexpr const char* kEnvExitShim = "FUSELENS_EXIT_SHIM";    // 0: no exit shim (default 1)
inline constexpr const char* kEnvApiSelect = "FUSELENS_API_SELECT";  // kind (default) | ids
inline constexpr const char* kEnvMode = "FUSELENS_MODE";             // trace (default) | aggregate
inline constexpr const char* kEnvAggregateKeepTrace = "FUSELENS_AGGREGATE_KEEP_TRACE";  // 1 or 0
inline constexpr const char* kEnvControlApi =
    "FUSELENS_CONTROL_API";  // runtime (default)|filter|both
// Capture control (docs/capture-control.md; prof-run --capture-range, --capture-range-end,
// --delay, --duration, --steps, --step-range).
inline constexpr const char* kEnvCaptureRange = "FUSELENS_CAPTURE_RANGE";         // see below
inline constexpr const char* kEnvCaptureRangeEnd = "FUSELENS_CAPTURE_RANGE_END";  // stop|repeat[:N]
inline constexpr const char* kEnvDelayMs = "FUSELENS_DELAY_MS";        // ms after the launch
inline constexpr const char* kEnvDurationMs = "FUSELENS_DURATION_MS";  // ms of recording
inline constexpr const char* kEnvSteps = "FUSELENS_STEPS";           // WAIT:WARMUP:ACTIVE[:REPEAT]
inline constexpr const char* kEnvStepRange = "FUSELENS_STEP_RANGE";  // glob of the step ranges
inline constexpr const char* kEnvStartUtcNs = "FUSELENS_START_UTC_NS";  // prof-run's launch time
inline constexpr const char* kEnvSample = "FUSELENS_SAMPLE";            // 1/N: trace one step in N
// Which launches get counters (LaunchFilter.h; prof-run --kernel-name, --kernel-name-base,
// --launch-skip, --launch-count, --nvtx-include, --nvtx-exclude). Empty or unset: no filter.
inline constexpr const char* kEnvKernelName = "FUSELENS_KERNEL_NAME";           // NAME or regex:RE
inline constexpr const char* kEnvKernelNameBase = "FUSELENS_KERNEL_NAME_BASE";  // function|...
inline constexpr const char* kEnvLaunchSkip = "FUSELENS_LAUNCH_SKIP";           // whole number
inline constexpr const char* kEnvLaunchSkipBeforeMatch = "FUSELENS_LAUNCH_SKIP_BEFORE_MATCH";
inline constexpr const char* kEnvLaunchCount = "FUSELENS_LAUNCH_COUNT";  // whole number, >= 1
inline constexpr const char* kEnvNvtxInclude = "FUSELENS_NVTX_INCLUDE";  // expressions, one a line
inline constexpr const char* kEnvNvtxExclude = "FUSELENS_NVTX_EXCLUDE";  // expressions, one a line
// Counter replay progress on stderr, one line per profiled launch (RangeProfiler.h, "Progress"):
// "1" or "always": always; "0" or "never": never; unset, "" or "auto": only when stderr is a
// terminal. The same values and meanings as the tools' progress line, which reads the same
// variable (tools/common/ProgressLine.h, parse_progress_mode; docs/terminal.md).
inline constexpr const char* kEnvProgress = "FUSELENS_PROGRESS";

/// Trace groups, a bit each. "cuda": kernels, memcpy, memset; "sync": CUPTI's synchronization
/// records (stream, event and context synchronizations, also the implicit ones inside other calls;
/// opt-in: CUPTI's own cost of them is 13-30 % of a small PyTorch CNN step, as much as everything
/// else FuseLens records together, docs/pytorch-step-budget.md, "Where a PyTorch step's overhead
/// goes"; the explicit synchronization calls are recorded by "api" anyway, as Nsight Systems
/// leaves CUDA event tracing off by default for the same reason); "memory":
/// allocations and frees; "api": the CUDA runtime and driver API calls that launch, copy, set,
/// allocate, free or synchronize (so every kernel, copy and memset joins its launch call, kernels
/// launched through the driver API as Triton and parts of PyTorch do included); "runtime": every
/// CUDA runtime API call (cudaGetDevice, cudaStreamIsCapturing, ...: PyTorch makes about ten per
/// kernel, and tracing each costs CUPTI a record, docs/BENCHMARKS.md); "driver": every CUDA driver
/// API call, including those the runtime makes internally (about 2 us more per runtime launch on
/// an H100, docs/BENCHMARKS.md); "nvtx": NVTX ranges and marks; "overhead": CUPTI's own overhead
/// records; "context": the calling context (native call stack) of every launch, copy, memset,
/// allocation and synchronization API call; "args": the values of each kernel launch's 8-byte
/// parameters (device-pointer candidates, table kernel_arg; collector/src/KernelArgs.h), which
/// tell the analyzer which kernels share a buffer. The default is everything but "runtime",
/// "driver", "args" and "sync" (opt-in: the default launch path does not pay for them).
enum TraceGroup : std::uint32_t {
  kTraceCuda = 1u << 0,
  kTraceMemory = 1u << 1,
  kTraceApi = 1u << 2,
  kTraceDriver = 1u << 3,
  kTraceNvtx = 1u << 4,
  kTraceOverhead = 1u << 5,
  kTraceContext = 1u << 6,
  kTraceArgs = 1u << 7,
  kTraceRuntime = 1u << 8,
  kTraceSync = 1u << 9,
  kTraceAll = (1u << 10) - 1,
  kTraceDefault = kTraceAll & ~kTraceDriver & ~kTraceArgs & ~kTraceRuntime & ~kTraceSync,
};

/// How the "context" group obtains the native stack at an API call
/// (collector/src/ContextCapture.h): Cached (the default): a per-thread cache of checked call paths
/// keyed by the stack pointer, unwinding (libunwind unw_step) only on a miss; Unwind: libunwind's
/// unw_backtrace at every call (the first method, for comparison); None: no native stack (measures
/// the callback alone).
enum class ContextMethod { Cached, Unwind, None };

/// Nsight Compute's --kernel-name-base: which form of a kernel's name --kernel-name matches
/// (LaunchFilter.h): the bare function name (the default), the demangled signature, the mangled
/// name.
enum class KernelNameBase { Function, Demangled, Mangled };

/// Which launches get counters, as the user asked (prof-run's filter options; LaunchFilter.h has
/// the semantics, after Nsight Compute's).
struct LaunchFilterSpec {
  std::string kernel_name;  ///< "" (every kernel), NAME (exact) or "regex:RE"
  KernelNameBase name_base = KernelNameBase::Function;
  std::uint64_t launch_skip = 0;
  std::uint64_t launch_skip_before_match = 0;  ///< launches of any kernel skipped first
  std::uint64_t launch_count = 0;              ///< 0: no limit
  std::vector<std::string> nvtx_include, nvtx_exclude;

  /// True when anything here limits which launches are profiled.
  bool any() const {
    return !kernel_name.empty() || launch_skip > 0 || launch_skip_before_match > 0 ||
           launch_count > 0 || !nvtx_include.empty() || !nvtx_exclude.empty();
  }
};

/// Thrown by the parsers for a bad value; the message is one line naming the value.
class ConfigError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// What opens a recording window (Nsight Systems' --capture-range): NVTX ranges whose message is
/// `name` (in the default domain when `domain` is empty, in the domain named `domain`, or in any
/// domain for "*"), or the CUDA profiler API (cudaProfilerStart/cuProfilerStart to
/// cudaProfilerStop/cuProfilerStop).
struct CaptureRange {
  enum class Kind { None, Nvtx, ProfilerApi };
  Kind kind = Kind::None;
  std::string name, domain;
};
/// Parses "nvtx:NAME", "nvtx:NAME@DOMAIN", "nvtx:NAME@*" or "cudaProfilerApi". Throws
/// ConfigError for anything else (an empty NAME or DOMAIN, another kind).
CaptureRange parse_capture_range(std::string_view text);
/// Parses --capture-range-end: "stop" (one window: 1), "repeat" (every range: 0) or "repeat:N"
/// (N windows, N >= 1). Throws ConfigError.
std::uint32_t parse_capture_range_end(std::string_view text);

/// --steps WAIT:WARMUP:ACTIVE[:REPEAT] on the step markers, after torch.profiler.schedule: skip
/// `wait` steps, then `warmup` steps (not recorded: PyTorch records and discards them), record
/// `active` steps; the cycle repeats `repeat` times (0: until the program ends).
struct StepSchedule {
  std::uint32_t wait = 0, warmup = 0, active = 1, repeat = 0;
};
/// Parses "W:U:A" or "W:U:A:R" (decimal, ACTIVE >= 1, each below 10^9). Throws ConfigError.
StepSchedule parse_steps(std::string_view text);

/// --sample 1/N (docs/capture-control.md, "Sampled tracing"): trace one step in N on the step
/// ranges of --steps (step k, 1-based, traced when k % N == 0: the schedule N-1:0:1 of
/// --steps), count the launch calls of every step. Parses "1/N" with N a decimal whole number in
/// 1..1000000 (no sign, spaces or leading zero); returns N. Throws ConfigError for anything else,
/// naming a time duty cycle ("10ms/100ms") as not supported.
std::uint32_t parse_sample(std::string_view text);

/// Glob match, `*` and `?`, ASCII case-insensitive (db/Glob.h: iterative, no allocation; the
/// collector's NVTX callbacks use it).
using db::glob_match_nocase;

/// Parses a comma-separated list of group names ("cuda,nvtx", "all"). When every item starts with
/// '+' or '-' the list changes the default instead ("+args": the default and args; "-context,
/// +driver"). Throws ConfigError on an unknown or empty name, or a list mixing both forms.
std::uint32_t parse_trace(std::string_view list);
/// The canonical comma-separated spelling of a group mask.
std::string trace_to_string(std::uint32_t mask);
/// Parses "cached", "unwind" or "none". Throws ConfigError otherwise.
ContextMethod parse_context_method(std::string_view name);

struct CollectorConfig {
  std::string output;  ///< capture file; empty disables the collector
  std::uint32_t trace = kTraceDefault;
  std::uint32_t buffer_kib = 4096;  ///< bytes per activity buffer / 1024
  /// Pool cap: at most (max_buffers + 2) * buffer_kib KiB held (the 2: BufferPool.h's overflow
  /// buffers, in which records that find the pool full are counted as dropped).
  std::uint32_t max_buffers = 64;
  /// Every this many ms the collector asks CUPTI for the buffers whose records are all complete
  /// (cuptiActivityFlushAll(0), full or not) and the writer stores them: the activity a process
  /// loses when it dies without any flush (SIGKILL, _exit) is about this period plus one write.
  std::uint32_t flush_period_ms = 500;
  /// Hardware counter set per kernel launch ("roofline"), empty for none. Costly: every kernel
  /// is replayed once per counter pass (collector/src/RangeProfiler.h).
  std::string metrics;
  /// How the counter passes are replayed (kEnvMetricReplay; prof-run --replay), after Nsight
  /// Compute's --replay-mode: "kernel" (CUPTI replays each launch inside the launch call, saving
  /// and restoring the memory it touches) or "application" (prof-run runs the program once per
  /// single-pass group of counters; this process collects group `metric_pass`, and no memory is
  /// saved or restored). RangeProfiler.h has both.
  std::string metric_replay = "kernel";
  /// Application replay: the index of the counter group this run collects (kEnvMetricPass,
  /// 0-based).
  std::uint32_t metric_pass = 0;
  /// Caches before each counter pass (kEnvCacheControl; prof-run --cache-control), after Nsight
  /// Compute's --cache-control and its default "all": "all" writes back and evicts the GPU's L2
  /// and evicts the SMs' instruction caches before each pass (collector/src/L2Flush.h; under
  /// kernel replay the collector replays the launch itself, restoring its memory before each pass:
  /// collector/src/LaunchReplay.h), "none" leaves them as the program (and, under kernel replay,
  /// CUPTI's save and restore) left them.
  std::string cache_control = "all";
  /// Which launches get counters (kEnvKernelName ... kEnvNvtxExclude); the others run unreplayed
  /// and have no counters (LaunchFilter.h).
  LaunchFilterSpec filter;
  /// Replay progress lines (kEnvProgress): true always ("1", "always"), false never ("0",
  /// "never"), unset ("", "auto"): when stderr is a terminal.
  std::optional<bool> progress;
  /// Native stack method of the "context" group (kEnvContextMethod: cached, unwind or none).
  ContextMethod context_method = ContextMethod::Cached;
  /// Python frames in calling contexts when the process runs CPython (kEnvPythonFrames: 1, 0 or
  /// unset). Unset (the default): on where the frames are read as memory (CPython 3.11 and
  /// 3.12, collector/src/PythonLayout.h; checked on the H100 with PyTorch); 1: also on other
  /// versions, through CPython's C API and only on threads that hold the GIL; 0: off.
  std::optional<bool> python_frames;
  /// The PyTorch module view's collector part (kEnvTorchModules; prof-run --torch-modules):
  /// "frames" (the default; also 1 and on) records the nn.Module instance of every
  /// Module._call_impl frame and each call's autograd sequence numbers (ContextCapture.h);
  /// "hooks" (prof-run's Python hooks record NVTX ranges instead), "off" and 0 record neither.
  bool torch_module_frames = true;
  /// Log the calling-context counts (calls, stack-cache hits, unwinds) at exit
  /// (kEnvContextStats: 1 or 0).
  bool context_stats = false;
  /// One capture per process (kEnvPerProcess: 1 or 0; prof-run --per-process): each process
  /// creates per_process_output(output, pid), copying the run row of `output`, instead of
  /// appending to `output`.
  bool per_process = false;
  /// The exit shim (kEnvExitShim: 1, the default, or 0): prof-run preloads
  /// libfuselens_exit_shim.so so that _exit, exit_group and exec flush the capture first
  /// (collector/shim/ExitShim.h); 0 leaves it out, and the collector does not ask for it.
  bool exit_shim = true;
  /// How the "api" group selects the runtime calls it records (kEnvApiSelect), both giving the
  /// same records: "kind" (the default) enables CUPTI's runtime API kind and switches every call
  /// outside the selection off (cuptiActivityEnableRuntimeApi), "ids" switches the selected calls
  /// on alone. The first costs a PyTorch step no more than the second in every measurement made
  /// (docs/pytorch-step-budget.md, "Capture windows"), and it is what opening a window does.
  /// Counter runs (`metrics` set) keep the per-call selection they were validated with.
  enum class ApiSelect { kKind, kIds };
  ApiSelect api_select = ApiSelect::kKind;
  /// How a capture window switches the API records (kEnvControlApi): under --sample, unless the
  /// variable is set, "driver-ids" (the off state between sampled steps must be nearly free:
  /// docs/capture-control.md, "Sampled tracing"); otherwise "runtime" (the default)
  /// switches the runtime selection with the window and leaves the driver selection on, its
  /// records outside windows dropped by the writer; "filter" leaves both on and filtered;
  /// "both" switches both kinds, which CUPTI makes costly: with the driver kind enabled a
  /// PyTorch CNN step ran 17 points slower inside windows than with it left alone (H100,
  /// docs/pytorch-step-budget.md, "Capture windows"). Selecting per call alone does not bring
  /// the records back once switched off (measured: no API rows in windows), so it is no option
  /// for a capture; "driver-ids" does it for the driver selection alone, for overhead
  /// measurements only (mlp_train.py --ab-block): the idle state then holds no API selection and
  /// no activity kind (NVTX switched too), and driver-API launch records inside windows may be
  /// lost.
  enum class WindowApi { kRuntime, kFilter, kBoth, kDriverIds };
  WindowApi window_api = WindowApi::kRuntime;

  /// Aggregate mode (kEnvMode "aggregate"; prof-run --mode aggregate; docs/aggregate.md): the
  /// writer thread keeps the whole run's statistics per distinct context (db/Aggregate.h) and
  /// stores trace rows only inside the capture windows below, which then mark the windows
  /// without switching recording off ("trace", the default: every record is a row).
  bool aggregate = false;
  /// With aggregate: also store every record as a row (kEnvAggregateKeepTrace=1), to check the
  /// aggregates against the trace of the same run (scripts/device/compare_aggregate.py); the
  /// capture then grows as a trace does.
  bool aggregate_keep_trace = false;

  // Capture control (docs/capture-control.md). Without any of these the whole run is recorded.
  CaptureRange capture_range;
  std::uint32_t capture_range_windows = 1;  ///< parse_capture_range_end: 0 = unlimited
  std::uint64_t delay_ms = 0;               ///< record from this long after prof-run's launch
  std::uint64_t duration_ms = 0;            ///< then for this long (0: to the end)
  std::optional<StepSchedule> steps;        ///< --steps
  std::uint32_t sample_every = 0;           ///< --sample 1/N: N; 0: not sampling
  std::string step_range;  ///< glob of the step ranges; empty: ProfilerStep#*, *step*, *iteration*
  std::uint64_t start_utc_ns = 0;  ///< prof-run's launch time (0: unknown, the collector's start)

  /// True when anything above limits what is recorded.
  bool controlled() const {
    return capture_range.kind != CaptureRange::Kind::None || delay_ms > 0 || duration_ms > 0 ||
           steps.has_value() || sample_every > 0;
  }

  /// Throws ConfigError when a value is outside its documented range
  /// (buffer 64 KiB..256 MiB, 2..4096 buffers, flush 10..60000 ms), `metrics` names an
  /// unknown set (known: roofline), `metric_replay` is not kernel|application, `cache_control`
  /// is not all|none; or the capture
  /// control mixes kinds (a capture range, --steps and --sample with each other,
  /// --delay/--duration with any of them, a window
  /// count other than 1 without a capture range, counters with any capture control); or a launch
  /// filter is given without counters or does not compile (LaunchFilter's constructor); or
  /// aggregate mode is asked for with counters.
  void validate() const;
  /// Reads the kEnv* variables; unset ones keep their defaults. Throws ConfigError.
  static CollectorConfig from_environment();
};

/// The capture of process `pid` under --per-process: `output` with ".<pid>" inserted before the
/// extension of its file name ("/tmp/run.sqlite", 42 -> "/tmp/run.42.sqlite"; "/tmp/run" ->
/// "/tmp/run.42"; a leading dot does not start an extension: ".run" -> ".run.42").
std::string per_process_output(const std::string& output, std::uint32_t pid);
/// The pid when `candidate` is per_process_output(output, pid) for some pid (decimal, no sign, no
/// leading zero), else nullopt. Compares the paths as strings: pass both in the same form.
std::optional<std::uint32_t> per_process_pid(const std::string& output,
                                             const std::string& candidate);

}  // namespace fuselens::collector
