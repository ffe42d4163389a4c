// prof-run's progress line while it finalizes a capture (tools/prof-run/FinalizeProgress.h).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "FinalizeProgress.h"

using fuselens::tools::FinalizeProgressPrinter;
using namespace std::chrono_literals;

namespace {

// What the printer wrote to a temporary file, read back.
class Output {
 public:
  Output() : file_(std::tmpfile()) {}
  ~Output() { std::fclose(file_); }
  std::FILE* file() { return file_; }
  std::string text() {
    std::fflush(file_);
    std::rewind(file_);
    std::string out;
    for (int c; (c = std::fgetc(file_)) != EOF;) out += static_cast<char>(c);
    return out;
  }

 private:
  std::FILE* file_;
};

}  // namespace

TEST(FinalizeProgress, OffATerminalAShortFinalizationPrintsNothing) {
  Output out;
  auto t = std::chrono::steady_clock::time_point{};
  FinalizeProgressPrinter p(out.file(), false, 2000ms, [&] { return t; });
  for (int i = 1; i <= 5; ++i) {
    t += 100ms;  // 0.5 s in all
    p.step("index kernel_by_name", i, 5);
  }
  p.done();
  EXPECT_EQ(out.text(), "");
}

TEST(FinalizeProgress, OffATerminalALongFinalizationPrintsAtMostALineEveryQuietPeriod) {
  Output out;
  auto t = std::chrono::steady_clock::time_point{};
  FinalizeProgressPrinter p(out.file(), false, 2000ms, [&] { return t; });
  // Steps every 1.5 s for 9 s: lines at 3 s, 6 s and 9 s (each 2 s or more after the last).
  for (int i = 1; i <= 6; ++i) {
    t += 1500ms;
    p.step("step " + std::to_string(i), i, 6);
  }
  p.step("summary aggregates", 0, 0);  // at 9 s too, but 0 s after the last line
  p.done();
  EXPECT_EQ(out.text(),
            "[fuselens] finalizing the capture: step 2 (2/6)\n"
            "[fuselens] finalizing the capture: step 4 (4/6)\n"
            "[fuselens] finalizing the capture: step 6 (6/6)\n");
}

TEST(FinalizeProgress, OnATerminalEveryStepRewritesOneLineThatDoneErases) {
  Output out;
  auto t = std::chrono::steady_clock::time_point{};
  FinalizeProgressPrinter p(out.file(), true, 2000ms, [&] { return t; });
  p.step("checkpoint", 1, 2);
  p.step("summary aggregates", 0, 0);
  p.done();
  p.done();  // a second done() writes nothing
  EXPECT_EQ(out.text(),
            "\r\033[K[fuselens] finalizing the capture: checkpoint (1/2)"
            "\r\033[K[fuselens] finalizing the capture: summary aggregates"
            "\r\033[K");
}
