// fault_workload: a CUDA program that ends badly, or runs many processes, threads, streams or
// graphs, on purpose, so the reliability tests (issue #9, tests/reliability/WorkloadFaultsGpuTest)
// can compare what a capture holds with what the program did.
//
//   fault_workload MODE [--seconds S] [--threads N] [--kernels K] [--replays R] [--children N]
//
// The steady phase: for S seconds (default 2), steps of 8 tiny kernels inside an NVTX range
// "step", each step synchronized and followed by a 1 ms pause, about 5,000 kernels a second.
// MODE, after the steady phase unless said otherwise:
//   run             exits 0
//   segv            writes through a null pointer (SIGSEGV)
//   abort           calls abort() (SIGABRT)
//   exit            calls _exit(7): no atexit handlers, no CUDA teardown
//   sigkill         kills itself with SIGKILL
//   wait-signal     prints "ready" after the first steps and keeps stepping until a signal ends
//                   it (SIGINT/SIGTERM at their default actions); exits 3 after 120 s
//   fork            forks before initializing CUDA; child and parent each run the steady phase;
//                   the parent waits for the child and exits 0
//   fork-after-init runs the steady phase, forks a child that does not use CUDA and waits for
//                   SIGTERM, sends it SIGTERM, reports how it ended, steps on, exits 0
//   spawn           starts --children N (default 2) copies of itself in mode "run" by fork and
//                   exec without using CUDA itself, waits for them, exits 0
//   threads         --threads N (default 4) host threads at once, thread i on its own stream
//                   launching 200 + 50 i kernels of grid i + 1; no steady phase
//   graph           captures a graph of --kernels K (default 5) kernels, launches it --replays R
//                   times (default 20), with 3 ordinary kernels before and after; no steady phase
//   devices         on every device d, 10 (d + 1) kernels of grid d + 1; no steady phase
//
// Output, stdout, one line per event, each written at once (a killed process leaves them all):
//   pid P parent Q                   first line of every process
//   progress P KERNELS UTC_NS        every ~20 ms: kernels launched and completed by then
//   total P KERNELS                  at the end of a steady phase
//   fault MODE P KERNELS UTC_NS      just before the fault
//   child C ended signal N | child C exited N
//   thread I tid T stream-grid G launches L
//   graph kernels K replays R plain P
//   devices N / device D grid G launches L
// Bad arguments: one line on stderr, exit 2. CUDA error: one line on stderr, exit 1.

#include "common/cuda_check.h"

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

__global__ void tick_kernel(int* sink) {
  if (sink != nullptr && threadIdx.x == 0) atomicAdd(sink, 1);
}

namespace {

constexpr int kStepKernels = 8;

struct Options {
  std::string mode;
  double seconds = 2.0;
  int threads = 4;
  int kernels = 5;
  int replays = 20;
  int children = 2;
};

// One line to stdout in one write(), so lines of processes and threads never interleave.
void say(const char* format, ...) {
  char line[256];
  va_list args;
  va_start(args, format);
  const int n = std::vsnprintf(line, sizeof line - 1, format, args);
  va_end(args);
  if (n <= 0) return;
  const std::size_t size = std::min(static_cast<std::size_t>(n), sizeof line - 2);
  line[size] = '\n';
  [[maybe_unused]] const auto written = ::write(1, line, size + 1);
}

long long utc_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}

bool parse_int(std::string_view text, int minimum, int maximum, int& out) {
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && ptr == text.data() + text.size() && out >= minimum && out <= maximum;
}

// Steps of kStepKernels kernels (NVTX range "step", synchronized, 1 ms pause) for `seconds`, or
// until `stop` says so. Prints progress lines; returns the kernels launched.
long long steady(double seconds, bool (*stop)(long long kernels) = nullptr) {
  const long long start = utc_ns(), pid = ::getpid();
  const long long end = start + static_cast<long long>(seconds * 1e9);
  long long kernels = 0, last_print = start;
  while (true) {
    nvtxRangePushA("step");
    for (int i = 0; i < kStepKernels; ++i) tick_kernel<<<1, 32>>>(nullptr);
    FUSELENS_CUDA_CHECK_LAST();
    FUSELENS_CUDA_CHECK(cudaDeviceSynchronize());
    nvtxRangePop();
    kernels += kStepKernels;
    const long long now = utc_ns();
    if (now - last_print >= 20'000'000) {
      say("progress %lld %lld %lld", pid, kernels, now);
      last_print = now;
    }
    if (stop ? stop(kernels) : now >= end) break;
    ::usleep(1000);
  }
  say("progress %lld %lld %lld", pid, kernels, utc_ns());
  say("total %lld %lld", pid, kernels);
  return kernels;
}

[[noreturn]] void fault(const Options& o, long long kernels) {
  say("fault %s %d %lld %lld", o.mode.c_str(), static_cast<int>(::getpid()), kernels, utc_ns());
  if (o.mode == "segv") {
    static volatile std::uintptr_t nowhere = 0;
    *reinterpret_cast<volatile int*>(nowhere) = 42;
  } else if (o.mode == "abort") {
    std::abort();
  } else if (o.mode == "exit") {
    ::_exit(7);
  } else if (o.mode == "sigkill") {
    ::kill(::getpid(), SIGKILL);
  }
  ::_exit(99);  // not reached
}

void report_child(pid_t child) {
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    say("child %d ended signal %d", static_cast<int>(child), WTERMSIG(status));
  } else {
    say("child %d exited %d", static_cast<int>(child), WEXITSTATUS(status));
  }
}

int run_fork(const Options& o) {
  const pid_t child = ::fork();  // before any CUDA call: CUDA does not survive fork
  if (child < 0) return 1;
  say("pid %d parent %d", static_cast<int>(::getpid()), static_cast<int>(::getppid()));
  steady(o.seconds);
  if (child == 0) return 0;
  report_child(child);
  return 0;
}

int run_fork_after_init(const Options& o) {
  steady(o.seconds / 2);
  int ready[2];
  if (::pipe(ready) != 0) return 1;
  const pid_t child = ::fork();
  if (child < 0) return 1;
  if (child == 0) {
    // The collector's handlers were inherited, its threads were not: SIGTERM must still end
    // this process, and only this one.
    const char byte = 1;
    [[maybe_unused]] const auto n = ::write(ready[1], &byte, 1);
    ::alarm(30);
    while (true) ::pause();
  }
  char byte = 0;
  [[maybe_unused]] const auto n = ::read(ready[0], &byte, 1);
  ::kill(child, SIGTERM);
  report_child(child);
  steady(o.seconds / 2);
  return 0;
}

int run_spawn(const Options& o) {
  std::vector<pid_t> children;
  const std::string seconds = std::to_string(o.seconds);
  for (int i = 0; i < o.children; ++i) {
    const pid_t child = ::fork();
    if (child < 0) return 1;
    if (child == 0) {
      ::execl("/proc/self/exe", "fault_workload", "run", "--seconds", seconds.c_str(), nullptr);
      ::_exit(127);
    }
    children.push_back(child);
  }
  for (const pid_t child : children) report_child(child);
  return 0;
}

int run_threads(const Options& o) {
  FUSELENS_CUDA_CHECK(cudaFree(nullptr));  // one context before the threads start
  std::atomic<int> waiting{o.threads};
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < o.threads; ++i) {
    threads.emplace_back([&, i] {
      try {
        cudaStream_t stream = nullptr;
        FUSELENS_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        const int launches = 200 + 50 * i;
        --waiting;
        while (waiting.load() > 0) std::this_thread::yield();  // all launch at once
        for (int k = 0; k < launches; ++k) tick_kernel<<<i + 1, 32, 0, stream>>>(nullptr);
        FUSELENS_CUDA_CHECK_LAST();
        FUSELENS_CUDA_CHECK(cudaStreamSynchronize(stream));
        FUSELENS_CUDA_CHECK(cudaStreamDestroy(stream));
        say("thread %d tid %ld stream-grid %d launches %d", i,
            static_cast<long>(::syscall(SYS_gettid)), i + 1, launches);
      } catch (const std::exception&) {
        failed = true;
      }
    });
  }
  for (auto& t : threads) t.join();
  return failed ? 1 : 0;
}

int run_graph(const Options& o) {
  cudaStream_t stream = nullptr;
  FUSELENS_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const int plain = 3;
  for (int k = 0; k < plain; ++k) tick_kernel<<<1, 32, 0, stream>>>(nullptr);
  cudaGraph_t graph = nullptr;
  FUSELENS_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int k = 0; k < o.kernels; ++k) tick_kernel<<<2 + k, 32, 0, stream>>>(nullptr);
  FUSELENS_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  FUSELENS_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int r = 0; r < o.replays; ++r) FUSELENS_CUDA_CHECK(cudaGraphLaunch(exec, stream));
  for (int k = 0; k < plain; ++k) tick_kernel<<<1, 32, 0, stream>>>(nullptr);
  FUSELENS_CUDA_CHECK_LAST();
  FUSELENS_CUDA_CHECK(cudaStreamSynchronize(stream));
  FUSELENS_CUDA_CHECK(cudaGraphExecDestroy(exec));
  FUSELENS_CUDA_CHECK(cudaGraphDestroy(graph));
  FUSELENS_CUDA_CHECK(cudaStreamDestroy(stream));
  say("graph kernels %d replays %d plain %d", o.kernels, o.replays, 2 * plain);
  return 0;
}

int run_devices() {
  int count = 0;
  FUSELENS_CUDA_CHECK(cudaGetDeviceCount(&count));
  say("devices %d", count);
  for (int d = 0; d < count; ++d) {
    FUSELENS_CUDA_CHECK(cudaSetDevice(d));
    const int launches = 10 * (d + 1);
    for (int k = 0; k < launches; ++k) tick_kernel<<<d + 1, 32>>>(nullptr);
    FUSELENS_CUDA_CHECK_LAST();
    FUSELENS_CUDA_CHECK(cudaDeviceSynchronize());
    say("device %d grid %d launches %d", d, d + 1, launches);
  }
  return 0;
}

bool parse(int argc, char** argv, Options& o) {
  if (argc < 2) return false;
  o.mode = argv[1];
  for (int i = 2; i < argc; i += 2) {
    if (i + 1 >= argc) return false;
    const std::string_view flag = argv[i], value = argv[i + 1];
    if (flag == "--seconds") {
      double s = 0;
      const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), s);
      if (ec != std::errc{} || ptr != value.data() + value.size() || s < 0 || s > 3600)
        return false;
      o.seconds = s;
    } else if (flag == "--threads") {
      if (!parse_int(value, 1, 64, o.threads)) return false;
    } else if (flag == "--kernels") {
      if (!parse_int(value, 1, 1000, o.kernels)) return false;
    } else if (flag == "--replays") {
      if (!parse_int(value, 1, 100000, o.replays)) return false;
    } else if (flag == "--children") {
      if (!parse_int(value, 1, 64, o.children)) return false;
    } else {
      return false;
    }
  }
  for (const char* m : {"run", "segv", "abort", "exit", "sigkill", "wait-signal", "fork",
                        "fork-after-init", "spawn", "threads", "graph", "devices"}) {
    if (o.mode == m) return true;
  }
  return false;
}

// wait-signal: "ready" once 10 steps ran; stops stepping (no signal came) after 120 s.
bool no_signal_came(long long kernels) {
  static const long long deadline = utc_ns() + 120'000'000'000LL;
  static bool ready = false;
  if (!ready && kernels >= 10 * kStepKernels) {
    say("ready");
    ready = true;
  }
  return utc_ns() > deadline;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) {
    std::fprintf(
        stderr,
        "usage: fault_workload run|segv|abort|exit|sigkill|wait-signal|fork|fork-after-init|spawn|"
        "threads|graph|devices [--seconds S] [--threads N] [--kernels K] [--replays R] "
        "[--children N]\n");
    return 2;
  }
  try {
    if (o.mode == "fork") return run_fork(o);
    say("pid %d parent %d", static_cast<int>(::getpid()), static_cast<int>(::getppid()));
    if (o.mode == "spawn") return run_spawn(o);
    if (o.mode == "fork-after-init") return run_fork_after_init(o);
    if (o.mode == "threads") return run_threads(o);
    if (o.mode == "graph") return run_graph(o);
    if (o.mode == "devices") return run_devices();
    if (o.mode == "wait-signal") {
      steady(0, &no_signal_came);
      return 3;  // no signal came
    }
    const long long kernels = steady(o.seconds);
    if (o.mode == "run") return 0;
    fault(o, kernels);
  } catch (const fuselens::kernels::CudaError&) {
    return 1;  // FUSELENS_CUDA_CHECK printed the error line
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fault_workload: error: %s\n", e.what());
    return 1;
  }
}
