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

// The report line after a long finalization says where the time went: every "index NAME" step
// under one "indexes", the other steps by name in the order they started, the time between
// done() and the next step not counted, steps under the threshold left out.
TEST(FinalizeProgress, TheBreakdownSumsEachKindOfStep) {
  Output out;
  auto t = std::chrono::steady_clock::time_point{};
  FinalizeProgressPrinter p(out.file(), false, [&] { return t; });
  EXPECT_EQ(p.breakdown(), "");
  p.step("checkpoint", 1, 4);
  t += 20ms;
  p.step("index kernel_by_name", 2, 4);
  t += 1500ms;
  p.step("index api_by_name", 3, 4);
  t += 2s;
  p.step("summary aggregates", 0, 0);
  t += 700ms;
  p.done();
  t += 30s;  // a report printed between two steps
  p.step("timeline level of detail", 0, 0);
  t += 250ms;
  p.done();
  p.done();
  EXPECT_EQ(p.breakdown(),
            "indexes 3.5 s, summary aggregates 0.7 s, timeline level of detail 0.2 s");
  EXPECT_EQ(p.breakdown(0.0),
            "checkpoint 0.0 s, indexes 3.5 s, summary aggregates 0.7 s, timeline level of detail "
            "0.2 s");
  EXPECT_EQ(out.text(), "");
}

// Results computed at once are shown with the step that ran them; the steps that store them
// count as one kind.
TEST(FinalizeProgress, TheBreakdownShowsThePartsOfAStepRunAtOnce) {
  Output out;
  auto t = std::chrono::steady_clock::time_point{};
  FinalizeProgressPrinter p(out.file(), false, [&] { return t; });
  p.part("ignored", 1.0);  // no step under way
  p.step("results: summary aggregates, cct", 0, 0);
  t += 3s;
  p.part("summary aggregates", 1.25);
  p.part("cct", 2.875);
  p.step("storing summary aggregates", 0, 0);
  t += 100ms;
  p.step("storing cct", 0, 0);
  t += 200ms;
  p.done();
  EXPECT_EQ(p.breakdown(),
            "results 3.0 s [at once: summary aggregates 1.2 s, cct 2.9 s], storing results 0.3 s");
}

// Results computed beside the index builds end with them: the step that waits for them takes no
// time of its own and is shown for its parts all the same.
TEST(FinalizeProgress, AShortStepIsShownWithItsParts) {
  Output out;
  auto t = std::chrono::steady_clock::time_point{};
  FinalizeProgressPrinter p(out.file(), false, [&] { return t; });
  p.step("index kernel_by_name", 1, 1);
  t += 4s;
  p.step("results: summary aggregates, cct", 0, 0);
  t += 10ms;
  p.part("summary aggregates", 1.25);
  p.part("cct", 2.875);
  p.step("journal", 0, 0);
  t += 10ms;
  p.done();
  EXPECT_EQ(p.breakdown(),
            "indexes 4.0 s, results 0.0 s [at once: summary aggregates 1.2 s, cct 2.9 s]");
}
