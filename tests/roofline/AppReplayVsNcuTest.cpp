// The committed H100 capture of `prof-run --metrics roofline --replay application -- fusion_bench
// --quick` (tests/data/fusion_bench_app_replay.sqlite) against Nsight Compute's counters of the same
// program in application replay with its default cache control (tests/data/fusion_bench_ncu_app_all.csv,
// reduced from docs/measurements/2026-11-22-ncu-app-all-fusion_bench.csv: per launch in launch
// order, the kernel's short name, DRAM bytes read and written, fadd/fmul/ffma thread instructions).
// docs/BENCHMARKS.md, "application replay with flushed caches", has the comparison these assert.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "fuselens/db/Reader.h"
#include "fuselens/db/RooflineStore.h"

namespace fuselens::db {
namespace {

const std::string kData = FUSELENS_TEST_DATA_DIR;

struct Launch {
  std::string kernel;
  double dram = 0;   // bytes read + written
  double fp32 = 0;   // fadd + fmul + 2 ffma
};

std::vector<Launch> ncu_launches() {
  std::ifstream in(kData + "/fusion_bench_ncu_app_all.csv");
  std::vector<Launch> out;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream s(line);
    for (std::string cell; std::getline(s, cell, ',');) f.push_back(cell);
    if (f.size() != 7) throw std::runtime_error("bad reference line: " + line);
    out.push_back({f[1], std::stod(f[2]) + std::stod(f[3]), std::stod(f[4]) + std::stod(f[5]) + 2 * std::stod(f[6])});
  }
  return out;
}

std::vector<Launch> fuselens_launches(const Reader& reader) {
  auto s = reader.prepare(
      "SELECT n.value,"
      " (SELECT coalesce(sum(m.value), 0) FROM kernel_metric m JOIN strings mn ON mn.id = m.metric_id"
      "   WHERE m.pid = k.pid AND m.correlation_id = k.correlation_id"
      "   AND mn.value IN ('dram__bytes_read.sum', 'dram__bytes_write.sum')),"
      " (SELECT coalesce(sum(CASE WHEN mn.value LIKE '%ffma%' THEN 2 * m.value ELSE m.value END), 0)"
      "   FROM kernel_metric m JOIN strings mn ON mn.id = m.metric_id"
      "   WHERE m.pid = k.pid AND m.correlation_id = k.correlation_id AND mn.value IN"
      "   ('smsp__sass_thread_inst_executed_op_fadd_pred_on.sum',"
      "    'smsp__sass_thread_inst_executed_op_fmul_pred_on.sum',"
      "    'smsp__sass_thread_inst_executed_op_ffma_pred_on.sum'))"
      " FROM kernel k JOIN strings n ON n.id = k.short_name_id ORDER BY k.start_ns");
  std::vector<Launch> out;
  while (s.step()) out.push_back({s.text(0), s.real(1), s.real(2)});
  return out;
}

bool within(double a, double b, double tolerance) {
  return b == 0 ? a == 0 : std::abs(a - b) <= tolerance * std::abs(b);
}

class AppReplayVsNcu : public ::testing::Test {
 protected:
  void SetUp() override {
    ncu = ncu_launches();
    ours = fuselens_launches(reader);
    ASSERT_EQ(ours.size(), ncu.size());
    for (std::size_t i = 0; i < ours.size(); ++i) ASSERT_EQ(ours[i].kernel, ncu[i].kernel) << "launch " << i;
  }
  Reader reader{kData + "/fusion_bench_app_replay.sqlite"};
  std::vector<Launch> ncu, ours;
};

TEST_F(AppReplayVsNcu, TheCaptureSaysHowItWasReplayed) {
  const auto sessions = read_metric_sessions(reader);
  ASSERT_EQ(sessions.size(), 1u);
  EXPECT_EQ(sessions[0].replay, "application");
  EXPECT_EQ(sessions[0].cache_control, "all");
  EXPECT_EQ(sessions[0].status, "ok");
  EXPECT_EQ(sessions[0].passes, 4);  // runs of the program on GH100
  EXPECT_EQ(sessions[0].ranges, static_cast<std::int64_t>(ours.size()));
}

TEST_F(AppReplayVsNcu, EveryKernelsDramBytesAgreeWithinTwoPercent) {
  std::map<std::string, std::pair<double, double>> per_kernel;  // FuseLens, ncu
  for (std::size_t i = 0; i < ours.size(); ++i) {
    per_kernel[ours[i].kernel].first += ours[i].dram;
    per_kernel[ours[i].kernel].second += ncu[i].dram;
  }
  EXPECT_EQ(per_kernel.size(), 42u);  // distinct kernel names of fusion_bench --quick
  for (const auto& [kernel, bytes] : per_kernel) {
    EXPECT_GT(bytes.second, 0) << kernel;
    EXPECT_TRUE(within(bytes.first, bytes.second, 0.02))
        << kernel << ": FuseLens " << bytes.first << " bytes, ncu " << bytes.second;
  }
}

TEST_F(AppReplayVsNcu, EveryLaunchMovingAMegabyteAgreesWithinTwoPercent) {
  int large = 0;
  for (std::size_t i = 0; i < ours.size(); ++i) {
    if (ncu[i].dram < 1e6) continue;
    ++large;
    EXPECT_TRUE(within(ours[i].dram, ncu[i].dram, 0.02))
        << "launch " << i << " " << ours[i].kernel << ": FuseLens " << ours[i].dram << ", ncu " << ncu[i].dram;
  }
  EXPECT_EQ(large, 341);
}

TEST_F(AppReplayVsNcu, Fp32FlopsAgreeOnEveryLaunch) {
  for (std::size_t i = 0; i < ours.size(); ++i) {
    EXPECT_TRUE(within(ours[i].fp32, ncu[i].fp32, 0.02))
        << "launch " << i << " " << ours[i].kernel << ": FuseLens " << ours[i].fp32 << ", ncu " << ncu[i].fp32;
  }
}

}  // namespace
}  // namespace fuselens::db
