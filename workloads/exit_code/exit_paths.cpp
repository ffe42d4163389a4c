// exit_paths: launches kernels, then ends in one of the ways that skip exit() (issue 22), so the
// GPU tests (tests/reliability/ExitPathsGpuTest.cpp) can check that the capture still holds every
// kernel.
//
//   exit_paths HOW [KERNELS]
//
// KERNELS (default 1200, 0..1000000) empty kernels are launched and synchronized
// (exit_paths_lib), then "launched PID K" is printed to stdout, then:
//   return              returns 0 from main (the atexit path, for comparison)
//   _exit               _exit(7)
//   exit_group          syscall(SYS_exit_group, 8)
//   execv               execv("/bin/true"): status 0
//   exec-fail           execv of /etc/passwd (exists, not executable): prints "exec failed
//                       ERRNO", launches KERNELS more (printed as "after PID K"), then _exit(9)
//   fork                forks before any CUDA call; the child does the above and _exit(7)s, the
//                       parent prints "child exited N" and returns 0
// Bad arguments: one line on stderr, exit 2. CUDA error: exit 1.

#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <system_error>

extern "C" int fuselens_exit_paths_launch(int kernels);

namespace {

void say(const char* what, int kernels) {
  char line[96];
  const int n =
      std::snprintf(line, sizeof line, "%s %d %d\n", what, static_cast<int>(::getpid()), kernels);
  if (n > 0) [[maybe_unused]]
    auto written = ::write(1, line, static_cast<std::size_t>(n));
}

bool parse_int(std::string_view text, int minimum, int maximum, int& out) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc{} && ptr == end && out >= minimum && out <= maximum;
}

// Launches, reports, and ends as `how` says; returns only for "return" or an error.
int work_and_end(std::string_view how, int kernels) {
  if (fuselens_exit_paths_launch(kernels) != kernels) return 1;
  say("launched", kernels);
  if (how == "_exit" || how == "fork") ::_exit(7);
  if (how == "exit_group") ::syscall(SYS_exit_group, 8);
  if (how == "execv") {
    char* const argv[] = {const_cast<char*>("true"), nullptr};
    ::execv("/bin/true", argv);
    std::fprintf(stderr, "exit_paths: cannot execute /bin/true: %s\n", std::strerror(errno));
    return 1;
  }
  if (how == "exec-fail") {
    char* const argv[] = {const_cast<char*>("passwd"), nullptr};
    ::execv("/etc/passwd", argv);
    std::printf("exec failed %s\n", errno == EACCES ? "EACCES" : std::strerror(errno));
    std::fflush(stdout);
    if (fuselens_exit_paths_launch(kernels) != kernels) return 1;
    say("after", kernels);
    ::_exit(9);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int kernels = 1200;
  const std::string_view how = argc > 1 ? argv[1] : "";
  const bool known = how == "return" || how == "_exit" || how == "exit_group" || how == "execv" ||
                     how == "exec-fail" || how == "fork";
  if (!known || argc > 3 || (argc == 3 && !parse_int(argv[2], 0, 1'000'000, kernels))) {
    std::fprintf(stderr,
                 "usage: exit_paths return|_exit|exit_group|execv|exec-fail|fork [KERNELS]\n");
    return 2;
  }
  if (how != "fork") return work_and_end(how, kernels);
  const pid_t child = ::fork();  // before any CUDA call: CUDA does not survive fork
  if (child < 0) return 1;
  if (child == 0) return work_and_end(how, kernels);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  std::printf("child exited %d\n",
              WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  return 0;
}
