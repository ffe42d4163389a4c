// exit_shim_probe: a program that ExitShimTest runs with the exit shim preloaded (LD_PRELOAD) and
// that takes one exit path, so the test can check what the shim did from outside: the hook's
// lines on stdout, the exit status, errno of failed calls.
//
//   exit_shim_probe [--guard] MODE [ARG]
//
// First line: "pid P". It registers a hook through the shim (found with dlsym(RTLD_DEFAULT), as
// the collector does; "no shim" and status 3 without it) that prints "hook KIND pid P" and sets
// errno to 77 (the shim must hide that). With --guard it registers the collector's own hook
// instead (ExitGuard::arm_at_exit, install_signal_handlers, arm_exit_calls) with a target whose
// shutdown prints "shutdown SIGNAL thread NAME", waits 200 ms and prints "flushed".
// MODEs (ARG: a status or a path):
//   _exit N, _Exit N, exit_group N   that call with status N (errno set to 5 first)
//   exit N                           exit(N): not the shim's (the atexit path)
//   syscalls                         syscall() with other numbers: getpid, write of 3 bytes,
//                                    close(-1); prints "getpid ok", "write 3", "close -1 EBADF";
//                                    then exit(0)
//   execve PATH | execv PATH         exec PATH with argv {PATH, "-c", "exit 9"} (a shell: 9)
//   execvp NAME                      execvp(NAME, {NAME, "-c", "exit 10"}) with PATH
//                                    "/nonexistent:/usr/bin:/bin"
//   execvpe NAME                     likewise with envp {"X=1"}: status 11 via "exit $((10+X))"
//   execl PATH, execlp NAME          list forms: "exit 12", "exit 13"
//   execle PATH                      envp {"X=4"}, "exit $((10+X))": 14
//   fexecve PATH                     opens PATH and fexecve's it: "exit 15"
//   exec-fail PATH                   execv(PATH) that fails: prints "rc R errno NAME", then
//   _exit(6) fork                             fork(); the child _exit(3)s, the parent waits and
//   prints
//                                    "child 3", then _exit(4)
//   vfork                            vfork(); the child execv's /bin/true (shares the parent's
//                                    memory); the parent prints "child 0", then _exit(4)
//   threads                          the hook (not --guard) sleeps 300 ms between "hook start"
//                                    and its line; a second thread calls _exit(2) while the main
//                                    thread is in it via _exit(1)
//   reentrant                        the hook (not --guard) calls execv("/bin/true") itself
//   signal-after-exec-fail PATH      (--guard) a failed execv(PATH), then raise(SIGTERM)
//   none N                           registers nothing, _exit(N)
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>

#include <dlfcn.h>

#include "ExitGuard.h"
#include "ExitShim.h"

namespace {

std::string g_mode;

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

void sleep_ms(long ms) {
  const timespec t{ms / 1000, (ms % 1000) * 1'000'000};
  ::nanosleep(&t, nullptr);
}

void hook(int kind) {
  if (g_mode == "threads") {
    say("hook start");
    sleep_ms(300);
  }
  say("hook %d pid %d", kind, static_cast<int>(::getpid()));
  if (g_mode == "reentrant" && kind == FUSELENS_EXIT_SHIM_EXIT) {
    char* const argv[] = {const_cast<char*>("true"), nullptr};
    ::execv("/bin/true", argv);
  }
  errno = 77;
}

class Target final : public fuselens::collector::ExitGuard::Target {
 public:
  void shutdown(int signal) noexcept override {
    char name[16] = {};
    ::pthread_getname_np(::pthread_self(), name, sizeof name);
    say("shutdown %d thread %s", signal, name);
    sleep_ms(200);
    say("flushed");
  }
};

const char* errno_name(int e) {
  switch (e) {
    case ENOENT:
      return "ENOENT";
    case EACCES:
      return "EACCES";
    case EBADF:
      return "EBADF";
    case ENOEXEC:
      return "ENOEXEC";
    default:
      return "other";
  }
}

int status_arg(const char* arg) { return arg ? std::atoi(arg) : 0; }

char* s(const char* text) { return const_cast<char*>(text); }

}  // namespace

int main(int argc, char** argv) {
  int first = 1;
  const bool guard = argc > 1 && std::strcmp(argv[1], "--guard") == 0;
  if (guard) ++first;
  if (argc <= first) {
    std::fprintf(stderr, "usage: exit_shim_probe [--guard] MODE [ARG]\n");
    return 2;
  }
  g_mode = argv[first];
  const char* arg = argc > first + 1 ? argv[first + 1] : nullptr;
  say("pid %d", static_cast<int>(::getpid()));
  using Register = int (*)(fuselens_exit_hook);
  auto* registration =
      reinterpret_cast<Register>(::dlsym(RTLD_DEFAULT, "fuselens_exit_shim_register"));
  if (g_mode != "none") {
    if (!registration) {
      say("no shim");
      return 3;
    }
    if (guard) {
      static Target target;
      fuselens::collector::ExitGuard::arm_at_exit(target);
      fuselens::collector::ExitGuard::install_signal_handlers();
      if (fuselens::collector::ExitGuard::arm_exit_calls() !=
          fuselens::collector::ExitGuard::ExitCalls::Caught) {
        say("not caught");
        return 3;
      }
    } else if (registration(&hook) != FUSELENS_EXIT_SHIM_VERSION) {
      say("wrong version");
      return 3;
    }
  }
  const std::string mode = g_mode;
  if (mode == "_exit" || mode == "none") {
    errno = 5;
    ::_exit(status_arg(arg));
  } else if (mode == "_Exit") {
    errno = 5;
    ::_Exit(status_arg(arg));
  } else if (mode == "exit_group") {
    errno = 5;
    ::syscall(SYS_exit_group, status_arg(arg));
  } else if (mode == "exit") {
    std::exit(status_arg(arg));
  } else if (mode == "syscalls") {
    if (::syscall(SYS_getpid) == ::getpid()) say("getpid ok");
    say("write %ld", ::syscall(SYS_write, 1, "ab\n", 3));
    errno = 0;
    const long rc = ::syscall(SYS_close, -1);
    say("close %ld %s", rc, errno_name(errno));
    std::exit(0);
  } else if (mode == "execve" && arg) {
    char* const args[] = {s(arg), s("-c"), s("exit 9"), nullptr};
    char* const env[] = {nullptr};
    ::execve(arg, args, env);
  } else if (mode == "execv" && arg) {
    char* const args[] = {s(arg), s("-c"), s("exit 9"), nullptr};
    ::execv(arg, args);
  } else if (mode == "execvp" && arg) {
    ::setenv("PATH", "/nonexistent:/usr/bin:/bin", 1);
    char* const args[] = {s(arg), s("-c"), s("exit 10"), nullptr};
    ::execvp(arg, args);
  } else if (mode == "execvpe" && arg) {
    ::setenv("PATH", "/nonexistent:/usr/bin:/bin", 1);
    char* const args[] = {s(arg), s("-c"), s("exit $((10+X))"), nullptr};
    char* const env[] = {s("X=1"), nullptr};
    ::execvpe(arg, args, env);
  } else if (mode == "execl" && arg) {
    ::execl(arg, arg, "-c", "exit 12", static_cast<char*>(nullptr));
  } else if (mode == "execlp" && arg) {
    ::execlp(arg, arg, "-c", "exit 13", static_cast<char*>(nullptr));
  } else if (mode == "execle" && arg) {
    char* const env[] = {s("X=4"), nullptr};
    ::execle(arg, arg, "-c", "exit $((10+X))", static_cast<char*>(nullptr), env);
  } else if (mode == "fexecve" && arg) {
    const int fd = ::open(arg, O_RDONLY);  // not O_CLOEXEC: a script's interpreter reads it
    char* const args[] = {s(arg), s("-c"), s("exit 15"), nullptr};
    char* const env[] = {nullptr};
    ::fexecve(fd, args, env);
  } else if ((mode == "exec-fail" || mode == "signal-after-exec-fail") && arg) {
    char* const args[] = {s(arg), nullptr};
    errno = 0;
    const int rc = ::execv(arg, args);
    say("rc %d errno %s", rc, errno_name(errno));
    if (mode == "signal-after-exec-fail") {
      ::raise(SIGTERM);
      sleep_ms(5000);
      return 8;  // the signal did not end it
    }
    ::_exit(6);
  } else if (mode == "fork" || mode == "vfork") {
    const pid_t child = mode == "fork" ? ::fork() : ::vfork();
    if (child == 0) {
      if (mode == "vfork") {
        char* const args[] = {s("true"), nullptr};
        ::execv("/bin/true", args);
      }
      ::_exit(3);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    say("child %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    ::_exit(4);
  } else if (mode == "threads") {
    std::thread second([] {
      sleep_ms(100);  // inside the hook by then
      ::_exit(2);
    });
    ::_exit(1);
  } else if (mode == "reentrant") {
    ::_exit(1);
  }
  say("not reached: rc errno %s", errno_name(errno));
  return 99;
}
