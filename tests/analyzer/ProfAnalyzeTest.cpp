// Runs the built prof-analyze binary and checks its exit codes and one-line errors.
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "Subprocess.h"
#include "TestSupport.h"
#include "fuselens/db/Records.h"

#ifndef PROF_ANALYZE_PATH
#error "PROF_ANALYZE_PATH must name the prof-analyze binary"
#endif

namespace fuselens::analyzer {
namespace {

using fuselens::test::Result;
using fuselens::test::run_cli;
using fuselens::test::slurp;
using test::TempDir;

std::size_t line_count(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

void expect_one_error_line(const Result& r) {
  EXPECT_EQ(line_count(r.err), 1U) << r.err;
  EXPECT_EQ(r.err.rfind("prof-analyze: error: ", 0), 0U) << r.err;
}

TEST(ProfAnalyze, UnknownOptionIsAUsageErrorOnOneLine) {
  TempDir dir;
  const Result r = run_cli(dir, {"summary", "x.sqlite", "--bogus"});
  EXPECT_EQ(r.status, 2);
  expect_one_error_line(r);
}

TEST(ProfAnalyze, BadValueAndMissingFileArgumentAreUsageErrors) {
  TempDir dir;
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"summary", "x.sqlite", "--format", "xml"},
                                             {"summary", "x.sqlite", "--names", "pretty"},
                                             {"summary", "x.sqlite", "--section", "kernels,bogus"},
                                             {"cct", "x.sqlite", "--frames", "bogus"},
                                             {"flags", "x.sqlite", "--frames", "User"},
                                             {"export", "x.sqlite", "--frames", ""},
                                             {"summary"},
                                             {}}) {
    const Result r = run_cli(dir, args);
    EXPECT_EQ(r.status, 2) << (args.empty() ? "(no arguments)" : args.back());
    expect_one_error_line(r);
  }
}

TEST(ProfAnalyze, FramesFoldTheCallPathsOfCctFlagsAndTheHtmlFlameGraph) {
  const std::string capture = std::string(FUSELENS_TEST_DATA_DIR) + "/cct_torch.sqlite";
  if (!std::ifstream(capture)) GTEST_SKIP() << "cct_torch.sqlite is not committed";
  TempDir dir;
  const Result user = run_cli(dir, {"cct", capture});
  ASSERT_EQ(user.status, 0) << user.err;
  EXPECT_NE(user.out.find("Frames: user"), std::string::npos);
  EXPECT_NE(user.out.find("[torch: aten::linear]"), std::string::npos);
  EXPECT_EQ(user.out.find("wrap_kernel_functor"), std::string::npos);
  const Result all = run_cli(dir, {"cct", capture, "--frames", "all", "--format", "json"});
  ASSERT_EQ(all.status, 0) << all.err;
  EXPECT_EQ(nlohmann::json::parse(all.out)["frames"], "all");
  EXPECT_NE(all.out.find("wrap_kernel_functor"), std::string::npos);
  const Result flags = run_cli(dir, {"flags", capture, "--format", "csv"});
  ASSERT_EQ(flags.status, 0) << flags.err;
  EXPECT_EQ(flags.out.find("wrap_kernel_functor"), std::string::npos);
  const std::string html = dir.file("r.html");
  const Result exported = run_cli(dir, {"export", capture, "--format", "html", "-o", html});
  ASSERT_EQ(exported.status, 0) << exported.err;
  const std::string text = slurp(html);
  EXPECT_NE(text.find("<section id=\"flame-graph\""), std::string::npos);
  EXPECT_NE(text.find("[torch: aten::linear]"), std::string::npos);
}

TEST(ProfAnalyze, HelpAndVersionSucceed) {
  TempDir dir;
  const Result help = run_cli(dir, {"--help"});
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("Exit status"), std::string::npos);
  EXPECT_TRUE(help.err.empty());
  const Result summary_help = run_cli(dir, {"summary", "--help"});
  EXPECT_EQ(summary_help.status, 0);
  EXPECT_NE(summary_help.out.find("--format"), std::string::npos);
  EXPECT_EQ(run_cli(dir, {"--version"}).status, 0);
}

TEST(ProfAnalyze, MissingFileFailsWithOneLine) {
  TempDir dir;
  const Result r = run_cli(dir, {"summary", dir.file("absent.sqlite")});
  EXPECT_EQ(r.status, 1);
  expect_one_error_line(r);
  EXPECT_NE(r.err.find("absent.sqlite"), std::string::npos);
}

TEST(ProfAnalyze, FileThatIsNotSqliteFails) {
  TempDir dir;
  const auto path = dir.file("text.sqlite");
  std::ofstream(path) << "this is not a database, just some random text\n"
                      << std::string(5000, 'x');
  const Result r = run_cli(dir, {"summary", path});
  EXPECT_EQ(r.status, 1);
  expect_one_error_line(r);
}

TEST(ProfAnalyze, NewerSchemaVersionFailsAndSaysSo) {
  TempDir dir;
  const auto path = dir.file("future.sqlite");
  test::write_reference_capture(path);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  const std::string newer = std::to_string(fuselens::db::kSchemaVersion + 1);
  ASSERT_EQ(sqlite3_exec(db, ("PRAGMA user_version = " + newer).c_str(), nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  const Result r = run_cli(dir, {"summary", path});
  EXPECT_EQ(r.status, 1);
  expect_one_error_line(r);
  EXPECT_NE(r.err.find("version " + newer), std::string::npos) << r.err;
}

TEST(ProfAnalyze, CaptureWithoutCudaFailsWithTheNeverInitializedLine) {
  TempDir dir;
  const auto path = dir.file("nocuda.sqlite");
  test::write_capture_without_process(path);
  const Result r = run_cli(dir, {"summary", path});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "prof-analyze: error: '" + path +
                       "': the workload never initialized CUDA; nothing to summarize\n");
  EXPECT_TRUE(r.out.empty());
}

TEST(ProfAnalyze, GoodCaptureSucceedsInEveryFormat) {
  TempDir dir;
  const auto path = dir.file("reference.sqlite");
  test::write_reference_capture(path);

  const Result table = run_cli(dir, {"summary", path});
  EXPECT_EQ(table.status, 0) << table.err;
  EXPECT_TRUE(table.err.empty());
  EXPECT_NE(table.out.find("CUDA GPU Kernel Summary"), std::string::npos);

  const Result csv = run_cli(
      dir, {"summary", path, "--format", "csv", "--names", "short", "--section", "kernels,memops"});
  ASSERT_EQ(csv.status, 0) << csv.err;
  const auto records = test::parse_csv(csv.out);
  ASSERT_GE(records.size(), 4U);
  EXPECT_EQ(records[0], std::vector<std::string>{"# kernels"});
  // the last column names the window (docs/windows.md); the name comes before it
  EXPECT_EQ(records[1].back(), "window");
  EXPECT_EQ(records[1].end()[-2], "name");
  EXPECT_EQ(records[2].end()[-2], test::kQuoted);
  EXPECT_EQ(records[3].end()[-2], "gemm");
  EXPECT_EQ(records[3].back().rfind("whole capture (no steps", 0), 0u) << records[3].back();
  EXPECT_EQ(records[3][2], "4");
  EXPECT_NE(csv.out.find("# memory_operations"), std::string::npos);
  EXPECT_EQ(csv.out.find("# api"), std::string::npos);

  const Result json = run_cli(dir, {"summary", path, "--format=json"});
  ASSERT_EQ(json.status, 0) << json.err;
  const auto doc = nlohmann::json::parse(json.out);
  EXPECT_EQ(doc["totals"]["kernel_count"], 7);
}

}  // namespace
}  // namespace fuselens::analyzer
