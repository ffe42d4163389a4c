// prof-run --metrics with Nsight Compute's launch filters (issue 22; LaunchFilter.h): counters for
// exactly the launches the filters choose, the others run unreplayed. fusion_bench's
// gemm_bias_relu case launches gemm_kernel, add_bias_kernel, relu_kernel (unfused) and
// gemm_bias_relu_fused_kernel (fused), each shape inside an NVTX range
// "gemm_bias_relu/VARIANT/SHAPE". The expected launches are derived from a run of the same workload
// without counters.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "Binaries.h"
#include "GpuSkip.h"
#include "Subprocess.h"
#include "TempDir.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/RooflineStore.h"
#include "summary/Summary.h"

using fuselens::test::binary;
using fuselens::test::run;
using fuselens::test::TempDir;

namespace {

const std::vector<std::string> kWorkload = {"--quick",  "--only", "gemm_bias_relu", "--iters", "2",
                                            "--warmup", "1"};

/// The correlation ids of the run's kernel launch calls, in launch order: the runtime's
/// (cudaLaunch*, which fusion_bench makes), else the driver's (cuLaunch*). A launch's position is
/// its index here; the same program makes the same calls with or without counters, so positions
/// compare across the two runs.
std::vector<std::int64_t> launch_calls(const fuselens::db::Reader& reader) {
  for (const char* pattern : {"cudaLaunch%", "cuLaunch%"}) {
    auto s = reader.prepare(
        "SELECT DISTINCT a.correlation_id FROM api_call a JOIN strings n ON n.id = a.name_id"
        " WHERE n.value LIKE ? AND n.value NOT LIKE '%HostFunc%' ORDER BY a.correlation_id");
    s.bind(1, std::string_view(pattern));
    std::vector<std::int64_t> out;
    while (s.step()) out.push_back(s.int64(0));
    if (!out.empty()) return out;
  }
  return {};
}

/// (position, short name) of every kernel row, in launch order. A kernel's correlation id is its
/// runtime launch call's, or that of the driver call the runtime call makes (RangeProfiler.h:
/// the driver callback's), which CUPTI numbers after it and before the next launch call: either
/// way the position is that of the last launch call numbered at or before it.
std::vector<std::pair<std::size_t, std::string>> kernels_by_position(
    const fuselens::db::Reader& reader) {
  const auto calls = launch_calls(reader);
  auto s = reader.prepare(
      "SELECT k.correlation_id, n.value FROM kernel k JOIN strings n ON n.id = k.short_name_id"
      " ORDER BY k.correlation_id");
  std::vector<std::pair<std::size_t, std::string>> out;
  while (s.step()) {
    const auto it = std::upper_bound(calls.begin(), calls.end(), s.int64(0));
    EXPECT_NE(it, calls.begin()) << "kernel " << s.text(1) << " has no launch call";
    if (it != calls.begin()) {
      out.emplace_back(static_cast<std::size_t>(it - calls.begin()) - 1, s.text(1));
    }
  }
  return out;
}

class CounterFilterGpu : public ::testing::Test {
 protected:
  void SetUp() override { FUSELENS_SKIP_WITHOUT_GPU(); }
  std::string prof_run() const { return binary("prof-run", PROF_RUN_PATH); }
  fuselens::test::Result profile(const std::string& path, std::vector<std::string> options,
                                 const std::vector<std::string>& env = {}) const {
    std::vector<std::string> argv = {prof_run(), "-o", path};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.push_back("--");
    argv.push_back(binary("fusion_bench", FUSION_BENCH_PATH));
    argv.insert(argv.end(), kWorkload.begin(), kWorkload.end());
    return run(argv, env);
  }
  TempDir dir;
};

}  // namespace

// --kernel-name regex:relu --launch-skip 1 --launch-count 2: the filters select relu_kernel and
// gemm_bias_relu_fused_kernel launches; the skip and count apply among those, so the 2nd and 3rd
// of them get counters and nothing else does.
TEST_F(CounterFilterGpu, KernelNameSkipAndCountProfileExactlyThoseLaunches) {
  const auto plain_path = dir.file("plain.sqlite");
  const auto plain = profile(plain_path, {});
  ASSERT_EQ(plain.status, 0) << plain.err;
  std::vector<std::pair<std::size_t, std::string>> expected;
  {
    const fuselens::db::Reader reader(plain_path);
    for (const auto& k : kernels_by_position(reader)) {
      if (k.second.find("relu") != std::string::npos) expected.push_back(k);
    }
  }
  ASSERT_GE(expected.size(), 3u);
  expected = {expected[1], expected[2]};

  const auto path = dir.file("filtered.sqlite");
  const auto r = profile(path, {"--metrics", "roofline", "--kernel-name", "regex:relu",
                                "--launch-skip", "1", "--launch-count", "2"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;  // fusion_bench checks every output
  const fuselens::db::Reader reader(path);
  EXPECT_EQ(kernels_by_position(reader), expected);
  EXPECT_EQ(reader.query_int("SELECT COUNT(DISTINCT correlation_id) FROM kernel_metric"), 2);
  const auto sessions = fuselens::db::read_metric_sessions(reader);
  ASSERT_EQ(sessions.size(), 1u);
  EXPECT_EQ(sessions[0].status, "ok");
  EXPECT_EQ(sessions[0].ranges, 2);
  EXPECT_NE(r.err.find("2 of "), std::string::npos) << r.err;  // the collector's summary line
  EXPECT_EQ(r.err.find("==FuseLens=="), std::string::npos) << "progress without a terminal";
}

// --nvtx-include: only the launches inside the push/pop range given (its name holds '/',
// escaped), as many as the run without counters puts there.
TEST_F(CounterFilterGpu, NvtxIncludeProfilesTheLaunchesOfOneRange) {
  const std::string range = "gemm_bias_relu/unfused/M64_N128_K256";
  const auto plain_path = dir.file("plain.sqlite");
  ASSERT_EQ(profile(plain_path, {}).status, 0);
  std::int64_t inside = 0;
  {
    const fuselens::db::Reader reader(plain_path);
    for (const auto& row : fuselens::analyzer::summarize(reader).nvtx) {
      if (row.name == range) inside = row.kernel_count;
    }
  }
  ASSERT_GT(inside, 0);
  const auto path = dir.file("nvtx.sqlite");
  const auto r = profile(path, {"--metrics", "roofline", "--nvtx-include",
                                "gemm_bias_relu\\/unfused\\/M64_N128_K256/"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const fuselens::db::Reader reader(path);
  EXPECT_EQ(reader.query_int("SELECT COUNT(DISTINCT correlation_id) FROM kernel_metric"), inside);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM kernel"), inside);
}

// FUSELENS_PROGRESS=1: one "==FuseLens== Profiling" line per profiled launch, numbered from 0.
TEST_F(CounterFilterGpu, ProgressPrintsOneLinePerProfiledLaunch) {
  const auto r = profile(dir.file("progress.sqlite"),
                         {"--metrics", "roofline", "-k", "gemm_bias_relu_fused_kernel", "-c", "3"},
                         {"FUSELENS_PROGRESS=1"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> lines;
  for (const auto& line : r.err_lines()) {
    if (line.starts_with("==FuseLens== ")) lines.push_back(line);
  }
  ASSERT_EQ(lines.size(), 3u) << r.err;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    EXPECT_TRUE(lines[i].starts_with("==FuseLens== Profiling \"gemm_bias_relu_fused_kernel\" - " +
                                     std::to_string(i) + ": "))
        << lines[i];
    EXPECT_NE(lines[i].find(" passes"), std::string::npos) << lines[i];
  }
}

// Application replay with filters: every run chooses the same launches, so the merged counters
// cover the chosen launches with the whole set and no others.
TEST_F(CounterFilterGpu, ApplicationReplayMergesTheSameChosenLaunches) {
  const auto path = dir.file("app.sqlite");
  const auto r = profile(path, {"--metrics", "roofline", "--replay", "application", "-k",
                                "regex:^gemm_kernel$", "-s", "2", "-c", "3"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const fuselens::db::Reader reader(path);
  const auto sessions = fuselens::db::read_metric_sessions(reader);
  ASSERT_EQ(sessions.size(), 1u);
  EXPECT_EQ(sessions[0].status, "ok");
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM kernel"), 3);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM kernel k JOIN strings n ON n.id ="
                             " k.short_name_id WHERE n.value != 'gemm_kernel'"),
            0);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM kernel k WHERE (SELECT COUNT(*) FROM "
                             "kernel_metric m WHERE m.pid = k.pid AND m.correlation_id = "
                             "k.correlation_id) != " +
                             std::to_string(sessions[0].metrics.size())),
            0)
      << "a chosen launch lacks the counters of some run";
}

// Application replay whose filters choose nothing: the program runs once, not once per counter
// group, and the capture says no launch was profiled.
TEST_F(CounterFilterGpu, ApplicationReplayRunsOnceWhenTheFiltersChooseNothing) {
  const auto path = dir.file("none.sqlite");
  const auto r =
      profile(path, {"--metrics", "roofline", "--replay", "application", "-k", "no_such_kernel"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("chose no launch"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("application replay: run 2"), std::string::npos) << r.err;
  const fuselens::db::Reader reader(path);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM kernel_metric"), 0);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM kernel"), 0);
}
