// Flags options: threshold and rule-list parsing, then `prof-analyze flags` run as a program
// (--fail-on exit statuses, usage errors, thresholds, formats). Captures come from FlagsTest.cpp.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "Subprocess.h"
#include "TestSupport.h"
#include "flags/Flags.h"
#include "flags/FlagsTrace.h"

#ifndef PROF_ANALYZE_PATH
#error "PROF_ANALYZE_PATH must name the prof-analyze binary"
#endif

namespace fuselens::analyzer {
namespace flags_test {  // defined in FlagsTest.cpp
void write_sync_capture(const std::string& path);
void write_tiny_capture(const std::string& path);
void write_capture_without_process(const std::string& path);
}  // namespace flags_test

namespace {

using fuselens::test::Result;
using fuselens::test::run_cli;
using fuselens::test::slurp;
using test::TempDir;

TEST(FlagsConfig, ParsesAndValidatesThresholds) {
  FlagsConfig config;
  EXPECT_DOUBLE_EQ(config.get("launch_short.runtime_cutoff_us"), 50);
  EXPECT_EQ(config.get_ns("launch_short.runtime_cutoff_us"), 50'000);
  EXPECT_EQ(config.get_ns("gpu_gaps.min_gap_ms"), 500'000'000);
  config.set(" launch_short.runtime_cutoff_us = 12.5 ");
  EXPECT_EQ(config.get_ns("launch_short.runtime_cutoff_us"), 12'500);
  EXPECT_THROW(config.set("bogus.key=1"), FlagsError);
  EXPECT_THROW(config.set("launch_short.runtime_cutoff_us"), FlagsError);
  EXPECT_THROW(config.set("launch_short.runtime_cutoff_us=abc"), FlagsError);
  EXPECT_THROW(config.set("launch_short.runtime_cutoff_us=-1"), FlagsError);
  EXPECT_THROW(config.set("gpu_utilization.chunks=0"), FlagsError);
  EXPECT_THROW(config.select_rules({"no_such_rule"}), FlagsError);
  for (const auto& t : flag_thresholds()) {
    EXPECT_NE(std::string(t.key).find('.'), std::string::npos) << t.key;
    EXPECT_FALSE(t.source.empty()) << t.key;
  }
}

TEST(FlagsConfig, RuleListsRejectUnknownNames) {
  EXPECT_EQ(parse_rule_list("sync_api, fusion_chain,,"),
            (std::vector<std::string>{"sync_api", "fusion_chain"}));
  EXPECT_TRUE(parse_rule_list("").empty());
  EXPECT_THROW(parse_rule_list("sync_api,bogus"), FlagsError);
}

TEST(FlagsTrace, StripsCuptiVersionSuffixes) {
  EXPECT_EQ(api_base_name("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
  EXPECT_EQ(api_base_name("cudaLaunchKernel"), "cudaLaunchKernel");
  EXPECT_EQ(api_base_name("cuMemAlloc_v2"), "cuMemAlloc");
  EXPECT_EQ(api_base_name("my_vector"), "my_vector");
  EXPECT_EQ(api_base_name("_v12"), "_v12");
}

/// The clean capture of FlagsTest.cpp plus one cudaDeviceSynchronize inside its range "step".
std::string write_sync_capture(const TempDir& dir) {
  const auto path = dir.file("sync.sqlite");
  flags_test::write_sync_capture(path);
  return path;
}

void expect_one_error_line(const Result& r) {
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("prof-analyze: error: ", 0), 0U) << r.err;
}

TEST(FlagsCli, FailOnExitsThreeWhenAListedRuleHits) {
  TempDir dir;
  const auto path = write_sync_capture(dir);
  const Result hit = run_cli(dir, {"flags", path, "--fail-on", "async_pageable,sync_api"});
  EXPECT_EQ(hit.status, 3) << hit.err;
  EXPECT_NE(hit.out.find("[sync_api]"), std::string::npos) << hit.out;
  EXPECT_NE(hit.err.find("sync_api"), std::string::npos);
  const Result quiet = run_cli(dir, {"flags", path, "--fail-on", "async_pageable"});
  EXPECT_EQ(quiet.status, 0) << quiet.err;
  EXPECT_TRUE(quiet.err.empty()) << quiet.err;
  // --rules narrows the run, but a gated rule always runs.
  const Result narrowed =
      run_cli(dir, {"flags", path, "--rules", "fusion_chain", "--fail-on", "sync_api"});
  EXPECT_EQ(narrowed.status, 3) << narrowed.err;
}

TEST(FlagsCli, UnknownRuleOrThresholdIsAUsageError) {
  TempDir dir;
  const auto path = write_sync_capture(dir);
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"flags", path, "--fail-on", "sync_api,bogus_rule"},
           {"flags", path, "--rules", "nope"},
           {"flags", path, "--threshold", "bogus.key=1"},
           {"flags", path, "--threshold", "launch_short.runtime_cutoff_us=fast"},
           {"flags", path, "--format", "xml"},
           {"flags"}}) {
    const Result r = run_cli(dir, args);
    EXPECT_EQ(r.status, 2) << args.back();
    expect_one_error_line(r);
  }
  const Result r = run_cli(dir, {"flags", path, "--fail-on", "bogus_rule"});
  EXPECT_NE(r.err.find("bogus_rule"), std::string::npos);
}

TEST(FlagsCli, ThresholdsChangeWhatFires) {
  TempDir dir;
  const auto path = dir.file("tiny.sqlite");
  flags_test::write_tiny_capture(path);
  EXPECT_EQ(run_cli(dir, {"flags", path, "--fail-on", "launch_short"}).status, 3);
  const Result r = run_cli(dir, {"flags", path, "--threshold", "launch_short.runtime_cutoff_us=4",
                                 "--fail-on", "launch_short"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("launch_short.runtime_cutoff_us=4"), std::string::npos);
}

TEST(FlagsCli, CsvAndJsonCarryTheHits) {
  TempDir dir;
  const auto path = write_sync_capture(dir);
  const Result json = run_cli(dir, {"flags", path, "--format", "json"});
  ASSERT_EQ(json.status, 0) << json.err;
  const auto doc = nlohmann::json::parse(json.out);
  ASSERT_EQ(doc["hits"].size(), 1U);
  EXPECT_EQ(doc["hits"][0]["rule"], "sync_api");
  EXPECT_EQ(doc["hits"][0]["subject"], "cudaDeviceSynchronize");
  EXPECT_EQ(doc["hits"][0]["range"], "step");
  EXPECT_EQ(doc["hits"][0]["tid"], 1);
  EXPECT_TRUE(doc["hits"][0]["device_id"].is_null());
  EXPECT_EQ(doc["thresholds"]["gpu_gaps.min_gap_ms"], 500);
  const Result csv = run_cli(dir, {"flags", path, "--format", "csv"});
  ASSERT_EQ(csv.status, 0) << csv.err;
  const auto records = test::parse_csv(csv.out);
  ASSERT_EQ(records.size(), 3U);  // header, the verdict, the hit (no steps: no start-up)
  EXPECT_EQ(records[0][0], "rule");
  EXPECT_EQ(records[0].size(), records[1].size());
  EXPECT_EQ(records[0].size(), records[2].size());
  EXPECT_EQ(records[1][0], "verdict");
  EXPECT_EQ(records[1][3], doc["verdict"]["kind"]);
  EXPECT_EQ(records[2][0], "sync_api");
  EXPECT_EQ(records[2][1], "1000");  // the 1 us call
}

TEST(FlagsCli, ListNeedsNoFileAndCaptureWithoutCudaFails) {
  TempDir dir;
  const Result list = run_cli(dir, {"flags", "--list"});
  EXPECT_EQ(list.status, 0);
  for (const auto& rule : flag_rules()) {
    EXPECT_NE(list.out.find(std::string(rule.id)), std::string::npos) << rule.id;
  }
  const auto path = dir.file("nocuda.sqlite");
  flags_test::write_capture_without_process(path);
  const Result r = run_cli(dir, {"flags", path});
  EXPECT_EQ(r.status, 1);
  expect_one_error_line(r);
}

}  // namespace
}  // namespace fuselens::analyzer
