// The exit shim (collector/shim/ExitShim.h) and the collector's hook in it (ExitGuard::
// arm_exit_calls), without a GPU: exit_shim_probe (ExitShimProbe.cpp) runs with the shim
// preloaded as prof-run preloads it, takes one exit path, and these tests check from outside that
// the hook ran once, in the right process, before the call, and that statuses, arguments,
// environments and errno are the program's.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "ExitShim.h"
#include "Subprocess.h"
#include "TempDir.h"

using fuselens::test::Result;
using fuselens::test::TempDir;

namespace {

struct Hook {
  int kind = 0, pid = 0;
};

struct Probe {
  Result result;
  int pid = 0;              // the probe's own pid (its first line)
  std::vector<Hook> hooks;  // "hook KIND pid P" lines in order
  std::vector<std::string> lines;
  double seconds = 0;

  bool has(const std::string& line) const {
    for (const auto& l : lines) {
      if (l == line) return true;
    }
    return false;
  }
  int index_of(const std::string& prefix) const {
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].rfind(prefix, 0) == 0) return static_cast<int>(i);
    }
    return -1;
  }
};

Probe probe(const std::vector<std::string>& args, bool preload = true) {
  std::vector<std::string> argv = {EXIT_SHIM_PROBE_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  // A sanitized probe (FUSELENS_SANITIZE) would refuse a preload ahead of its runtime.
  std::vector<std::string> env = {"ASAN_OPTIONS=verify_asan_link_order=0"};
  if (preload) env.push_back(std::string("LD_PRELOAD=") + EXIT_SHIM_PATH);
  const auto start = std::chrono::steady_clock::now();
  Probe p;
  p.result = fuselens::test::run(argv, env);
  p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::istringstream in(p.result.out);
  for (std::string line; std::getline(in, line);) {
    p.lines.push_back(line);
    std::istringstream f(line);
    std::string word, pid_word;
    f >> word;
    if (word == "pid") {
      f >> p.pid;
    } else if (word == "hook") {
      Hook h;
      if (f >> h.kind >> pid_word >> h.pid) p.hooks.push_back(h);
    }
  }
  return p;
}

// A file that exists but cannot be executed: exec fails with EACCES after the hook ran.
std::string not_executable(const TempDir& dir) {
  const std::string path = dir.file("data.txt");
  std::ofstream(path) << "not a program\n";
  ::chmod(path.c_str(), 0644);
  return path;
}

}  // namespace

TEST(ExitShim, ExitCallsRunTheHookOnceBeforeEndingWithTheirStatus) {
  for (const auto& [mode, kind] :
       std::vector<std::pair<std::string, int>>{{"_exit", FUSELENS_EXIT_SHIM_EXIT},
                                                {"_Exit", FUSELENS_EXIT_SHIM_EXIT},
                                                {"exit_group", FUSELENS_EXIT_SHIM_EXIT_GROUP}}) {
    const auto p = probe({mode, "23"});
    EXPECT_EQ(p.result.status, 23) << mode << p.result.err;
    ASSERT_EQ(p.hooks.size(), 1u) << mode << "\n" << p.result.out;
    EXPECT_EQ(p.hooks[0].kind, kind) << mode;
    EXPECT_EQ(p.hooks[0].pid, p.pid) << mode;
  }
}

TEST(ExitShim, WithoutTheShimOrAHookTheCallsAreUnchanged) {
  const auto bare = probe({"_exit", "7"}, false);
  EXPECT_EQ(bare.result.status, 3) << "the probe found a shim that was not preloaded";
  EXPECT_TRUE(bare.has("no shim"));
  const auto unregistered = probe({"none", "7"});
  EXPECT_EQ(unregistered.result.status, 7);
  EXPECT_TRUE(unregistered.hooks.empty());
  // exit() is the atexit path, not the shim's: no hook.
  const auto exited = probe({"exit", "8"});
  EXPECT_EQ(exited.result.status, 8);
  EXPECT_TRUE(exited.hooks.empty()) << exited.result.out;
}

TEST(ExitShim, OtherSyscallsPassWithTheirArgumentsResultsAndErrno) {
  const auto p = probe({"syscalls"});
  EXPECT_EQ(p.result.status, 0) << p.result.err;
  EXPECT_TRUE(p.has("getpid ok")) << p.result.out;
  EXPECT_TRUE(p.has("ab")) << p.result.out;  // write(1, "ab\n", 3)
  EXPECT_TRUE(p.has("write 3")) << p.result.out;
  EXPECT_TRUE(p.has("close -1 EBADF")) << p.result.out;
  EXPECT_TRUE(p.hooks.empty()) << p.result.out;
}

TEST(ExitShim, EveryExecFormRunsTheHookOnceAndKeepsArgumentsAndEnvironment) {
  TempDir dir;
  // The shell's exit status proves that the arguments (and for execvpe/execle the environment)
  // reached the new image.
  for (const auto& [mode, target, status] :
       std::vector<std::tuple<std::string, std::string, int>>{{"execve", "/bin/sh", 9},
                                                              {"execv", "/bin/sh", 9},
                                                              {"execvp", "sh", 10},
                                                              {"execvpe", "sh", 11},
                                                              {"execl", "/bin/sh", 12},
                                                              {"execlp", "sh", 13},
                                                              {"execle", "/bin/sh", 14},
                                                              {"fexecve", "/bin/sh", 15}}) {
    const auto p = probe({mode, target});
    EXPECT_EQ(p.result.status, status) << mode << "\n" << p.result.out << p.result.err;
    ASSERT_EQ(p.hooks.size(), 1u) << mode << "\n" << p.result.out;
    EXPECT_EQ(p.hooks[0].kind, FUSELENS_EXIT_SHIM_EXEC) << mode;
    EXPECT_EQ(p.hooks[0].pid, p.pid) << mode;
  }
}

TEST(ExitShim, AFailedExecKeepsItsErrnoAndIsReported) {
  TempDir dir;
  const auto p = probe({"exec-fail", not_executable(dir)});
  EXPECT_EQ(p.result.status, 6) << p.result.err;
  // The hook ran before the exec and heard of its failure; the probe's errno is the exec's (the
  // hook set errno to 77), and the later _exit finds the hook already run.
  ASSERT_EQ(p.hooks.size(), 2u) << p.result.out;
  EXPECT_EQ(p.hooks[0].kind, FUSELENS_EXIT_SHIM_EXEC);
  EXPECT_EQ(p.hooks[1].kind, FUSELENS_EXIT_SHIM_EXEC_FAILED);
  EXPECT_TRUE(p.has("rc -1 errno EACCES")) << p.result.out;
}

TEST(ExitShim, AnExecWhoseFileDoesNotResolveLeavesTheHookForTheNextExit) {
  const auto p = probe({"exec-fail", "/nonexistent/program"});
  EXPECT_EQ(p.result.status, 6) << p.result.err;
  EXPECT_TRUE(p.has("rc -1 errno ENOENT")) << p.result.out;
  ASSERT_EQ(p.hooks.size(), 1u) << p.result.out;  // only the _exit's
  EXPECT_EQ(p.hooks[0].kind, FUSELENS_EXIT_SHIM_EXIT);
}

TEST(ExitShim, ForkedAndVforkedChildrenNeverRunTheParentsHook) {
  for (const std::string& mode : {std::string("fork"), std::string("vfork")}) {
    const auto p = probe({mode});
    EXPECT_EQ(p.result.status, 4) << mode << p.result.err;
    EXPECT_TRUE(p.has(mode == "fork" ? "child 3" : "child 0")) << mode << "\n" << p.result.out;
    // One hook, the parent's own at its _exit: the child's exit or exec (a vfork child shares
    // the parent's memory) neither ran it nor used up the parent's once-only flag.
    ASSERT_EQ(p.hooks.size(), 1u) << mode << "\n" << p.result.out;
    EXPECT_EQ(p.hooks[0].pid, p.pid) << mode;
    EXPECT_EQ(p.hooks[0].kind, FUSELENS_EXIT_SHIM_EXIT) << mode;
  }
}

TEST(ExitShim, ASecondThreadExitingWaitsForTheHook) {
  const auto p = probe({"threads"});
  EXPECT_TRUE(p.result.status == 1 || p.result.status == 2) << p.result.status;
  // The second thread's _exit came 100 ms into the 300 ms hook: the hook still finished.
  EXPECT_TRUE(p.has("hook start")) << p.result.out;
  ASSERT_EQ(p.hooks.size(), 1u) << p.result.out;
}

TEST(ExitShim, AnExitCallInsideTheHookGoesOnAtOnce) {
  const auto p = probe({"reentrant"});
  EXPECT_EQ(p.result.status, 0) << p.result.err;  // the hook's own execv of /bin/true
  ASSERT_EQ(p.hooks.size(), 1u) << p.result.out;
  EXPECT_LT(p.seconds, 0.5 * static_cast<int>(kFuselensExitShimWaitSeconds))
      << "the exec waited for its own hook";
}

// The collector's hook (ExitGuard): the flush runs on its signal thread, and the exit call waits
// for it before ending the process.
TEST(ExitShimGuard, ExitCallsWaitForTheFlushOnTheSignalThread) {
  TempDir dir;
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--guard", "_exit", "5"},
                                               {"--guard", "exit_group", "6"},
                                               {"--guard", "execv", "/bin/sh"}}) {
    const auto p = probe(args);
    EXPECT_EQ(p.result.status, args[1] == "_exit"        ? 5
                               : args[1] == "exit_group" ? 6
                                                         : 9)
        << args[1] << p.result.err;
    EXPECT_TRUE(p.has("shutdown 0 thread fuselens-signal")) << args[1] << "\n" << p.result.out;
    EXPECT_TRUE(p.has("flushed")) << args[1] << "\n" << p.result.out;
  }
}

TEST(ExitShimGuard, ForkedChildExitDoesNotFlushTheParent) {
  const auto p = probe({"--guard", "fork"});
  EXPECT_EQ(p.result.status, 4) << p.result.err;
  EXPECT_TRUE(p.has("child 3")) << p.result.out;
  // One shutdown: the parent's, after the child ended.
  const int child = p.index_of("child 3"), shutdown = p.index_of("shutdown 0");
  ASSERT_GE(shutdown, 0) << p.result.out;
  EXPECT_GT(shutdown, child);
  int shutdowns = 0;
  for (const auto& l : p.lines) shutdowns += l.rfind("shutdown", 0) == 0 ? 1 : 0;
  EXPECT_EQ(shutdowns, 1) << p.result.out;
}

TEST(ExitShimGuard, AfterAFailedExecTheProgramRunsOnAndItsSignalsStillEndIt) {
  TempDir dir;
  const auto p = probe({"--guard", "signal-after-exec-fail", not_executable(dir)});
  EXPECT_EQ(p.result.status, 128 + SIGTERM) << p.result.out << p.result.err;
  EXPECT_TRUE(p.has("rc -1 errno EACCES")) << p.result.out;
  const int flushed = p.index_of("flushed"), failed = p.index_of("rc -1");
  ASSERT_GE(flushed, 0) << p.result.out;
  EXPECT_LT(flushed, failed) << "the flush must come before the exec";
  EXPECT_NE(p.result.err.find("an exec failed after the capture was closed"), std::string::npos)
      << p.result.err;
}
