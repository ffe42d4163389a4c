// prof-run's progress line while it finalizes a capture (tools/prof-run/FinalizeProgress.h).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "CapturedFile.h"
#include "FinalizeProgress.h"

using fuselens::tools::FinalizeProgressPrinter;
using namespace std::chrono_literals;

namespace {

using Output = fuselens::test::CapturedFile;

}  // namespace

TEST(FinalizeProgress, OffATerminalAShortFinalizationPrintsNothing) {
  Output out;
  auto t = std::chrono::steady_clock::time_point{};
  FinalizeProgressPrinter p(out.file(), false, [&] { return t; });
  for (int i = 1; i <= 5; ++i) {
    t += 100ms;  // 0.5 s in all
    p.step("index kernel_by_name", i, 5);
  }
  p.done();
  EXPECT_EQ(out.text(), "");
}

// Issue 23: progress prints "nothing when not a TTY", however long the finalization runs.
TEST(FinalizeProgress, OffATerminalALongFinalizationPrintsNothingEither) {
  Output out;
  auto t = std::chrono::steady_clock::time_point{};
  FinalizeProgressPrinter p(out.file(), false, [&] { return t; });
  // Steps every 10 s for a minute (a line every 2 s before issue 23's rule).
  for (int i = 1; i <= 6; ++i) {
    t += 10s;
    p.step("step " + std::to_string(i), i, 6);
  }
  p.step("summary aggregates", 0, 0);
  p.done();
  EXPECT_EQ(out.text(), "");
}

TEST(FinalizeProgress, OnATerminalEveryStepRewritesOneLineThatDoneErases) {
  Output out;
  auto t = std::chrono::steady_clock::time_point{};
  FinalizeProgressPrinter p(out.file(), true, [&] { return t; });
  p.step("checkpoint", 1, 2);
  p.step("summary aggregates", 0, 0);
  p.done();
  p.done();  // a second done() writes nothing
  EXPECT_EQ(out.text(),
            "\r\033[K[fuselens] finalizing the capture: checkpoint (1/2)"
            "\r\033[K[fuselens] finalizing the capture: summary aggregates"
            "\r\033[K");
}
