#include "summary/Summary.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <stdexcept>

#include "TestSupport.h"
#include "fuselens/db/Writer.h"

namespace fuselens::analyzer {
namespace {

using test::TempDir;

template <typename Row>
const Row& row_named(const std::vector<Row>& rows, const std::string& name) {
  const auto it =
      std::find_if(rows.begin(), rows.end(), [&](const Row& r) { return r.name == name; });
  if (it == rows.end()) throw std::runtime_error("no row named " + name);
  return *it;
}

template <typename Row>
std::vector<std::string> names_of(const std::vector<Row>& rows) {
  std::vector<std::string> names;
  for (const auto& r : rows) names.push_back(r.name);
  return names;
}

class ReferenceCapture : public ::testing::Test {
 protected:
  void SetUp() override { test::write_reference_capture(path_); }
  Summary summary(NameKind names = NameKind::Demangled,
                  NvtxProjection projection = NvtxProjection::Process) const {
    return summarize(db::Reader(path_), names, projection);
  }

  TempDir dir_;
  std::string path_ = dir_.file("reference.sqlite");
};

TEST(ComputeStats, OddCountUsesTheMiddleValue) {
  const DurationStats s = compute_stats({300, 100, 200});
  EXPECT_EQ(s.count, 3);
  EXPECT_EQ(s.total_ns, 600);
  EXPECT_DOUBLE_EQ(s.avg_ns, 200.0);
  EXPECT_DOUBLE_EQ(s.median_ns, 200.0);
  EXPECT_EQ(s.min_ns, 100);
  EXPECT_EQ(s.max_ns, 300);
  EXPECT_DOUBLE_EQ(s.stddev_ns, 100.0);  // sqrt((100^2 + 0 + 100^2) / 2)
}

TEST(ComputeStats, EvenCountAveragesTheTwoMiddleValues) {
  const DurationStats s = compute_stats({7, 1, 4, 2});
  EXPECT_EQ(s.count, 4);
  EXPECT_EQ(s.total_ns, 14);
  EXPECT_DOUBLE_EQ(s.avg_ns, 3.5);
  EXPECT_DOUBLE_EQ(s.median_ns, 3.0);
  EXPECT_EQ(s.min_ns, 1);
  EXPECT_EQ(s.max_ns, 7);
  // Sample variance: (6.25 + 2.25 + 0.25 + 12.25) / 3 = 7.
  EXPECT_DOUBLE_EQ(s.stddev_ns, std::sqrt(7.0));
}

TEST(ComputeStats, SingleValueHasZeroStddev) {
  const DurationStats s = compute_stats({42});
  EXPECT_EQ(s.count, 1);
  EXPECT_DOUBLE_EQ(s.median_ns, 42.0);
  EXPECT_DOUBLE_EQ(s.stddev_ns, 0.0);
}

TEST(ComputeStats, EmptyIsAllZero) {
  const DurationStats s = compute_stats({});
  EXPECT_EQ(s.count, 0);
  EXPECT_EQ(s.total_ns, 0);
  EXPECT_DOUBLE_EQ(s.avg_ns, 0.0);
  EXPECT_DOUBLE_EQ(s.stddev_ns, 0.0);
}

TEST(ComputeStats, MedianOfHugeValuesDoesNotOverflow) {
  const std::int64_t big = std::int64_t{1} << 62;
  EXPECT_DOUBLE_EQ(compute_stats({big, big}).median_ns, static_cast<double>(big));
}

TEST_F(ReferenceCapture, KernelsAreGroupedByDemangledNameAndSortedByTotalTime) {
  const Summary s = summary();
  EXPECT_TRUE(s.cuda_used);
  EXPECT_EQ(names_of(s.kernels),
            (std::vector<std::string>{test::kQuoted, test::kGemm64, test::kGemm128, test::kRelu}));
  const KernelRow& gemm = row_named(s.kernels, test::kGemm64);
  EXPECT_EQ(gemm.stats.count, 3);
  EXPECT_EQ(gemm.stats.total_ns, 600);
  EXPECT_DOUBLE_EQ(gemm.stats.median_ns, 200.0);
  EXPECT_DOUBLE_EQ(gemm.stats.stddev_ns, 100.0);
  EXPECT_DOUBLE_EQ(gemm.time_percent, 100.0 * 600 / 5050);
  const KernelRow& quoted = row_named(s.kernels, test::kQuoted);
  EXPECT_EQ(quoted.stats.count, 2);
  EXPECT_DOUBLE_EQ(quoted.stats.median_ns, 2000.0);
  EXPECT_DOUBLE_EQ(quoted.stats.stddev_ns, std::sqrt(2.0) * 1000.0);
  EXPECT_DOUBLE_EQ(quoted.time_percent, 100.0 * 4000 / 5050);
  EXPECT_DOUBLE_EQ(row_named(s.kernels, test::kRelu).stats.stddev_ns, 0.0);
  double percent = 0;
  for (const auto& k : s.kernels) percent += k.time_percent;
  EXPECT_NEAR(percent, 100.0, 1e-9);
}

TEST_F(ReferenceCapture, ShortNamesMergeTemplateInstances) {
  const Summary s = summary(NameKind::Short);
  const KernelRow& gemm = row_named(s.kernels, "gemm");
  EXPECT_EQ(gemm.stats.count, 4);
  EXPECT_EQ(gemm.stats.total_ns, 1000);
  EXPECT_DOUBLE_EQ(gemm.stats.median_ns, 250.0);
  EXPECT_EQ(s.kernels.size(), 3U);
}

TEST_F(ReferenceCapture, MangledNamesAreTheDriverNames) {
  const Summary s = summary(NameKind::Mangled);
  EXPECT_EQ(row_named(s.kernels, test::kGemm64Mangled).stats.count, 3);
  EXPECT_EQ(row_named(s.kernels, "_Z4reluPf").stats.count, 1);
}

TEST_F(ReferenceCapture, MemoryOperationsHaveNsightNamesBytesAndThroughput) {
  const Summary s = summary();
  EXPECT_EQ(names_of(s.memory_operations),
            (std::vector<std::string>{"[CUDA memcpy Host-to-Device]",
                                      "[CUDA memcpy Device-to-Host]", "[CUDA memset]"}));
  const auto& h2d = s.memory_operations[0];
  EXPECT_EQ(h2d.stats.count, 2);
  EXPECT_EQ(h2d.stats.total_ns, 4000);
  EXPECT_EQ(h2d.total_bytes, 4'000'000);
  EXPECT_DOUBLE_EQ(h2d.throughput_gb_per_s, 1000.0);
  EXPECT_DOUBLE_EQ(h2d.time_percent, 62.5);
  const auto& d2h = s.memory_operations[1];
  EXPECT_DOUBLE_EQ(d2h.throughput_gb_per_s, 250.0);
  EXPECT_DOUBLE_EQ(d2h.time_percent, 31.25);
  const auto& memset = s.memory_operations[2];
  EXPECT_EQ(memset.total_bytes, 2 << 20);
  EXPECT_DOUBLE_EQ(memset.throughput_gb_per_s, 2097152.0 / 400.0);
  EXPECT_DOUBLE_EQ(memset.time_percent, 6.25);
}

TEST_F(ReferenceCapture, ApiCallsAreGroupedByName) {
  const Summary s = summary();
  EXPECT_EQ(names_of(s.api), (std::vector<std::string>{"cudaMemcpy", "cudaLaunchKernel",
                                                       "cudaMalloc", "cuLaunchKernel"}));
  const ApiRow& launch = row_named(s.api, "cudaLaunchKernel");
  EXPECT_EQ(launch.stats.count, 7);
  EXPECT_EQ(launch.stats.total_ns, 760);
  EXPECT_DOUBLE_EQ(launch.stats.median_ns, 10.0);
  EXPECT_EQ(launch.stats.max_ns, 700);
  EXPECT_DOUBLE_EQ(launch.time_percent, 100.0 * 760 / 3210);
}

TEST_F(ReferenceCapture, NvtxRangesProjectTheKernelsTheirThreadLaunchedInsideThem) {
  const Summary s = summary(NameKind::Demangled, NvtxProjection::Thread);
  EXPECT_EQ(names_of(s.nvtx),
            (std::vector<std::string>{"dom:other", "elsewhere", "outer", "inner"}));
  const NvtxRow& outer = row_named(s.nvtx, "outer");
  EXPECT_EQ(outer.stats.count, 1);
  EXPECT_EQ(outer.kernel_count, 5);  // not the kernel of thread 2, not the one launched after
  EXPECT_EQ(outer.gpu_time_ns, 4350);
  const NvtxRow& inner = row_named(s.nvtx, "inner");  // nested in outer: counts its kernels too
  EXPECT_EQ(inner.stats.count, 2);
  EXPECT_EQ(inner.unterminated, 1);
  EXPECT_EQ(inner.stats.total_ns, 4000);
  EXPECT_DOUBLE_EQ(inner.stats.median_ns, 2000.0);
  EXPECT_DOUBLE_EQ(inner.stats.stddev_ns, std::sqrt(2.0) * 1000.0);
  EXPECT_EQ(inner.kernel_count, 3);
  EXPECT_EQ(inner.gpu_time_ns, 1250);
  const NvtxRow& other = row_named(s.nvtx, "dom:other");
  EXPECT_EQ(other.kernel_count, 1);
  EXPECT_EQ(other.gpu_time_ns, 300);
  EXPECT_EQ(row_named(s.nvtx, "elsewhere").kernel_count, 0);  // another process
  EXPECT_DOUBLE_EQ(outer.time_percent, 100.0 * 10000 / 34000);
  EXPECT_EQ(outer.left_out_kernels, 1);  // kernel 4, launched by thread 2 inside outer
  EXPECT_EQ(inner.left_out_kernels, 1);  // the same kernel (3500 is inside [2000, 5000])
}

TEST_F(ReferenceCapture, ProcessProjectionAddsWhatOtherThreadsLaunchedInsideTheRange) {
  const Summary thread = summary(NameKind::Demangled, NvtxProjection::Thread);
  const Summary process = summary();
  EXPECT_EQ(process.nvtx_projection, NvtxProjection::Process);
  for (const auto& p : process.nvtx) {
    const NvtxRow& t = row_named(thread.nvtx, p.name);
    EXPECT_EQ(p.kernel_count, t.kernel_count + t.left_out_kernels) << p.name;
    EXPECT_EQ(p.other_thread_kernels, t.left_out_kernels) << p.name;
    EXPECT_EQ(p.left_out_kernels, 0) << p.name;
  }
  // Kernel 4 (thread 2, call at 3500, 300 ns) now counts for the ranges of thread 1 around it,
  // and thread 1's kernels launched in [0, 10000] count for thread 2's "dom:other".
  EXPECT_EQ(row_named(process.nvtx, "outer").gpu_time_ns,
            row_named(thread.nvtx, "outer").gpu_time_ns + 300);
  EXPECT_EQ(row_named(process.nvtx, "dom:other").gpu_time_ns,
            row_named(process.nvtx, "outer").gpu_time_ns);          // same span, same process
  EXPECT_EQ(row_named(process.nvtx, "elsewhere").kernel_count, 0);  // another process
}

TEST_F(ReferenceCapture, DeviceMemoryTracksThePeakOfDeviceAllocations) {
  const Summary s = summary();
  ASSERT_EQ(s.device_memory.size(), 2U);
  const DeviceMemoryRow& d0 = s.device_memory[0];
  EXPECT_EQ(d0.device_id, 0U);
  EXPECT_EQ(d0.device_name, test::kDeviceName);
  EXPECT_EQ(d0.peak_bytes, 2500);  // the pinned host allocation is not device memory
  EXPECT_EQ(d0.peak_time_ns, 400);
  EXPECT_EQ(d0.allocations, 3);
  EXPECT_EQ(d0.releases, 2);
  EXPECT_EQ(d0.bytes_at_end, 2000);
  const DeviceMemoryRow& d1 = s.device_memory[1];
  EXPECT_EQ(d1.device_id, 1U);
  EXPECT_EQ(d1.device_name, "");
  EXPECT_EQ(d1.peak_bytes, 10);
  EXPECT_EQ(d1.peak_time_ns, 50);
}

TEST_F(ReferenceCapture, TotalsAndRunAreFilledIn) {
  const Summary s = summary();
  EXPECT_EQ(s.totals.kernel_count, 7);
  EXPECT_EQ(s.totals.kernel_time_ns, 5050);
  EXPECT_EQ(s.totals.memcpy_count, 3);
  EXPECT_EQ(s.totals.memcpy_bytes, 4'500'000);
  EXPECT_EQ(s.totals.memset_count, 2);
  EXPECT_EQ(s.totals.memset_bytes, 2 << 20);
  EXPECT_EQ(s.totals.api_call_count, 10);
  EXPECT_EQ(s.totals.nvtx_range_count, 6);
  EXPECT_EQ(s.run.end.reason, db::EndReason::Exited);
  ASSERT_EQ(s.processes.size(), 1U);
  ASSERT_EQ(s.devices.size(), 1U);
  EXPECT_EQ(s.path, path_);
}

TEST(Summarize, UnfinalizedCaptureWithoutIndexesGivesTheSameProjection) {
  TempDir dir;
  const auto path = dir.file("crashed.sqlite");
  test::write_reference_capture(path, /*finalize=*/false);
  const auto finalized_path = dir.file("finalized.sqlite");
  test::write_reference_capture(finalized_path);
  for (const auto projection : {NvtxProjection::Process, NvtxProjection::Thread}) {
    const Summary s = summarize(db::Reader(path), NameKind::Demangled, projection);
    const Summary f = summarize(db::Reader(finalized_path), NameKind::Demangled, projection);
    for (const auto& row : f.nvtx) {
      EXPECT_EQ(row_named(s.nvtx, row.name).gpu_time_ns, row.gpu_time_ns) << row.name;
      EXPECT_EQ(row_named(s.nvtx, row.name).kernel_count, row.kernel_count) << row.name;
      EXPECT_EQ(row_named(s.nvtx, row.name).left_out_kernels, row.left_out_kernels) << row.name;
    }
  }
  EXPECT_EQ(row_named(summarize(db::Reader(path), NameKind::Demangled, NvtxProjection::Thread).nvtx,
                      "outer")
                .gpu_time_ns,
            4350);
}

TEST(Summarize, CaptureWithoutProcessIsNotCudaUsed) {
  TempDir dir;
  const auto path = dir.file("nocuda.sqlite");
  test::write_capture_without_process(path);
  const Summary s = summarize(db::Reader(path));
  EXPECT_FALSE(s.cuda_used);
  EXPECT_TRUE(s.kernels.empty());
  EXPECT_TRUE(s.nvtx.empty());
  EXPECT_EQ(s.totals.kernel_count, 0);
}

TEST(Summarize, ProjectionMatchesABruteForceCountOnManyLaunches) {
  TempDir dir;
  const auto path = dir.file("many.sqlite");
  db::RunInfo run;
  run.command_line = {"many"};
  auto writer = db::Writer::create(path, run);
  db::ProcessInfo process;
  process.pid = 1;
  writer.write_process(process);
  std::mt19937 rng(7);
  db::RecordBatch batch;
  for (std::uint32_t i = 1; i <= 20000; ++i) {
    const auto tid = static_cast<std::uint32_t>(1 + rng() % 3);
    const std::uint64_t start = rng() % 1'000'000;
    db::ApiCallRecord a;
    a.pid = 1;
    a.tid = tid;
    a.name = "cudaLaunchKernel";
    a.start_ns = start;
    a.end_ns = start + 5;
    a.correlation_id = i;
    batch.api_calls.push_back(a);
    db::KernelRecord k;
    k.pid = 1;
    k.correlation_id = i;
    k.start_ns = start + 10;
    k.end_ns = k.start_ns + 1 + rng() % 100;
    k.mangled_name = "k";
    batch.kernels.push_back(k);
  }
  for (int i = 0; i < 500; ++i) {
    db::NvtxRangeRecord r;
    r.pid = 1;
    r.tid = static_cast<std::uint32_t>(1 + rng() % 3);
    r.text = "r" + std::to_string(i % 5);
    r.start_ns = rng() % 1'000'000;
    r.end_ns = r.start_ns + rng() % 50'000;
    batch.nvtx_ranges.push_back(r);
  }
  writer.write(batch);
  writer.finalize({});

  for (const auto projection : {NvtxProjection::Thread, NvtxProjection::Process}) {
    std::map<std::string, std::pair<std::int64_t, std::int64_t>> expected;
    std::map<std::string, std::int64_t> other_threads;
    for (const auto& r : batch.nvtx_ranges) {
      auto& [count, gpu] = expected[r.text];
      for (std::size_t i = 0; i < batch.api_calls.size(); ++i) {
        const auto& a = batch.api_calls[i];
        if (a.start_ns < r.start_ns || a.start_ns > *r.end_ns) continue;
        if (a.tid != r.tid) ++other_threads[r.text];
        if (projection == NvtxProjection::Thread && a.tid != r.tid) continue;
        ++count;
        gpu += static_cast<std::int64_t>(batch.kernels[i].end_ns - batch.kernels[i].start_ns);
      }
    }
    const Summary s = summarize(db::Reader(path), NameKind::Demangled, projection);
    ASSERT_EQ(s.nvtx.size(), expected.size());
    for (const auto& row : s.nvtx) {
      EXPECT_EQ(row.kernel_count, expected[row.name].first) << row.name;
      EXPECT_EQ(row.gpu_time_ns, expected[row.name].second) << row.name;
      EXPECT_EQ(row.other_thread_kernels, other_threads[row.name]) << row.name;
      EXPECT_EQ(row.left_out_kernels,
                projection == NvtxProjection::Thread ? other_threads[row.name] : 0)
          << row.name;
    }
  }
}

}  // namespace
}  // namespace fuselens::analyzer
