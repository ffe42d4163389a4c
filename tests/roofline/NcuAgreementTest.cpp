// FuseLens's default counters (kernel replay, cache control "all": the collector's own replay with
// memory restored and the L2 flushed before each pass) against Nsight Compute's defaults on
// third-party kernels (issue 22): tests/data/ncu_agreement.csv, written on the H100 (2026-11-27) by
// scripts/device/plans/ncu_agree.sh (scripts/device/compare_ncu_counters.py: one row per launch and
// metric of workloads/python/third_party_kernels.py; columns label, kernel, launch_index, metric,
// kind, fuselens, ncu, ratio, checked). Labels: "default" (prof-run's defaults vs ncu's defaults),
// "cache_none" (both with --cache-control none), "ncu_dram_only" (the same FuseLens capture vs ncu
// collecting only dram__bytes_read.sum and dram__bytes_write.sum, its other defaults kept).
// What holds and is asserted: every checked FLOP row and L1 row within 2 %, every checked DRAM
// read row within 2 % or 16 KiB (512 sectors: one row of a 150 KB read differs by 4.5 KB). What
// does not: DRAM writes (ncu's default metric set adds about 2.4 MB of writes of its own to each
// launch, absent when ncu collects the DRAM counters alone; the second test pins that) and 4 of 86
// L2 rows (3 % low); docs/counters.md. Skipped, with the reason, while the file is absent.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

const std::string kFile = std::string(FUSELENS_TEST_DATA_DIR) + "/ncu_agreement.csv";

std::vector<std::string> split(std::string line) {
  if (!line.empty() && line.back() == '\r') line.pop_back();  // Python's csv writes CRLF
  std::vector<std::string> cells;
  std::stringstream s(line);
  for (std::string cell; std::getline(s, cell, ',');) cells.push_back(cell);
  if (!line.empty() && line.back() == ',') cells.emplace_back();
  return cells;
}

struct Row {
  std::string label, kernel, launch, metric, kind;
  double fuselens = 0, ncu = 0, ratio = 0;
  bool checked = false;
};

std::vector<Row> read_rows() {
  std::ifstream in(kFile);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "label,kernel,launch_index,metric,kind,fuselens,ncu,ratio,checked") << kFile;
  std::vector<Row> rows;
  int number = 1;
  while (std::getline(in, line)) {
    ++number;
    const auto c = split(line);
    if (c.size() != 9) {
      ADD_FAILURE() << kFile << ":" << number << ": " << c.size() << " cells: " << line;
      continue;
    }
    Row r{c[0], c[1], c[2], c[3], c[4]};
    try {
      r.fuselens = std::stod(c[5]);
      r.ncu = std::stod(c[6]);
      r.ratio = c[7] == "inf" ? INFINITY : std::stod(c[7]);
    } catch (const std::exception&) {
      ADD_FAILURE() << kFile << ":" << number << ": not a number: " << line;
      continue;
    }
    r.checked = c[8] == "1";
    rows.push_back(r);
  }
  return rows;
}

bool is_write(const Row& r) { return r.metric == "dram__bytes_write.sum"; }
bool is_l2(const Row& r) { return r.metric == "lts__t_bytes.sum"; }
bool is_read(const Row& r) { return r.metric == "dram__bytes_read.sum"; }

TEST(NcuAgreement, DefaultFlopsL1AndDramReadsAgreeWithNsightComputesDefaults) {
  if (!std::filesystem::exists(kFile)) {
    GTEST_SKIP() << kFile << " is not committed yet: it comes from the H100 "
                 << "(scripts/device/run.sh ncu_agree)";
  }
  const auto rows = read_rows();
  std::set<std::string> kinds, kernels;
  int checked = 0, reads = 0;
  for (const auto& r : rows) {
    if (r.label != "default") continue;
    ASSERT_TRUE(r.kind == "bytes" || r.kind == "flops") << r.kind;
    if (!r.checked) continue;
    // The ratio column must be what the two values say (a hand-edited file fails here).
    const double ratio = r.ncu == 0 ? (r.fuselens == 0 ? 1.0 : INFINITY) : r.fuselens / r.ncu;
    EXPECT_NEAR(r.ratio, ratio, 1e-5 * std::max(1.0, std::abs(ratio)))
        << r.kernel << " " << r.metric;
    if (is_write(r) || is_l2(r)) continue;  // not met: the second test and the file's header
    ++checked;
    kinds.insert(r.kind);
    kernels.insert(r.kernel);
    if (is_read(r)) ++reads;
    const bool close =
        std::abs(ratio - 1) <= 0.02 || (is_read(r) && std::abs(r.fuselens - r.ncu) <= 16.0 * 1024);
    EXPECT_TRUE(close) << r.kernel << " launch " << r.launch << " " << r.metric << ": FuseLens "
                       << r.fuselens << ", ncu " << r.ncu;
  }
  // The comparison covers bytes and FLOPs of several kernels, not a stray row.
  EXPECT_EQ(kinds, (std::set<std::string>{"bytes", "flops"}));
  EXPECT_GE(kernels.size(), 5u);
  EXPECT_GE(reads, 50);
  EXPECT_GE(checked, 500);
}

// DRAM writes: ncu's default metric set (five passes, SASS instruction counts among them) adds
// about 2.4 MB of writes to each launch that ncu does not count when it collects the DRAM
// counters alone. FuseLens's writes are closer to that lone measurement than ncu's own default is,
// for every launch that writes anything but the first of the process (its replay's first
// checkpoint and flush: 18 MB more, noted in docs/counters.md).
TEST(NcuAgreement, DramWritesOfTheDefaultAreCloserToNcusLoneWriteCounterThanNcusDefaultSet) {
  if (!std::filesystem::exists(kFile)) {
    GTEST_SKIP() << kFile << " is not committed yet: it comes from the H100 "
                 << "(scripts/device/run.sh ncu_agree)";
  }
  std::map<std::string, Row> lone;
  const auto rows = read_rows();
  for (const auto& r : rows) {
    if (r.label == "ncu_dram_only" && is_write(r)) lone[r.kernel + "#" + r.launch] = r;
  }
  int compared = 0;
  for (const auto& r : rows) {
    if (r.label != "default" || !is_write(r) || !r.checked) continue;
    const auto it = lone.find(r.kernel + "#" + r.launch);
    ASSERT_NE(it, lone.end()) << r.kernel << " launch " << r.launch;
    if (compared++ == 0) continue;  // the process's first profiled launch (see above)
    const double alone = it->second.ncu;
    EXPECT_LT(std::abs(r.fuselens - alone), std::abs(r.ncu - alone))
        << r.kernel << " launch " << r.launch << ": FuseLens " << r.fuselens << ", ncu default "
        << r.ncu << ", ncu alone " << alone;
  }
  EXPECT_GE(compared, 50);
}

}  // namespace
