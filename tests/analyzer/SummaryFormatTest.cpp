#include "summary/SummaryFormat.h"

#include <gtest/gtest.h>

#include <sstream>

#include "TestSupport.h"

namespace fuselens::analyzer {
namespace {

using nlohmann::json;
using test::TempDir;

class FormattedReference : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_reference_capture(path_);
    summary_ = summarize(db::Reader(path_));
  }
  std::string write(OutputFormat format, const SummarySections& which = {}) const {
    std::ostringstream out;
    write_summary(out, summary_, format, which);
    return out.str();
  }

  TempDir dir_;
  std::string path_ = dir_.file("reference.sqlite");
  Summary summary_;
};

/// The records of one "# section" of a CSV document, header row first.
std::vector<std::vector<std::string>> csv_section(const std::string& text,
                                                  const std::string& section) {
  const auto records = test::parse_csv(text);
  std::vector<std::vector<std::string>> out;
  bool inside = false;
  for (const auto& r : records) {
    if (r.empty()) {
      inside = false;
    } else if (r.size() == 1 && r[0].rfind("# ", 0) == 0) {
      inside = r[0] == "# " + section;
    } else if (inside) {
      out.push_back(r);
    }
  }
  return out;
}

TEST(FormatDuration, PicksReadableUnits) {
  EXPECT_EQ(format_duration(0), "0 ns");
  EXPECT_EQ(format_duration(999), "999 ns");
  EXPECT_EQ(format_duration(12.5), "12.5 ns");
  EXPECT_EQ(format_duration(1000), "1.000 µs");
  EXPECT_EQ(format_duration(12345), "12.345 µs");
  EXPECT_EQ(format_duration(1'234'000), "1.234 ms");
  EXPECT_EQ(format_duration(2e9), "2.000 s");
  EXPECT_EQ(format_duration(999'999.9), "1.000 ms");
  EXPECT_EQ(format_duration(-1500), "-1.500 µs");
}

TEST(FormatBytes, UsesDecimalUnits) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1500), "1.500 kB");
  EXPECT_EQ(format_bytes(4e6), "4.000 MB");
  EXPECT_EQ(format_bytes(1048576), "1.049 MB");
  EXPECT_EQ(format_bytes(85e9), "85.000 GB");
}

TEST(CsvField, QuotesCommasQuotesAndNewlines) {
  EXPECT_EQ(csv_field("plain<T>"), "plain<T>");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
}

TEST_F(FormattedReference, TableHasTitlesHeaderBlockAndReadableValues) {
  const std::string text = write(OutputFormat::Table);
  for (const char* expected : {"CUDA GPU Kernel Summary",
                               "CUDA GPU Memory Operation Summary",
                               "CUDA API Summary",
                               "NVTX Range Summary",
                               "Device Memory Summary",
                               "Time (%)",
                               "StdDev",
                               "./bench --size 'two words'",
                               "exited with status 0",
                               "Dropped records: 0",
                               test::kDeviceName,
                               test::kQuoted,
                               "[CUDA memcpy Host-to-Device]",
                               "79.2",
                               "2.000 µs",
                               "1.414 µs",
                               "141.4 ns",
                               "5242.880",
                               "1000.000",
                               "4.000 MB",
                               "dom:other"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << "missing: " << expected << "\n" << text;
  }
}

/// Byte offset of display column `column` in UTF-8 `line`.
std::size_t byte_offset(const std::string& line, std::size_t column) {
  std::size_t i = 0;
  for (std::size_t seen = 0; i < line.size(); ++i) {
    if ((static_cast<unsigned char>(line[i]) & 0xC0) == 0x80) continue;
    if (seen++ == column) break;
  }
  return i;
}

TEST_F(FormattedReference, TableColumnsAreAligned) {
  auto which = SummarySections::none();
  which.kernels = true;
  const std::string text = write(OutputFormat::Table, which);
  EXPECT_EQ(text.find("Memory Operation"), std::string::npos);  // only the kernels section
  std::istringstream lines(text.substr(text.find("CUDA GPU Kernel Summary:")));
  std::string line, header;
  std::getline(lines, line);  // title
  std::getline(lines, line);  // blank
  std::getline(lines, header);
  const std::size_t name_column = header.find("Name");  // the header is ASCII
  ASSERT_NE(name_column, std::string::npos);
  std::getline(lines, line);
  EXPECT_EQ(line.substr(name_column), "----");
  std::vector<std::string> names;
  while (std::getline(lines, line) && !line.empty()) {
    names.push_back(line.substr(byte_offset(line, name_column)));
    EXPECT_EQ(line[byte_offset(line, name_column) - 1], ' ');
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{test::kQuoted, test::kGemm64, test::kGemm128, test::kRelu}));
}

TEST_F(FormattedReference, CsvSectionsHaveStableColumnsAndQuotedNames) {
  const std::string text = write(OutputFormat::Csv);
  const auto kernels = csv_section(text, "kernels");
  ASSERT_EQ(kernels.size(), 5U);
  EXPECT_EQ(kernels[0],
            (std::vector<std::string>{"time_percent", "total_ns", "instances", "avg_ns", "med_ns",
                                      "min_ns", "max_ns", "stddev_ns", "name"}));
  EXPECT_EQ(kernels[1][8], test::kQuoted);  // parsed back through the quoting
  EXPECT_EQ(kernels[1][1], "4000");
  EXPECT_EQ(kernels[1][2], "2");
  EXPECT_DOUBLE_EQ(std::stod(kernels[1][0]), 100.0 * 4000 / 5050);
  EXPECT_EQ(kernels[2][8], test::kGemm64);
  EXPECT_NE(text.find("\"say \"\"hi\"\", <T>\""), std::string::npos);

  const auto memops = csv_section(text, "memory_operations");
  ASSERT_EQ(memops.size(), 4U);
  EXPECT_EQ(memops[0], (std::vector<std::string>{"time_percent", "total_ns", "count", "avg_ns",
                                                 "med_ns", "min_ns", "max_ns", "stddev_ns",
                                                 "total_bytes", "throughput_gb_per_s", "name"}));
  EXPECT_EQ(memops[1][8], "4000000");
  EXPECT_DOUBLE_EQ(std::stod(memops[1][9]), 1000.0);

  const auto api = csv_section(text, "api");
  ASSERT_FALSE(api.empty());
  EXPECT_EQ(api[0][2], "num_calls");
  const auto nvtx = csv_section(text, "nvtx");
  ASSERT_EQ(nvtx.size(), 5U);
  EXPECT_EQ(nvtx[0], (std::vector<std::string>{"time_percent", "total_ns", "instances", "avg_ns",
                                               "med_ns", "min_ns", "max_ns", "stddev_ns",
                                               "unterminated", "kernel_count", "left_out_kernels",
                                               "gpu_time_ns", "projection", "name"}));
  for (std::size_t r = 1; r < nvtx.size(); ++r) EXPECT_EQ(nvtx[r][12], "process");
  const auto memory = csv_section(text, "device_memory");
  ASSERT_EQ(memory.size(), 3U);
  EXPECT_EQ(memory[0],
            (std::vector<std::string>{"device_id", "peak_bytes", "peak_time_ns", "allocations",
                                      "releases", "bytes_at_end", "device_name"}));
  EXPECT_EQ(memory[1][1], "2500");
  EXPECT_EQ(memory[1][6], test::kDeviceName);
  // Sections are separated by exactly one blank line and nothing else is blank.
  std::size_t blank = 0;
  for (const auto& r : test::parse_csv(text)) blank += r.empty() ? 1 : 0;
  EXPECT_EQ(blank, 4U);
}

TEST_F(FormattedReference, CsvWritesOnlyTheSelectedSections) {
  auto which = SummarySections::none();
  which.nvtx = true;
  const std::string text = write(OutputFormat::Csv, which);
  EXPECT_EQ(text.rfind("# nvtx\n", 0), 0U);
  EXPECT_EQ(text.find("# kernels"), std::string::npos);
}

TEST_F(FormattedReference, JsonParsesBackWithTheDocumentedKeys) {
  const json doc = json::parse(write(OutputFormat::Json));
  for (const char* key : {"run", "devices", "processes", "kernels", "memory_operations", "api",
                          "nvtx", "device_memory", "totals"}) {
    EXPECT_TRUE(doc.contains(key)) << key;
  }
  EXPECT_EQ(doc["run"]["command_line"][2], "two words");
  EXPECT_EQ(doc["run"]["end_reason"], "exited");
  EXPECT_EQ(doc["run"]["exit_status"], 0);
  EXPECT_TRUE(doc["run"]["cuda_used"].get<bool>());
  EXPECT_EQ(doc["devices"][0]["name"], test::kDeviceName);
  const json& k = doc["kernels"][0];
  EXPECT_EQ(k["name"], test::kQuoted);
  EXPECT_EQ(k["total_ns"], 4000);
  EXPECT_EQ(k["instances"], 2);
  EXPECT_DOUBLE_EQ(k["stddev_ns"].get<double>(), std::sqrt(2.0) * 1000.0);
  EXPECT_DOUBLE_EQ(k["time_percent"].get<double>(), 100.0 * 4000 / 5050);
  for (const char* key : {"avg_ns", "med_ns", "min_ns", "max_ns"}) EXPECT_TRUE(k.contains(key));
  EXPECT_DOUBLE_EQ(doc["memory_operations"][0]["throughput_gb_per_s"].get<double>(), 1000.0);
  EXPECT_EQ(doc["nvtx"][2]["name"], "outer");
  // The process projection: thread 1's kernels (4350 ns) and thread 2's kernel 4 (300 ns).
  EXPECT_EQ(doc["nvtx"][2]["gpu_time_ns"], 4350 + 300);
  EXPECT_EQ(doc["nvtx"][2]["projection"], "process");
  EXPECT_EQ(doc["nvtx_projection"]["projection"], "process");
  EXPECT_EQ(doc["device_memory"][0]["peak_bytes"], 2500);
  EXPECT_EQ(doc["totals"]["kernel_time_ns"], 5050);
  EXPECT_EQ(doc["totals"]["memcpy_bytes"], 4'500'000);
}

TEST_F(FormattedReference, JsonLeavesOutUnselectedSections) {
  auto which = SummarySections::none();
  which.api = true;
  const json doc = summary_to_json(summary_, which);
  EXPECT_TRUE(doc.contains("api"));
  EXPECT_FALSE(doc.contains("kernels"));
  EXPECT_TRUE(doc.contains("totals"));
}

TEST(WriteSummary, CaptureWithoutCudaSaysSoInTheHeader) {
  TempDir dir;
  const auto path = dir.file("nocuda.sqlite");
  test::write_capture_without_process(path);
  std::ostringstream out;
  write_summary(out, summarize(db::Reader(path)), OutputFormat::Table);
  EXPECT_NE(out.str().find("never initialized CUDA"), std::string::npos);
  EXPECT_NE(out.str().find("(no CUDA kernels in this capture)"), std::string::npos);
}

TEST(DescribeRunEnd, SaysHowTheRunEndedAndNamesTheSignal) {
  EXPECT_EQ(describe_run_end({db::EndReason::Exited, 3, std::nullopt, 1}), "exited with status 3");
  EXPECT_EQ(describe_run_end({db::EndReason::Signaled, std::nullopt, 11, 1}),
            "killed by signal 11 (SIGSEGV)");
  EXPECT_EQ(describe_run_end({db::EndReason::Signaled, std::nullopt, 6, 1}),
            "killed by signal 6 (SIGABRT)");
  EXPECT_EQ(describe_run_end({db::EndReason::Signaled, std::nullopt, 40, 1}),
            "killed by signal 40");
}

// prof-run killed before it finalized the run row (issue #9): the summary says so in words.
TEST(WriteSummary, UnfinalizedCaptureSaysProfRunDidNotFinalizeIt) {
  TempDir dir;
  const auto path = dir.file("unfinalized.sqlite");
  test::write_reference_capture(path, /*finalize=*/false);
  const Summary summary = summarize(db::Reader(path));
  EXPECT_EQ(summary.run.end.reason, db::EndReason::NotFinalized);
  EXPECT_EQ(describe_run_end(summary.run.end).rfind("ended without prof-run finalizing it", 0), 0u);
  std::ostringstream out;
  write_summary(out, summary, OutputFormat::Table);
  EXPECT_NE(out.str().find("Run:             ended without prof-run finalizing it"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("CUDA GPU Kernel Summary"), std::string::npos);  // what was written
}

}  // namespace
}  // namespace fuselens::analyzer
