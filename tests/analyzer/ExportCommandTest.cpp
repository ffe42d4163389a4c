// Runs `prof-analyze export` and checks its outputs, exit codes and one-line errors.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "Subprocess.h"
#include "TestSupport.h"

#ifndef PROF_ANALYZE_PATH
#error "PROF_ANALYZE_PATH must name the prof-analyze binary"
#endif

namespace fuselens::analyzer {
namespace {

using fuselens::test::Result;
using fuselens::test::run_cli;
using fuselens::test::slurp;
using test::TempDir;
namespace fs = std::filesystem;

Result export_cli(const TempDir& dir, std::vector<std::string> args) {
  args.insert(args.begin(), "export");
  return run_cli(dir, std::move(args));
}

void expect_one_error_line(const Result& r) {
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("prof-analyze: error: ", 0), 0U) << r.err;
}

class ExportCommand : public ::testing::Test {
 protected:
  void SetUp() override { test::write_reference_capture(capture_); }
  TempDir dir_;
  std::string capture_ = dir_.file("reference.sqlite");
};

TEST_F(ExportCommand, WritesEveryFormat) {
  for (const char* format : {"html", "json", "csv", "chrome-trace"}) {
    const std::string out = dir_.file(std::string("report.") + format);
    const Result r = export_cli(dir_, {capture_, "--format", format, "-o", out});
    ASSERT_EQ(r.status, 0) << format << ": " << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    EXPECT_GT(fs::file_size(out), 100U) << format;
    EXPECT_FALSE(fs::exists(out + ".tmp")) << format;
  }
  EXPECT_TRUE(nlohmann::json::accept(slurp(dir_.file("report.chrome-trace"))));
  EXPECT_TRUE(nlohmann::json::accept(slurp(dir_.file("report.json"))));
  EXPECT_EQ(slurp(dir_.file("report.html")).rfind("<!DOCTYPE html>", 0), 0U);
}

TEST_F(ExportCommand, AGzOutputIsGzipAndRankSelectsProcesses) {
  const std::string out = dir_.file("rank0.json.gz");
  const Result r = export_cli(dir_, {capture_, "--format", "chrome-trace", "-o", out});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string raw = slurp(out);
  ASSERT_GE(raw.size(), 2U);
  EXPECT_EQ(static_cast<unsigned char>(raw[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(raw[1]), 0x8b);
  // The reference capture has no process_rank rows: no rank 0 to select, one error line.
  const std::string ranked = dir_.file("ranked.json");
  const Result none =
      export_cli(dir_, {capture_, "--format", "chrome-trace", "--rank", "0", "-o", ranked});
  EXPECT_EQ(none.status, 1);
  expect_one_error_line(none);
  EXPECT_FALSE(fs::exists(ranked));
  for (const auto& args : std::vector<std::vector<std::string>>{
           {capture_, "--format", "json", "--rank", "0", "-o", ranked},
           {capture_, "--format", "chrome-trace", "--rank", "-1", "-o", ranked},
           {capture_, "--format", "chrome-trace", "--rank", "x", "-o", ranked}}) {
    const Result bad = export_cli(dir_, args);
    EXPECT_EQ(bad.status, 2) << args[2] << " " << args[4];
    expect_one_error_line(bad);
    EXPECT_FALSE(fs::exists(ranked));
  }
}

TEST_F(ExportCommand, TwoCapturesMakeOneSideBySideDocument) {
  const std::string out = dir_.file("both.json");
  const Result r = export_cli(dir_, {capture_, capture_, "--format", "json", "-o", out});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto doc = nlohmann::json::parse(slurp(out));
  EXPECT_EQ(doc["runs"].size(), 2U);
  EXPECT_TRUE(doc.contains("side_by_side"));
  const Result html = export_cli(dir_, {capture_, capture_, "--format=html", "-o", out});
  EXPECT_EQ(html.status, 0) << html.err;
}

TEST_F(ExportCommand, DashWritesToStandardOutput) {
  const Result r = export_cli(dir_, {capture_, "--format", "csv", "-o", "-"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("# runs\n", 0), 0U);
}

TEST_F(ExportCommand, UsageErrorsExitWithTwo) {
  const std::string out = dir_.file("x.html");
  for (const auto& args : std::vector<std::vector<std::string>>{
           {capture_, "--format", "pdf", "-o", out},
           {capture_, "--format", "html"},
           {capture_, "-o", out},
           {"--format", "html", "-o", out},
           {capture_, capture_, capture_, "--format", "html", "-o", out},
           {capture_, capture_, "--format", "chrome-trace", "-o", out},
           {capture_, "--format", "html", "-o", out, "--names", "pretty"}}) {
    const Result r = export_cli(dir_, args);
    EXPECT_EQ(r.status, 2) << args[1] << " " << args[2];
    expect_one_error_line(r);
    EXPECT_FALSE(fs::exists(out));
  }
}

TEST_F(ExportCommand, UnreadableCaptureExitsWithOneAndWritesNothing) {
  const std::string out = dir_.file("x.html");
  const std::string text = dir_.file("text.sqlite");
  std::ofstream(text) << "not a database" << std::string(4096, 'x');
  const std::string nocuda = dir_.file("nocuda.sqlite");
  test::write_capture_without_process(nocuda);
  for (const auto& bad : {dir_.file("absent.sqlite"), text, nocuda}) {
    for (const char* format : {"html", "chrome-trace"}) {
      const Result r = export_cli(dir_, {bad, "--format", format, "-o", out});
      EXPECT_EQ(r.status, 1) << bad << " " << format;
      expect_one_error_line(r);
      EXPECT_FALSE(fs::exists(out));
      EXPECT_FALSE(fs::exists(out + ".tmp"));
    }
  }
  // A bad second capture fails the same way.
  const Result r = export_cli(dir_, {capture_, text, "--format", "json", "-o", out});
  EXPECT_EQ(r.status, 1);
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(ExportCommand, UnwritableOutputIsOneErrorLineAndNoPartialFile) {
  const std::string missing_dir = dir_.file("no/such/dir/report.html");
  Result r = export_cli(dir_, {capture_, "--format", "html", "-o", missing_dir});
  EXPECT_EQ(r.status, 1);
  expect_one_error_line(r);
  EXPECT_NE(r.err.find("no/such/dir/report.html"), std::string::npos) << r.err;

  // OUT is a directory: refused before anything is written.
  const std::string is_dir = dir_.file("taken");
  fs::create_directory(is_dir);
  for (const char* format : {"html", "chrome-trace"}) {
    r = export_cli(dir_, {capture_, "--format", format, "-o", is_dir});
    EXPECT_EQ(r.status, 1) << format;
    expect_one_error_line(r);
    EXPECT_TRUE(fs::is_directory(is_dir));
    EXPECT_FALSE(fs::exists(is_dir + ".tmp")) << format;
  }
}

// Issue 22, files destroyed: an output that is an input (by inode), a symbolic link, a FIFO or a
// device is refused with one line and left as it was; the temporary file is created new in the
// output's directory, so a planted "OUT.tmp" link is never followed. Before: the capture was
// replaced by the report, and OUT.tmp's target was overwritten.
TEST_F(ExportCommand, NeverReplacesAnInputOrANonRegularFile) {
  const std::string before = slurp(capture_);
  const std::string alias = dir_.file("alias.sqlite");
  fs::create_hard_link(capture_, alias);
  for (const std::string& out : {capture_, alias}) {
    const Result r = export_cli(dir_, {capture_, "--format", "html", "-o", out});
    EXPECT_EQ(r.status, 1) << out;
    expect_one_error_line(r);
    EXPECT_NE(r.err.find("being read"), std::string::npos) << r.err;
  }
  EXPECT_EQ(slurp(capture_), before);

  const std::string target = dir_.file("target.txt");
  std::ofstream(target) << "keep";
  const std::string link = dir_.file("link.html");
  fs::create_symlink(target, link);
  const std::string fifo = dir_.file("fifo.html");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& out : {link, fifo, std::string("/dev/null")}) {
    const Result r = export_cli(dir_, {capture_, "--format", "csv", "-o", out});
    EXPECT_EQ(r.status, 1) << out;
    expect_one_error_line(r);
    EXPECT_NE(r.err.find("refusing to replace it"), std::string::npos) << r.err;
  }
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));

  const std::string out = dir_.file("report.html");
  fs::create_symlink(target, out + ".tmp");  // the old fixed temporary name, planted
  const Result r = export_cli(dir_, {capture_, "--format", "html", "-o", out});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(slurp(target), "keep");
  EXPECT_TRUE(fs::is_regular_file(out));
  for (const auto& entry : fs::directory_iterator(dir_.path())) {
    EXPECT_EQ(entry.path().filename().string().rfind(".report.html.", 0), std::string::npos)
        << "temporary file left: " << entry.path();
  }
}

TEST_F(ExportCommand, ReplacesAnExistingOutputOnlyWhenComplete) {
  const std::string out = dir_.file("report.csv");
  std::ofstream(out) << "old";
  Result r = export_cli(dir_, {dir_.file("absent.sqlite"), "--format", "csv", "-o", out});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(slurp(out), "old");
  r = export_cli(dir_, {capture_, "--format", "csv", "-o", out});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(slurp(out).rfind("# runs\n", 0), 0U);
}

std::string fusion_bench() { return std::string(FUSELENS_TEST_DATA_DIR) + "/fusion_bench.sqlite"; }

/// The body of the HTML section with `id` (up to its </section>), or "" when it is missing.
std::string html_section(const std::string& html, const std::string& id) {
  const auto start = html.find("<section id=\"" + id + "\"");
  if (start == std::string::npos) return {};
  return html.substr(start, html.find("</section>", start) - start);
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_F(ExportCommand, BaselineAndCandidateReplaceTheAutoDetectedComparison) {
  const std::string out = dir_.file("swish.html");
  const Result r = export_cli(dir_, {fusion_bench(), "--format", "html", "-o", out, "--baseline",
                                     "swish/unfused/*", "--candidate", "swish/fused/*"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  const std::string html = slurp(out);
  const std::string table = html_section(html, "variant-comparison");
  ASSERT_FALSE(table.empty());
  EXPECT_EQ(occurrences(table, "<tr>"), 3U) << table;  // header + the two swish shapes
  EXPECT_NE(table.find("1024x1024"), std::string::npos);
  EXPECT_NE(table.find("4096x4096"), std::string::npos);
  EXPECT_EQ(table.find("gemm"), std::string::npos);
  EXPECT_NE(table.find("swish/unfused/*"), std::string::npos);
  EXPECT_NE(table.find("Baseline vs candidate"), std::string::npos);
  const std::string heatmap = html_section(html, "heatmap");
  EXPECT_EQ(occurrences(heatmap, "class=\"heat-cell\""), 4U);
  EXPECT_EQ(heatmap.find("gemm"), std::string::npos);

  // Without the options the report keeps the unfused/fused auto-detection (gemm rows too).
  const std::string plain = dir_.file("plain.html");
  ASSERT_EQ(export_cli(dir_, {fusion_bench(), "--format", "html", "-o", plain}).status, 0);
  const std::string all = html_section(slurp(plain), "variant-comparison");
  EXPECT_NE(all.find("gemm"), std::string::npos);
  EXPECT_NE(all.find("Unfused vs fused"), std::string::npos);
}

TEST_F(ExportCommand, JsonGainsAComparisonKey) {
  const std::string out = dir_.file("swish.json");
  const Result r = export_cli(dir_, {fusion_bench(), "--format", "json", "-o", out, "--baseline",
                                     "swish/unfused/*", "--candidate", "swish/fused/*"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto doc = nlohmann::json::parse(slurp(out));
  ASSERT_TRUE(doc.contains("comparison"));
  const auto& comparison = doc["comparison"];
  EXPECT_EQ(comparison["baseline"]["pattern"], "swish/unfused/*");
  EXPECT_EQ(comparison["candidate"]["pattern"], "swish/fused/*");
  ASSERT_EQ(comparison["comparisons"].size(), 2U);
  for (const auto& row : comparison["comparisons"]) EXPECT_EQ(row["op"], "swish");
  EXPECT_EQ(doc["runs"].size(), 1U);

  const std::string plain = dir_.file("plain.json");
  ASSERT_EQ(export_cli(dir_, {fusion_bench(), "--format", "json", "-o", plain}).status, 0);
  EXPECT_FALSE(nlohmann::json::parse(slurp(plain)).contains("comparison"));
}

TEST_F(ExportCommand, BaselineAndCandidateErrors) {
  const std::string out = dir_.file("x.html");
  const std::string bench = fusion_bench();
  // One option alone, a format without comparisons, two files: usage errors.
  for (const auto& args : std::vector<std::vector<std::string>>{
           {bench, "--format", "html", "-o", out, "--baseline", "swish/unfused/*"},
           {bench, "--format", "json", "-o", out, "--candidate", "swish/fused/*"},
           {bench, "--format", "csv", "-o", out, "--baseline", "swish/unfused/*", "--candidate",
            "swish/fused/*"},
           {bench, bench, "--format", "html", "-o", out, "--baseline", "swish/unfused/*",
            "--candidate", "swish/fused/*"}}) {
    const Result r = export_cli(dir_, args);
    EXPECT_EQ(r.status, 2) << args[4] << " " << args.back();
    expect_one_error_line(r);
    EXPECT_FALSE(fs::exists(out));
  }
  // A pattern that matches no range: exit 1, one line naming it, nothing written.
  const Result r = export_cli(dir_, {bench, "--format", "html", "-o", out, "--baseline", "nosuch/*",
                                     "--candidate", "swish/fused/*"});
  EXPECT_EQ(r.status, 1);
  expect_one_error_line(r);
  EXPECT_NE(r.err.find("nosuch/*"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out + ".tmp"));
}

TEST_F(ExportCommand, HelpNamesTheFormats) {
  const Result r = export_cli(dir_, {"--help"});
  EXPECT_EQ(r.status, 0);
  for (const char* word :
       {"html", "chrome-trace", "FILE2", "Exit status", "--baseline", "--candidate"}) {
    EXPECT_NE(r.out.find(word), std::string::npos) << word;
  }
}

}  // namespace
}  // namespace fuselens::analyzer
