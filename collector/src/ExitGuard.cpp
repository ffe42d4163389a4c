#include "ExitGuard.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <thread>

#include "ExitShim.h"

namespace fuselens::collector {
namespace {

std::atomic<ExitGuard::Target*> g_target{nullptr};
int g_signal_pipe[2] = {-1, -1};
constexpr int kHandledSignals[] = {SIGINT, SIGTERM, SIGHUP};
// Signals of a fault in the program (synchronous, or abort()): flushed on the faulting thread's
// behalf by the signal thread, then re-raised there.
constexpr int kFatalSignals[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL};
// The byte asking the signal thread to flush for an exit call (_exit, exit_group, exec: the exit
// shim's hook); signals are 1..64.
constexpr unsigned char kExitCallRequest = 0;
int g_done_pipe[2] = {-1, -1};      // the signal thread writes a byte here when the flush is over
std::atomic<pid_t> g_owner_pid{0};  // the process the handlers belong to (not a forked child)
std::atomic<bool> g_signal_thread_running{false};
// The collector's own threads: a fault on one of them must not wait for a flush it blocks. A
// slot is claimed (g_own_thread_slots) before it is filled; an empty slot matches no thread.
constexpr int kMaxOwnThreads = 4;
std::atomic<pthread_t> g_own_threads[kMaxOwnThreads]{};
std::atomic<int> g_own_thread_slots{0};

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

// Async-signal-safe.
bool is_own_thread(pthread_t thread) {
  for (const auto& own : g_own_threads) {
    if (::pthread_equal(thread, own.load())) return true;
  }
  return false;
}

void at_exit() noexcept {
  if (ExitGuard::Target* target = g_target.load()) target->shutdown(0);
}

void on_signal(int signal) noexcept {
  const int saved_errno = errno;
  if (::getpid() != g_owner_pid.load()) {
    reraise_with_default(signal);  // a forked child inherited the handler, not the collector
  } else {
    const unsigned char byte = static_cast<unsigned char>(signal);
    [[maybe_unused]] const auto n = ::write(g_signal_pipe[1], &byte, 1);
  }
  errno = saved_errno;
}

void on_fatal_signal(int signal) noexcept {
  // Runs on the thread that faulted (or called abort()), which may hold any lock: it only asks the
  // signal thread to flush, waits a bounded time, and re-raises with the default action.
  const int saved_errno = errno;
  const bool own_thread = is_own_thread(::pthread_self());
  if (::getpid() == g_owner_pid.load() && !own_thread && g_signal_thread_running.load()) {
    static std::atomic<bool> requested{false};
    if (!requested.exchange(true)) {
      const unsigned char byte = static_cast<unsigned char>(signal);
      [[maybe_unused]] const auto n = ::write(g_signal_pipe[1], &byte, 1);
    }
    // Other threads faulting meanwhile wait for it too.
    wait_for_flush(ExitGuard::kFatalFlushSeconds);
  }
  reraise_with_default(signal);
  errno = saved_errno;
}

void signal_thread_main() noexcept {
  ExitGuard::add_own_thread(::pthread_self());
  ::pthread_setname_np(::pthread_self(), "fuselens-signal");
  unsigned char byte = 0;
  while (true) {
    const ssize_t n = ::read(g_signal_pipe[0], &byte, 1);
    if (n == 1 && byte != kExitCallRequest) break;
    if (n == 1) {
      // An exit call (ExitGuard::on_exit_call) waits for this flush. Then go on serving: after
      // an exec that failed, the program runs on and its signals must still end it.
      if (ExitGuard::Target* target = g_target.load()) target->shutdown(0);
      const unsigned char done = 1;
      [[maybe_unused]] const auto written = ::write(g_done_pipe[1], &done, 1);
      continue;
    }
    if (n == 0 || errno != EINTR) {
      g_signal_thread_running = false;
      return;
    }
  }
  const int signal = byte;
  if (ExitGuard::Target* target = g_target.load()) target->shutdown(signal);
  const unsigned char done = 1;
  [[maybe_unused]] const auto written = ::write(g_done_pipe[1], &done, 1);
  if (is_fatal(signal)) return;  // the faulting thread re-raises it
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  sigaction(signal, &action, nullptr);
  ::kill(::getpid(), signal);
}

// The exit shim's hook (ExitShim.h): on the thread taking the exit path, which may hold any
// lock or run a signal handler, so it only asks the signal thread to flush and waits a bounded
// time, as a fatal signal does. Async-signal-safe.
void on_exit_call(int kind) {
  if (::getpid() != g_owner_pid.load()) return;  // a forked child: not its collector
  if (kind == FUSELENS_EXIT_SHIM_EXEC_FAILED) {
    static constexpr char kMessage[] =
        "[fuselens] an exec failed after the capture was closed for it: the rest of this process "
        "is not recorded\n";
    [[maybe_unused]] const auto n = ::write(2, kMessage, sizeof kMessage - 1);
    return;
  }
  if (is_own_thread(::pthread_self())) return;  // a collector thread would wait for itself
  if (g_signal_thread_running.load()) {
    const unsigned char byte = kExitCallRequest;
    if (::write(g_signal_pipe[1], &byte, 1) == 1) {
      wait_for_flush(ExitGuard::kExitFlushSeconds);
      return;
    }
  }
  // No signal thread: flush here (shutdown() is bounded by the writer's timeout).
  if (ExitGuard::Target* target = g_target.load()) target->shutdown(0);
}

}  // namespace

void ExitGuard::arm_at_exit(Target& target) noexcept {
  g_target.store(&target);
  g_owner_pid = ::getpid();
  std::atexit(&at_exit);
}

void ExitGuard::add_own_thread(pthread_t thread) noexcept {
  const int slot = g_own_thread_slots.fetch_add(1);
  if (slot < kMaxOwnThreads) g_own_threads[slot].store(thread);
}

void ExitGuard::install_signal_handlers() noexcept {
  // Only signals the program left at their default action: a program's own handler (Python's
  // SIGINT handler, say) ends the program through exit(), and the atexit flush covers it.
  // Fatal signals likewise: a program with its own SIGSEGV handler (a crash reporter, the JVM)
  // keeps it.
  if (::pipe2(g_signal_pipe, O_CLOEXEC) != 0) return;
  if (::pipe2(g_done_pipe, O_CLOEXEC) != 0) return;
  g_owner_pid = ::getpid();
  try {
    g_signal_thread_running = true;
    std::thread(&signal_thread_main).detach();
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
  for (const int signal : kHandledSignals) install(signal, &on_signal, SA_RESTART);
  for (const int signal : kFatalSignals) install(signal, &on_fatal_signal, SA_ONSTACK);
}

ExitGuard::ExitCalls ExitGuard::arm_exit_calls() noexcept {
  using Register = int (*)(fuselens_exit_hook);
  auto* registration =
      reinterpret_cast<Register>(::dlsym(RTLD_DEFAULT, "fuselens_exit_shim_register"));
  if (registration == nullptr) return ExitCalls::NoShim;
  if (registration(&on_exit_call) != FUSELENS_EXIT_SHIM_VERSION) {
    registration(nullptr);
    return ExitCalls::OtherVersion;
  }
  return ExitCalls::Caught;
}

}  // namespace fuselens::collector
