// Exports of the real H100 captures in tests/data: the Chrome trace checked against the Trace
// Event Format's documented fields and against the capture's row counts, and every other
// format parsed back. Durations and API names are not compared: the captures are re-recorded.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "TestSupport.h"
#include "export/ExportChromeTrace.h"
#include "export/ExportHtml.h"
#include "export/ExportTables.h"

#ifndef FUSELENS_TEST_DATA_DIR
#error "FUSELENS_TEST_DATA_DIR must name tests/data"
#endif

namespace fuselens::analyzer {
namespace {

using nlohmann::json;

class RealCapture : public ::testing::TestWithParam<const char*> {
 protected:
  std::string path() const { return std::string(FUSELENS_TEST_DATA_DIR) + "/" + GetParam(); }
};

TEST_P(RealCapture, ChromeTraceHasTheDocumentedStructure) {
  const db::Reader reader(path());
  std::ostringstream out;
  const ChromeTraceCounts counts = write_chrome_trace(out, reader);
  const json trace = json::parse(out.str());
  ASSERT_TRUE(trace.is_object());
  EXPECT_EQ(trace["displayTimeUnit"], "ns");
  ASSERT_TRUE(trace["traceEvents"].is_array());

  const std::set<std::string> phases{"X", "M", "C", "i", "s", "t", "f"};
  std::map<std::string, std::int64_t> complete;  // cat -> X events
  std::map<std::string, std::string> flows;      // (cat, name, id) -> phases in file order
  std::set<std::int64_t> named_processes;
  std::set<std::pair<std::int64_t, std::int64_t>> gpu_tracks, named_threads;
  for (const auto& e : trace["traceEvents"]) {
    for (const char* key : {"ph", "pid", "tid", "ts"}) ASSERT_TRUE(e.contains(key)) << e.dump();
    const std::string ph = e["ph"];
    ASSERT_TRUE(phases.count(ph)) << e.dump();
    ASSERT_TRUE(e["pid"].is_number_integer() && e["tid"].is_number_integer()) << e.dump();
    ASSERT_TRUE(e["ts"].is_number()) << e.dump();
    if (ph == "M") {
      ASSERT_TRUE(e["args"].is_object()) << e.dump();
      if (e["name"] == "process_name") named_processes.insert(e["pid"].get<std::int64_t>());
      if (e["name"] == "thread_name")
        named_threads.insert({e["pid"].get<std::int64_t>(), e["tid"].get<std::int64_t>()});
      continue;
    }
    ASSERT_TRUE(e["name"].is_string() && e["cat"].is_string()) << e.dump();
    EXPECT_GE(e["ts"].get<double>(), 0) << e.dump();
    if (ph == "X") {
      ASSERT_TRUE(e["dur"].is_number()) << e.dump();
      EXPECT_GE(e["dur"].get<double>(), 0) << e.dump();
      ++complete[e["cat"]];
      const std::string cat = e["cat"];
      if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
        EXPECT_GE(e["pid"].get<std::int64_t>(), kGpuPidBase);
        for (const char* key : {"correlation", "stream", "device", "context"}) {
          EXPECT_TRUE(e["args"].contains(key)) << key << e.dump();
        }
        gpu_tracks.insert({e["pid"].get<std::int64_t>(), e["tid"].get<std::int64_t>()});
      }
      if (cat == "kernel") {
        EXPECT_EQ(e["args"]["grid"].size(), 3U);
        EXPECT_EQ(e["args"]["block"].size(), 3U);
        EXPECT_TRUE(e["args"].contains("registers per thread"));
        EXPECT_TRUE(e["args"].contains("shared memory"));
      }
      if (cat == "gpu_memcpy" || cat == "gpu_memset") {
        EXPECT_TRUE(e["args"].contains("bytes"));
        EXPECT_TRUE(e["args"].contains("memory bandwidth (GB/s)"));
      }
    } else if (ph == "s" || ph == "t" || ph == "f") {
      ASSERT_TRUE(e["id"].is_number_integer()) << e.dump();
      EXPECT_EQ(e["cat"], "ac2g");
      if (ph == "f") {
        EXPECT_EQ(e["bp"], "e");
      }
      flows[e["cat"].get<std::string>() + "/" + e["name"].get<std::string>() + "/" +
            e["id"].dump()] += ph;
    } else if (ph == "C") {
      EXPECT_TRUE(e["args"]["bytes"].is_number_integer()) << e.dump();
      EXPECT_GE(e["args"]["bytes"].get<std::int64_t>(), 0) << e.dump();
    }
  }

  const auto rows = [&](const char* table) {
    return reader.query_int(std::string("SELECT count(*) FROM ") + table);
  };
  EXPECT_EQ(complete["kernel"], rows("kernel"));
  EXPECT_EQ(complete["gpu_memcpy"], rows("memcpy"));
  EXPECT_EQ(complete["gpu_memset"], rows("memset"));
  EXPECT_EQ(complete["cuda_runtime"], rows("api_call WHERE domain = 1"));
  EXPECT_EQ(complete["cuda_driver"], rows("api_call WHERE domain = 2"));
  EXPECT_EQ(complete["user_annotation"], rows("nvtx_range"));
  EXPECT_GT(complete["kernel"], 0);
  EXPECT_EQ(counts.memory_samples,
            reader.query_int("SELECT count(*) FROM memory_event WHERE memory_kind = 3"));

  // Every flow starts once and finishes once; here every GPU record was launched by a traced
  // call with a correlation id of its own, so each has one flow.
  EXPECT_EQ(static_cast<std::int64_t>(flows.size()), counts.flows);
  for (const auto& [id, ph] : flows) {
    EXPECT_EQ(ph.front(), 's') << id;
    EXPECT_EQ(ph.back(), 'f') << id;
    EXPECT_EQ(std::count(ph.begin(), ph.end(), 's'), 1) << id;
    EXPECT_EQ(std::count(ph.begin(), ph.end(), 'f'), 1) << id;
  }
  EXPECT_EQ(counts.flows + counts.flow_steps,
            rows("kernel") + rows("memcpy") + rows("memset") -
                reader.query_int("SELECT count(*) FROM (SELECT pid, "
                                 "correlation_id FROM kernel UNION ALL "
                                 "SELECT pid, correlation_id FROM memcpy "
                                 "UNION ALL SELECT pid, correlation_id FROM "
                                 "memset) g WHERE NOT EXISTS (SELECT 1 FROM "
                                 "api_call a WHERE a.pid = g.pid AND "
                                 "a.correlation_id = g.correlation_id) OR "
                                 "g.correlation_id = 0"));
  // Tracks are named: every process and every GPU stream.
  for (const auto& p : reader.processes()) EXPECT_TRUE(named_processes.count(p.pid));
  for (const auto& track : gpu_tracks) {
    EXPECT_TRUE(named_processes.count(track.first));
    EXPECT_TRUE(named_threads.count(track)) << track.first << "/" << track.second;
  }
}

TEST_P(RealCapture, EveryOtherFormatParsesBack) {
  const db::Reader reader(path());
  const std::vector<ExportRun> runs{load_export_run(reader, "A")};
  const json doc = export_to_json(runs);
  EXPECT_EQ(doc["runs"][0]["summary"]["totals"]["kernel_count"],
            reader.query_int("SELECT count(*) FROM kernel"));
  std::ostringstream csv;
  write_export_csv(csv, runs);
  EXPECT_NO_THROW((void)test::parse_csv(csv.str()));
  std::ostringstream html;
  make_html_report(runs).write(html);
  EXPECT_NE(html.str().find("id=\"kernels\""), std::string::npos);
  EXPECT_EQ(html.str().find("<script"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Captures, RealCapture,
                         ::testing::Values("fusion_bench.sqlite", "pytorch_mlp.sqlite"),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           return name.substr(0, name.find('.'));
                         });

}  // namespace
}  // namespace fuselens::analyzer
