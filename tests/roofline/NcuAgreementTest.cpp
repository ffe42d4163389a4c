// FuseLens's default counters (kernel replay, cache control "all": the collector's own replay with
// memory restored and the L2 flushed before each pass) against Nsight Compute's defaults on
// third-party kernels (issue 22), from two files written on the H100 (2026-11-27 17:03-17:07 UTC,
// docs/measurements/2026-11-27-h100-first-launch-warmup.md) for
// workloads/python/third_party_kernels.py:
// - tests/data/ncu_agreement.csv (scripts/device/plans/ncu_agree.sh, compare_ncu_counters.py: one
//   row per launch and metric; columns label, kernel, launch_index, metric, kind, fuselens, ncu,
//   ratio, checked). Labels: "default" (prof-run's defaults vs ncu's defaults), "cache_none" (both
//   with --cache-control none), "ncu_dram_only" (the same FuseLens capture vs ncu collecting only
//   dram__bytes_read.sum and dram__bytes_write.sum, its other defaults kept).
// - tests/data/ncu_dram_repeatability.csv (scripts/device/plans/replay_warmup.sh,
//   ncu_repeatability.py: every row against the first of two such lone ncu runs; columns label,
//   kernel, launch_index, metric, value, reference, difference, ratio, checked). Labels:
//   "ncu_ncu_lone_r2" (ncu's second run: its own repeatability), "agree_default" (the capture of
//   ncu_agreement.csv), "wu_new_r1/2" (two captures with the collector's first-replay warm-up),
//   "wu_old_r1/2" (two without it, the collector before).
// What holds and is asserted: every checked FLOP row and L1 row within 2 %, every checked DRAM
// read row within 2 % or 16 KiB (512 sectors: one row of a 150 KB read differs by 4.5 KB); DRAM
// writes per kernel (median of its launches) within 2 % of ncu's lone counters for every kernel
// that writes more than 1 MB, the others (residual write-backs under 0.4 MB) within what ncu's
// two runs differ by; the process's first profiled launch as the later ones. What does not: DRAM
// writes against ncu's default metric set, which adds about 2.1 MB of writes of its own to each
// launch (its memory restore between passes; absent when ncu collects the DRAM counters alone),
// and 3 of 86 L2 rows (3 % low); docs/counters.md. Skipped, with the reason, while a file is
// absent.
#include <gtest/gtest.h>

#include <algorithm>
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
const std::string kRepeatFile = std::string(FUSELENS_TEST_DATA_DIR) + "/ncu_dram_repeatability.csv";

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

// The rows of a committed CSV of 9 cells a row whose first line is `header`: (line number, cells);
// a row of another width fails the test and is left out.
std::vector<std::pair<int, std::vector<std::string>>> csv_rows(const std::string& file,
                                                               const std::string& header) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  EXPECT_EQ(line, header) << file;
  std::vector<std::pair<int, std::vector<std::string>>> rows;
  int number = 1;
  while (std::getline(in, line)) {
    ++number;
    auto c = split(line);
    if (c.size() != 9) {
      ADD_FAILURE() << file << ":" << number << ": " << c.size() << " cells: " << line;
      continue;
    }
    rows.emplace_back(number, std::move(c));
  }
  return rows;
}

std::vector<Row> read_rows() {
  std::vector<Row> rows;
  for (const auto& [number, c] :
       csv_rows(kFile, "label,kernel,launch_index,metric,kind,fuselens,ncu,ratio,checked")) {
    Row r{c[0], c[1], c[2], c[3], c[4]};
    try {
      r.fuselens = std::stod(c[5]);
      r.ncu = std::stod(c[6]);
      r.ratio = c[7] == "inf" ? INFINITY : std::stod(c[7]);
    } catch (const std::exception&) {
      ADD_FAILURE() << kFile << ":" << number << ": not a number";
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
// about 2.1-2.4 MB of writes to each launch that ncu does not count when it collects the DRAM
// counters alone. FuseLens's writes are closer to that lone measurement than ncu's own default is,
// on every launch that writes anything but the process's first (see below).
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
    // The process's first profiled launch: there ncu's lone counter itself writes 1.7 MB more than
    // on the kernel's next launch (43.9 then 42.2 MB), FuseLens the same on both (42.1, 41.8);
    // FirstProfiledLaunchWritesWhatTheNextLaunchOfItsKernelWrites checks it.
    if (compared++ == 0) continue;
    const double alone = it->second.ncu;
    EXPECT_LT(std::abs(r.fuselens - alone), std::abs(r.ncu - alone))
        << r.kernel << " launch " << r.launch << ": FuseLens " << r.fuselens << ", ncu default "
        << r.ncu << ", ncu alone " << alone;
  }
  EXPECT_GE(compared, 50);
}

// One row of ncu_dram_repeatability.csv.
struct Repeat {
  std::string label, kernel;
  int launch = 0;
  std::string metric;
  double value = 0, reference = 0;
  bool checked = false;
};

std::vector<Repeat> read_repeats() {
  std::vector<Repeat> rows;
  for (const auto& [number, c] :
       csv_rows(kRepeatFile,
                "label,kernel,launch_index,metric,value,reference,difference,ratio,checked")) {
    try {
      rows.push_back(
          {c[0], c[1], std::stoi(c[2]), c[3], std::stod(c[4]), std::stod(c[5]), c[8] == "1"});
    } catch (const std::exception&) {
      ADD_FAILURE() << kRepeatFile << ":" << number << ": not a number";
    }
  }
  return rows;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Issue 22's "within 2 % per kernel" for DRAM writes, against ncu's lone DRAM counters (its
// defaults otherwise), with ncu's own run-to-run difference as the floor: per kernel, the median
// over its checked launches; a kernel whose ncu median is over 1 MB agrees within 2 %, any other
// within the largest difference between ncu's two runs on one launch (0.33 MB in this file).
TEST(NcuAgreement, DramWritesPerKernelAgreeWithNcusLoneCountersDownToNcusOwnRepeatability) {
  if (!std::filesystem::exists(kRepeatFile)) GTEST_SKIP() << kRepeatFile << " is not committed";
  const auto rows = read_repeats();
  double floor = 0;  // ncu against itself: the largest difference on one launch
  for (const auto& r : rows) {
    if (r.label == "ncu_ncu_lone_r2" && r.checked && r.metric == "dram__bytes_write.sum")
      floor = std::max(floor, std::abs(r.value - r.reference));
  }
  EXPECT_GT(floor, 0);
  EXPECT_LT(floor, 0.5e6);
  for (const std::string label : {"agree_default", "wu_new_r1", "wu_new_r2"}) {
    std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> kernels;
    for (const auto& r : rows) {
      if (r.label != label || !r.checked || r.metric != "dram__bytes_write.sum") continue;
      kernels[r.kernel].first.push_back(r.value);
      kernels[r.kernel].second.push_back(r.reference);
    }
    int large = 0;
    for (const auto& [kernel, values] : kernels) {
      const double fuselens = median(values.first), ncu = median(values.second);
      if (ncu > 1e6) {
        ++large;
        EXPECT_LE(std::abs(fuselens / ncu - 1), 0.02)
            << label << " " << kernel << ": FuseLens " << fuselens << ", ncu " << ncu;
      } else {
        EXPECT_LE(std::abs(fuselens - ncu), floor)
            << label << " " << kernel << ": FuseLens " << fuselens << ", ncu " << ncu;
      }
    }
    EXPECT_GE(large, 6) << label;  // cuDNN, PyTorch elementwise and softmax, randn, Triton
  }
}

// The process's first profiled launch (randn's, distribution_elementwise_grid_stride_kernel #0)
// wrote 18-20 MB more than the same kernel's next launch before the collector's replay warmed the
// range profiler up on the context (wu_old_*), and writes what the next launch writes within
// 1 MiB with it (wu_new_*, agree_default); ncu's own first launch writes 1.7 MB more than its next.
TEST(NcuAgreement, FirstProfiledLaunchWritesWhatTheNextLaunchOfItsKernelWrites) {
  if (!std::filesystem::exists(kRepeatFile)) GTEST_SKIP() << kRepeatFile << " is not committed";
  std::map<std::string, std::map<int, double>> first_kernel;  // label -> launch index -> bytes
  std::map<std::string, std::string> kernel_of;
  for (const auto& r : read_repeats()) {
    if (r.metric != "dram__bytes_write.sum") continue;
    if (!kernel_of.contains(r.label)) kernel_of[r.label] = r.kernel;  // rows are in launch order
    if (r.kernel == kernel_of[r.label]) first_kernel[r.label][r.launch] = r.value;
  }
  const double mib = 1024.0 * 1024.0;
  for (const std::string label : {"agree_default", "wu_new_r1", "wu_new_r2"}) {
    auto& w = first_kernel[label];
    ASSERT_TRUE(w.contains(0) && w.contains(1)) << label;
    EXPECT_LT(std::abs(w[0] - w[1]), mib) << label << ": " << w[0] << " then " << w[1];
  }
  for (const std::string label : {"wu_old_r1", "wu_old_r2"}) {
    auto& w = first_kernel[label];
    ASSERT_TRUE(w.contains(0) && w.contains(1)) << label;
    EXPECT_GT(w[0] - w[1], 16 * mib) << label << ": the collector before the warm-up";
  }
}

}  // namespace
