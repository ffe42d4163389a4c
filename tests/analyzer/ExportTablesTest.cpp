#include "export/ExportTables.h"

#include <gtest/gtest.h>

#include <sstream>

#include "TestSupport.h"
#include "summary/SummaryFormat.h"

namespace fuselens::analyzer {
namespace {

using nlohmann::json;
using test::TempDir;

/// Records of the CSV section `name` (header first); empty when the section is absent.
std::vector<std::vector<std::string>> section(const std::string& csv, const std::string& name) {
  std::vector<std::vector<std::string>> out;
  bool inside = false;
  for (const auto& record : test::parse_csv(csv)) {
    if (record.empty()) {
      inside = false;
    } else if (record.size() == 1 && record[0].rfind("# ", 0) == 0) {
      inside = record[0] == "# " + name;
    } else if (inside) {
      out.push_back(record);
    }
  }
  return out;
}

std::vector<std::string> section_names(const std::string& csv) {
  std::vector<std::string> names;
  for (const auto& record : test::parse_csv(csv)) {
    if (record.size() == 1 && record[0].rfind("# ", 0) == 0) names.push_back(record[0].substr(2));
  }
  return names;
}

class ExportedTables : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_reference_capture(path_);
    runs_.push_back(load_export_run(db::Reader(path_), "A"));
  }
  std::string csv(const std::vector<ExportRun>& runs) const {
    std::ostringstream out;
    write_export_csv(out, runs);
    return out.str();
  }

  TempDir dir_;
  std::string path_ = dir_.file("reference.sqlite");
  std::vector<ExportRun> runs_;
};

TEST_F(ExportedTables, JsonHoldsTheSummaryUnchangedUnderEachRun) {
  std::ostringstream out;
  write_export_json(out, runs_);
  const json doc = json::parse(out.str());
  EXPECT_EQ(doc["format"], "fuselens-export");
  EXPECT_EQ(doc["format_version"], kExportFormatVersion);
  ASSERT_EQ(doc["runs"].size(), 1U);
  EXPECT_EQ(doc["runs"][0]["label"], "A");
  EXPECT_EQ(doc["runs"][0]["summary"], summary_to_json(runs_[0].summary));
  EXPECT_FALSE(doc.contains("side_by_side"));
}

TEST_F(ExportedTables, JsonOfTwoRunsJoinsTheirTablesByName) {
  runs_.push_back(load_export_run(db::Reader(path_), "B"));
  const json doc = export_to_json(runs_);
  ASSERT_EQ(doc["runs"].size(), 2U);
  EXPECT_EQ(doc["runs"][1]["label"], "B");
  for (const char* table : {"kernels", "memory_operations", "api", "nvtx"}) {
    ASSERT_TRUE(doc["side_by_side"].contains(table)) << table;
  }
  const json& first = doc["side_by_side"]["kernels"][0];
  EXPECT_EQ(first["name"], test::kQuoted);
  EXPECT_EQ(first["a_total_ns"], 4000);
  EXPECT_EQ(first["b_total_ns"], 4000);
  EXPECT_EQ(first["ratio"], 1.0);
  EXPECT_EQ(first["a_count"], 2);
}

TEST_F(ExportedTables, CsvSectionsAreTheSummaryCsvUnderQualifiedNames) {
  const std::string text = csv(runs_);
  EXPECT_EQ(
      section_names(text),
      (std::vector<std::string>{"runs", "A.summary.kernels", "A.summary.memory_operations",
                                "A.summary.api", "A.summary.nvtx", "A.summary.device_memory"}));
  std::ostringstream summary_csv;
  write_summary(summary_csv, runs_[0].summary, OutputFormat::Csv);
  for (const char* table : {"kernels", "memory_operations", "api", "nvtx", "device_memory"}) {
    EXPECT_EQ(section(text, std::string("A.summary.") + table), section(summary_csv.str(), table))
        << table;
  }
}

TEST_F(ExportedTables, CsvRunsSectionDescribesEachCapture) {
  const auto runs = section(csv(runs_), "runs");
  ASSERT_EQ(runs.size(), 2U);
  EXPECT_EQ(runs[0].front(), "label");
  EXPECT_EQ(runs[0][1], "window");
  EXPECT_EQ(runs[0][2], "path");
  EXPECT_EQ(runs[0].back(), "command_line");
  EXPECT_EQ(runs[1][0], "A");
  EXPECT_EQ(runs[1][1], "whole capture");  // no window given to load_export_run
  EXPECT_EQ(runs[1][2], path_);
  EXPECT_EQ(runs[1].back(), R"(["./bench","--size","two words"])");
  const auto column = std::find(runs[0].begin(), runs[0].end(), "end_reason") - runs[0].begin();
  EXPECT_EQ(runs[1][static_cast<std::size_t>(column)], "exited");
}

TEST_F(ExportedTables, CsvOfTwoRunsAddsSideBySideSections) {
  runs_.push_back(load_export_run(db::Reader(path_), "B"));
  const std::string text = csv(runs_);
  const auto names = section_names(text);
  EXPECT_NE(std::find(names.begin(), names.end(), "B.summary.kernels"), names.end());
  const auto kernels = section(text, "side_by_side.kernels");
  ASSERT_EQ(kernels.size(), 5U);  // header + 4 kernels
  EXPECT_EQ(kernels[0], (std::vector<std::string>{"name", "a_total_ns", "b_total_ns", "ratio",
                                                  "a_count", "b_count"}));
  EXPECT_EQ(kernels[1], (std::vector<std::string>{test::kQuoted, "4000", "4000", "1.0", "2", "2"}));
}

}  // namespace
}  // namespace fuselens::analyzer
