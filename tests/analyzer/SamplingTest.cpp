// Sampled captures (prof-run --sample 1/N; docs/capture-control.md, "Sampled tracing"): the
// stored per-step launch counts read back, hostile rows skipped, and the "sampled:" line in every
// analysis and export of prof-analyze.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "Subprocess.h"
#include "TestSupport.h"
#include "fuselens/db/Layout.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/Sampling.h"
#include "fuselens/db/Writer.h"
#include "sampling/Sampling.h"
#include "steps/Steps.h"
#include "store/AnalysisStore.h"

#ifndef PROF_ANALYZE_PATH
#error "PROF_ANALYZE_PATH must name the prof-analyze binary"
#endif

namespace fuselens::analyzer {
namespace {

using fuselens::test::Result;
using fuselens::test::run_cli;
using test::TempDir;

constexpr std::uint32_t kPid = 100;

// The sampling of a run of `steps` steps at 1 in `every`: step k traced when k % every ==
// every - 1, with 4 + k % 2 kernel launches and one copy each.
db::SamplingRecord sampling(std::uint32_t every, std::uint64_t steps) {
  db::SamplingRecord s;
  s.pid = kPid;
  s.every = every;
  s.steps = steps;
  for (std::uint64_t k = 0; k < steps; ++k) {
    s.step_rows.push_back({k,
                           1000 + 100 * k,
                           1000 + 100 * k + 90,
                           k % every == every - 1,
                           {{"cuLaunchKernel", 4 + k % 2}, {"cuMemcpyAsync", 1}}});
  }
  return s;
}

std::string sampled_capture(const TempDir& dir, const db::SamplingRecord& s) {
  const std::string path = (dir.path() / "sampled.sqlite").string();
  test::write_reference_capture(path);
  auto writer = db::Writer::open(path);
  // Calling contexts for the kernels' launch calls (correlation ids 1-7), so that cct has a tree.
  db::CallingContextTree tree;
  tree.pid = kPid;
  tree.frames = {{db::FrameKind::Native, "/lib/x.so", 0x10, "main", "x.cpp", 3},
                 {db::FrameKind::Python, "", 0, "train_step", "train.py", 9}};
  tree.nodes = {{0, 0}, {0, 0}, {1, 1}};
  for (std::uint32_t correlation = 1; correlation <= 7; ++correlation) {
    tree.contexts.push_back({correlation, kPid, 2});
  }
  writer.write_calling_contexts(tree);
  writer.write_sampling(s);
  return path;
}

void exec(const std::string& path, const std::string& sql) { test::exec_sql(path, sql); }

TEST(Sampling, SummarizesTheStoredStepsFromTheRowsWritten) {
  TempDir dir;
  const auto written = sampling(3, 10);
  const auto path = sampled_capture(dir, written);
  db::Reader reader(path);
  const auto s = summarize_sampling(reader);
  ASSERT_TRUE(s.has_value());
  std::int64_t calls = 0, traced_calls = 0, traced = 0;
  std::vector<std::int64_t> first;
  for (const auto& r : written.step_rows) {
    std::int64_t c = 0;
    for (const auto& [name, n] : r.calls) c += static_cast<std::int64_t>(n);
    calls += c;
    if (r.traced) {
      ++traced;
      traced_calls += c;
      if (first.size() < 3) first.push_back(static_cast<std::int64_t>(r.step) + 1);
    }
  }
  EXPECT_EQ(s->every, 3);
  EXPECT_EQ(s->steps, 10);
  EXPECT_EQ(s->traced_steps, traced);
  EXPECT_EQ(s->first_traced, first);
  EXPECT_EQ(s->calls, calls);
  EXPECT_EQ(s->traced_calls, traced_calls);
  EXPECT_DOUBLE_EQ(s->scale, static_cast<double>(calls) / static_cast<double>(traced_calls));
  const std::string line = sampling_line(*s);
  EXPECT_EQ(line.rfind("sampled: 1 step in 3 traced (steps 3, 6, 9: 3 of 10)", 0), 0u) << line;
  EXPECT_NE(line.find("launch counts of all 10 steps from callbacks"), std::string::npos) << line;
  // The per-API rows come back as written.
  const auto apis = db::sample_step_api_rows(reader);
  ASSERT_EQ(apis.size(), 20u);
  EXPECT_EQ(apis[0].api, "cuLaunchKernel");
  EXPECT_EQ(apis[0].calls, 4);
  EXPECT_EQ(apis[1].api, "cuMemcpyAsync");
  // Writing again replaces the process's rows.
  db::Writer::open(path).write_sampling(sampling(5, 5));
  EXPECT_EQ(summarize_sampling(db::Reader(path))->steps, 5);
}

TEST(Sampling, AnUnsampledOrOlderCaptureIsNotSampled) {
  TempDir dir;
  const std::string path = (dir.path() / "plain.sqlite").string();
  test::write_reference_capture(path);
  EXPECT_FALSE(summarize_sampling(db::Reader(path)).has_value());
  const std::string old = std::string(FUSELENS_TEST_DATA_DIR) + "/fusion_bench_schema_v1.sqlite";
  EXPECT_FALSE(summarize_sampling(db::Reader(old)).has_value());
  const Result r = run_cli(dir, {"summary", path});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.find("sampled:"), std::string::npos);
}

TEST(Sampling, HostileRowsAreSkippedNotFatal) {
  TempDir dir;
  const auto path = sampled_capture(dir, sampling(2, 4));
  // The tables as a hostile capture may hold them: without their constraints (CREATE TABLE AS).
  for (const std::string table : {"sampling", "sample_step", "sample_step_api"}) {
    exec(path, "CREATE TABLE copy AS SELECT * FROM " + table + "; DROP TABLE " + table +
                   "; ALTER TABLE copy RENAME TO " + table + ";");
  }
  // A second process with every = 0 (skipped), NULLs, negative and huge values, an end before
  // its start, a string id that names nothing, counts that overflow int64 when summed.
  exec(path,
       "INSERT INTO sampling VALUES (NULL, 3, 3, 0);"
       "INSERT INTO sampling VALUES (9, NULL, 3, 0);"
       "INSERT INTO sampling VALUES (7, 0, 5, 0);"
       "INSERT INTO sampling VALUES (8, 2, 3, 9);"  // more lost than seen
       "INSERT INTO sample_step VALUES (100, 50, -5, NULL, 1);"
       "INSERT INTO sample_step VALUES (100, 51, 100, 50, 1);"
       "INSERT INTO sample_step VALUES (100, 52, 9223372036854775807, NULL, 1);"
       "INSERT INTO sample_step VALUES (100, -1, 100, 200, 1);"
       "INSERT INTO sample_step VALUES (100, 53, 100, 200, NULL);"
       "INSERT INTO sample_step VALUES (NULL, 54, 100, 200, 1);"
       "INSERT INTO sample_step VALUES (100, 55, NULL, 200, 1);"
       "INSERT INTO sample_step VALUES (100, 'text', 'x', 'y', 'z');"
       "INSERT INTO sample_step_api VALUES (100, 53, 999999, 9223372036854775807);"
       "INSERT INTO sample_step_api VALUES (100, 53, 999998, 9223372036854775807);"
       "INSERT INTO sample_step_api VALUES (100, 3, 999997, -40);"
       "INSERT INTO sample_step_api VALUES (100, 3, 999996, NULL);");
  db::Reader reader(path);
  const auto s = summarize_sampling(reader);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->processes, 1);  // pids 7, 8, 9 and NULL left out
  EXPECT_EQ(s->steps, 5);      // steps 0-3 and 53 (NULL traced reads as not traced)
  EXPECT_EQ(s->calls, std::numeric_limits<std::int64_t>::max());  // saturated
  EXPECT_GT(s->traced_calls, 0);
  const std::string line = sampling_line(*s);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const Result r = run_cli(dir, {"summary", path});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("sampled: 1 step in 2 traced"), std::string::npos) << r.out;
}

TEST(Sampling, EveryAnalysisAndExportSaysWhatWasSampled) {
  TempDir dir;
  const auto path = sampled_capture(dir, sampling(10, 30));
  const std::string expected = "sampled: 1 step in 10 traced (steps 10, 20, 30: 3 of 30)";
  for (const std::string command : {"summary", "cct", "flags", "steps"}) {
    for (const std::string format : {"table", "csv", "json"}) {
      const Result r = run_cli(dir, {command, path, "--format", format});
      EXPECT_EQ(r.status, 0) << command << " " << format << ": " << r.err;
      EXPECT_NE(r.out.find(expected), std::string::npos) << command << " " << format << "\n"
                                                         << r.out.substr(0, 400);
      if (format == "csv" && r.status == 0) {
        EXPECT_EQ(r.out.rfind("# " + expected, 0), 0u) << command;  // a comment line first
      }
      if (format == "json" && r.status == 0) {
        const auto doc = nlohmann::json::parse(r.out);
        ASSERT_TRUE(doc.contains("window")) << command;
        const auto& w = doc["window"];
        EXPECT_EQ(w["sampling"]["every"], 10) << command;
        EXPECT_EQ(w["sampling"]["steps"], 30) << command;
        EXPECT_EQ(w["sampling"]["traced_steps"], 3) << command;
      }
    }
  }
  for (const std::string format : {"chrome-trace", "json", "csv", "html"}) {
    const std::string out = (dir.path() / ("export." + format)).string();
    const Result r = run_cli(dir, {"export", path, "--format", format, "-o", out});
    EXPECT_EQ(r.status, 0) << format << ": " << r.err;
    EXPECT_NE(fuselens::test::slurp(out).find("sampled: 1 step in 10 traced"), std::string::npos)
        << format;
  }
}

// cct and flags answer from the results stored when the run ended (analyzer/store), and a lean
// capture (db/Layout.h) reads kernel and api_call through views: the sampled line is the
// window's, so it is printed either way.
TEST(Sampling, StoredResultsAndALeanCaptureStillSayWhatWasSampled) {
  TempDir dir;
  const auto path = sampled_capture(dir, sampling(10, 30));
  const std::string lean = (dir.path() / "sampled_lean.sqlite").string();
  db::convert_to_lean(path, lean);
  const std::string expected = "sampled: 1 step in 10 traced (steps 10, 20, 30: 3 of 30)";
  for (const std::string& capture : {path, lean}) {
    {
      db::Reader reader(db::Connection(capture, db::Connection::Mode::ReadWrite));
      if (!stored_step_report(reader)) store_steps(reader);
    }
    store_analyses(capture);
    {
      const db::Reader reader(capture, db::TimestampCheck::DeferLargeTables);
      EXPECT_EQ(reader.lean(), capture == lean);
      const auto window = stored_results_window(reader, parse_window(kStoredWindowSpec), {});
      ASSERT_TRUE(window.has_value()) << capture;
      EXPECT_TRUE(load_stored_cct(reader, *window).has_value()) << capture;
    }
    for (const std::string command : {"summary", "cct", "flags"}) {
      const Result r = run_cli(dir, {command, capture});
      EXPECT_EQ(r.status, 0) << command << " " << capture << ": " << r.err;
      EXPECT_NE(r.out.find(expected), std::string::npos) << command << " " << capture;
    }
  }
}

}  // namespace
}  // namespace fuselens::analyzer
