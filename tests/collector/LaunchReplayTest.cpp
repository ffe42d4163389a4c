// The collector's kernel replay without a GPU (collector/src/LaunchReplay.h): which launch calls
// can be made again and with what, and the order of the steps around each counter pass.
#include "LaunchReplay.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace fuselens::collector {
namespace {

TEST(LaunchReplay, ReadsTheProgramsLaunchKernelCallWhole) {
  int a = 1;
  void* args[] = {&a};
  void* extra[] = {nullptr};
  auto* stream = reinterpret_cast<CUstream>(0x1234);
  auto* function = reinterpret_cast<CUfunction>(0x5678);
  const cuLaunchKernel_params p{function, 3, 4, 5, 128, 2, 1, 4096, stream, args, extra};
  const LaunchCall c = read_launch_call(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &p);
  EXPECT_EQ(c.form, RelaunchForm::Kernel);
  EXPECT_EQ(c.function, function);
  EXPECT_EQ(c.grid[0], 3u);
  EXPECT_EQ(c.grid[1], 4u);
  EXPECT_EQ(c.grid[2], 5u);
  EXPECT_EQ(c.block[0], 128u);
  EXPECT_EQ(c.block[1], 2u);
  EXPECT_EQ(c.block[2], 1u);
  EXPECT_EQ(c.shared_bytes, 4096u);
  EXPECT_EQ(c.stream, stream);
  EXPECT_EQ(c.kernel_params, args);
  EXPECT_EQ(c.extra, extra);
  EXPECT_EQ(c.why_not, nullptr);

  const cuLaunchKernel_ptsz_params q{function, 1, 1, 1, 32, 1, 1, 0, nullptr, args, extra};
  const LaunchCall d = read_launch_call(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, &q);
  EXPECT_EQ(d.form, RelaunchForm::KernelPtsz);  // made again on the thread's default stream
  EXPECT_EQ(d.extra, extra);
}

TEST(LaunchReplay, KeepsLaunchKernelExsConfigurationForItsAttributes) {
  CUlaunchAttribute cluster{};
  cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  CUlaunchConfig config{};
  config.gridDimX = 132;
  config.blockDimX = 384;
  config.sharedMemBytes = 232448;
  config.attrs = &cluster;
  config.numAttrs = 1;
  int a = 0;
  void* args[] = {&a};
  const cuLaunchKernelEx_params p{&config, reinterpret_cast<CUfunction>(0x10), args, nullptr};
  const LaunchCall c = read_launch_call(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, &p);
  EXPECT_EQ(c.form, RelaunchForm::KernelEx);
  EXPECT_EQ(c.config, &config);  // attributes (clusters, cooperative, ...) go along unchanged
  EXPECT_EQ(c.grid[0], 132u);
  EXPECT_EQ(c.block[0], 384u);
  EXPECT_EQ(c.shared_bytes, 232448u);
  EXPECT_EQ(c.kernel_params, args);

  const cuLaunchKernelEx_params no_config{nullptr, reinterpret_cast<CUfunction>(0x10), args,
                                          nullptr};
  const LaunchCall d = read_launch_call(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, &no_config);
  EXPECT_EQ(d.form, RelaunchForm::None);
  ASSERT_NE(d.why_not, nullptr);
}

TEST(LaunchReplay, CooperativeLaunchesAreMadeAgainCooperatively) {
  int a = 0;
  void* args[] = {&a};
  const cuLaunchCooperativeKernel_params p{
      reinterpret_cast<CUfunction>(0x20), 8, 1, 1, 256, 1, 1, 0, nullptr, args};
  EXPECT_EQ(read_launch_call(CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel, &p).form,
            RelaunchForm::Cooperative);
  const cuLaunchCooperativeKernel_ptsz_params q{
      reinterpret_cast<CUfunction>(0x20), 8, 1, 1, 256, 1, 1, 0, nullptr, args};
  EXPECT_EQ(read_launch_call(CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz, &q).form,
            RelaunchForm::CooperativePtsz);
}

TEST(LaunchReplay, LaunchesItCannotMakeAgainSayWhy) {
  const char dummy[64] = {};
  const std::vector<CUpti_CallbackId> ids{
      CUPTI_DRIVER_TRACE_CBID_cuLaunch,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernelMultiDevice,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchHostFunc,
      CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
      0,
      1u << 30};
  for (const CUpti_CallbackId id : ids) {
    const LaunchCall c = read_launch_call(id, dummy);
    EXPECT_EQ(c.form, RelaunchForm::None) << id;
    ASSERT_NE(c.why_not, nullptr) << id;
    EXPECT_FALSE(std::string(c.why_not).empty()) << id;
  }
  const LaunchCall missing = read_launch_call(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, nullptr);
  EXPECT_EQ(missing.form, RelaunchForm::None);
  EXPECT_NE(missing.why_not, nullptr);
  // No libcuda in this process: nothing is launched, the driver's "not supported" comes back.
  EXPECT_EQ(relaunch(missing), CUDA_ERROR_NOT_SUPPORTED);
}

/// Records the steps run_replay takes; `stop_all_at`: the stop (1-based) that reports all passes
/// submitted; `throw_at`: the step name that throws.
struct Recorder {
  std::vector<std::string> steps;
  bool can_save = true;
  int stop_all_at = 0;
  std::string throw_at;
  int stops = 0;

  void step(const std::string& name) {
    steps.push_back(name);
    if (name == throw_at) throw std::runtime_error(name + " failed");
  }
  ReplayOps ops(bool flush) {
    ReplayOps o;
    o.save = [this] {
      step("save");
      return can_save;
    };
    o.restore = [this] { step("restore"); };
    if (flush) o.flush = [this] { step("flush"); };
    o.start = [this] { step("start"); };
    o.relaunch = [this] { step("relaunch"); };
    o.stop = [this] {
      step("stop");
      return ++stops == stop_all_at;
    };
    return o;
  }
};

using Steps = std::vector<std::string>;

TEST(LaunchReplay, EveryPassStartsFromTheSavedMemoryAndFlushedCaches) {
  Recorder r;
  EXPECT_EQ(run_replay(3, r.ops(true)), ReplayOutcome::LaunchIsLastPass);
  // The third pass is the program's own launch: started here, stopped at the launch's exit.
  EXPECT_EQ(r.steps, (Steps{"save", "flush", "start", "relaunch", "stop", "restore", "flush",
                            "start", "relaunch", "stop", "restore", "flush", "start"}));
}

TEST(LaunchReplay, OnePassNeedsNeitherSaveNorRelaunch) {
  Recorder flushed;
  EXPECT_EQ(run_replay(1, flushed.ops(true)), ReplayOutcome::LaunchIsLastPass);
  EXPECT_EQ(flushed.steps, (Steps{"flush", "start"}));
  Recorder plain;
  EXPECT_EQ(run_replay(0, plain.ops(false)), ReplayOutcome::LaunchIsLastPass);  // 0 is read as 1
  EXPECT_EQ(plain.steps, (Steps{"start"}));
}

TEST(LaunchReplay, WithoutCacheControlNothingIsFlushed) {
  Recorder r;
  run_replay(2, r.ops(false));
  EXPECT_EQ(r.steps, (Steps{"save", "start", "relaunch", "stop", "restore", "start"}));
}

TEST(LaunchReplay, MemoryThatCannotBeSavedLeavesTheLaunchUntouched) {
  Recorder r;
  r.can_save = false;
  EXPECT_EQ(run_replay(5, r.ops(true)), ReplayOutcome::NotReplayed);
  EXPECT_EQ(r.steps, (Steps{"save"}));
}

TEST(LaunchReplay, PassesThatEndEarlyPutTheMemoryBack) {
  Recorder r;
  r.stop_all_at = 1;  // the profiler wanted fewer passes than it said
  EXPECT_EQ(run_replay(3, r.ops(true)), ReplayOutcome::AllPassesDone);
  EXPECT_EQ(r.steps, (Steps{"save", "flush", "start", "relaunch", "stop", "restore"}));
}

TEST(LaunchReplay, AFailureAfterARelaunchRestoresTheProgramsMemoryFirst) {
  Recorder r;
  r.throw_at = "stop";
  EXPECT_THROW(run_replay(3, r.ops(true)), std::runtime_error);
  EXPECT_EQ(r.steps, (Steps{"save", "flush", "start", "relaunch", "stop", "restore"}));

  Recorder before;  // nothing was launched again yet: nothing to restore
  before.throw_at = "flush";
  EXPECT_THROW(run_replay(3, before.ops(true)), std::runtime_error);
  EXPECT_EQ(before.steps, (Steps{"save", "flush"}));

  Recorder restore;  // the restore itself fails: its error is the one that reaches the caller
  restore.throw_at = "restore";
  try {
    run_replay(3, restore.ops(true));
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "restore failed");
  }
}

}  // namespace
}  // namespace fuselens::collector
