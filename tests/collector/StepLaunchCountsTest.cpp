#include <gtest/gtest.h>

#include <map>
#include <string>
#include <thread>
#include <vector>

#include "StepLaunchCounts.h"

using fuselens::collector::StepLaunchCounts;

namespace {

std::string name_of(std::uint32_t id) { return "api" + std::to_string(id); }

std::map<std::string, std::uint64_t> calls_of(const fuselens::db::SampleStepRecord& r) {
  std::map<std::string, std::uint64_t> out;
  for (const auto& [n, c] : r.calls) out[n] += c;
  return out;
}

}  // namespace

TEST(StepLaunchCounts, CountsEachStepsCallsPerApiFunction) {
  StepLaunchCounts counts(16);
  counts.count(7);  // before the first step: in no step
  counts.step_begins(0, 100);
  for (int i = 0; i < 5; ++i) counts.count(7);
  counts.count(9);
  counts.step_ends(200, false);
  counts.count(9);  // between steps
  counts.step_begins(1, 300);
  for (int i = 0; i < 3; ++i) counts.count(9);
  counts.step_ends(400, true);
  const auto r = counts.record(42, 2, false, name_of);
  EXPECT_EQ(r.pid, 42u);
  EXPECT_EQ(r.every, 2u);
  EXPECT_EQ(r.steps, 2u);
  EXPECT_EQ(r.steps_lost, 0u);
  ASSERT_EQ(r.step_rows.size(), 2u);
  EXPECT_EQ(r.step_rows[0].step, 0u);
  EXPECT_EQ(r.step_rows[0].start_ns, 100u);
  EXPECT_EQ(r.step_rows[0].end_ns, 200u);
  EXPECT_FALSE(r.step_rows[0].traced);
  EXPECT_EQ(calls_of(r.step_rows[0]),
            (std::map<std::string, std::uint64_t>{{"api7", 5}, {"api9", 1}}));
  EXPECT_TRUE(r.step_rows[1].traced);
  EXPECT_EQ(calls_of(r.step_rows[1]), (std::map<std::string, std::uint64_t>{{"api9", 3}}));
}

TEST(StepLaunchCounts, AStepOpenAtExitIsStoredWithoutAnEnd) {
  StepLaunchCounts counts(4);
  counts.step_begins(0, 10);
  counts.count(3);
  counts.count(3);
  const auto r = counts.record(1, 1, true, name_of);
  ASSERT_EQ(r.step_rows.size(), 1u);
  EXPECT_EQ(r.step_rows[0].end_ns, 0u);
  EXPECT_TRUE(r.step_rows[0].traced);
  EXPECT_EQ(calls_of(r.step_rows[0]).at("api3"), 2u);
  EXPECT_EQ(r.steps_lost, 0u);
}

TEST(StepLaunchCounts, StepsBeyondTheLogAreCountedAsLost) {
  StepLaunchCounts counts(3);
  for (std::uint64_t k = 0; k < 10; ++k) {
    counts.step_begins(k, 10 * k);
    counts.count(1);
    counts.step_ends(10 * k + 5, k % 5 == 4);
  }
  const auto r = counts.record(1, 5, false, name_of);
  EXPECT_EQ(r.steps, 10u);
  EXPECT_EQ(r.step_rows.size(), 3u);
  EXPECT_EQ(r.steps_lost, 7u);
  // An end without a begin (a pop of a step begun before counting) stores nothing.
  StepLaunchCounts fresh(3);
  fresh.step_ends(5, true);
  EXPECT_TRUE(fresh.record(1, 1, false, name_of).step_rows.empty());
}

TEST(StepLaunchCounts, ManyFunctionsAndHugeIdsShareTheOtherSlot) {
  StepLaunchCounts counts(2);
  counts.step_begins(0, 1);
  const std::uint32_t functions = StepLaunchCounts::kSlots + 4;
  for (std::uint32_t id = 1; id <= functions; ++id) counts.count(id);
  counts.count(StepLaunchCounts::kMaxIds + 5);  // beyond the slot table
  counts.count(0xffffffffu);
  counts.step_ends(2, true);
  const auto r = counts.record(1, 1, false, name_of);
  ASSERT_EQ(r.step_rows.size(), 1u);
  const auto calls = calls_of(r.step_rows[0]);
  std::uint64_t total = 0;
  for (const auto& [n, c] : calls) total += c;
  EXPECT_EQ(total, functions + 2);  // every call counted somewhere
  ASSERT_TRUE(calls.count("other"));
  // The first kSlots - 1 functions have their own slot; the rest, and huge ids, are "other".
  EXPECT_EQ(calls.at("other"), functions - (StepLaunchCounts::kSlots - 1) + 2);
  EXPECT_EQ(calls.size(), StepLaunchCounts::kSlots);
}

TEST(StepLaunchCounts, ThreadsCountingAtOnceLoseNoCall) {
  StepLaunchCounts counts(2);
  counts.step_begins(0, 1);
  constexpr int kThreads = 4, kCalls = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&counts, t] {
      for (int i = 0; i < kCalls; ++i) counts.count(static_cast<std::uint32_t>(10 + (i + t) % 3));
    });
  }
  for (auto& t : threads) t.join();
  counts.step_ends(2, false);
  const auto calls = calls_of(counts.record(1, 1, false, name_of).step_rows.at(0));
  std::uint64_t total = 0;
  for (const auto& [n, c] : calls) total += c;
  EXPECT_EQ(total, static_cast<std::uint64_t>(kThreads) * kCalls);
  EXPECT_EQ(calls.size(), 3u);  // three functions, each once in the table
}
