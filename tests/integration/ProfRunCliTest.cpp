// prof-run's command line and its handling of workloads that never touch CUDA: all of it runs
// on a machine without a GPU. Every refusal is one stderr line and exit status 2, before the
// workload runs.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "Spawned.h"
#include "Subprocess.h"
#include "TempDir.h"
#include "fuselens/db/Reader.h"
#include "summary/SummaryFormat.h"

using fuselens::test::run;
using fuselens::test::Spawned;
using fuselens::test::TempDir;
using namespace std::chrono_literals;

namespace {

void expect_refusal(const fuselens::test::Result& r, const std::string& fragment) {
  EXPECT_EQ(r.status, 2) << r.err;
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_EQ(r.err_lines()[0].rfind("prof-run: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(fragment), std::string::npos) << r.err;
}

}  // namespace

TEST(ProfRunCli, RefusesAMissingCommand) {
  TempDir dir;
  expect_refusal(run({PROF_RUN_PATH, "-o", dir.file("a.sqlite"), "--"}), "no command");
  expect_refusal(run({PROF_RUN_PATH, "-o", dir.file("a.sqlite")}), "no command");
  EXPECT_FALSE(std::filesystem::exists(dir.file("a.sqlite")));
}

TEST(ProfRunCli, RefusesUnknownOptionsAndBadValues) {
  TempDir dir;
  expect_refusal(run({PROF_RUN_PATH, "--frobnicate", "--", "/bin/true"}), "frobnicate");
  expect_refusal(run({PROF_RUN_PATH, "--trace", "cuda,gpu", "--", "/bin/true"}), "gpu");
  expect_refusal(run({PROF_RUN_PATH, "--max-buffers", "lots", "--", "/bin/true"}), "max-buffers");
  expect_refusal(run({PROF_RUN_PATH, "--buffer-kib", "1", "--", "/bin/true"}), "buffer size");
}

TEST(ProfRunCli, RefusesBadOrContradictoryCaptureControlAndWritesNothing) {
  TempDir dir;
  const auto out = dir.file("a.sqlite");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--capture-range", "nvtx:"}, "must not be empty"},
      {{"--capture-range", "gpu"}, "nvtx:NAME[@DOMAIN]"},
      {{"--capture-range", "nvtx:a@"}, "must not be empty"},
      {{"--capture-range-end", "repeat:2"}, "needs --capture-range"},
      {{"--capture-range", "nvtx:a", "--capture-range-end", "repeat:0"}, "repeat:N"},
      {{"--capture-range", "nvtx:a", "--steps", "1:1:1"}, "both choose what to record"},
      {{"--steps", "1:1:0"}, "ACTIVE"},
      {{"--steps", "1:-1:1"}, "--steps"},
      {{"--step-range", "iter*"}, "needs --steps"},
      {{"--delay", "-2"}, "--delay"},
      {{"--duration", "0"}, "--duration"},
      {{"--delay", "1", "--capture-range", "cudaProfilerApi"}, "cannot be combined"},
      {{"--steps", "0:0:1", "--metrics", "roofline"}, "--metrics"},
      // --sample 1/N (docs/capture-control.md, "Sampled tracing")
      {{"--sample", ""}, "expected 1/N"},
      {{"--sample", "1/0"}, "from 1 to 1000000"},
      {{"--sample", "1/-10"}, "from 1 to 1000000"},
      {{"--sample", "1/1000001"}, "from 1 to 1000000"},
      {{"--sample", "1/18446744073709551617"}, "from 1 to 1000000"},
      {{"--sample", "3/10"}, "expected 1/N"},
      {{"--sample", "10ms/100ms"}, "time duty cycle"},
      {{"--sample", "1/10", "--steps", "1:0:1"}, "--sample"},
      {{"--sample", "1/10", "--capture-range", "nvtx:a"}, "--sample"},
      {{"--sample", "1/10", "--delay", "1"}, "cannot be combined"},
      {{"--sample", "1/10", "--metrics", "roofline"}, "--metrics"},
  };
  for (const auto& [options, fragment] : cases) {
    std::vector<std::string> argv = {PROF_RUN_PATH, "-o", out};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.insert(argv.end(), {"--", "/bin/true"});
    SCOPED_TRACE(options.front());
    expect_refusal(run(argv), fragment);
    EXPECT_FALSE(std::filesystem::exists(out));
  }
}

TEST(ProfRunCli, AcceptsEachCaptureControlForm) {
  TempDir dir;
  const std::vector<std::vector<std::string>> forms = {
      {"--capture-range", "nvtx:train"},
      {"--capture-range", "nvtx:step@app", "--capture-range-end", "repeat:3"},
      {"--capture-range", "cudaProfilerApi", "--capture-range-end", "stop"},
      {"--steps", "2:1:3:2", "--step-range", "step#*"},
      {"--delay", "0.5", "--duration", "2"},
      {"--sample", "1/10"},
      {"--sample", "1/1", "--step-range", "iter*"},
  };
  for (const auto& options : forms) {
    std::vector<std::string> argv = {PROF_RUN_PATH, "-o", dir.file("a.sqlite"), "--force"};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.insert(argv.end(), {"--", "/bin/true"});
    const auto r = run(argv);
    EXPECT_EQ(r.status, 0) << options.front() << ": " << r.err;
  }
}

TEST(ProfRunCli, RefusesACommandThatDoesNotExist) {
  TempDir dir;
  const auto r = run({PROF_RUN_PATH, "-o", dir.file("a.sqlite"), "--", "no-such-program-xyz"});
  expect_refusal(r, "command not found: no-such-program-xyz");
  EXPECT_FALSE(std::filesystem::exists(dir.file("a.sqlite")));
}

TEST(ProfRunCli, RefusesToOverwriteWithoutForceAndLeavesTheFileAlone) {
  TempDir dir;
  const auto path = dir.file("a.sqlite");
  std::ofstream(path) << "precious";
  expect_refusal(run({PROF_RUN_PATH, "-o", path, "--", "/bin/true"}), "--force");
  std::ifstream in(path);
  std::string content;
  in >> content;
  EXPECT_EQ(content, "precious");
  const auto forced = run({PROF_RUN_PATH, "-o", path, "--force", "--", "/bin/true"});
  EXPECT_EQ(forced.status, 0) << forced.err;
  EXPECT_NO_THROW(fuselens::db::Reader{path});
}

// Issue 22: a symbolic link at the output path (dangling or not) is never followed, and --force
// replaces only a regular file. Before: the capture was created at the link's target, and
// `-o emptydir --force` deleted the directory.
TEST(ProfRunCli, NeverWritesThroughALinkOrOverADirectory) {
  TempDir dir;
  const auto target = dir.file("elsewhere.sqlite");
  const auto dangling = dir.file("dangling.sqlite");
  std::filesystem::create_symlink(target, dangling);
  const auto kept = dir.file("kept.txt");
  std::ofstream(kept) << "precious";
  const auto link = dir.file("link.sqlite");
  std::filesystem::create_symlink(kept, link);
  const auto empty = dir.file("emptydir");
  std::filesystem::create_directory(empty);
  for (const auto& out : {dangling, link}) {
    for (const bool force : {false, true}) {
      std::vector<std::string> argv{PROF_RUN_PATH, "-o", out};
      if (force) argv.push_back("--force");
      argv.insert(argv.end(), {"--", "/bin/true"});
      expect_refusal(run(argv), "is a symbolic link");
    }
  }
  expect_refusal(run({PROF_RUN_PATH, "-o", empty, "--force", "--", "/bin/true"}), "is a directory");
  EXPECT_FALSE(std::filesystem::exists(target));
  EXPECT_TRUE(std::filesystem::is_symlink(dangling));
  std::ifstream in(kept);
  std::string content;
  in >> content;
  EXPECT_EQ(content, "precious");
  EXPECT_TRUE(std::filesystem::is_directory(empty));
}

TEST(ProfRunCli, RefusesAnUnwritableOutput) {
  expect_refusal(run({PROF_RUN_PATH, "-o", "/nonexistent-dir/a.sqlite", "--", "/bin/true"}),
                 "cannot create the capture");
}

// Issue 22: FUSELENS_* variables of the user's environment that prof-run passes on unchanged
// reached the collector unchecked, which then refused to start inside the workload (the capture
// read "never initialized CUDA", prof-run exited 0). Now refused before anything runs, in one
// line naming the variable; variables that prof-run sets from its options are replaced, not
// checked.
TEST(ProfRunCli, RefusesBadFuselensVariablesOfTheEnvironment) {
  TempDir dir;
  const auto out = dir.file("a.sqlite");
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"FUSELENS_CONTEXT_METHOD=guess", "FUSELENS_CONTEXT_METHOD"},
      {"FUSELENS_PYTHON_FRAMES=yes", "FUSELENS_PYTHON_FRAMES"},
      {"FUSELENS_CONTEXT_STATS=2", "FUSELENS_CONTEXT_STATS"},
      {"FUSELENS_METRICS=everything", "unknown metric set 'everything'"},
      {"FUSELENS_METRIC_PASS=-1", "FUSELENS_METRIC_PASS"},
      {"FUSELENS_CACHE_CONTROL=some", "FUSELENS_CACHE_CONTROL='some'"},
      {"FUSELENS_TORCH_MODULES=maybe", "FUSELENS_TORCH_MODULES"},
  };
  for (const auto& [variable, words] : bad) {
    SCOPED_TRACE(variable);
    expect_refusal(run({PROF_RUN_PATH, "-o", out, "--", "/bin/true"}, {variable}), words);
    EXPECT_FALSE(std::filesystem::exists(out));
  }
  // The counter variables are prof-run's own with --metrics: the user's value is replaced.
  expect_refusal(run({PROF_RUN_PATH, "-o", out, "--metrics", "roofline", "--", "/bin/true"},
                     {"FUSELENS_CONTEXT_METHOD=guess", "FUSELENS_METRICS=everything"}),
                 "FUSELENS_CONTEXT_METHOD='guess'");
  // Good values, and bad values of variables that prof-run replaces, start the workload.
  for (const char* variable :
       {"FUSELENS_CONTEXT_METHOD=unwind", "FUSELENS_BUFFER_KIB=1", "FUSELENS_TRACE=gpu",
        "FUSELENS_TORCH_MODULES=off", "FUSELENS_PYTHON_FRAMES=0"}) {
    const auto r = run({PROF_RUN_PATH, "-o", out, "--force", "--", "/bin/true"}, {variable});
    EXPECT_EQ(r.status, 0) << variable << ": " << r.err;
    EXPECT_EQ(r.err.find("error"), std::string::npos) << variable << ": " << r.err;
  }
}

TEST(ProfRunCli, WorkloadWithoutCudaYieldsAValidCaptureThatSaysSo) {
  TempDir dir;
  const auto path = dir.file("nocuda.sqlite");
  const auto r = run({PROF_RUN_PATH, "-o", path, "--", "/bin/sh", "-c", "echo hello; exit 3"});
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_EQ(r.out, "hello\n");
  EXPECT_NE(r.err.find("never initialized CUDA"), std::string::npos) << r.err;
  fuselens::db::Reader reader(path);
  const auto summary = reader.run();
  EXPECT_EQ(summary.end.reason, fuselens::db::EndReason::Exited);
  EXPECT_EQ(summary.end.exit_status, 3);
  EXPECT_EQ(summary.cuda_processes, 0);
  EXPECT_EQ(summary.info.command_line,
            (std::vector<std::string>{"/bin/sh", "-c", "echo hello; exit 3"}));
  EXPECT_EQ(reader.gpu_record_count(), 0);
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
}

// The Python instrumentation (tools/prof-run/python, copied beside prof-run in the build tree)
// goes first on PYTHONPATH, before the user's entries; --torch-modules sets FUSELENS_TORCH_MODULES.
TEST(ProfRunCli, PutsItsPythonFolderFirstOnPythonPath) {
  TempDir dir;
  const std::string show = "echo \"$PYTHONPATH|${FUSELENS_TORCH_MODULES-unset}\"";
  auto r = run({PROF_RUN_PATH, "-o", dir.file("a.sqlite"), "--", "/bin/sh", "-c", show},
               {"PYTHONPATH=/user/site"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto bar = r.out.find('|');
  ASSERT_NE(bar, std::string::npos) << r.out;
  const std::string path = r.out.substr(0, bar);
  const auto colon = path.find(':');
  ASSERT_NE(colon, std::string::npos) << path;
  EXPECT_TRUE(std::filesystem::exists(path.substr(0, colon) + "/sitecustomize.py")) << path;
  EXPECT_TRUE(std::filesystem::exists(path.substr(0, colon) + "/fuselens_modules.py")) << path;
  EXPECT_EQ(path.substr(colon + 1), "/user/site");
  EXPECT_EQ(r.out.substr(bar + 1), "unset\n");
  r = run({PROF_RUN_PATH, "-o", dir.file("b.sqlite"), "--torch-modules", "off", "--", "/bin/sh",
           "-c", show});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.substr(r.out.find('|') + 1), "off\n");
  r = run({PROF_RUN_PATH, "-o", dir.file("c.sqlite"), "--torch-modules", "hooks", "--", "/bin/sh",
           "-c", show});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.substr(r.out.find('|') + 1), "hooks\n");
  expect_refusal(run({PROF_RUN_PATH, "--torch-modules", "maybe", "--", "/bin/true"}),
                 "torch-modules");
}

TEST(ProfRunCli, WorkloadKilledBySignalGives128PlusN) {
  TempDir dir;
  const auto path = dir.file("killed.sqlite");
  const auto r = run({PROF_RUN_PATH, "-o", path, "--", "/bin/sh", "-c", "kill -TERM $$"});
  EXPECT_EQ(r.status, 128 + 15) << r.err;
  fuselens::db::Reader reader(path);
  EXPECT_EQ(reader.run().end.reason, fuselens::db::EndReason::Signaled);
  EXPECT_EQ(reader.run().end.exit_signal, 15);
}

TEST(ProfRunCli, FindsCommandsOnThePath) {
  TempDir dir;
  const auto r = run({PROF_RUN_PATH, "-o", dir.file("a.sqlite"), "--", "true"});
  EXPECT_EQ(r.status, 0) << r.err;
}

// A signal sent to prof-run alone (kill PID, a scheduler's SIGTERM) reaches the workload, and the
// capture records how it ended.
TEST(ProfRunCli, ForwardsSigintAndSigtermToTheWorkload) {
  TempDir dir;
  for (const int signal : {SIGINT, SIGTERM}) {
    const auto path = dir.file("forwarded" + std::to_string(signal) + ".sqlite");
    Spawned prof_run(
        {PROF_RUN_PATH, "-o", path, "--", "/bin/sh", "-c", "echo ready; exec sleep 60"});
    ASSERT_TRUE(prof_run.wait_for_output("ready\n", 30s)) << prof_run.err();
    ASSERT_EQ(::kill(prof_run.pid(), signal), 0);
    EXPECT_EQ(prof_run.wait(), 128 + signal) << prof_run.err();
    fuselens::db::Reader reader(path);
    EXPECT_EQ(reader.run().end.reason, fuselens::db::EndReason::Signaled);
    EXPECT_EQ(reader.run().end.exit_signal, signal);
  }
}

// prof-run killed outright (SIGKILL: the OOM killer, a scheduler): the workload gets SIGTERM
// through PR_SET_PDEATHSIG instead of running on orphaned, and the capture, whose run row was
// never finalized, opens and says so.
TEST(ProfRunCli, WorkloadDiesWithAKilledProfRunAndTheCaptureOpens) {
  TempDir dir;
  const auto path = dir.file("orphan.sqlite");
  // The orphaned workload is reparented to this test, which reaps it to see how it ended.
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  Spawned prof_run({PROF_RUN_PATH, "-o", path, "--", "/bin/sh", "-c", "echo $$; exec sleep 60"});
  ASSERT_TRUE(prof_run.wait_for_output("\n", 30s)) << prof_run.err();
  const pid_t workload = std::stoi(prof_run.out());
  ASSERT_EQ(::kill(prof_run.pid(), SIGKILL), 0);
  EXPECT_EQ(prof_run.wait(), 128 + SIGKILL);
  int status = 0;
  pid_t reaped = 0;
  for (int i = 0; i < 500 && reaped == 0; ++i) {
    reaped = ::waitpid(workload, &status, WNOHANG);
    if (reaped == 0) std::this_thread::sleep_for(20ms);
  }
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  ASSERT_EQ(reaped, workload) << "the workload outlived prof-run by 10 s";
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  fuselens::db::Reader reader(path);
  const auto summary = reader.run();
  EXPECT_EQ(summary.end.reason, fuselens::db::EndReason::NotFinalized);
  EXPECT_EQ(fuselens::analyzer::describe_run_end(summary.end)
                .rfind("ended without prof-run finalizing it", 0),
            0u);
}

// --per-process keeps the one capture when no process used CUDA (nothing to split), and refuses
// per-process captures of an earlier run unless --force, which removes them.
TEST(ProfRunCli, PerProcessWithoutCudaKeepsTheOneCaptureAndGuardsOldOnes) {
  TempDir dir;
  const auto path = dir.file("pp.sqlite");
  const auto r = run({PROF_RUN_PATH, "--per-process", "-o", path, "--", "/bin/sh", "-c", "exit 4"});
  EXPECT_EQ(r.status, 4) << r.err;
  EXPECT_EQ(fuselens::db::Reader(path).run().end.exit_status, 4);
  const auto stale = dir.file("pp.12345.sqlite");
  std::ofstream(stale) << "an earlier run";
  std::filesystem::copy_file(stale, dir.file("pp2.777.sqlite"));
  expect_refusal(
      run({PROF_RUN_PATH, "--per-process", "-o", dir.file("pp2.sqlite"), "--", "/bin/true"}),
      "pp2.777.sqlite' exists (use --force to overwrite)");
  const auto forced = run(
      {PROF_RUN_PATH, "--per-process", "--force", "-o", dir.file("pp2.sqlite"), "--", "/bin/true"});
  EXPECT_EQ(forced.status, 0) << forced.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("pp2.777.sqlite")));
  EXPECT_TRUE(std::filesystem::exists(stale));  // another output's files are left alone
  EXPECT_EQ(fuselens::db::Reader(dir.file("pp2.sqlite")).run().cuda_processes, 0);
}

// Issue 22: the exit shim (collector/shim/ExitShim.h) goes on LD_PRELOAD after the user's own
// preloads (a sanitizer runtime must stay first); FUSELENS_EXIT_SHIM=0 leaves it out and tells
// the collector so; another value is refused like every FUSELENS_* variable. In a process without
// CUDA the shim changes nothing: exec and exit statuses are the program's.
TEST(ProfRunCli, PreloadsTheExitShimAfterTheUsersPreloadsUnlessSwitchedOff) {
  TempDir dir;
  const std::string show = "echo \"$LD_PRELOAD|${FUSELENS_EXIT_SHIM-unset}\"";
  const std::string user = "LD_PRELOAD=" + dir.file("libuser.so");  // missing: ld.so skips it
  auto r = run({PROF_RUN_PATH, "-o", dir.file("a.sqlite"), "--", "/bin/sh", "-c", show}, {user});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto colon = r.out.find(':'), bar = r.out.find('|');
  ASSERT_NE(colon, std::string::npos) << r.out;
  ASSERT_NE(bar, std::string::npos) << r.out;
  EXPECT_EQ(r.out.substr(0, colon), dir.file("libuser.so"));
  const std::string shim = r.out.substr(colon + 1, bar - colon - 1);
  EXPECT_EQ(std::filesystem::path(shim).filename(), "libfuselens_exit_shim.so") << r.out;
  EXPECT_TRUE(std::filesystem::exists(shim)) << shim;
  EXPECT_EQ(r.out.substr(bar + 1), "unset\n");

  r = run({PROF_RUN_PATH, "-o", dir.file("b.sqlite"), "--", "/bin/sh", "-c", show},
          {user, "FUSELENS_EXIT_SHIM=0"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, dir.file("libuser.so") + "|0\n");

  expect_refusal(run({PROF_RUN_PATH, "-o", dir.file("c.sqlite"), "--", "/bin/true"},
                     {"FUSELENS_EXIT_SHIM=yes"}),
                 "FUSELENS_EXIT_SHIM");
  EXPECT_FALSE(std::filesystem::exists(dir.file("c.sqlite")));

  r = run({PROF_RUN_PATH, "-o", dir.file("d.sqlite"), "--", "/bin/sh", "-c",
           "exec /bin/sh -c 'exit 4'"});
  EXPECT_EQ(r.status, 4) << r.err;
}

// Counter launch filters (issue 22; collector LaunchFilter.h): bad values are refused in one line
// with status 2 before anything runs, and filters without --metrics are refused.
TEST(ProfRunCli, RefusesBadLaunchFiltersAndWritesNothing) {
  TempDir dir;
  const auto out = dir.file("a.sqlite");
  const std::vector<std::string> m = {"--metrics", "roofline"};
  auto with_metrics = [&](std::vector<std::string> options) {
    options.insert(options.begin(), m.begin(), m.end());
    return options;
  };
  std::vector<std::string> nine_includes = m;
  for (int i = 0; i < 9; ++i) nine_includes.insert(nine_includes.end(), {"--nvtx-include", "a/"});
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--kernel-name", "gemm"}, "needs --metrics"},
      {{"--launch-count", "2"}, "needs --metrics"},
      {{"--nvtx-include", "train/"}, "needs --metrics"},
      {with_metrics({"--kernel-name", ""}), "empty name"},
      {with_metrics({"-k", "regex:("}), "bad regular expression"},
      {with_metrics({"-k", "regex:"}), "expression is empty"},
      {with_metrics({"-k", std::string(5000, 'a')}), "longer than 4096"},
      {with_metrics({"--kernel-name-base", "short"}), "function, demangled or mangled"},
      {with_metrics({"--launch-skip=-1"}), "--launch-skip"},
      {with_metrics({"--launch-skip", "1.5"}), "whole number"},
      {with_metrics({"--launch-skip", "99999999999999999999"}), "10^15"},
      {with_metrics({"--launch-skip-before-match", "-3"}), "--launch-skip-before-match"},
      {{"--launch-skip-before-match", "3"}, "needs --metrics"},
      {with_metrics({"-c", "0"}), "--launch-count 0"},
      {with_metrics({"--launch-count", "ten"}), "--launch-count 'ten'"},
      {with_metrics({"--nvtx-include", "a//b/"}), "empty range name"},
      {with_metrics({"--nvtx-include", "@x/"}), "empty DOMAIN"},
      {with_metrics({"--nvtx-exclude", "a\\"}), "lone"},
      {nine_includes, "at most 8"},
  };
  for (const auto& [options, fragment] : cases) {
    std::vector<std::string> argv = {PROF_RUN_PATH, "-o", out};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.insert(argv.end(), {"--", "/bin/true"});
    SCOPED_TRACE(options.back().substr(0, 40));
    expect_refusal(run(argv), fragment);
    EXPECT_FALSE(std::filesystem::exists(out));
  }
}

// The filters reach the collector through its environment (one NVTX expression a line), and
// replace stray values of the user's; FUSELENS_PROGRESS is the user's own and is checked.
TEST(ProfRunCli, PassesLaunchFiltersToTheCollector) {
  TempDir dir;
  const std::string show =
      "printf '%s|%s|%s|%s|%s|%s|%s\\n' \"$FUSELENS_KERNEL_NAME\" \"$FUSELENS_KERNEL_NAME_BASE\" "
      "\"$FUSELENS_LAUNCH_SKIP\" \"$FUSELENS_LAUNCH_COUNT\" \"$FUSELENS_NVTX_INCLUDE\" "
      "\"$FUSELENS_NVTX_EXCLUDE\" \"$FUSELENS_LAUNCH_SKIP_BEFORE_MATCH\"";
  std::vector<std::string> argv = {PROF_RUN_PATH, "-o", dir.file("a.sqlite"), "--metrics",
                                   "roofline"};
  for (const char* option : {"-k regex:gemm|relu", "--kernel-name-base demangled", "-s 1", "-c 2",
                             "--nvtx-include train/", "--nvtx-include lib@step",
                             "--nvtx-exclude warmup/", "--launch-skip-before-match 4"}) {
    const std::string text(option);
    argv.push_back(text.substr(0, text.find(' ')));
    argv.push_back(text.substr(text.find(' ') + 1));
  }
  argv.insert(argv.end(), {"--", "/bin/sh", "-c", show});
  auto r = run(argv, {"FUSELENS_LAUNCH_SKIP=-4"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "regex:gemm|relu|demangled|1|2|train/\nlib@step|warmup/|4\n");
  // Without filters: empty values, so the user's stray ones never reach the collector.
  r = run({PROF_RUN_PATH, "-o", dir.file("b.sqlite"), "--", "/bin/sh", "-c", show},
          {"FUSELENS_KERNEL_NAME=regex:(", "FUSELENS_LAUNCH_COUNT=0"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "|function|0||||0\n");
  expect_refusal(run({PROF_RUN_PATH, "-o", dir.file("c.sqlite"), "--", "/bin/true"},
                     {"FUSELENS_PROGRESS=yes"}),
                 "FUSELENS_PROGRESS");
  r = run({PROF_RUN_PATH, "-o", dir.file("d.sqlite"), "--", "/bin/true"}, {"FUSELENS_PROGRESS=0"});
  EXPECT_EQ(r.status, 0) << r.err;
  // The tools' own names (docs/terminal.md) are the collector's too: never refused.
  for (const char* value : {"FUSELENS_PROGRESS=never", "FUSELENS_PROGRESS=always"}) {
    r = run({PROF_RUN_PATH, "-o", dir.file("e.sqlite"), "--force", "--", "/bin/true"}, {value});
    EXPECT_EQ(r.status, 0) << value << ": " << r.err;
  }
}

// Cache control (issue 22): "all" is the default, as Nsight Compute's, also under kernel replay
// (before, kernel replay with "all" was refused: the collector now replays the launch itself,
// collector/src/LaunchReplay.h), and reaches the collector; "none" is kept when asked for.
TEST(ProfRunCli, FlushesCachesByDefaultUnderKernelReplay) {
  TempDir dir;
  const std::string show =
      "printf '%s|%s\\n' \"$FUSELENS_METRIC_REPLAY\" \"$FUSELENS_CACHE_CONTROL\"";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{}, "kernel|all\n"},
      {{"--cache-control", "all"}, "kernel|all\n"},
      {{"--cache-control", "none"}, "kernel|none\n"},
  };
  int n = 0;
  for (const auto& [options, expected] : cases) {
    std::vector<std::string> argv = {PROF_RUN_PATH, "-o",
                                     dir.file("c" + std::to_string(n++) + ".sqlite"), "--metrics",
                                     "roofline"};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.insert(argv.end(), {"--", "/bin/sh", "-c", show});
    SCOPED_TRACE(expected);
    const auto r = run(argv, {"FUSELENS_CACHE_CONTROL=none"});  // the user's value is replaced
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, expected);
  }
}
