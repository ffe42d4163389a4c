// The exit paths that skip exit() (issue 22: a Python worker ending in os._exit right after its
// work kept 1 of 1,201 kernels), end to end on a GPU: prof-run runs workloads/exit_code/exit_paths
// (or exit_paths_worker.py), which launches 1,200 kernels, synchronizes, prints what it launched
// and ends with _exit, syscall(SYS_exit_group), execv, a failed exec or a forked child's _exit.
// With the exit shim prof-run preloads (collector/shim/ExitShim.h) the capture must hold every
// kernel, no record dropped, and the process row closed by the collector's final flush; with
// FUSELENS_EXIT_SHIM=0 the row stays open (the loss the issue measured). Without a CUDA device
// every test skips and says why. Runs from the staged tree with FUSELENS_BIN_DIR
// (scripts/device/plans/exitpaths.sh).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "Binaries.h"
#include "GpuSkip.h"
#include "Subprocess.h"
#include "TempDir.h"
#include "fuselens/db/Reader.h"

using fuselens::test::binary;
using fuselens::test::run;
using fuselens::test::staged;
using fuselens::test::TempDir;

namespace {

constexpr int kKernels = 1200;

// "WORD PID K" lines of the workload: pid -> K.
std::map<int, long long> lines_of(const std::string& out, const std::string& word) {
  std::map<int, long long> found;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string w;
    int pid = 0;
    long long n = 0;
    if (f >> w >> pid >> n && w == word) found[pid] = n;
  }
  return found;
}

class ExitPathsGpu : public ::testing::Test {
 protected:
  void SetUp() override { FUSELENS_SKIP_WITHOUT_GPU(); }
  static std::string prof_run() { return binary("prof-run", PROF_RUN_PATH); }
  static std::string workload() { return binary("exit_paths", EXIT_PATHS_PATH); }

  // Runs `command` under prof-run into NAME.sqlite with `env`; checks the status.
  fuselens::test::Result profile(const std::string& name, const std::vector<std::string>& command,
                                 int status, const std::vector<std::string>& env = {}) {
    path = dir.file(name + ".sqlite");
    std::vector<std::string> argv = {prof_run(), "-o", path, "--"};
    argv.insert(argv.end(), command.begin(), command.end());
    auto r = run(argv, env);
    EXPECT_EQ(r.status, status) << name << "\n" << r.out << r.err;
    return r;
  }

  // The capture holds every kernel `pid` launched (as it printed), no record dropped, and the
  // collector's final flush closed its process row.
  void expect_everything_kept(int pid, long long launched, const std::string& what) {
    fuselens::db::Reader reader(path);
    const auto kernels =
        reader.query_int("SELECT COUNT(*) FROM kernel WHERE pid = " + std::to_string(pid));
    EXPECT_EQ(kernels, launched) << what;
    const fuselens::db::ProcessInfo* process = nullptr;
    const auto processes = reader.processes();
    for (const auto& p : processes) {
      if (static_cast<int>(p.pid) == pid) process = &p;
    }
    ASSERT_NE(process, nullptr) << what << ": no process row for " << pid;
    EXPECT_EQ(process->dropped_records, 0u) << what;
    EXPECT_TRUE(process->end_utc_ns.has_value()) << what << ": the final flush did not run";
    std::cout << "[ " << what << " ] recorded " << kernels << " of " << launched << " kernels, "
              << process->dropped_records << " dropped\n";
  }

  TempDir dir;
  std::string path;
};

}  // namespace

TEST_F(ExitPathsGpu, ExitKeepsEveryKernel) {
  const auto r = profile("exit", {workload(), "_exit"}, 7);
  const auto launched = lines_of(r.out, "launched");
  ASSERT_EQ(launched.size(), 1u) << r.out;
  EXPECT_EQ(launched.begin()->second, kKernels);
  expect_everything_kept(launched.begin()->first, kKernels, "_exit");
}

TEST_F(ExitPathsGpu, ExitGroupSyscallKeepsEveryKernel) {
  const auto r = profile("exit_group", {workload(), "exit_group"}, 8);
  const auto launched = lines_of(r.out, "launched");
  ASSERT_EQ(launched.size(), 1u) << r.out;
  expect_everything_kept(launched.begin()->first, kKernels, "exit_group");
}

TEST_F(ExitPathsGpu, ExecKeepsEveryKernelOfTheImageItReplaces) {
  const auto r = profile("execv", {workload(), "execv"}, 0);  // /bin/true's status
  const auto launched = lines_of(r.out, "launched");
  ASSERT_EQ(launched.size(), 1u) << r.out;
  expect_everything_kept(launched.begin()->first, kKernels, "execv");
}

// Degraded, as documented (ExitGuard.h): an exec that fails after the flush leaves the collector
// shut down; the kernels before it are all kept, those after it are not recorded, and the
// collector says so on stderr.
TEST_F(ExitPathsGpu, AFailedExecKeepsWhatCameBeforeItAndSaysTheRestIsNotRecorded) {
  const auto r = profile("exec_fail", {workload(), "exec-fail"}, 9);
  const auto launched = lines_of(r.out, "launched"), after = lines_of(r.out, "after");
  ASSERT_EQ(launched.size(), 1u) << r.out;
  ASSERT_EQ(after.size(), 1u) << r.out;
  EXPECT_NE(r.out.find("exec failed"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("an exec failed after the capture was closed"), std::string::npos) << r.err;
  expect_everything_kept(launched.begin()->first, kKernels, "exec-fail");
}

TEST_F(ExitPathsGpu, ForkedChildEndingInExitKeepsEveryKernel) {
  const auto r = profile("fork", {workload(), "fork"}, 0);
  EXPECT_NE(r.out.find("child exited 7"), std::string::npos) << r.out;
  const auto launched = lines_of(r.out, "launched");
  ASSERT_EQ(launched.size(), 1u) << r.out;
  expect_everything_kept(launched.begin()->first, kKernels, "fork child _exit");
}

// Issue 22's own case: a multiprocessing worker (fork start method) ends in os._exit.
TEST_F(ExitPathsGpu, PythonForkedWorkerEndingInOsExitKeepsEveryKernel) {
  const std::string script =
      staged("share/fuselens/workloads/exit_code/exit_paths_worker.py", EXIT_PATHS_WORKER_PATH);
  const std::string lib = staged("lib/libexit_paths_lib.so", EXIT_PATHS_LIB_PATH);
  if (run({"/bin/sh", "-c", "command -v python3"}).status != 0) {
    GTEST_SKIP() << "python3 not found";
  }
  const auto r = profile("python_worker", {"python3", script, lib}, 0);
  EXPECT_NE(r.out.find("worker exited 0"), std::string::npos) << r.out;
  const auto launched = lines_of(r.out, "launched");
  ASSERT_EQ(launched.size(), 1u) << r.out << r.err;
  expect_everything_kept(launched.begin()->first, kKernels, "python os._exit");
}

// The same _exit without the shim: the collector never flushes at the end (the process row stays
// open), which is what the tests above would see without the fix.
TEST_F(ExitPathsGpu, WithoutTheShimExitSkipsTheFinalFlush) {
  const auto r = profile("exit_noshim", {workload(), "_exit"}, 7, {"FUSELENS_EXIT_SHIM=0"});
  const auto launched = lines_of(r.out, "launched");
  ASSERT_EQ(launched.size(), 1u) << r.out;
  const int pid = launched.begin()->first;
  fuselens::db::Reader reader(path);
  bool found = false;
  for (const auto& p : reader.processes()) {
    if (static_cast<int>(p.pid) != pid) continue;
    found = true;
    EXPECT_FALSE(p.end_utc_ns.has_value()) << "closed without the shim?";
  }
  EXPECT_TRUE(found) << r.err;
  std::cout << "[ _exit without the shim ] recorded "
            << reader.query_int("SELECT COUNT(*) FROM kernel WHERE pid = " + std::to_string(pid))
            << " of " << kKernels << " kernels\n";
}
