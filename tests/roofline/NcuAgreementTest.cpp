// FuseLens's default counters (kernel replay, cache control "all") against Nsight Compute's
// defaults on third-party kernels (issue 22): tests/data/ncu_agreement.csv, written on the H100 by
// scripts/device/plans/ncu_agree.sh (scripts/device/compare_ncu_counters.py: one row per launch and
// metric of workloads/python/third_party_kernels.py; columns label, kernel, launch_index, metric,
// kind, fuselens, ncu, ratio, checked). Rows labelled "default" are prof-run's defaults and must
// agree within 2 % wherever they are checked (both values above the noise floor the script states);
// rows of other labels (cache control none) are kept for the record and not asserted. Skipped, with
// the reason, while the file has not been committed.
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

std::vector<std::string> split(const std::string& line) {
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

TEST(NcuAgreement, DefaultCountersAgreeWithNsightComputesDefaultsWithinTwoPercent) {
  if (!std::filesystem::exists(kFile)) {
    GTEST_SKIP() << kFile << " is not committed yet: it comes from the H100 "
                 << "(scripts/device/run.sh ncu_agree)";
  }
  const auto rows = read_rows();
  std::set<std::string> kinds, kernels;
  int checked = 0;
  for (const auto& r : rows) {
    if (r.label != "default") continue;
    ASSERT_TRUE(r.kind == "bytes" || r.kind == "flops") << r.kind;
    if (!r.checked) continue;
    ++checked;
    kinds.insert(r.kind);
    kernels.insert(r.kernel);
    // The ratio column must be what the two values say (a hand-edited file fails here).
    const double ratio = r.ncu == 0 ? (r.fuselens == 0 ? 1.0 : INFINITY) : r.fuselens / r.ncu;
    EXPECT_NEAR(r.ratio, ratio, 1e-5 * std::max(1.0, std::abs(ratio)))
        << r.kernel << " " << r.metric;
    EXPECT_LE(std::abs(ratio - 1), 0.02) << r.kernel << " launch " << r.launch << " " << r.metric
                                         << ": FuseLens " << r.fuselens << ", ncu " << r.ncu;
  }
  // The comparison covers bytes and FLOPs of several kernels, not a stray row.
  EXPECT_EQ(kinds, (std::set<std::string>{"bytes", "flops"}));
  EXPECT_GE(kernels.size(), 5u);
  EXPECT_GE(checked, 50);
}

}  // namespace
