// Terminal manners (issue 23): the shared progress line and colour rule of the command-line tools
// (tools/common), the row counting behind prof-analyze's progress (db::RowProgressScope), and
// prof-analyze itself run on a pseudo-terminal (openpty) and off one: progress and colour on a
// terminal only, never colour with NO_COLOR, and "Examples:" in every --help.
#include <fcntl.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "Binaries.h"
#include "CapturedFile.h"
#include "Color.h"
#include "ProgressLine.h"
#include "Subprocess.h"
#include "TestSupport.h"
#include "fuselens/db/ActivityCursors.h"
#include "fuselens/db/Cursor.h"
#include "fuselens/db/Reader.h"
#include "summary/Summary.h"
#include "summary/SummaryFormat.h"

#ifndef PROF_ANALYZE_PATH
#error "PROF_ANALYZE_PATH must name the prof-analyze binary"
#endif

namespace fuselens {
namespace {

using namespace std::chrono_literals;
using analyzer::test::TempDir;
using tools::ColorMode;
using tools::ProgressLine;
using tools::ProgressOptions;

using Output = fuselens::test::CapturedFile;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

ProgressOptions terminal_options() {
  ProgressOptions o;
  o.terminal = true;
  o.columns = 200;
  return o;  // the defaults: 1 s delay, 100 ms interval
}

// ---- ProgressLine ----

TEST(ProgressLine, OnATerminalWorkShorterThanTheDelayPrintsNothing) {
  Output out;
  auto t = std::chrono::steady_clock::time_point{};
  {
    ProgressLine line(out.file(), terminal_options(), [&] { return t; });
    for (int i = 0; i < 9; ++i) {
      t += 100ms;  // 0.9 s in all
      line.update("export html: " + std::to_string(i), i % 2 == 0);
    }
  }
  EXPECT_EQ(out.text(), "");
}

TEST(ProgressLine, OnATerminalUpdatesAreAtMostTenASecondAndTheLineIsErasedAtTheEnd) {
  Output out;
  auto t = std::chrono::steady_clock::time_point{};
  {
    ProgressLine line(out.file(), terminal_options(), [&] { return t; });
    // An update every 10 ms for 3 s: shown from 1 s on, at most one per 100 ms.
    for (int i = 1; i <= 300; ++i) {
      t += 10ms;
      line.update("n " + std::to_string(i));
    }
  }
  const std::string text = out.text();
  const std::size_t shown = count(text, "[fuselens] n ");
  EXPECT_GE(shown, 19U) << text;  // 2 s of updates, 10 a second
  EXPECT_LE(shown, 21U) << text;
  EXPECT_EQ(text.rfind("\r\033[K[fuselens] n 100", 0), 0U) << "first at 1 s: " << text;
  EXPECT_EQ(text.substr(text.size() - 4), "\r\033[K") << "erased at the end";
  EXPECT_EQ(text.find('\n'), std::string::npos) << "one line rewritten in place";
}

TEST(ProgressLine, AForcedUpdateIsShownWithinTheIntervalButNotBeforeTheDelay) {
  Output out;
  auto t = std::chrono::steady_clock::time_point{};
  ProgressLine line(out.file(), terminal_options(), [&] { return t; });
  line.update("stage a", true);  // at 0 s: before the delay
  t += 1000ms;
  line.update("stage b", true);
  t += 1ms;
  line.update("rows 1");  // within the interval: skipped
  line.update("stage c", true);
  line.done();
  EXPECT_EQ(out.text(), "\r\033[K[fuselens] stage b\r\033[K[fuselens] stage c\r\033[K");
}

TEST(ProgressLine, OffATerminalNothingIsPrintedUnlessLogLinesAreAsked) {
  Output out;
  auto t = std::chrono::steady_clock::time_point{};
  ProgressOptions options;  // terminal false, log_every 0
  {
    ProgressLine line(out.file(), options, [&] { return t; });
    for (int i = 0; i < 100; ++i) {
      t += 500ms;
      line.update("rows", true);
    }
  }
  EXPECT_EQ(out.text(), "");
}

TEST(ProgressLine, TheLineIsCutToTheTerminalWidthAndControlCharactersAreEscaped) {
  Output out;
  ProgressOptions options = terminal_options();
  options.delay = 0ms;
  options.columns = 30;
  ProgressLine line(out.file(), options);
  line.update("export html: writing \033]0;pwned\007 /a/very/long/path/of/an/output/file.html");
  const std::string text = out.text();
  ASSERT_EQ(text.rfind("\r\033[K", 0), 0U);
  const std::string shown = text.substr(4);
  EXPECT_EQ(shown.size(), 29U) << shown;  // one column left free
  EXPECT_EQ(shown.find('\033'), std::string::npos) << shown;
  EXPECT_EQ(shown.find('\007'), std::string::npos) << shown;

  Output narrow;  // a one-column terminal: one character, never a wrapped line
  options.columns = 1;
  ProgressLine one(narrow.file(), options);
  one.update("flags: 12 rows read");
  EXPECT_EQ(narrow.text(), "\r\033[K[");
}

// FUSELENS_PROGRESS: one set of values for the tools and the collector (whose parser,
// CollectorConfig::from_environment, tests/collector/LaunchFilterTest.cpp checks the same way).
TEST(ProgressLine, ProgressModeAcceptsTheCollectorsValuesToo) {
  using tools::ProgressMode;
  EXPECT_EQ(tools::parse_progress_mode(""), ProgressMode::Auto);
  EXPECT_EQ(tools::parse_progress_mode("auto"), ProgressMode::Auto);
  EXPECT_EQ(tools::parse_progress_mode("always"), ProgressMode::Always);
  EXPECT_EQ(tools::parse_progress_mode("1"), ProgressMode::Always);
  EXPECT_EQ(tools::parse_progress_mode("never"), ProgressMode::Never);
  EXPECT_EQ(tools::parse_progress_mode("0"), ProgressMode::Never);
  EXPECT_EQ(tools::parse_progress_mode("yes"), std::nullopt);
  EXPECT_EQ(tools::parse_progress_mode("Never"), std::nullopt);
  EXPECT_EQ(tools::parse_progress_mode("2"), std::nullopt);
}

TEST(ProgressLine, EraseOpenLineClearsTheLineBeforeADiagnostic) {
  Output out;
  ProgressOptions options = terminal_options();
  options.delay = 0ms;
  ProgressLine line(out.file(), options);
  line.update("flags: 1.2M rows read");
  ProgressLine::erase_open_line();
  std::fputs("prof-analyze: error: x\n", out.file());
  line.done();  // nothing more: already erased
  EXPECT_EQ(out.text(), "\r\033[K[fuselens] flags: 1.2M rows read\r\033[Kprof-analyze: error: x\n");
}

// ---- Colour rule ----

TEST(Color, OnlyOnATerminalNeverWithNoColorAndAlwaysWhenAskedFor) {
  EXPECT_TRUE(tools::use_color(ColorMode::Auto, true, nullptr, "xterm-256color"));
  EXPECT_FALSE(tools::use_color(ColorMode::Auto, false, nullptr, "xterm"));
  EXPECT_FALSE(tools::use_color(ColorMode::Auto, true, "1", "xterm"));
  EXPECT_FALSE(tools::use_color(ColorMode::Auto, true, "0", "xterm")) << "any non-empty value";
  EXPECT_TRUE(tools::use_color(ColorMode::Auto, true, "", "xterm")) << "empty: as if unset";
  EXPECT_FALSE(tools::use_color(ColorMode::Auto, true, nullptr, "dumb"));
  EXPECT_FALSE(tools::use_color(ColorMode::Never, true, nullptr, "xterm"));
  EXPECT_TRUE(tools::use_color(ColorMode::Always, false, nullptr, "dumb"));
  EXPECT_TRUE(tools::use_color(ColorMode::Always, false, "", "dumb")) << "empty: as if unset";
  EXPECT_FALSE(tools::use_color(ColorMode::Always, true, "1", "xterm")) << "NO_COLOR wins";
  EXPECT_EQ(tools::parse_color_mode("always"), ColorMode::Always);
  EXPECT_EQ(tools::parse_color_mode("Always"), std::nullopt);
  EXPECT_EQ(tools::paint("error:", tools::Tone::Error, false), "error:");
  EXPECT_EQ(tools::paint("error:", tools::Tone::Error, true), "\033[1;31merror:\033[0m");
}

// ---- Row counting (db::RowProgressScope) ----

TEST(RowProgress, EveryRowACursorReadsIsCountedInBatchesAndAtItsEnd) {
  TempDir dir;
  const std::string path = dir.file("ref.sqlite");
  analyzer::test::write_reference_capture(path);
  db::Reader reader(path);
  const auto kernels = static_cast<std::uint64_t>(reader.query_int("SELECT COUNT(*) FROM kernel"));
  ASSERT_GE(kernels, 3U);
  std::vector<std::uint64_t> calls;
  {
    db::RowProgressScope scope([&](std::uint64_t rows) { calls.push_back(rows); }, 2);
    auto cursor = db::kernel_launches(reader, db::NameKind::Demangled);
    std::uint64_t read = 0;
    while (cursor.next()) ++read;
    EXPECT_EQ(read, kernels);
    EXPECT_EQ(scope.rows(), kernels);
  }
  // A call after every 2 rows, and one for the rest at the end when the count is odd.
  ASSERT_EQ(calls.size(), (kernels + 1) / 2);
  EXPECT_EQ(calls.back(), kernels);
  for (std::size_t i = 0; i + 1 < calls.size(); ++i) EXPECT_EQ(calls[i], 2 * (i + 1));

  // Without a scope nothing is counted; an inner scope counts alone and restores the outer one.
  calls.clear();
  auto uncounted = db::kernel_launches(reader, db::NameKind::Demangled);
  while (uncounted.next()) {
  }
  EXPECT_TRUE(calls.empty());
  std::uint64_t outer_rows = 0, inner_rows = 0;
  db::RowProgressScope outer([&](std::uint64_t rows) { outer_rows = rows; }, 1);
  {
    db::RowProgressScope inner([&](std::uint64_t rows) { inner_rows = rows; }, 1);
    auto c = db::kernel_launches(reader, db::NameKind::Demangled);
    while (c.next()) {
    }
  }
  auto c = db::kernel_launches(reader, db::NameKind::Demangled);
  while (c.next()) {
  }
  EXPECT_EQ(inner_rows, kernels);
  EXPECT_EQ(outer_rows, kernels);
}

TEST(RowProgress, AReaderOpenedInAScopeReportsLongStatementsThatReadNoCursorRows) {
  TempDir dir;
  const std::string path = dir.file("ref.sqlite");
  analyzer::test::write_reference_capture(path);
  int calls = 0;
  db::RowProgressScope scope([&](std::uint64_t rows) {
    EXPECT_EQ(rows, 0U);
    ++calls;
  });
  db::Reader reader(path);
  const int before = calls;
  // Some millions of SQLite instructions, no Cursor: the progress handler reports them.
  EXPECT_EQ(reader.query_int("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                             "WHERE x < 300000) SELECT COUNT(*) FROM c"),
            300000);
  EXPECT_GT(calls, before);
  EXPECT_EQ(scope.rows(), 0U);
}

TEST(RowProgress, CountingRowsDoesNotChangeAnAnalysis) {
  TempDir dir;
  const std::string path = dir.file("ref.sqlite");
  analyzer::test::write_reference_capture(path);
  auto summary_json = [&] {
    db::Reader reader(path);
    std::ostringstream out;
    analyzer::write_summary(out, analyzer::summarize(reader, db::NameKind::Demangled),
                            analyzer::OutputFormat::Json);
    return out.str();
  };
  const std::string plain = summary_json();
  std::uint64_t rows = 0;
  db::RowProgressScope scope([&](std::uint64_t r) { rows = r; }, 1);
  EXPECT_EQ(summary_json(), plain);
  EXPECT_GT(rows, 0U) << "the summary reads its rows through cursors";
}

// ---- prof-analyze on a pseudo-terminal ----

struct TtyResult {
  int status = -1;
  std::string out;  ///< standard output (a file)
  std::string tty;  ///< what the program wrote to its terminal (standard error)
};

// Runs prof-analyze with `args` and its standard error on a pseudo-terminal of 120 columns
// (standard output to a file), with `env` ("NAME=value") added to the environment.
TtyResult run_on_tty(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  TempDir dir;
  const std::string out_path = dir.file("out");
  int master = -1, slave = -1;
  winsize size{};
  size.ws_row = 24;
  size.ws_col = 120;
  TtyResult r;
  if (::openpty(&master, &slave, nullptr, nullptr, &size) != 0) {
    ADD_FAILURE() << "openpty: " << std::strerror(errno);
    return r;
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(master);
    ::setsid();
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(out, 1);
    ::dup2(slave, 2);
    ::dup2(slave, 0);
    ::close(slave);
    ::unsetenv("NO_COLOR");
    ::unsetenv("FUSELENS_PROGRESS");
    ::setenv("TERM", "xterm", 1);
    for (const auto& e : env) ::putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> argv{const_cast<char*>(PROF_ANALYZE_PATH)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(126);
  }
  ::close(slave);
  char buffer[4096];
  for (;;) {  // until the last descriptor of the terminal closes (EIO on Linux)
    const ssize_t n = ::read(master, buffer, sizeof buffer);
    if (n > 0) {
      r.tty.append(buffer, static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  ::close(master);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = test::slurp(out_path);
  return r;
}

test::Result run_plain(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  std::vector<std::string> argv{PROF_ANALYZE_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  return test::run(argv, env);
}

std::string data(const std::string& name) {
  return std::string(FUSELENS_TEST_DATA_DIR) + "/" + name;
}

TEST(ProfAnalyzeTerminal, ExportShowsProgressOnATerminalAndNothingOffOneWithTheSameFile) {
  TempDir dir;
  const std::string capture = data("fusion_bench.sqlite");
  const std::vector<std::string> env{"FUSELENS_PROGRESS_DELAY_MS=0"};
  const TtyResult tty =
      run_on_tty({"export", capture, "--format", "chrome-trace", "-o", dir.file("tty.json")}, env);
  ASSERT_EQ(tty.status, 0) << tty.tty;
  EXPECT_NE(tty.tty.find("\r\033[K[fuselens] export chrome-trace: reading"), std::string::npos)
      << tty.tty;
  EXPECT_NE(tty.tty.find("[fuselens] export chrome-trace: writing " + dir.file("tty.json")),
            std::string::npos)
      << tty.tty;
  EXPECT_NE(tty.tty.find(" rows read, "), std::string::npos) << tty.tty;
  EXPECT_EQ(tty.tty.substr(tty.tty.size() - 4), "\r\033[K") << "the line is erased at the end";

  const test::Result plain =
      run_plain({"export", capture, "--format", "chrome-trace", "-o", dir.file("plain.json")}, env);
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(plain.err, "") << "no progress off a terminal";
  EXPECT_EQ(test::slurp(dir.file("tty.json")), test::slurp(dir.file("plain.json")))
      << "progress does not change the export";
}

TEST(ProfAnalyzeTerminal, AnalysesShowProgressOnlyOnATerminalAndEraseItBeforeTheirOutput) {
  const std::string capture = data("fusion_bench.sqlite");
  for (const std::string command : {"summary", "cct", "flags", "steps", "compare"}) {
    std::vector<std::string> args{command, capture, "--format", "json"};
    if (command == "compare") args.insert(args.begin() + 2, capture);  // the capture against itself
    const TtyResult tty = run_on_tty(args, {"FUSELENS_PROGRESS_DELAY_MS=0"});
    const test::Result plain = run_plain(args, {"FUSELENS_PROGRESS_DELAY_MS=0"});
    EXPECT_EQ(tty.status, plain.status) << command;
    EXPECT_EQ(tty.out, plain.out) << command << ": the analysis is the same";
    EXPECT_EQ(plain.err, "") << command;
    EXPECT_EQ(tty.tty.find('\n'), std::string::npos) << command << ": " << tty.tty;
    // With no delay the first rows read show the line; it is erased before the analysis. The
    // summary answers this capture from its stored aggregates: it may read no row at all.
    if (command == "summary" && tty.tty.empty()) continue;
    EXPECT_EQ(tty.tty.rfind("\r\033[K[fuselens] " + command + ": ", 0), 0U) << tty.tty;
    if (command != "summary") {
      EXPECT_NE(tty.tty.find(" rows read, "), std::string::npos) << tty.tty;
    }
    ASSERT_GE(tty.tty.size(), 4U);
    EXPECT_EQ(tty.tty.substr(tty.tty.size() - 4), "\r\033[K") << command;
  }
  // FUSELENS_PROGRESS=never (or 0, the collector's spelling) turns it off on a terminal too.
  TempDir dir;
  for (const std::string value : {"never", "0"}) {
    const TtyResult off =
        run_on_tty({"export", capture, "--format", "csv", "-o", dir.file("out.csv")},
                   {"FUSELENS_PROGRESS_DELAY_MS=0", "FUSELENS_PROGRESS=" + value});
    EXPECT_EQ(off.status, 0) << value;
    EXPECT_EQ(off.tty, "") << value;
  }
  // FUSELENS_PROGRESS=always (or 1) shows it off a terminal; an unknown value is ignored.
  for (const std::string value : {"always", "1", "yes"}) {
    const test::Result plain =
        run_plain({"export", capture, "--format", "csv", "-o", dir.file("out.csv")},
                  {"FUSELENS_PROGRESS_DELAY_MS=0", "FUSELENS_PROGRESS=" + value});
    EXPECT_EQ(plain.status, 0) << value << ": " << plain.err;
    if (value == "yes") {
      EXPECT_EQ(plain.err, "") << value;
    } else {
      EXPECT_EQ(plain.err.rfind("\r\033[K[fuselens] export csv: ", 0), 0U) << value << plain.err;
    }
  }
}

TEST(ProfAnalyzeTerminal, ShortWorkShowsNoProgressWithTheDefaultDelay) {
  TempDir dir;
  const TtyResult tty = run_on_tty(
      {"export", data("fusion_bench.sqlite"), "--format", "csv", "-o", dir.file("out.csv")}, {});
  EXPECT_EQ(tty.status, 0);
  EXPECT_EQ(tty.tty, "") << "a sub-second export prints nothing";
}

TEST(ProfAnalyzeTerminal, ErrorsAreColouredOnATerminalOnlyAndNeverWithNoColor) {
  TempDir dir;
  const std::string missing = dir.file("missing.sqlite");
  const std::string red = "prof-analyze: \033[1;31merror:\033[0m ";
  const std::string plain_prefix = "prof-analyze: error: ";
  auto tty = [&](std::vector<std::string> extra, std::vector<std::string> env) {
    std::vector<std::string> args{"summary", missing};
    args.insert(args.end(), extra.begin(), extra.end());
    const TtyResult r = run_on_tty(args, env);
    EXPECT_EQ(r.status, 1) << r.tty;
    return r.tty;
  };
  EXPECT_EQ(tty({}, {}).rfind(red, 0), 0U) << "auto on a terminal";
  EXPECT_EQ(tty({}, {"NO_COLOR=1"}).rfind(plain_prefix, 0), 0U) << "NO_COLOR";
  EXPECT_EQ(tty({"--color", "auto"}, {"NO_COLOR=1"}).find('\033'), std::string::npos)
      << "NO_COLOR with --color auto";
  EXPECT_EQ(tty({}, {"NO_COLOR="}).rfind(red, 0), 0U) << "an empty NO_COLOR is unset";
  EXPECT_EQ(tty({}, {"TERM=dumb"}).rfind(plain_prefix, 0), 0U) << "TERM=dumb";
  EXPECT_EQ(tty({"--color", "never"}, {}).rfind(plain_prefix, 0), 0U) << "--color never";
  EXPECT_EQ(tty({"--color", "always"}, {"NO_COLOR=1"}).rfind(plain_prefix, 0), 0U)
      << "NO_COLOR wins even over --color always (issue 23)";

  // Off a terminal: plain, unless --color always (before or after the subcommand).
  const test::Result off = run_plain({"summary", missing}, {});
  EXPECT_EQ(off.err.rfind(plain_prefix, 0), 0U) << off.err;
  const test::Result always = run_plain({"--color", "always", "summary", missing}, {});
  EXPECT_EQ(always.err.rfind(red, 0), 0U) << always.err;
  const test::Result always_no_color =
      run_plain({"--color", "always", "summary", missing}, {"NO_COLOR=1"});
  EXPECT_EQ(always_no_color.err.rfind(plain_prefix, 0), 0U) << always_no_color.err;
  const test::Result bad = run_plain({"summary", missing, "--color", "sometimes"}, {});
  EXPECT_EQ(bad.status, 2) << bad.err;
  // The analysis on standard output is never coloured, even with --color always.
  const test::Result table =
      run_plain({"summary", data("fusion_bench.sqlite"), "--color", "always"}, {});
  EXPECT_EQ(table.status, 0) << table.err;
  EXPECT_EQ(table.out.find('\033'), std::string::npos);
}

// ---- Examples in every --help ----

// The subcommands prof-analyze --help lists (CLI11: "Subcommands:" then "  name  description").
std::vector<std::string> subcommands(const std::string& help) {
  std::vector<std::string> names;
  auto at = help.find("Subcommands:");
  if (at == std::string::npos) at = help.find("SUBCOMMANDS:");  // older CLI11
  if (at == std::string::npos) return names;
  std::istringstream in(help.substr(at));
  std::string line;
  std::getline(in, line);
  static const std::regex row(R"(^  ([a-z][a-z0-9-]*)\s{2,}\S.*)");
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_match(line, m, row)) names.push_back(m[1]);
    if (line.rfind("Examples:", 0) == 0 || line.rfind("Exit status:", 0) == 0) break;
  }
  return names;
}

// The example lines ("  PROGRAM ...") under "Examples:" in `help`.
std::vector<std::string> examples(const std::string& help, const std::string& program) {
  std::vector<std::string> lines;
  const auto at = help.find("\nExamples:\n");
  if (at == std::string::npos) return lines;
  std::istringstream in(help.substr(at + 11));
  for (std::string line; std::getline(in, line) && line.rfind("  ", 0) == 0;) {
    if (line.find("  " + program) != std::string::npos) lines.push_back(line);
  }
  return lines;
}

TEST(Help, EveryProfAnalyzeHelpEndsWithExamplesOfItsOwnCommand) {
  const test::Result top = run_plain({"--help"}, {});
  ASSERT_EQ(top.status, 0);
  EXPECT_GE(examples(top.out, "prof-analyze").size(), 2U) << top.out;
  // Every footer with the shared exit statuses (cli::kFooter) lists compare's status 5 after the
  // examples; merge and convert have their own statuses (they never compare).
  const std::string inconclusive = "\n  5  compare --fail-if-slower: inconclusive";
  EXPECT_GT(top.out.find(inconclusive), top.out.find("\nExamples:\n")) << top.out;
  const auto names = subcommands(top.out);
  ASSERT_GE(names.size(), 10U) << top.out;
  for (const auto& name : names) {
    const test::Result help = run_plain({name, "--help"}, {});
    EXPECT_EQ(help.status, 0) << name;
    const auto lines = examples(help.out, "prof-analyze " + name);
    EXPECT_GE(lines.size(), 2U) << name << ":\n" << help.out;
    EXPECT_LE(examples(help.out, "prof-").size(), 4U) << name;
    EXPECT_NE(help.out.find("Exit status:"), std::string::npos) << name;
    if (name != "merge" && name != "convert") {
      const auto at = help.out.find(inconclusive);
      EXPECT_NE(at, std::string::npos) << name << ":\n" << help.out;
      EXPECT_GT(at, help.out.find("\nExamples:\n")) << name;
    }
  }
}

TEST(Help, ProfRunAndProfCeilingsHelpHaveExamples) {
#if defined(PROF_RUN_PATH) && defined(PROF_CEILINGS_PATH)
  for (const auto& [program, path] :
       {std::pair<std::string, std::string>{"prof-run", PROF_RUN_PATH},
        {"prof-ceilings", PROF_CEILINGS_PATH}}) {
    const test::Result help = test::run({test::binary(program, path), "--help"});
    EXPECT_EQ(help.status, 0) << program << help.err;
    EXPECT_GE(examples(help.out, program).size(), 2U) << program << ":\n" << help.out;
  }
#else
  GTEST_SKIP() << "prof-run and prof-ceilings are built with the GPU side only";
#endif
}

TEST(Help, ProfGuiHelpHasExamples) {
#ifdef PROF_GUI_PATH
  const test::Result help =
      test::run({test::binary("prof-gui", PROF_GUI_PATH), "--help"}, {"QT_QPA_PLATFORM=offscreen"});
  EXPECT_EQ(help.status, 0) << help.err;
  EXPECT_NE(help.out.find("Options:"), std::string::npos) << help.out;
  EXPECT_GE(examples(help.out, "prof-gui").size(), 2U) << help.out;
  const test::Result bad = test::run({test::binary("prof-gui", PROF_GUI_PATH), "--bogus"},
                                     {"QT_QPA_PLATFORM=offscreen"});
  EXPECT_NE(bad.status, 0) << "errors are still QCommandLineParser::process()'s";
#else
  GTEST_SKIP() << "prof-gui is built only where Qt 6 is installed";
#endif
}

}  // namespace
}  // namespace fuselens
