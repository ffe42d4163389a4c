// Faults in the workload, processes, threads, streams, graphs and devices (issue #9), end to end on
// a GPU: prof-run runs workloads/faults/fault_workload, which prints what it launched and when, and
// the capture must hold exactly that, or, where the process died without any flush, everything
// but at most kLossBoundNs of its last activity. Without a CUDA device every test skips and says
// why. Runs from the staged tree with FUSELENS_BIN_DIR (scripts/device/run.sh gpu_tests).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "Binaries.h"
#include "GpuSkip.h"
#include "Spawned.h"
#include "Subprocess.h"
#include "TempDir.h"
#include "summary/SummaryFormat.h"
#include "fuselens/db/Reader.h"

using fuselens::test::binary;
using fuselens::test::run;
using fuselens::test::Spawned;
using fuselens::test::TempDir;
using namespace std::chrono_literals;

namespace {

// The most activity a process killed without any flush may lose: the collector's default flush
// period (500 ms, Config.h flush_period_ms) plus the time to write one flush, rounded up.
constexpr long long kLossBoundNs = 1'000'000'000;
// The most a process that the collector flushes on a signal (SIGSEGV, SIGABRT, SIGINT, SIGTERM)
// may lose: what CUPTI has not yet turned into records when the forced flush runs, and for
// SIGINT/SIGTERM what the program launches while the signal thread flushes (it keeps running).
// Seen on the H100: nothing to 48 kernels (about 10 ms) and at most the last NVTX range's end.
constexpr long long kFlushedLossNs = 100'000'000;

long long utc_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct Progress {
  long long kernels = 0, utc_ns = 0;
};

struct Fault {
  std::string mode;
  int pid = 0;
  long long kernels = 0, utc_ns = 0;
};

// What fault_workload printed (its header comment lists the lines).
struct Printed {
  std::map<int, int> parent;                    // pid -> parent pid
  std::map<int, std::vector<Progress>> progress;  // pid -> progress lines in order
  std::map<int, long long> total;               // pid -> kernels of its steady phases
  std::optional<Fault> fault;
  std::vector<std::string> lines;

  explicit Printed(const std::string& out) {
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) {
      lines.push_back(line);
      std::istringstream f(line);
      std::string word;
      f >> word;
      if (word == "pid") {
        int pid = 0, ppid = 0;
        std::string p;
        f >> pid >> p >> ppid;
        parent[pid] = ppid;
      } else if (word == "progress") {
        int pid = 0;
        Progress p;
        f >> pid >> p.kernels >> p.utc_ns;
        progress[pid].push_back(p);
      } else if (word == "total") {
        int pid = 0;
        long long n = 0;
        f >> pid >> n;
        total[pid] += n;
      } else if (word == "fault") {
        Fault x;
        f >> x.mode >> x.pid >> x.kernels >> x.utc_ns;
        fault = x;
      }
    }
  }

  /// Kernels `pid` had launched and completed by `utc_ns` (its last progress line before then).
  long long launched_by(int pid, long long utc_ns) const {
    long long n = 0;
    if (auto it = progress.find(pid); it != progress.end()) {
      for (const auto& p : it->second) {
        if (p.utc_ns <= utc_ns) n = std::max(n, p.kernels);
      }
    }
    return n;
  }
  long long last_progress(int pid) const { return launched_by(pid, std::numeric_limits<long long>::max()); }
  /// The fields of the lines that start with `word`.
  std::vector<std::vector<std::string>> starting_with(const std::string& word) const {
    std::vector<std::vector<std::string>> out;
    for (const auto& line : lines) {
      std::istringstream f(line);
      std::vector<std::string> fields;
      for (std::string w; f >> w;) fields.push_back(w);
      if (!fields.empty() && fields[0] == word) out.push_back(fields);
    }
    return out;
  }
};

std::int64_t count(const fuselens::db::Reader& reader, const std::string& sql, std::int64_t a = 0,
                   std::int64_t b = 0) {
  auto s = reader.prepare(sql);
  const auto n = std::count(sql.begin(), sql.end(), '?');
  if (n > 0) s.bind(1, a);
  if (n > 1) s.bind(2, b);
  return s.step() ? s.int64(0) : -1;
}

std::int64_t kernels_of(const fuselens::db::Reader& reader, int pid) {
  return count(reader, "SELECT COUNT(*) FROM kernel WHERE pid = ?", pid);
}

std::int64_t steps_of(const fuselens::db::Reader& reader, int pid) {
  return count(reader,
               "SELECT COUNT(*) FROM nvtx_range r JOIN strings s ON s.id = r.text_id"
               " WHERE r.pid = ? AND s.value = 'step' AND r.end_ns IS NOT NULL",
               pid);
}

const fuselens::db::ProcessInfo* process_of(const std::vector<fuselens::db::ProcessInfo>& all, int pid) {
  for (const auto& p : all) {
    if (static_cast<int>(p.pid) == pid) return &p;
  }
  return nullptr;
}

class WorkloadFaultsGpu : public ::testing::Test {
 protected:
  void SetUp() override { FUSELENS_SKIP_WITHOUT_GPU(); }
  static std::string prof_run() { return binary("prof-run", PROF_RUN_PATH); }
  static std::string workload() { return binary("fault_workload", FAULT_WORKLOAD_PATH); }

  // A fault the collector flushes on (SIGSEGV, SIGABRT): the exit status is the signal's, the
  // capture says so, and holds the kernels and NVTX steps completed up to kFlushedLossNs before
  // the fault, and none that was not launched.
  void expect_flushed_fault(const std::string& mode, int signal) {
    const auto path = dir.file(mode + ".sqlite");
    const auto r = run({prof_run(), "-o", path, "--", workload(), mode, "--seconds", "2"});
    EXPECT_EQ(r.status, 128 + signal) << r.err;
    const Printed printed(r.out);
    ASSERT_TRUE(printed.fault) << r.out;
    fuselens::db::Reader reader(path);
    const auto summary = reader.run();
    EXPECT_EQ(summary.end.reason, fuselens::db::EndReason::Signaled);
    EXPECT_EQ(summary.end.exit_signal, signal);
    EXPECT_NE(fuselens::analyzer::describe_run_end(summary.end).find("killed by signal"), std::string::npos);
    const int pid = printed.fault->pid;
    const long long required = printed.launched_by(pid, printed.fault->utc_ns - kFlushedLossNs);
    ASSERT_GT(required, 0) << "the steady phase was shorter than the bound";
    const auto recorded = kernels_of(reader, pid);
    EXPECT_GE(recorded, required);
    EXPECT_LE(recorded, printed.fault->kernels);
    EXPECT_GE(steps_of(reader, pid) * 8, required);
    std::cout << "[ " << mode << " ] recorded " << recorded << " of " << printed.fault->kernels
              << " kernels and " << steps_of(reader, pid) << " of " << printed.fault->kernels / 8
              << " steps\n";
    const auto processes = reader.processes();
    ASSERT_NE(process_of(processes, pid), nullptr);
    EXPECT_TRUE(process_of(processes, pid)->end_utc_ns.has_value()) << "the collector did not flush";
  }

  // A death without any flush (_exit, SIGKILL): at most kLossBoundNs of activity is missing.
  void expect_bounded_loss(const std::string& mode, int status, fuselens::db::EndReason reason) {
    const auto path = dir.file(mode + ".sqlite");
    const auto r = run({prof_run(), "-o", path, "--", workload(), mode, "--seconds", "3"});
    EXPECT_EQ(r.status, status) << r.err;
    const Printed printed(r.out);
    ASSERT_TRUE(printed.fault) << r.out;
    fuselens::db::Reader reader(path);
    EXPECT_EQ(reader.run().end.reason, reason);
    const int pid = printed.fault->pid;
    const long long required = printed.launched_by(pid, printed.fault->utc_ns - kLossBoundNs);
    ASSERT_GT(required, 0) << "the steady phase was shorter than the bound";
    const auto recorded = kernels_of(reader, pid);
    EXPECT_GE(recorded, required) << "more than " << kLossBoundNs / 1'000'000 << " ms of kernels lost";
    EXPECT_LE(recorded, printed.fault->kernels);
    std::cout << "[ " << mode << " ] recorded " << recorded << " of " << printed.fault->kernels
              << " kernels; " << required << " were launched a second before the end\n";
  }

  TempDir dir;
};

}  // namespace

TEST_F(WorkloadFaultsGpu, SegfaultIsFlushedAndKeepsItsSignal) { expect_flushed_fault("segv", SIGSEGV); }

TEST_F(WorkloadFaultsGpu, AbortIsFlushedAndKeepsItsSignal) { expect_flushed_fault("abort", SIGABRT); }

TEST_F(WorkloadFaultsGpu, ExitWithoutTeardownLosesAtMostTheBound) {
  expect_bounded_loss("exit", 7, fuselens::db::EndReason::Exited);
}

TEST_F(WorkloadFaultsGpu, SigkillLosesAtMostTheBound) {
  expect_bounded_loss("sigkill", 128 + SIGKILL, fuselens::db::EndReason::Signaled);
}

// SIGINT or SIGTERM sent to prof-run alone reach the workload, whose collector flushes before the
// signal ends it.
TEST_F(WorkloadFaultsGpu, SigintAndSigtermToProfRunAreForwardedAndFlushed) {
  for (const int signal : {SIGINT, SIGTERM}) {
    const auto path = dir.file("forwarded" + std::to_string(signal) + ".sqlite");
    Spawned p({prof_run(), "-o", path, "--", workload(), "wait-signal"});
    ASSERT_TRUE(p.wait_for_output("ready", 60s)) << p.err();
    std::this_thread::sleep_for(500ms);
    const long long sent = utc_now_ns();
    ASSERT_EQ(::kill(p.pid(), signal), 0);
    EXPECT_EQ(p.wait(), 128 + signal) << p.err();
    const Printed printed(p.out());
    ASSERT_EQ(printed.parent.size(), 1u) << p.out();
    const int pid = printed.parent.begin()->first;
    fuselens::db::Reader reader(path);
    EXPECT_EQ(reader.run().end.reason, fuselens::db::EndReason::Signaled);
    EXPECT_EQ(reader.run().end.exit_signal, signal);
    const long long required = printed.launched_by(pid, sent - kFlushedLossNs);
    ASSERT_GT(required, 0);
    EXPECT_GE(kernels_of(reader, pid), required) << signal;
    std::cout << "[ signal " << signal << " ] recorded " << kernels_of(reader, pid) << " of "
              << printed.last_progress(pid) << " kernels (last progress line)\n";
    const auto processes = reader.processes();
    ASSERT_NE(process_of(processes, pid), nullptr);
    EXPECT_TRUE(process_of(processes, pid)->end_utc_ns.has_value()) << "the collector did not flush";
  }
}

// prof-run killed with SIGKILL: the workload gets SIGTERM (PR_SET_PDEATHSIG), its collector
// flushes, it dies; the capture, never finalized, opens and says so.
TEST_F(WorkloadFaultsGpu, KilledProfRunTakesTheWorkloadAlongAndTheCaptureOpens) {
  const auto path = dir.file("orphan.sqlite");
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);  // the orphan comes to this test to be reaped
  Spawned p({prof_run(), "-o", path, "--", workload(), "wait-signal"});
  ASSERT_TRUE(p.wait_for_output("ready", 60s)) << p.err();
  std::this_thread::sleep_for(500ms);
  const int pid = Printed(p.out()).parent.begin()->first;
  const long long sent = utc_now_ns();
  ASSERT_EQ(::kill(p.pid(), SIGKILL), 0);
  EXPECT_EQ(p.wait(), 128 + SIGKILL);
  int status = 0;
  pid_t reaped = 0;
  for (int i = 0; i < 1500 && reaped == 0; ++i) {  // 30 s: the collector's flush included
    reaped = ::waitpid(pid, &status, WNOHANG);
    if (reaped == 0) std::this_thread::sleep_for(20ms);
  }
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  ASSERT_EQ(reaped, pid) << "the workload outlived prof-run";
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  const Printed printed(p.out());
  fuselens::db::Reader reader(path);
  const auto summary = reader.run();
  EXPECT_EQ(summary.end.reason, fuselens::db::EndReason::NotFinalized);
  EXPECT_EQ(fuselens::analyzer::describe_run_end(summary.end).rfind("ended without prof-run finalizing it", 0), 0u);
  // The workload runs on while its SIGTERM arrives and its collector flushes (as for a SIGTERM
  // sent to it directly): the bound of a flushed ending, not every kernel it printed.
  const long long required = printed.launched_by(pid, sent - kFlushedLossNs);
  ASSERT_GT(required, 0);
  EXPECT_GE(kernels_of(reader, pid), required);
  std::cout << "[ prof-run killed ] recorded " << kernels_of(reader, pid) << " of "
            << printed.last_progress(pid) << " kernels (last progress line)\n";
  const auto processes = reader.processes();
  ASSERT_NE(process_of(processes, pid), nullptr);
  EXPECT_TRUE(process_of(processes, pid)->end_utc_ns.has_value()) << "the collector did not flush";
}

// Every CUDA process is in the one capture with its pid and parent, its kernels its own.
void expect_processes(const fuselens::db::Reader& reader, const std::map<int, long long>& total,
                      const std::map<int, int>& parent) {
  const auto processes = reader.processes();
  EXPECT_EQ(processes.size(), total.size());
  for (const auto& [pid, kernels] : total) {
    const auto* p = process_of(processes, pid);
    ASSERT_NE(p, nullptr) << "process " << pid << " missing";
    EXPECT_EQ(static_cast<int>(p->parent_pid), parent.at(pid)) << pid;
    EXPECT_EQ(kernels_of(reader, pid), kernels) << pid;
    EXPECT_TRUE(p->end_utc_ns.has_value()) << pid;
  }
  EXPECT_EQ(reader.query_int("SELECT COUNT(DISTINCT pid) FROM kernel"), static_cast<std::int64_t>(total.size()));
}

TEST_F(WorkloadFaultsGpu, ForkedChildAndParentAreBothCaptured) {
  const auto path = dir.file("fork.sqlite");
  const auto r = run({prof_run(), "-o", path, "--", workload(), "fork", "--seconds", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Printed printed(r.out);
  ASSERT_EQ(printed.total.size(), 2u) << r.out;
  fuselens::db::Reader reader(path);
  EXPECT_EQ(reader.run().cuda_processes, 2);
  expect_processes(reader, printed.total, printed.parent);
  const auto [first, second] = std::pair(printed.parent.begin()->first, std::next(printed.parent.begin())->first);
  EXPECT_TRUE(printed.parent.at(first) == second || printed.parent.at(second) == first) << r.out;
}

// A launcher (torchrun-style) that uses no CUDA starts workers by fork and exec.
TEST_F(WorkloadFaultsGpu, ChildrenStartedByExecAreCapturedWithTheirLauncherAsParent) {
  const auto path = dir.file("spawn.sqlite");
  const auto r = run({prof_run(), "-o", path, "--", workload(), "spawn", "--children", "3", "--seconds", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Printed printed(r.out);
  ASSERT_EQ(printed.total.size(), 3u) << r.out;
  fuselens::db::Reader reader(path);
  expect_processes(reader, printed.total, printed.parent);
  std::set<int> launchers;
  for (const auto& [pid, kernels] : printed.total) launchers.insert(printed.parent.at(pid));
  EXPECT_EQ(launchers.size(), 1u);
  EXPECT_EQ(printed.total.count(*launchers.begin()), 0u);  // the launcher itself used no CUDA
}

TEST_F(WorkloadFaultsGpu, ShellScriptRunningTwoCudaProgramsIsOneCapture) {
  const auto path = dir.file("script.sqlite");
  const std::string w = "'" + workload() + "'";
  const auto r = run({prof_run(), "-o", path, "--", "/bin/sh", "-c",
                      w + " run --seconds 0.5 && " + w + " run --seconds 0.5"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Printed printed(r.out);
  ASSERT_EQ(printed.total.size(), 2u) << r.out;
  expect_processes(fuselens::db::Reader(path), printed.total, printed.parent);
}

// --per-process: a capture per process, named with its pid, each holding only that process.
TEST_F(WorkloadFaultsGpu, PerProcessWritesOneCapturePerProcess) {
  const auto path = dir.file("pp.sqlite");
  const auto r = run({prof_run(), "--per-process", "-o", path, "--", workload(), "fork", "--seconds", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Printed printed(r.out);
  ASSERT_EQ(printed.total.size(), 2u) << r.out;
  EXPECT_FALSE(std::filesystem::exists(path)) << "the shared capture is replaced by per-process ones";
  for (const auto& [pid, kernels] : printed.total) {
    const auto own = dir.file("pp." + std::to_string(pid) + ".sqlite");
    ASSERT_TRUE(std::filesystem::exists(own)) << own << "\n" << r.err;
    EXPECT_NE(r.err.find(own), std::string::npos) << r.err;  // prof-run says where
    fuselens::db::Reader reader(own);
    EXPECT_EQ(reader.run().end.reason, fuselens::db::EndReason::Exited);
    EXPECT_EQ(reader.run().end.exit_status, 0);
    expect_processes(reader, {{pid, kernels}}, printed.parent);
  }
}

// A child forked after CUDA started in the parent inherits the collector's signal handlers but
// not its threads: SIGTERM must end that child alone, not the parent.
TEST_F(WorkloadFaultsGpu, ChildForkedAfterCudaInitDiesOfSigtermAlone) {
  const auto path = dir.file("fork-after-init.sqlite");
  const auto r = run({prof_run(), "-o", path, "--", workload(), "fork-after-init", "--seconds", "1"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const Printed printed(r.out);
  const auto children = printed.starting_with("child");
  ASSERT_EQ(children.size(), 1u) << r.out;
  EXPECT_EQ(children[0][2], "ended") << r.out;
  EXPECT_EQ(children[0][4], std::to_string(SIGTERM)) << r.out;
  fuselens::db::Reader reader(path);
  expect_processes(reader, printed.total, printed.parent);
}

// N host threads, each on its own stream, launching at once: per thread (told apart by the grid
// size it launches with) every kernel is on its stream and joins a launch call of its thread.
TEST_F(WorkloadFaultsGpu, ThreadsAndStreamsAreAttributedExactly) {
  const auto path = dir.file("threads.sqlite");
  const auto r = run({prof_run(), "-o", path, "--", workload(), "threads", "--threads", "8"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Printed printed(r.out);
  const auto threads = printed.starting_with("thread");
  ASSERT_EQ(threads.size(), 8u) << r.out;
  fuselens::db::Reader reader(path);
  std::set<std::int64_t> streams;
  for (const auto& t : threads) {  // thread I tid T stream-grid G launches L
    const std::int64_t tid = std::stoll(t[3]), grid = std::stoll(t[5]), launches = std::stoll(t[7]);
    EXPECT_EQ(count(reader, "SELECT COUNT(*) FROM kernel WHERE grid_x = ?", grid), launches) << t[1];
    EXPECT_EQ(count(reader, "SELECT COUNT(DISTINCT stream_id) FROM kernel WHERE grid_x = ?", grid), 1) << t[1];
    streams.insert(count(reader, "SELECT MIN(stream_id) FROM kernel WHERE grid_x = ?", grid));
    EXPECT_EQ(count(reader,
                    "SELECT COUNT(*) FROM api_call a JOIN strings s ON s.id = a.name_id"
                    " WHERE a.tid = ? AND s.value LIKE 'cudaLaunchKernel%'",
                    tid),
              launches)
        << t[1];
    EXPECT_EQ(count(reader,
                    "SELECT COUNT(*) FROM kernel k JOIN api_call a ON a.pid = k.pid"
                    " AND a.correlation_id = k.correlation_id JOIN strings s ON s.id = a.name_id"
                    " WHERE k.grid_x = ? AND a.tid = ? AND s.value LIKE 'cudaLaunchKernel%'",
                    grid, tid),
              launches)
        << t[1];
  }
  EXPECT_EQ(streams.size(), 8u);
}

// Kernels run by cudaGraphLaunch carry the graph launch's correlation id: each of the R launches
// owns exactly the K kernels of the graph; the ordinary kernels around it keep their own launches.
TEST_F(WorkloadFaultsGpu, GraphKernelsAreAttributedToTheGraphLaunch) {
  const auto path = dir.file("graph.sqlite");
  const auto r = run({prof_run(), "-o", path, "--", workload(), "graph", "--kernels", "5", "--replays", "20"});
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(Printed(r.out).starting_with("graph").size(), 1u) << r.out;
  fuselens::db::Reader reader(path);
  const std::string graph_launch =
      " JOIN api_call a ON a.pid = k.pid AND a.correlation_id = k.correlation_id"
      " JOIN strings s ON s.id = a.name_id WHERE s.value LIKE 'cudaGraphLaunch%'";
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM kernel WHERE grid_x >= 2"), 5 * 20);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM kernel WHERE grid_x >= 2 AND graph_id IS NULL"), 0);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM kernel k" + graph_launch + " AND k.grid_x >= 2"), 5 * 20);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM api_call a JOIN strings s ON s.id = a.name_id"
                             " WHERE s.value LIKE 'cudaGraphLaunch%'"),
            20);
  EXPECT_EQ(reader.query_int("SELECT COUNT(DISTINCT correlation_id) FROM kernel WHERE grid_x >= 2"), 20);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM (SELECT correlation_id FROM kernel WHERE grid_x >= 2"
                             " GROUP BY correlation_id HAVING COUNT(*) != 5 OR COUNT(DISTINCT grid_x) != 5)"),
            0);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM kernel WHERE grid_x = 1 AND graph_id IS NULL"), 6);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM kernel k" + graph_launch + " AND k.grid_x = 1"), 0);
}

TEST_F(WorkloadFaultsGpu, KernelsOnSeveralDevicesAreAttributedToTheirDevice) {
  const auto path = dir.file("devices.sqlite");
  const auto r = run({prof_run(), "-o", path, "--", workload(), "devices"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Printed printed(r.out);
  const auto devices = printed.starting_with("device");
  if (devices.size() < 2) GTEST_SKIP() << "one GPU here: attribution across devices needs two";
  fuselens::db::Reader reader(path);
  EXPECT_EQ(reader.devices().size(), devices.size());
  for (const auto& d : devices) {  // device D grid G launches L
    const std::int64_t id = std::stoll(d[1]), grid = std::stoll(d[3]), launches = std::stoll(d[5]);
    EXPECT_EQ(count(reader, "SELECT COUNT(*) FROM kernel WHERE device_id = ?", id), launches) << id;
    EXPECT_EQ(count(reader, "SELECT COUNT(*) FROM kernel WHERE device_id = ? AND grid_x = ?", id, grid), launches) << id;
  }
}
