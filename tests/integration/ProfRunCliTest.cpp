// prof-run's command line and its handling of workloads that never touch CUDA: all of it runs
// on a machine without a GPU. Every refusal is one stderr line and exit status 2, before the
// workload runs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "Subprocess.h"
#include "TempDir.h"
#include "fuselens/db/Reader.h"

using fuselens::test::run;
using fuselens::test::TempDir;

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

TEST(ProfRunCli, RefusesAnUnwritableOutput) {
  expect_refusal(run({PROF_RUN_PATH, "-o", "/nonexistent-dir/a.sqlite", "--", "/bin/true"}),
                 "cannot create the capture");
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
