// Aggregate mode on a real GPU (prof-run --mode aggregate, docs/aggregate.md): step_loop reports
// what it launched; the aggregates must count every launch of the run, and the trace rows hold
// the --steps window's kernels.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "Binaries.h"
#include "GpuSkip.h"
#include "Subprocess.h"
#include "TempDir.h"
#include "fuselens/db/AggregateStore.h"
#include "fuselens/db/Reader.h"
#include "summary/Summary.h"

using fuselens::test::binary;
using fuselens::test::run;
using fuselens::test::TempDir;

namespace {

std::map<std::string, long> launched_in(const nlohmann::json& launched, int first, int last) {
  std::map<std::string, long> counts;
  for (int s = first; s <= last; ++s) {
    for (const auto& [name, n] : launched["steps"][s]["kernels"].items())
      counts[name] += n.get<long>();
  }
  return counts;
}

TEST(AggregateGpu, AggregatesCountEveryLaunchAndTheTraceHoldsTheStepsWindow) {
  FUSELENS_SKIP_WITHOUT_GPU();
  TempDir dir;
  const auto capture = dir.file("agg.sqlite");
  // --steps 2:1:3:1: skip steps 0-1, warm-up 2, trace steps 3-5; aggregate all 16.
  const auto r = run({binary("prof-run", PROF_RUN_PATH), "-o", capture, "--force", "--mode",
                      "aggregate", "--steps", "2:1:3:1", "--", binary("step_loop", STEP_LOOP_PATH),
                      "--json", dir.file("launched.json"), "--steps", "16"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream in(dir.file("launched.json"));
  const auto launched = nlohmann::json::parse(in);
  auto all = launched_in(launched, 0, 15);
  for (const auto& [name, n] : launched["outside"].items()) all[name] += n.get<long>();

  fuselens::db::Reader reader(capture);
  EXPECT_EQ(reader.run().dropped_records, 0u);
  ASSERT_TRUE(fuselens::db::has_aggregates(reader));
  std::map<std::string, long> aggregated;
  for (const auto& k : fuselens::db::read_aggregates(reader).kernels) {
    aggregated[k.short_name] += k.gpu.count;
    EXPECT_LE(k.latency.count, k.gpu.count);
    EXPECT_GT(k.latency.count, 0) << k.short_name << ": no launch call matched";
  }
  EXPECT_EQ(aggregated, all);

  // The trace: the window's steps, give or take a kernel launched just before it.
  const auto inside = launched_in(launched, 3, 5), around = launched_in(launched, 2, 6);
  for (const auto& [name, n] : inside) {
    const long traced = reader.query_int(
        "SELECT COUNT(*) FROM kernel k JOIN strings s ON s.id = k.short_name_id WHERE s.value = '" +
        name + "'");
    EXPECT_GE(traced, n) << name;
    EXPECT_LE(traced, around.at(name)) << name;
  }
  EXPECT_GE(reader.query_int("SELECT COUNT(*) FROM capture_window"), 1);

  const auto summary = fuselens::analyzer::summarize(reader);
  EXPECT_TRUE(summary.from_aggregate_mode);
  long total = 0;
  for (const auto& [name, n] : all) total += n;
  EXPECT_EQ(summary.totals.kernel_count, total);
}

}  // namespace
