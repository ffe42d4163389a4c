#pragma once
// What a capture of workloads/cct_paths must show in the top-down calling-context view (the paths
// and counts documented in workloads/cct_paths/cct_paths.cu). Shared by the CPU test on the
// committed H100 capture and the GPU test that captures it live.

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "cct/CallingContext.h"
#include "fuselens/db/Reader.h"

namespace fuselens::test {

inline void expect_cct_paths(const std::string& capture) {
  const db::Reader reader(capture);
  const auto r = analyzer::calling_context_report(reader, analyzer::CctOptions{});
  ASSERT_TRUE(r.available) << r.unavailable_reason;
  EXPECT_EQ(r.unattributed_operations, 0);

  struct Op {
    std::vector<std::string> path;  // frame labels root first, then the operation
    std::int64_t launches;
    std::int64_t bytes;
  };
  std::vector<Op> ops;
  for (const auto& row : r.rows) {
    if (row.kind != analyzer::CctRow::Kind::GpuOperation) continue;
    Op op{{}, row.inclusive.launches, row.inclusive.bytes};
    for (const analyzer::CctRow* n = &row; n->parent >= 0; n = &r.rows[static_cast<std::size_t>(n->parent)]) {
      op.path.insert(op.path.begin(), n->label);
    }
    ops.push_back(op);
  }
  auto count = [&](const std::string& op_name, const std::vector<std::string>& frames_in_order,
                   int exact_recursion = -1) {
    std::int64_t launches = 0;
    for (const auto& op : ops) {
      if (op.path.back().find(op_name) == std::string::npos) continue;
      std::size_t at = 0;
      bool all = true;
      for (const auto& want : frames_in_order) {
        while (at < op.path.size() && op.path[at].find(want) == std::string::npos) ++at;
        if (at == op.path.size()) all = false;
        ++at;
      }
      if (exact_recursion >= 0) {
        int depth = 0;
        for (const auto& f : op.path) depth += f.rfind("(anonymous namespace)::recurse", 0) == 0;
        all = all && depth == exact_recursion;
      }
      if (all) launches += op.launches;
    }
    return launches;
  };
  EXPECT_EQ(count("path_kernel", {"main", "::a(", "::b("}), 5);
  EXPECT_EQ(count("path_kernel", {"main", "::a(", "::c("}), 5);
  EXPECT_EQ(count("path_kernel", {"main", "::recurse("}, 4), 3);  // recurse(3) down to recurse(0)
  EXPECT_EQ(count("library_kernel", {"main", "lib_launch"}), 4);
  EXPECT_EQ(count("thread_kernel", {"thread_body"}), 12);
  EXPECT_EQ(count("<gpu copy> Host-to-Device", {"main", "::d("}), 1);

  // Source lines come from the debug information: a's frame names cct_paths.cu.
  bool a_has_line = false;
  for (const auto& row : r.rows) {
    if (row.label.find("::a(") != std::string::npos && row.file.find("cct_paths.cu") != std::string::npos &&
        row.line > 0) {
      a_has_line = true;
    }
    if (row.label.find("lib_launch") != std::string::npos) {
      EXPECT_NE(row.module.find("libcct_paths_lib.so"), std::string::npos) << row.module;
    }
  }
  EXPECT_TRUE(a_has_line);
  // The two threads' launches keep their own thread ids.
  EXPECT_EQ(reader.query_int(
                "SELECT COUNT(DISTINCT c.tid) FROM api_context c JOIN kernel k ON k.pid = c.pid AND"
                " k.correlation_id = c.correlation_id JOIN strings s ON s.id = k.short_name_id"
                " WHERE s.value = 'thread_kernel'"),
            2);
}

}  // namespace fuselens::test
