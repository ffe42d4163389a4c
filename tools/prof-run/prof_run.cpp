// prof-run: runs a program with the FuseLens collector injected and records its GPU activity
// into one SQLite capture.
//
//   prof-run [-o FILE] [--force] [--trace LIST] [--buffer-kib N] [--max-buffers N]
//            [--flush-ms N] [--metrics roofline [--replay kernel|application]
//            [--cache-control all|none] [-k|--kernel-name NAME|regex:RE]
//            [--kernel-name-base function|demangled|mangled] [-s|--launch-skip N]
//            [--launch-skip-before-match N] [-c|--launch-count N] [--nvtx-include EXPR]...
//            [--nvtx-exclude EXPR]...]
//            [--measure-ceilings] [--per-process]
//            [--torch-modules on|hooks|off] [--mode trace|aggregate] -- CMD ARGS...
//
// Every CUDA process the command starts (children by fork or exec inherit the collector through
// the environment) appends to the one capture FILE, its rows tagged with its pid, the process
// table giving its parent. --per-process: each process writes its own capture instead,
// FILE with ".<pid>" inserted before the extension (run.sqlite -> run.4242.sqlite), holding the
// same run row; FILE itself is then removed, or kept when no process initialized CUDA.
// FuseLens's Python instrumentation (share/fuselens/python) is put first on PYTHONPATH: for a
// PyTorch program its sitecustomize records the module view (--torch-modules off: not).
// The launch filters choose which kernel launches get counters, as Nsight Compute's options of the
// same names do (collector/include/fuselens/collector/LaunchFilter.h): the others run unreplayed.
// --replay application runs the command once more per further single-pass counter group, each run
// into FILE.runN (removed after its counters are merged into FILE: ReplayMerge.h).
// The exit shim (libfuselens_exit_shim.so, beside the collector: collector/shim/ExitShim.h) is
// added to LD_PRELOAD, after the user's preloads, so that a process ending in _exit, exit_group
// or exec flushes its capture first; FUSELENS_EXIT_SHIM=0 leaves it out.
// --mode aggregate: the whole run's statistics per distinct context (docs/aggregate.md), and
// trace rows only inside the windows of --steps, --capture-range or --delay/--duration.
// The workload gets SIGTERM when prof-run dies (PR_SET_PDEATHSIG), so it is never left running
// on its own; SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to prof-run are forwarded to it.
//
// Exit status: the workload's own exit status, 128+N when a signal N ended it, 2 when prof-run
// refused to start (bad options, nothing after --, command not found, output exists without
// --force, output not writable, collector not loadable, a FUSELENS_* variable of the environment
// that the collector would refuse: Environment.h), 1 when the capture could not be finalized.

#include <dlfcn.h>
#include <fmt/format.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ReplayMerge.h"

#include "CaptureReport.h"
#include "Color.h"
#include "Environment.h"
#include "FilterOptions.h"
#include "FinalizeCapture.h"
#include "FinalizeProgress.h"
#include "RooflineSteps.h"
#include "fuselens/collector/Config.h"
#include "fuselens/db/Printable.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/RooflineStore.h"
#include "fuselens/db/Sqlite.h"
#include "fuselens/db/Writer.h"
#include "steps/Steps.h"

#ifndef FUSELENS_VERSION
#define FUSELENS_VERSION "unknown"
#endif
// The collector's and prof-ceilings' build folders relative to prof-run's
// (tools/prof-run/CMakeLists.txt).
#ifndef FUSELENS_BUILD_TREE_COLLECTOR_DIR
#define FUSELENS_BUILD_TREE_COLLECTOR_DIR "../../collector"
#endif
#ifndef FUSELENS_BUILD_TREE_CEILINGS_DIR
#define FUSELENS_BUILD_TREE_CEILINGS_DIR "../prof-ceilings"
#endif

namespace fs = std::filesystem;
using fuselens::collector::CollectorConfig;
using fuselens::tools::finalize_capture;

namespace {

constexpr const char* kCollectorName = "libfuselens_collector.so";
constexpr const char* kExitShimName = "libfuselens_exit_shim.so";
volatile sig_atomic_t g_child = 0;

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void fail(int status, const std::string& message) {
  fuselens::tools::ProgressLine::erase_open_line();
  std::cerr << fuselens::tools::diagnostic_prefix("prof-run", fuselens::tools::Tone::Error)
            << fuselens::db::printable(message) << '\n';
  std::exit(status);
}

std::uint64_t utc_now_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

bool is_executable_file(const fs::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

// Resolves the command as execvp would; empty when it cannot be run.
std::string find_command(const std::string& command) {
  if (command.find('/') != std::string::npos) return is_executable_file(command) ? command : "";
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t colon = dirs.find(':', start);
    std::string dir =
        dirs.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (dir.empty()) dir = ".";
    const fs::path candidate = fs::path(dir) / command;
    if (is_executable_file(candidate)) return candidate.string();
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return "";
}

fs::path self_directory() {
  char buffer[PATH_MAX] = {};
  const auto n = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  return n > 0 ? fs::path(std::string(buffer, static_cast<std::size_t>(n))).parent_path()
               : fs::path(".");
}

// The collector next to prof-run, in ../lib (installed tree) or in the build tree's collector
// folder, or $FUSELENS_COLLECTOR.
std::string find_collector() {
  if (const char* env = std::getenv("FUSELENS_COLLECTOR")) return env;
  const fs::path dir = self_directory();
  for (const fs::path& p : {dir / kCollectorName, dir / ".." / "lib" / kCollectorName,
                            dir / FUSELENS_BUILD_TREE_COLLECTOR_DIR / kCollectorName}) {
    if (fs::exists(p)) return fs::canonical(p).string();
  }
  return "";
}

// The Python instrumentation (sitecustomize.py; docs/calling-context.md, "Modules"): in
// ../share/fuselens/python (installed tree) or beside prof-run in python/ (build tree), or
// $FUSELENS_PYTHON_DIR; empty when none holds sitecustomize.py.
std::string find_python_dir() {
  if (const char* env = std::getenv("FUSELENS_PYTHON_DIR")) return env;
  const fs::path dir = self_directory();
  for (const fs::path& p : {dir / ".." / "share" / "fuselens" / "python", dir / "python"}) {
    if (fs::exists(p / "sitecustomize.py")) return fs::canonical(p).string();
  }
  return "";
}

// The folder of prof-ceilings: beside prof-run (installed tree) or the build tree's
// tools/prof-ceilings; prof-run's own folder when neither has it (measure_ceilings then says so).
fs::path ceilings_directory() {
  const fs::path dir = self_directory();
  const fs::path build_tree = dir / FUSELENS_BUILD_TREE_CEILINGS_DIR;
  const bool beside = fs::exists(dir / "prof-ceilings");
  return !beside && fs::exists(build_tree / "prof-ceilings") ? build_tree : dir;
}

int find_cupti(dl_phdr_info* info, std::size_t, void* data) {
  if (info->dlpi_name && std::strstr(info->dlpi_name, "libcupti.so")) {
    *static_cast<std::string*>(data) = info->dlpi_name;
    return 1;
  }
  return 0;
}

// Loads the collector here once to prove its dependencies resolve (a collector that fails to
// load would make the workload's cuInit fail), and returns the CUPTI library it resolved, which
// NVTX must load too so that markers reach the same CUPTI instance.
std::string check_collector_loads(const std::string& collector) {
  void* handle = dlopen(collector.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) throw UsageError(std::string("cannot load the collector: ") + dlerror());
  std::string cupti;
  dl_iterate_phdr(find_cupti, &cupti);
  if (!dlsym(handle, "InitializeInjection")) {
    throw UsageError("'" + collector + "' does not export InitializeInjection");
  }
  dlclose(handle);
  if (cupti.empty()) throw UsageError("the collector loaded no CUPTI library");
  return fs::canonical(cupti).string();
}

// The exit shim beside `collector`, checked to load and to be the shim; empty (and a note on
// stderr) when it cannot be used: the workload then runs without it, as with FUSELENS_EXIT_SHIM=0.
std::string find_exit_shim(const std::string& collector) {
  const std::string shim = (fs::path(collector).parent_path() / kExitShimName).string();
  std::string problem;
  if (shim.find_first_of(": ") != std::string::npos) {
    problem = "its path holds ':' or ' ', which LD_PRELOAD cannot take";
  } else if (void* handle = dlopen(shim.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    if (!dlsym(handle, "fuselens_exit_shim_register")) problem = "it is not FuseLens's exit shim";
    dlclose(handle);
  } else {
    problem = std::string("it does not load: ") + dlerror();
  }
  if (problem.empty()) return shim;
  std::cerr << "[fuselens] exit shim '" << fuselens::db::printable(shim) << "' not used ("
            << fuselens::db::printable(problem)
            << "): a process ending in _exit or exec loses up to one flush period\n";
  return "";
}

std::string host_name() {
  char buffer[256] = {};
  return ::gethostname(buffer, sizeof buffer - 1) == 0 ? buffer : "";
}

void forward_signal(int signal) {
  if (g_child > 0) ::kill(static_cast<pid_t>(g_child), signal);
}

struct Options {
  std::string output;
  bool force = false;
  bool per_process = false;       // --per-process: a capture per CUDA process
  bool measure_ceilings = false;  // --measure-ceilings (RooflineSteps.h)
  std::string layout = "full";    // --layout: the capture's trace layout (db/.../Layout.h)
  std::string trace = fuselens::collector::trace_to_string(fuselens::collector::kTraceDefault);
  std::string torch_modules;  // --torch-modules on|off; empty: FUSELENS_TORCH_MODULES as set
  std::string python_dir;     // the Python instrumentation's folder (find_python_dir)
  std::string exit_shim;      // the exit shim to preload (find_exit_shim); empty: none
  CollectorConfig config;
  std::vector<std::string> command;
  // capture control (docs/capture-control.md), as given
  std::string capture_range, capture_range_end, steps, sample;
  std::optional<double> delay_s, duration_s;
  fuselens::tools::FilterOptions filters;  // counter launch filters, as given
};

// Seconds given on the command line as whole milliseconds; `what` names the option in errors.
std::uint64_t milliseconds(const char* what, double seconds, bool zero_allowed) {
  if (!(seconds >= 0) || seconds > 365.0 * 86400 || (!zero_allowed && seconds * 1000 < 1)) {
    throw UsageError(fmt::format("{} {}", what, seconds) + ": expected seconds " +
                     (zero_allowed ? ">= 0" : "of at least 0.001") + " and under a year");
  }
  return static_cast<std::uint64_t>(seconds * 1000 + 0.5);
}

Options parse(int argc, char** argv) {
  Options o;
  int separator = -1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) {
      separator = i;
      break;
    }
  }
  CLI::App app{
      "prof-run: run a CUDA program with the FuseLens collector and record its GPU "
      "activity into one SQLite capture.",
      "prof-run"};
  app.set_version_flag("--version", FUSELENS_VERSION);
  app.add_option("-o,--output", o.output, "Capture file (default: <command>.fuselens.sqlite)");
  app.add_flag("--force", o.force, "Overwrite an existing capture");
  app.add_option("--trace", o.trace,
                 "Activity groups: cuda,sync,memory,api,runtime,driver,nvtx,overhead,context,args "
                 "or all; +GROUP/-GROUP change the default (--trace +args adds kernel arguments)")
      ->capture_default_str();
  app.add_option("--layout", o.layout,
                 "Trace layout: full (every kernel and API call a row with all its columns, "
                 "indexed) or lean (the same records interned and delta-coded, no kernel or call "
                 "indexes: about a quarter of the size; analyses give the same results and sort "
                 "what they read)")
      ->check(CLI::IsMember({"full", "lean"}))
      ->capture_default_str();
  app.add_option("--buffer-kib", o.config.buffer_kib, "Activity buffer size in KiB (64..262144)");
  app.add_option("--max-buffers", o.config.max_buffers, "Activity buffer pool cap (2..4096)");
  app.add_option("--flush-ms", o.config.flush_period_ms, "Flush period in ms (10..60000)");
  app.add_option("--metrics", o.config.metrics,
                 "Hardware counters per kernel launch: roofline (FLOPs by precision, DRAM/L2/L1 "
                 "bytes; replays every kernel, see docs/BENCHMARKS.md for the cost)");
  app.add_option("--replay", o.config.metric_replay,
                 "With --metrics: kernel (CUPTI replays each launch in one run) or application "
                 "(the command runs once per single-pass counter group; needs a program that "
                 "launches the same kernels every run)")
      ->capture_default_str();
  app.add_option(
      "--cache-control", o.config.cache_control,
      "With --metrics: all (the default, as in Nsight Compute: flush the L2 and the SMs' "
      "instruction caches before each counter pass; kernel replay restores the launch's "
      "memory before each pass) or none (caches as the program and the replay left them)");
  o.filters.add_to(app, o.config.filter);
  app.add_flag("--measure-ceilings", o.measure_ceilings,
               "Measure the GPU's roofline ceilings (prof-ceilings) into the capture first");
  app.add_flag("--per-process", o.per_process,
               "One capture per CUDA process: FILE with the pid inserted before the extension "
               "(run.sqlite -> run.<pid>.sqlite) instead of one capture for all");
  app.add_option("--torch-modules", o.torch_modules,
                 "PyTorch module view: on (default: the collector reads each nn.Module call's "
                 "instance from the Python frames and autograd's sequence numbers; the "
                 "sitecustomize prof-run puts on PYTHONPATH names the modules), hooks (module "
                 "hooks record NVTX ranges per call, forward and backward: slower; the fallback "
                 "on CPython other than 3.11/3.12) or off")
      ->check(CLI::IsMember({"on", "hooks", "off"}));
  std::string mode = "trace";
  app.add_option("--mode", mode,
                 "trace (every record a row, the default) or aggregate (the whole run's "
                 "statistics per calling context, kernel and launch configuration, with the "
                 "trace of the --steps/--capture-range/--delay windows only; docs/aggregate.md)")
      ->check(CLI::IsMember({"trace", "aggregate"}))
      ->capture_default_str();
  app.add_option("--capture-range", o.capture_range,
                 "Record only inside NVTX ranges named NAME (nvtx:NAME, nvtx:NAME@DOMAIN, "
                 "nvtx:NAME@* for any domain) or between cudaProfilerStart and cudaProfilerStop "
                 "(cudaProfilerApi), as Nsight Systems' --capture-range");
  app.add_option("--capture-range-end", o.capture_range_end,
                 "stop (record the first range only, the default), repeat (every range) or "
                 "repeat:N (the first N ranges)");
  app.add_option("--delay", o.delay_s, "Start recording S seconds after the program starts");
  app.add_option("--duration", o.duration_s,
                 "Record for S seconds (after --delay); the program then runs on unrecorded");
  app.add_option("--steps", o.steps,
                 "WAIT:WARMUP:ACTIVE[:REPEAT] on the step ranges (torch.profiler.schedule): skip "
                 "WAIT and WARMUP steps, record ACTIVE steps, REPEAT cycles (0: to the end)");
  app.add_option("--sample", o.sample,
                 "1/N: trace one step in N (steps N, 2N, ... of the step ranges) with activity "
                 "off in between, and count the launch calls of every step "
                 "(docs/capture-control.md, \"Sampled tracing\")");
  app.add_option("--step-range", o.config.step_range,
                 "With --steps or --sample: the step ranges are the NVTX ranges matching GLOB "
                 "(default ProfilerStep#*, then *step*, then *iteration*)");
  std::string color = "auto";
  app.add_option("--color", color,
                 "Colour prof-run's error/warning labels: auto (only on a terminal), always or "
                 "never; never with NO_COLOR set; the workload's own output is untouched")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  app.footer(
      "Usage: prof-run [options] -- CMD ARGS...\n"
      "Examples:\n"
      "  prof-run -o run.sqlite -- python3 train.py\n"
      "  prof-run --capture-range nvtx:train --capture-range-end repeat:3 -- ./app\n"
      "  prof-run --steps 5:2:3 -- python3 train.py        (record steps 8-10 only)\n"
      "  prof-run --sample 1/10 -- python3 train.py        (trace steps 10, 20, ...; count "
      "every step's launches)\n"
      "  prof-run --delay 20 --duration 5 -- ./server\n"
      "  prof-run --mode aggregate --steps 10:0:5:1 -- python3 train.py   (statistics of the "
      "whole run, the trace of steps 11-15)\n"
      "  prof-run --metrics roofline -k regex:gemm -s 1 -c 2 -- ./app   (counters for the 2nd "
      "and 3rd GEMM launches)\n"
      "  prof-run --metrics roofline --nvtx-include 'train/' -- python3 train.py\n"
      "Environment: FUSELENS_EXIT_SHIM=0 leaves out the exit shim that prof-run preloads so that "
      "a process ending in _exit, exit_group or exec flushes its capture first (default 1); "
      "FUSELENS_PROGRESS=always (or 1) prints progress (the finalization's, a line per profiled "
      "launch) also when stderr is not a terminal, never (or 0) none, auto (the default) only on "
      "a terminal (docs/terminal.md).\n"
      "Exit status: the workload's (128+N if signal N ended it); 2 if prof-run could not start "
      "it; 1 if the capture could not be finalized.");
  const int own_argc = separator < 0 ? argc : separator;
  try {
    app.parse(own_argc, argv);
  } catch (const CLI::CallForHelp& e) {
    std::exit(app.exit(e));
  } catch (const CLI::CallForVersion& e) {
    std::exit(app.exit(e));
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
  }
  fuselens::tools::set_diagnostics_colored(
      fuselens::tools::stderr_use_color(*fuselens::tools::parse_color_mode(color)));
  if (separator < 0 || separator + 1 >= argc) {
    throw UsageError("no command to profile: usage: prof-run [options] -- CMD ARGS...");
  }
  for (int i = separator + 1; i < argc; ++i) o.command.emplace_back(argv[i]);
  const bool replay_given = app.count("--replay") > 0,
             cache_given = app.count("--cache-control") > 0;
  if ((replay_given || cache_given) && o.config.metrics.empty()) {
    throw UsageError(std::string(replay_given ? "--replay" : "--cache-control") +
                     " needs --metrics");
  }
  if (o.config.metric_replay == "application" && o.per_process) {
    throw UsageError("--replay application cannot be combined with --per-process");
  }
  try {
    namespace c = fuselens::collector;
    if (!o.capture_range.empty()) o.config.capture_range = c::parse_capture_range(o.capture_range);
    if (app.count("--capture-range-end") > 0) {
      if (o.capture_range.empty()) throw UsageError("--capture-range-end needs --capture-range");
      o.config.capture_range_windows = c::parse_capture_range_end(o.capture_range_end);
    }
    if (app.count("--capture-range") > 0 && o.capture_range.empty()) {
      throw UsageError("--capture-range: expected nvtx:NAME[@DOMAIN] or cudaProfilerApi");
    }
    if (o.delay_s) o.config.delay_ms = milliseconds("--delay", *o.delay_s, true);
    if (o.duration_s) o.config.duration_ms = milliseconds("--duration", *o.duration_s, false);
    if (app.count("--steps") > 0) o.config.steps = c::parse_steps(o.steps);
    if (app.count("--sample") > 0) o.config.sample_every = c::parse_sample(o.sample);
    if (app.count("--step-range") > 0 && o.config.step_range.empty()) {
      throw UsageError("--step-range: expected a non-empty GLOB");
    }
    o.config.trace = fuselens::collector::parse_trace(o.trace);
    o.config.aggregate = mode == "aggregate";
    o.filters.apply(app, !o.config.metrics.empty(), o.config.filter);
    o.config.validate();
  } catch (const fuselens::collector::ConfigError& e) {
    throw UsageError(e.what());
  }
  return o;
}

// The per-process captures (--per-process) next to `output` that belong to the run started at
// `start_utc_ns`, by pid; stale ones of earlier runs are left out.
std::vector<std::pair<std::uint32_t, std::string>> per_process_captures(
    const fs::path& output, std::uint64_t start_utc_ns) {
  std::vector<std::pair<std::uint32_t, std::string>> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(output.parent_path(), ec)) {
    const std::string path = entry.path().string();
    const auto pid = fuselens::collector::per_process_pid(output.string(), path);
    if (!pid) continue;
    try {
      if (fuselens::db::Reader(path).run().info.start_utc_ns == start_utc_ns)
        found.emplace_back(*pid, path);
    } catch (const std::exception&) {
      // not a capture of this run (or unreadable): not ours to finalize
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

// --per-process: captures of an earlier run that would collide with this run's are refused, or
// removed with --force.
void clear_per_process_captures(const fs::path& output, bool force) {
  std::error_code ec;
  std::vector<fs::path> stale;
  for (const auto& entry : fs::directory_iterator(output.parent_path(), ec)) {
    if (fuselens::collector::per_process_pid(output.string(), entry.path().string())) {
      stale.push_back(entry.path());
    }
  }
  if (stale.empty()) return;
  if (!force)
    throw UsageError("'" + stale.front().string() + "' exists (use --force to overwrite)");
  for (const auto& p : stale) {
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(p.string() + suffix);
  }
}

// Runs the command with the collector injected, recording into `capture`; `run` > 0 is an
// application-replay run (FUSELENS_METRIC_PASS). Returns the waitpid status.
int run_workload(const Options& options, const std::string& executable,
                 const std::string& collector, const std::string& cupti, const std::string& capture,
                 std::uint32_t run) {
  std::vector<std::string> command = options.command;
  std::vector<char*> child_argv;
  for (auto& a : command) child_argv.push_back(a.data());
  child_argv.push_back(nullptr);

  // The forwarded signals are held from before the fork until their handler is in place, so one
  // that arrives while the workload starts is forwarded, not lost or fatal to prof-run alone.
  constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  sigset_t forwarded, old_mask;
  sigemptyset(&forwarded);
  for (const int s : kForwarded) sigaddset(&forwarded, s);
  sigprocmask(SIG_BLOCK, &forwarded, &old_mask);
  const pid_t parent = ::getpid();
  const std::uint64_t launch_utc_ns = utc_now_ns();  // --delay counts from here
  const pid_t child = ::fork();
  if (child < 0) {
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    fail(2, std::string("fork failed: ") + std::strerror(errno));
  }
  if (child == 0) {
    // Never outlive prof-run: SIGTERM (which the collector flushes on) when it dies, also if it
    // died before this line.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(128 + SIGTERM);
    ::setenv("CUDA_INJECTION64_PATH", collector.c_str(), 1);
    ::setenv("NVTX_INJECTION64_PATH", cupti.c_str(), 1);
    ::setenv(fuselens::collector::kEnvOutput, capture.c_str(), 1);
    ::setenv(fuselens::collector::kEnvTrace,
             fuselens::collector::trace_to_string(options.config.trace).c_str(), 1);
    ::setenv(fuselens::collector::kEnvBufferKiB, std::to_string(options.config.buffer_kib).c_str(),
             1);
    ::setenv(fuselens::collector::kEnvMaxBuffers,
             std::to_string(options.config.max_buffers).c_str(), 1);
    ::setenv(fuselens::collector::kEnvFlushMs,
             std::to_string(options.config.flush_period_ms).c_str(), 1);
    if (!options.config.metrics.empty()) {
      ::setenv(fuselens::collector::kEnvMetrics, options.config.metrics.c_str(), 1);
      ::setenv(fuselens::collector::kEnvMetricReplay, options.config.metric_replay.c_str(), 1);
      ::setenv(fuselens::collector::kEnvMetricPass, std::to_string(run).c_str(), 1);
      ::setenv(fuselens::collector::kEnvCacheControl, options.config.cache_control.c_str(), 1);
    }
    // launch filters, always set so that a stray value in the user's environment is replaced
    fuselens::tools::set_filter_environment(options.config.filter);
    ::setenv(fuselens::collector::kEnvPerProcess, options.per_process ? "1" : "0", 1);
    ::setenv(fuselens::collector::kEnvMode, options.config.aggregate ? "aggregate" : "trace", 1);
    if (!options.exit_shim.empty()) {  // after the user's preloads (libasan must stay first)
      const char* old = std::getenv("LD_PRELOAD");
      const std::string preload = (old && *old ? std::string(old) + ":" : "") + options.exit_shim;
      ::setenv("LD_PRELOAD", preload.c_str(), 1);
    } else {
      ::setenv(fuselens::collector::kEnvExitShim, "0", 1);  // the collector does not ask for it
    }
    if (!options.python_dir.empty()) {  // our sitecustomize first; it chains to the user's
      const char* old = std::getenv("PYTHONPATH");
      const std::string path = options.python_dir + (old && *old ? ":" + std::string(old) : "");
      ::setenv("PYTHONPATH", path.c_str(), 1);
    }
    if (!options.torch_modules.empty()) {
      const char* value = options.torch_modules == "on"      ? "frames"
                          : options.torch_modules == "hooks" ? "hooks"
                                                             : "off";
      ::setenv("FUSELENS_TORCH_MODULES", value, 1);
    }
    {  // capture control, always set so that a stray value in the user's environment is replaced
      namespace c = fuselens::collector;
      const auto& cfg = options.config;
      ::setenv(c::kEnvCaptureRange, options.capture_range.c_str(), 1);
      ::setenv(c::kEnvCaptureRangeEnd,
               cfg.capture_range_windows == 1 ? "stop"
               : cfg.capture_range_windows == 0
                   ? "repeat"
                   : ("repeat:" + std::to_string(cfg.capture_range_windows)).c_str(),
               1);
      ::setenv(c::kEnvDelayMs, std::to_string(cfg.delay_ms).c_str(), 1);
      ::setenv(c::kEnvDurationMs, std::to_string(cfg.duration_ms).c_str(), 1);
      ::setenv(c::kEnvSteps, options.steps.c_str(), 1);
      ::setenv(c::kEnvSample, options.sample.c_str(), 1);
      ::setenv(c::kEnvStepRange, cfg.step_range.c_str(), 1);
      ::setenv(c::kEnvStartUtcNs, std::to_string(launch_utc_ns).c_str(), 1);
    }
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    ::execv(executable.c_str(), child_argv.data());
    std::cerr << fuselens::tools::diagnostic_prefix("prof-run", fuselens::tools::Tone::Error)
              << "cannot execute " << executable << ": " << std::strerror(errno) << '\n';
    ::_exit(127);
  }
  g_child = child;
  for (const int s : kForwarded) {
    struct sigaction action {};
    action.sa_handler = &forward_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(s, &action, nullptr);
  }
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);

  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) fail(1, std::string("waitpid failed: ") + std::strerror(errno));
  }
  g_child = 0;
  return status;
}

// --replay application: the further runs, one per single-pass counter group after the first
// (run 0 wrote `output`; RangeProfiler.h), each into a capture of its own that is merged into
// `output` and removed. Stops at a run that a signal ended; a run that cannot be merged leaves
// its reason in the capture's metric_session.status.
void replay_runs(const Options& options, const std::string& executable,
                 const std::string& collector, const std::string& cupti, const std::string& output,
                 const fuselens::db::RunInfo& info) {
  std::int64_t runs = 0;
  try {
    const fuselens::db::Reader reader(output);
    std::int64_t chosen = 0;
    for (const auto& s : fuselens::db::read_metric_sessions(reader)) {
      if (s.status == "ok" && s.replay == "application") runs = std::max(runs, s.passes);
      chosen += s.ranges;
    }
    // Launch filters that chose nothing in the first run choose nothing in the others either.
    if (runs > 1 && chosen == 0 && options.config.filter.any()) {
      std::cerr << "[fuselens] application replay: the launch filters chose no launch; the "
                   "further runs are left out\n";
      return;
    }
  } catch (const std::exception& e) {
    std::cerr << "[fuselens] application replay: cannot read the first run's counters: " << e.what()
              << '\n';
    return;
  }
  auto remove_capture = [](const std::string& path) {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(path + suffix, ec);
  };
  for (std::int64_t run = 1; run < runs; ++run) {
    const std::string path = output + ".run" + std::to_string(run + 1);
    std::cerr << "[fuselens] application replay: run " << run + 1 << " of " << runs << '\n';
    try {
      remove_capture(path);
      fuselens::db::Writer::create(path, info);
    } catch (const std::exception& e) {
      std::cerr << "[fuselens] application replay: cannot create '" << path << "': " << e.what()
                << '\n';
      return;
    }
    const int status =
        run_workload(options, executable, collector, cupti, path, static_cast<std::uint32_t>(run));
    if (WIFSIGNALED(status)) {
      std::cerr << "[fuselens] application replay: run " << run + 1 << " ended by signal "
                << WTERMSIG(status) << "; its counters and those of later runs are missing\n";
      remove_capture(path);
      return;
    }
    try {
      const auto merged =
          fuselens::collector::merge_replay_run(output, path, static_cast<int>(run + 1));
      if (!merged.error.empty()) std::cerr << "[fuselens] " << merged.error << '\n';
    } catch (const std::exception& e) {
      std::cerr << "[fuselens] application replay: cannot merge run " << run + 1 << ": " << e.what()
                << '\n';
    }
    remove_capture(path);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  std::string executable, collector, cupti;
  fs::path output;
  std::uint64_t start_utc_ns = 0;
  fuselens::db::RunInfo run;
  try {
    options = parse(argc, argv);
    executable = find_command(options.command.front());
    if (executable.empty()) throw UsageError("command not found: " + options.command.front());
    if (options.output.empty()) {
      options.output = fs::path(options.command.front()).filename().string() + ".fuselens.sqlite";
    }
    output = fs::absolute(options.output).lexically_normal();
    // symlink_status: a link (dangling or not) is the path's own object, never followed, and
    // --force replaces only a regular file (issue 22: a dangling link was followed and
    // `-o emptydir --force` deleted the directory).
    std::error_code status_error;
    const auto status = fs::symlink_status(output, status_error);
    if (fs::exists(status) || fs::is_symlink(status)) {
      if (!fs::is_regular_file(status)) {
        const char* kind = fs::is_symlink(status)     ? "a symbolic link"
                           : fs::is_directory(status) ? "a directory"
                                                      : "not a regular file";
        throw UsageError("'" + output.string() + "' exists and is " + kind +
                         "; refusing to write a capture there");
      }
      if (!options.force) {
        throw UsageError("'" + output.string() + "' exists (use --force to overwrite)");
      }
    }
    // FUSELENS_* variables that reach the collector unchanged: refused here, in one line, rather
    // than by the collector inside the workload (issue 22: "never initialized CUDA").
    if (const std::string bad = fuselens::collector::check_user_environment(
            options.config, !options.config.metrics.empty(), !options.torch_modules.empty());
        !bad.empty()) {
      throw UsageError(bad);
    }
    collector = find_collector();
    if (collector.empty()) throw UsageError(std::string("cannot find ") + kCollectorName);
    cupti = check_collector_loads(collector);
    options.python_dir = find_python_dir();
    if (const char* shim = std::getenv(fuselens::collector::kEnvExitShim);
        !shim || std::string_view(shim) != "0") {
      options.exit_shim = find_exit_shim(collector);
    }
    if (options.python_dir.empty() && !options.torch_modules.empty() &&
        options.torch_modules != "off") {
      throw UsageError("--torch-modules " + options.torch_modules +
                       ": cannot find FuseLens's python folder "
                       "(share/fuselens/python)");
    }
    if (options.force) {
      for (const char* suffix : {"", "-wal", "-shm", "-journal"})
        fs::remove(output.string() + suffix);
    }
    if (options.per_process) clear_per_process_captures(output, options.force);
    run.command_line = options.command;
    run.working_directory = fs::current_path().string();
    run.host_name = host_name();
    run.fuselens_version = FUSELENS_VERSION;
    run.trace = fuselens::collector::trace_to_string(options.config.trace);
    run.start_utc_ns = utc_now_ns();
    start_utc_ns = run.start_utc_ns;
    // The indexes are kept while the collector writes, beside the workload, instead of built
    // after it (CaptureIndexes.h): most of a long run's finalize otherwise.
    fuselens::db::Writer::create(output.string(), run,
                                 *fuselens::db::parse_trace_layout(options.layout),
                                 fuselens::db::IndexBuild::WhileWriting);
    if (options.measure_ceilings) {
      fuselens::collector::measure_ceilings(ceilings_directory(), output.string());
    }
  } catch (const UsageError& e) {
    fail(2, e.what());
  } catch (const std::exception& e) {
    fail(2, std::string("cannot create the capture: ") + e.what());
  }

  int status = run_workload(options, executable, collector, cupti, output.string(), 0);
  const bool metrics = !options.config.metrics.empty();
  if (metrics && options.config.metric_replay == "application" && !WIFSIGNALED(status)) {
    replay_runs(options, executable, collector, cupti, output.string(), run);
  }
  fuselens::db::RunEnd end;
  end.end_utc_ns = utc_now_ns();
  int exit_code = 0;
  if (WIFSIGNALED(status)) {
    end.reason = fuselens::db::EndReason::Signaled;
    end.exit_signal = WTERMSIG(status);
    exit_code = 128 + WTERMSIG(status);
  } else {
    end.reason = fuselens::db::EndReason::Exited;
    end.exit_status = WEXITSTATUS(status);
    exit_code = WEXITSTATUS(status);
  }
  bool finalized = true;
  const auto own = options.per_process ? per_process_captures(output, start_utc_ns)
                                       : std::vector<std::pair<std::uint32_t, std::string>>{};
  if (own.empty()) {
    finalized = finalize_capture(output.string(), end, metrics);
  } else {
    // Each process's capture holds the run row of the whole run, ended as prof-run saw it.
    for (const auto& [pid, path] : own)
      finalized = finalize_capture(path, end, metrics) && finalized;
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"})
      fs::remove(output.string() + suffix, ec);
  }
  if (!finalized) return exit_code != 0 ? exit_code : 1;
  return exit_code;
}
