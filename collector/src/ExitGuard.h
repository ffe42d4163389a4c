#pragma once
// ExitGuard: the exit paths on which the collector flushes its capture, for a process that ends
// in any way short of SIGKILL (or _exit without the exit shim).
//
// - exit() and a return from main: an atexit handler (arm_at_exit()).
// - SIGINT, SIGTERM, SIGHUP, each only when the program left it at its default action (a
//   program's own handler, Python's SIGINT handler say, ends the program through exit(), and the
//   atexit flush covers it): the handler writes the signal to a pipe; a thread of the guard
//   ("fuselens-signal") shuts the target down and then re-raises the signal with its default
//   action, so the exit status is the program's own.
// - SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, likewise only when left at their default (a crash
//   reporter or a JVM keeps its own): the faulting thread, which may hold any lock, only asks the
//   signal thread to flush, waits at most kFatalFlushSeconds for it, and re-raises the signal
//   with its default action (the exit status and core dump stay the program's). A fault on one
//   of the collector's own threads (add_own_thread) does not wait for a flush it would block.
// - _exit, _Exit, syscall(SYS_exit_group) and the exec family, through the exit shim that
//   prof-run preloads (collector/shim/ExitShim.h; arm_exit_calls()): like a fatal signal, the
//   calling thread (which may hold any lock, or run a signal handler) asks the signal thread to
//   flush, waits at most kExitFlushSeconds, and the call then goes on. After an exec that failed
//   the collector stays shut down (the program runs on unrecorded, and says so on stderr); its
//   signals still end it as before.
// - In a forked child, which inherits the handlers but not the collector, the handlers only
//   re-raise, and the exit shim's hook does nothing.
//
// Signal dispositions and atexit are process-wide, so is the guard: its state lives in
// ExitGuard.cpp, set once, never destroyed (exit paths may run while static destructors do).
// Everything a handler does is async-signal-safe.

#include <pthread.h>

namespace fuselens::collector {

class ExitGuard {
 public:
  /// What the guard flushes: shutdown(signal) runs once per process on the first exit path
  /// taken (signal 0 for exit()), on a thread that may take locks; it must be idempotent.
  class Target {
   public:
    virtual void shutdown(int signal) noexcept = 0;

   protected:
    ~Target() = default;
  };

  /// The longest a thread that received a fatal signal waits for the capture to be flushed
  /// before the signal is re-raised.
  static constexpr int kFatalFlushSeconds = 10;
  /// The longest an exit call (_exit, exit_group, exec) waits for the capture to be flushed: the
  /// writer's own bound (30 s, Collector.cpp) and a margin for the CUPTI flush.
  static constexpr int kExitFlushSeconds = 35;

  /// What arm_exit_calls() found.
  enum class ExitCalls {
    Caught,        ///< the exit shim is loaded and calls the guard before each exit call
    NoShim,        ///< no exit shim in the process (not preloaded, or FUSELENS_EXIT_SHIM=0)
    OtherVersion,  ///< a shim of another interface version: left unregistered
  };

  ExitGuard() = delete;

  /// Registers the atexit handler that shuts `target` down (signal 0). `target` must live until
  /// the process ends. Call once.
  static void arm_at_exit(Target& target) noexcept;
  /// Starts the signal thread and installs the handlers of the signals the program left at
  /// their default; they shut down the target given to arm_at_exit(). Without a pipe or a
  /// thread nothing is installed. Call once, after arm_at_exit().
  static void install_signal_handlers() noexcept;
  /// Registers with the exit shim (ExitShim.h, found with dlsym(RTLD_DEFAULT)) the hook that
  /// shuts down the target given to arm_at_exit() before _exit, _Exit, exit_group and an exec
  /// whose file resolves; it runs on the signal thread (the caller waits at most
  /// kExitFlushSeconds), or on the caller without one. Call once, after
  /// install_signal_handlers().
  static ExitCalls arm_exit_calls() noexcept;
  /// Names `thread` as one of the collector's own threads: a fatal signal on it does not wait
  /// for a flush. At most a few (the writer, the flusher; the signal thread adds itself).
  static void add_own_thread(pthread_t thread) noexcept;
};

}  // namespace fuselens::collector
