// Real captures made on an H100 with prof-run and kept under tests/data (tests/data/README.md
// has the commands): what they hold must match what the workloads did.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <set>
#include <map>
#include <string>
#include <vector>

#include "CctPathsCheck.h"
#include "summary/Summary.h"
#include "fuselens/db/Reader.h"

using fuselens::analyzer::summarize;
using fuselens::db::Reader;

namespace {

std::string data(const std::string& name) { return std::string(FUSELENS_TEST_DATA_DIR) + "/" + name; }

std::multiset<std::int64_t> memcpy_sizes(const Reader& reader, int copy_kind) {
  auto s = reader.prepare("SELECT bytes FROM memcpy WHERE copy_kind = ?");
  s.bind(1, std::int64_t{copy_kind});
  std::multiset<std::int64_t> sizes;
  while (s.step()) sizes.insert(s.int64(0));
  return sizes;
}

// Kernels that overlap the previous kernel of their stream, or have no positive duration.
std::int64_t misordered_kernels(const Reader& reader) {
  auto s = reader.prepare("SELECT device_id, stream_id, start_ns, end_ns FROM kernel"
                          " ORDER BY device_id, stream_id, start_ns");
  std::int64_t bad = 0, last_device = -1, last_stream = -1, last_end = 0;
  while (s.step()) {
    const auto device = s.int64(0), stream = s.int64(1), start = s.int64(2), end = s.int64(3);
    if (end <= start) ++bad;
    if (device == last_device && stream == last_stream && start < last_end) ++bad;
    last_device = device;
    last_stream = stream;
    last_end = end;
  }
  return bad;
}

}  // namespace

class FusionBenchCapture : public ::testing::Test {
 protected:
  Reader reader{data("fusion_bench.sqlite")};
};

TEST_F(FusionBenchCapture, RanToCompletionOnAnH100WithNothingDropped) {
  const auto run = reader.run();
  EXPECT_EQ(run.end.exit_status, 0);
  EXPECT_EQ(run.dropped_records, 0u);
  EXPECT_EQ(run.info.command_line.front(), "fusion_bench");
  const auto devices = reader.devices();
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_NE(devices[0].name.find("H100"), std::string::npos) << devices[0].name;
  EXPECT_EQ(devices[0].cc_major, 9);
  EXPECT_EQ(devices[0].sm_count, 132);
}

TEST_F(FusionBenchCapture, EveryRangeHoldsTheKernelsItsIterationsLaunch) {
  const auto summary = summarize(reader);
  std::map<std::string, std::int64_t> kernels, instances;
  for (const auto& row : summary.nvtx) {
    kernels[row.name] = row.kernel_count;
    instances[row.name] = row.stats.count;
  }
  ASSERT_EQ(kernels.size(), 10u);
  const std::int64_t iters = reader.query_int("SELECT MIN(payload) FROM nvtx_range");
  EXPECT_EQ(iters, 50);
  EXPECT_EQ(reader.query_int("SELECT MAX(payload) FROM nvtx_range"), iters);
  for (const std::string shape : {"M64_N128_K256", "M128_N256_K256", "M1024_N1024_K1024"}) {
    EXPECT_EQ(instances["gemm_bias_relu/unfused/" + shape], 1);
    EXPECT_EQ(kernels["gemm_bias_relu/unfused/" + shape], 3 * iters) << shape;
    EXPECT_EQ(kernels["gemm_bias_relu/fused/" + shape], iters) << shape;
  }
  for (const std::string shape : {"1024x1024", "4096x4096"}) {
    EXPECT_EQ(kernels["swish/unfused/" + shape], 2 * iters) << shape;
    EXPECT_EQ(kernels["swish/fused/" + shape], iters) << shape;
  }
}

TEST_F(FusionBenchCapture, UnfusedGemmRangesLaunchGemmThenBiasThenRelu) {
  // Short names of the kernels launched inside the first unfused GEMM range, in launch order.
  auto s = reader.prepare(
      "SELECT sn.value FROM nvtx_range r JOIN strings t ON t.id = r.text_id"
      " JOIN api_call a ON a.pid = r.pid AND a.tid = r.tid AND a.start_ns BETWEEN r.start_ns AND r.end_ns"
      " JOIN kernel k ON k.pid = a.pid AND k.correlation_id = a.correlation_id"
      " JOIN strings sn ON sn.id = k.short_name_id"
      " WHERE t.value = 'gemm_bias_relu/unfused/M64_N128_K256' ORDER BY a.start_ns");
  std::vector<std::string> names;
  while (s.step()) names.push_back(s.text(0));
  ASSERT_EQ(names.size(), 150u);
  for (std::size_t i = 0; i < names.size(); i += 3) {
    EXPECT_EQ(names[i], "gemm_kernel");
    EXPECT_EQ(names[i + 1], "add_bias_kernel");
    EXPECT_EQ(names[i + 2], "relu_kernel");
  }
}

TEST_F(FusionBenchCapture, DurationsArePositiveAndOrderedWithinEachStream) {
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM kernel"), 990);  // 50 + 5 warm-up iterations
  EXPECT_EQ(misordered_kernels(reader), 0);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM memcpy WHERE end_ns <= start_ns"), 0);
}

TEST_F(FusionBenchCapture, MemcpyBytesMatchTheBuffersCopied) {
  // Host-to-device: A (M*K), B (K*N), bias (N) per GEMM shape and x (n) per swish size, floats.
  std::multiset<std::int64_t> h2d, d2h;
  for (const auto& [m, n, k] : std::vector<std::array<std::int64_t, 3>>{
           {64, 128, 256}, {128, 256, 256}, {1024, 1024, 1024}}) {
    h2d.insert({m * k * 4, k * n * 4, n * 4});
    d2h.insert({m * n * 4, m * n * 4});  // one output copy per variant
  }
  for (const std::int64_t n : {1024 * 1024, 4096 * 4096}) {
    h2d.insert(n * 4);
    d2h.insert({n * 4, n * 4});
  }
  EXPECT_EQ(memcpy_sizes(reader, 1), h2d);
  EXPECT_EQ(memcpy_sizes(reader, 2), d2h);
}

class PyTorchCapture : public ::testing::Test {
 protected:
  Reader reader{data("pytorch_mlp.sqlite")};
};

TEST_F(PyTorchCapture, RanOnAnH100AndEveryKernelJoinsItsLaunchCall) {
  EXPECT_EQ(reader.run().end.exit_status, 0);
  EXPECT_NE(reader.devices().at(0).name.find("H100"), std::string::npos);
  EXPECT_GT(reader.query_int("SELECT COUNT(*) FROM kernel"), 0);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM kernel k WHERE NOT EXISTS (SELECT 1 FROM api_call a"
                             " WHERE a.pid = k.pid AND a.correlation_id = k.correlation_id)"), 0);
  // PyTorch launches some kernels (cuBLAS's) through the driver API: they are traced too.
  EXPECT_GT(reader.query_int("SELECT COUNT(*) FROM api_call a JOIN strings s ON s.id = a.name_id"
                             " WHERE a.domain = 2 AND s.value = 'cuLaunchKernel'"), 0);
  // The autograd engine launches the backward pass from its own thread.
  EXPECT_GE(reader.query_int("SELECT COUNT(DISTINCT a.tid) FROM kernel k JOIN api_call a"
                             " ON a.pid = k.pid AND a.correlation_id = k.correlation_id"), 2);
  EXPECT_EQ(misordered_kernels(reader), 0);
}

TEST_F(PyTorchCapture, TrainingStepsAreRangesWithNestedPhasesAndEqualWork) {
  const auto summary = summarize(reader);
  std::vector<std::int64_t> step_kernels;
  std::map<std::string, std::int64_t> phases;
  for (const auto& row : summary.nvtx) {
    if (row.name.rfind("mlp/step", 0) == 0) step_kernels.push_back(row.kernel_count);
    else phases[row.name] = row.stats.count;
  }
  ASSERT_EQ(step_kernels.size(), 10u);
  EXPECT_GT(step_kernels.front(), 0);
  EXPECT_TRUE(std::all_of(step_kernels.begin(), step_kernels.end(),
                          [&](std::int64_t n) { return n == step_kernels.front(); }));
  EXPECT_EQ(phases["forward"], 10);
  EXPECT_EQ(phases["backward"], 10);
  EXPECT_EQ(phases["optimizer"], 10);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM nvtx_range r JOIN strings t ON t.id = r.text_id"
                             " WHERE t.value IN ('forward','backward','optimizer') AND r.depth = 1"), 30);
}

TEST(CctPathsCapture, EveryLaunchPathIsAttributed) {
  // workloads/cct_paths captured on an H100 (tests/data/README.md).
  fuselens::test::expect_cct_paths(data("cct_paths.sqlite"));
}
