#pragma once
// What a capture of workloads/graph_replay must show in the top-down calling-context view
// (docs/calling-context.md, "CUDA graphs"): every replayed kernel and memset charged to the
// function whose call put it into its graph (an ancestor: the launch's host stub
// __device_stub_... may sit between), directly under a "<graph replay>" row naming the function
// that replayed it, as many times as the program's --json report says; plain_kernel under main,
// outside every graph. Shared by the GPU test that captures it live and the CPU test on the
// committed H100 capture.

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "cct/CallingContext.h"
#include "fuselens/db/Reader.h"

namespace fuselens::test {

/// "capture_fill(CUstream_st*, Buffers&) [graph_replay.cu:80]" -> "capture_fill".
inline std::string graph_replay_function_of(const std::string& label) {
  return label.substr(0, label.find_first_of("( ["));
}

/// Checks the capture at `capture` against graph_replay's --json report at `launched_json`.
inline void expect_graph_replay(const std::string& capture, const std::string& launched_json) {
  using analyzer::CctRow;
  std::ifstream in(launched_json);
  ASSERT_TRUE(in) << "cannot read " << launched_json;
  const auto launched = nlohmann::json::parse(in);
  const db::Reader reader(capture);
  ASSERT_TRUE(reader.has_table("graph_node")) << "schema " << reader.schema_version();
  EXPECT_GT(reader.query_int("SELECT COUNT(*) FROM graph_node WHERE correlation_id != 0"), 0);
  const auto report = analyzer::calling_context_report(reader, analyzer::CctOptions{});
  ASSERT_TRUE(report.available) << report.unavailable_reason;

  // (operation, replaying function) -> launches, for the operations under their capture site.
  std::map<std::pair<std::string, std::string>, long> replayed;
  long plain = 0;
  for (const auto& row : report.rows) {
    if (row.kind != CctRow::Kind::GpuOperation) continue;
    const std::string name =
        row.label == "<gpu memset>" ? "<memset>" : row.label.substr(row.label.find("> ") + 2);
    const auto& parent = report.rows[static_cast<std::size_t>(row.parent)];
    if (name == "plain_kernel") {  // below main and the launch's host stub, no graph replay
      bool under_main = false;
      for (int a = row.parent; a > 0; a = report.rows[static_cast<std::size_t>(a)].parent) {
        const auto& ancestor = report.rows[static_cast<std::size_t>(a)];
        EXPECT_NE(ancestor.kind, CctRow::Kind::GraphReplay)
            << "plain_kernel under " << ancestor.label;
        under_main = under_main || graph_replay_function_of(ancestor.label) == "main";
      }
      EXPECT_TRUE(under_main) << "plain_kernel is not under main";
      plain += row.inclusive.launches;
      continue;
    }
    if (!launched["graph_operations"].contains(name)) continue;  // not the program's own
    ASSERT_EQ(parent.kind, CctRow::Kind::GraphReplay) << name << " under " << parent.label;
    const std::string replay_site =
        graph_replay_function_of(parent.label.substr(parent.label.find("> ") + 2));
    const std::string captured_in = launched["graph_operations"][name]["captured_in"];
    bool under_capture_site = false;
    for (int a = parent.parent; a > 0; a = report.rows[static_cast<std::size_t>(a)].parent) {
      const auto& label = report.rows[static_cast<std::size_t>(a)].label;
      under_capture_site = under_capture_site || graph_replay_function_of(label) == captured_in;
    }
    EXPECT_TRUE(under_capture_site)
        << name << " replayed from " << replay_site << " is not under " << captured_in;
    replayed[{name, replay_site}] += row.inclusive.launches;
  }
  std::map<std::pair<std::string, std::string>, long> expected;
  long graph_operations = 0;
  for (const auto& [name, op] : launched["graph_operations"].items()) {
    for (const auto& [site, n] : op["replayed_from"].items()) {
      expected[{name, site}] = n.get<long>();
      graph_operations += n.get<long>();
    }
  }
  EXPECT_EQ(replayed, expected);
  EXPECT_EQ(plain, 1);
  EXPECT_EQ(report.graph_operations, graph_operations);
  EXPECT_EQ(report.graph_at_capture_site, graph_operations);
}

}  // namespace fuselens::test
