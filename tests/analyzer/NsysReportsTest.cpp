// The summary as `nsys stats` reports (analyzer/summary/NsysReports.h) and NVTX ranges projected
// instance by instance (NvtxGpuProjection.h); `prof-analyze summary --report ... --output`.
#include "summary/NsysReports.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <numeric>
#include <sstream>

#include "Subprocess.h"
#include "TestSupport.h"
#include "summary/NvtxGpuProjection.h"

#ifndef PROF_ANALYZE_PATH
#error "PROF_ANALYZE_PATH must name the prof-analyze binary"
#endif

namespace fuselens::analyzer {
namespace {

using test::FlagsCapture;
using test::TempDir;
using test::us;

std::vector<std::vector<std::string>> csv_of(NsysReport report, const Summary& summary,
                                             const std::vector<NvtxGpuProjectionRow>* proj = {}) {
  std::ostringstream out;
  write_nsys_csv(out, report, summary, proj);
  return test::parse_csv(out.str());
}

std::string one_decimal(double v) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(1);
  s << v;
  return s.str();
}

TEST(NsysReports, HeadersAreNsysStatsColumns) {
  const std::map<NsysReport, std::string> headers{
      {NsysReport::KernSum,
       "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name"},
      {NsysReport::MemTimeSum,
       "Time (%),Total Time (ns),Count,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Operation"},
      {NsysReport::MemSizeSum,
       "Total (MB),Count,Avg (MB),Med (MB),Min (MB),Max (MB),StdDev (MB),Operation"},
      {NsysReport::ApiSum,
       "Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name"},
      {NsysReport::NvtxSum,
       "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Style,"
       "Range"},
      {NsysReport::NvtxGpuProjSum,
       "Range,Style,Total Proj Time (ns),Total Range Time (ns),Range Instances,Proj Avg (ns),"
       "Proj Med (ns),Proj Min (ns),Proj Max (ns),Proj StdDev (ns),Total GPU Ops,Avg GPU Ops,"
       "Avg Range Lvl,Avg Num Child"}};
  const Summary empty;
  for (const auto& [report, header] : headers) {
    std::ostringstream out;
    write_nsys_csv(out, report, empty);
    EXPECT_EQ(out.str(), header + "\n") << to_string(report);
  }
}

TEST(NsysReports, SectionNamesStayAliases) {
  using R = NsysReport;
  EXPECT_EQ(reports_named("kernels"), std::vector<R>{R::KernSum});
  EXPECT_EQ(reports_named("memops"), (std::vector<R>{R::MemTimeSum, R::MemSizeSum}));
  EXPECT_EQ(reports_named("api"), std::vector<R>{R::ApiSum});
  EXPECT_EQ(reports_named("nvtx"), (std::vector<R>{R::NvtxSum, R::NvtxGpuProjSum}));
  EXPECT_EQ(reports_named("memory"), std::vector<R>{R::DeviceMemorySum});
  EXPECT_EQ(reports_named("all").size(), 7U);
  EXPECT_EQ(reports_named("cuda_gpu_kern_sum"), std::vector<R>{R::KernSum});
  EXPECT_TRUE(reports_named("cuda_gpu_trace").empty());
  EXPECT_TRUE(is_nsys_report_name("nvtx_gpu_proj_sum"));
  EXPECT_FALSE(is_nsys_report_name("kernels"));
  EXPECT_EQ(nsys_report_path("out/run1", R::ApiSum), "out/run1_cuda_api_sum.csv");
}

/// Checks the nine columns of a time report against the summary rows it was written from.
template <typename Row>
void expect_time_rows(const std::vector<std::vector<std::string>>& csv,
                      const std::vector<Row>& rows) {
  ASSERT_EQ(csv.size(), rows.size() + 1);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    const auto& c = csv[i + 1];
    ASSERT_EQ(c.size(), 9U);
    EXPECT_EQ(c[0], one_decimal(r.time_percent));
    EXPECT_EQ(c[1], std::to_string(r.stats.total_ns));
    EXPECT_EQ(c[2], std::to_string(r.stats.count));
    EXPECT_EQ(c[3], one_decimal(r.stats.avg_ns));
    EXPECT_EQ(c[4], one_decimal(r.stats.median_ns));
    EXPECT_EQ(c[5], std::to_string(r.stats.min_ns));
    EXPECT_EQ(c[6], std::to_string(r.stats.max_ns));
    EXPECT_EQ(c[7], one_decimal(r.stats.stddev_ns));
    EXPECT_EQ(c[8], r.name);  // quoted in the file when it holds a comma or a quote
  }
}

TEST(NsysReports, TimeReportsAreTheSummarysFigures) {
  TempDir dir;
  const auto path = dir.file("reference.sqlite");
  test::write_reference_capture(path);
  const Summary summary = summarize(db::Reader(path));
  ASSERT_FALSE(summary.kernels.empty());
  ASSERT_FALSE(summary.api.empty());
  ASSERT_FALSE(summary.memory_operations.empty());
  expect_time_rows(csv_of(NsysReport::KernSum, summary), summary.kernels);
  expect_time_rows(csv_of(NsysReport::ApiSum, summary), summary.api);
  expect_time_rows(csv_of(NsysReport::MemTimeSum, summary), summary.memory_operations);
  // The quoted kernel name survives the CSV round trip.
  const auto kern = csv_of(NsysReport::KernSum, summary);
  EXPECT_TRUE(std::any_of(kern.begin(), kern.end(),
                          [](const auto& row) { return row.back() == test::kQuoted; }));
}

TEST(NsysReports, MemorySizesAreMegabytesOfEachOperation) {
  FlagsCapture c;
  const std::vector<std::uint64_t> sizes{1'000'000, 3'000'000, 8'000'000};
  std::int64_t t = us(10);
  for (const auto bytes : sizes) {
    c.copy(db::MemcpyKind::HostToDevice, bytes, t, us(5), true, db::MemoryKind::Pinned,
           db::MemoryKind::Device);
    t += us(20);
  }
  c.copy(db::MemcpyKind::DeviceToHost, 500'000, t, us(5), true, db::MemoryKind::Device,
         db::MemoryKind::Pinned);
  TempDir dir;
  const auto path = dir.file("copies.sqlite");
  c.write(path);
  const auto csv = csv_of(NsysReport::MemSizeSum, summarize(db::Reader(path)));
  ASSERT_EQ(csv.size(), 3U);
  // Sorted by total size: Host-to-Device first. MB = 1e6 bytes, three decimals.
  const double total = std::accumulate(sizes.begin(), sizes.end(), 0.0);
  const double mean = total / 3;
  double squares = 0;
  for (const auto b : sizes)
    squares += (static_cast<double>(b) - mean) * (static_cast<double>(b) - mean);
  const auto mb = [](double bytes) {
    std::ostringstream s;
    s.setf(std::ios::fixed);
    s.precision(3);
    s << bytes / 1e6;
    return s.str();
  };
  EXPECT_EQ(csv[1], (std::vector<std::string>{
                        mb(total), "3", mb(mean), mb(3'000'000), mb(1'000'000), mb(8'000'000),
                        mb(std::sqrt(squares / 2)), "[CUDA memcpy Host-to-Device]"}));
  EXPECT_EQ(csv[2].back(), "[CUDA memcpy Device-to-Host]");
  EXPECT_EQ(csv[2][0], mb(500'000));
}

/// Range "outer" [0, 1000 us] on thread 1 holding "inner" [100, 500 us]; a kernel launched at
/// 150 us (inside both) runs 2000-2100 us, one launched at 600 us (outer only) 3000-3500 us, and
/// a copy whose call starts at 699 us runs 700-710 us. "idle" [5000, 5100 us] launches nothing.
FlagsCapture nested_ranges() {
  FlagsCapture c;
  c.range("outer", 0, us(1000));
  c.range("inner", us(100), us(500), test::kFlagsTid, 1);
  c.range("idle", us(5000), us(5100));
  c.kernel("k1", us(2000), us(100), us(150), us(5));
  c.kernel("k2", us(3000), us(500), us(600), us(5));
  c.copy(db::MemcpyKind::HostToDevice, 4096, us(700), us(10), true, db::MemoryKind::Pinned,
         db::MemoryKind::Device);
  return c;
}

TEST(NvtxGpuProjection, EachInstanceProjectsToTheSpanOfItsGpuWork) {
  TempDir dir;
  const auto path = dir.file("nested.sqlite");
  nested_ranges().write(path);
  const auto rows = nvtx_gpu_projection(db::Reader(path));
  ASSERT_EQ(rows.size(), 2U);  // "idle" launched nothing: not projected
  const auto& outer = rows[0];
  EXPECT_EQ(outer.name, "outer");
  EXPECT_EQ(outer.projected.count, 1);
  EXPECT_EQ(outer.projected.total_ns, us(3500) - us(700));  // the copy starts first
  EXPECT_EQ(outer.range_total_ns, us(1000));
  EXPECT_EQ(outer.gpu_ops, 3);
  EXPECT_DOUBLE_EQ(outer.avg_level, 0);
  EXPECT_DOUBLE_EQ(outer.avg_children, 1);
  const auto& inner = rows[1];
  EXPECT_EQ(inner.name, "inner");
  EXPECT_EQ(inner.projected.total_ns, us(100));
  EXPECT_EQ(inner.range_total_ns, us(400));
  EXPECT_EQ(inner.gpu_ops, 1);
  EXPECT_DOUBLE_EQ(inner.avg_level, 1);
  EXPECT_DOUBLE_EQ(inner.avg_children, 0);

  const auto csv = csv_of(NsysReport::NvtxGpuProjSum, Summary{}, &rows);
  ASSERT_EQ(csv.size(), 3U);
  EXPECT_EQ(csv[1], (std::vector<std::string>{
                        "outer", "PushPop", std::to_string(us(2800)), std::to_string(us(1000)), "1",
                        "2800000.0", "2800000.0", std::to_string(us(2800)),
                        std::to_string(us(2800)), "0.0", "3", "3.0", "0.0", "1.0"}));
}

TEST(NvtxGpuProjection, ThreadProjectionLeavesOutOtherThreadsLaunches) {
  FlagsCapture c;
  c.range("step", 0, us(1000));
  c.kernel("mine", us(2000), us(100), us(100), us(5));
  c.kernel("theirs", us(4000), us(100), us(200), us(5), test::kFlagsTid + 1);
  TempDir dir;
  const auto path = dir.file("threads.sqlite");
  c.write(path);
  const auto process = nvtx_gpu_projection(db::Reader(path), NvtxProjection::Process);
  const auto thread = nvtx_gpu_projection(db::Reader(path), NvtxProjection::Thread);
  ASSERT_EQ(process.size(), 1U);
  ASSERT_EQ(thread.size(), 1U);
  EXPECT_EQ(process[0].gpu_ops, 2);
  EXPECT_EQ(process[0].projected.total_ns, us(4100) - us(2000));
  EXPECT_EQ(thread[0].gpu_ops, 1);
  EXPECT_EQ(thread[0].projected.total_ns, us(100));
}

using fuselens::test::Result;
using fuselens::test::run_cli;
using fuselens::test::slurp;

TEST(SummaryReports, OutputPrefixWritesOneNsysCsvPerReport) {
  TempDir dir;
  const auto path = dir.file("nested.sqlite");
  nested_ranges().write(path);
  const std::string prefix = dir.file("run1");
  const Result r =
      run_cli(dir, {"summary", path, "--format", "csv", "--report",
                    "cuda_gpu_kern_sum,nvtx_gpu_proj_sum", "--window", "all", "-o", prefix});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto kern = test::parse_csv(slurp(prefix + "_cuda_gpu_kern_sum.csv"));
  ASSERT_EQ(kern.size(), 3U);
  EXPECT_EQ(kern[0][1], "Total Time (ns)");
  const auto proj = test::parse_csv(slurp(prefix + "_nvtx_gpu_proj_sum.csv"));
  ASSERT_EQ(proj.size(), 3U);
  EXPECT_EQ(proj[1][0], "outer");
  EXPECT_FALSE(std::filesystem::exists(prefix + "_cuda_api_sum.csv"));  // not asked for
  EXPECT_NE(r.out.find("Generated: " + prefix + "_cuda_gpu_kern_sum.csv"), std::string::npos);

  // The section name is an alias; one report on standard output is its CSV alone.
  const Result one = run_cli(
      dir, {"summary", path, "--format", "csv", "--report", "cuda_api_sum", "--window", "all"});
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_EQ(one.out.rfind("Time (%),Total Time (ns),Num Calls,", 0), 0U) << one.out;
  const Result alias = run_cli(dir, {"summary", path, "--format", "csv", "--report", "memops",
                                     "--window", "all", "-o", dir.file("alias")});
  ASSERT_EQ(alias.status, 0) << alias.err;
  EXPECT_TRUE(std::filesystem::exists(dir.file("alias_cuda_gpu_mem_time_sum.csv")));
  EXPECT_TRUE(std::filesystem::exists(dir.file("alias_cuda_gpu_mem_size_sum.csv")));
  // Without an nsys name or --output, the summary's own CSV is unchanged.
  const Result own =
      run_cli(dir, {"summary", path, "--format", "csv", "--section", "kernels", "--window", "all"});
  ASSERT_EQ(own.status, 0) << own.err;
  EXPECT_EQ(own.out.rfind("# kernels\n", 0), 0U) << own.out;
}

TEST(SummaryReports, OutputNeedsCsvAndUnknownReportsAreUsageErrors) {
  TempDir dir;
  const auto path = dir.file("nested.sqlite");
  nested_ranges().write(path);
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"summary", path, "--format", "json", "-o", dir.file("x")},
           {"summary", path, "--report", "cuda_gpu_trace"}}) {
    const Result r = run_cli(dir, args);
    EXPECT_EQ(r.status, 2) << args[2];
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()) ||
              !std::filesystem::exists(dir.file("x_cuda_gpu_kern_sum.csv")));
}

}  // namespace
}  // namespace fuselens::analyzer
