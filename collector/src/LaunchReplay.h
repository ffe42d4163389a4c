#pragma once
// LaunchReplay: the collector's own kernel replay (`prof-run --metrics roofline`, the default
// kernel replay with cache control "all"; RangeProfiler.h), after Nsight Compute's kernel replay
// with `--cache-control all`: before every counter pass the device memory is put back as it was
// at the launch and the caches are flushed, so every pass sees the memory and the (empty) caches
// that the launch itself would have seen after ncu's flush.
//
// CUPTI's own kernel replay (CUPTI_KernelReplay) runs its passes inside the launch call and
// offers no hook between them: its save/restore of device memory leaves dirty lines in the L2
// that the next pass writes back (a cuBLAS SGEMM 2048³ counted 20.8 MB of DRAM writes where ncu
// counts 2.4 MB). So the range profiler runs in CUPTI_UserReplay and the collector drives the
// passes at the launch's API entry (run_replay): save the context's device memory with CUPTI's
// checkpoint API (cupti_checkpoint.h), then for every pass restore it (after the first), flush
// (L2Flush.h), start the profiler, launch the kernel again with the program's function,
// configuration and parameters (relaunch(); the collector's own calls run inside an
// InternalCalls, so they are not recorded as the program's launches), and stop it. The last pass
// is the program's own launch: its memory is restored before it, so the program's results are
// those of one launch. The counters are decoded at the launch's API exit.
//
// What can be launched again (read_launch_call): cuLaunchKernel, cuLaunchKernelEx and
// cuLaunchCooperativeKernel and their per-thread-default-stream (_ptsz) forms, made again through
// the same entry point of the libcuda.so.1 that injected the collector (DriverSymbols.h). The
// legacy cuLaunch/cuLaunchGrid/cuLaunchGridAsync (their configuration is state set by earlier
// calls) and cuLaunchCooperativeKernelMultiDevice (several contexts in one call) cannot: those
// launches keep CUPTI's kernel replay (RangeProfiler.cpp says what they get).
//
// Everything here but relaunch() is plain C++ over the launch call's parameter struct
// (generated_cuda_meta.h), testable without a GPU (tests/collector/LaunchReplayTest.cpp).

#include <cuda.h>
#include <cupti.h>

#include <cstddef>
#include <cstdint>
#include <functional>

namespace fuselens::collector {

/// The driver entry point that makes a launch again.
enum class RelaunchForm : std::uint8_t {
  None,  ///< cannot be made again (LaunchCall::why_not says why)
  Kernel,
  KernelPtsz,
  KernelEx,
  KernelExPtsz,
  Cooperative,
  CooperativePtsz,
};

/// One kernel launch call as the program made it. The pointers are the program's: valid only
/// while its launch call runs (inside the driver callback).
struct LaunchCall {
  RelaunchForm form = RelaunchForm::None;
  CUfunction function = nullptr;
  unsigned grid[3] = {0, 0, 0};
  unsigned block[3] = {0, 0, 0};
  unsigned shared_bytes = 0;
  CUstream stream = nullptr;
  void** kernel_params = nullptr;
  void** extra = nullptr;                  ///< cuLaunchKernel(Ex) only
  const CUlaunchConfig* config = nullptr;  ///< cuLaunchKernelEx only
  const char* why_not = nullptr;           ///< form None: a static string
};

/// The launch call of driver callback `id` (CUPTI_DRIVER_TRACE_CBID_*) from its parameters
/// (CUpti_CallbackData::functionParams, the cu*_params struct of generated_cuda_meta.h). form None
/// when `id` is not a launch that can be made again or `params` is null (or, for
/// cuLaunchKernelEx, its config is null).
LaunchCall read_launch_call(CUpti_CallbackId id, const void* params) noexcept;

/// Makes `call` again through the injecting libcuda's entry point of the same form, on the
/// calling thread's current context, and waits for the context (cuCtxSynchronize). Returns the
/// first failing driver result (CUDA_ERROR_NOT_SUPPORTED for form None, a missing entry point or
/// no libcuda loaded).
CUresult relaunch(const LaunchCall& call) noexcept;

/// The steps of one profiled launch's passes; each may throw (anything) to abandon them.
struct ReplayOps {
  std::function<bool()> save;      ///< false: memory cannot be saved; nothing was done
  std::function<void()> restore;   ///< puts the saved memory back
  std::function<void()> flush;     ///< cache control "all" only (empty: none)
  std::function<void()> start;     ///< starts the range profiler (one pass)
  std::function<void()> relaunch;  ///< launches the kernel again and waits for it
  std::function<bool()> stop;      ///< stops the profiler: true when all passes were submitted
};

enum class ReplayOutcome : std::uint8_t {
  NotReplayed,       ///< save() failed: nothing was run; the caller profiles the launch otherwise
  LaunchIsLastPass,  ///< the profiler is started for the last pass: the program's own launch
  AllPassesDone,     ///< the profiler said all passes were submitted before the last one was
                     ///< reached: stopped, memory restored; the program's launch runs unprofiled
};

/// Runs the passes of one launch at its API entry, `passes` (>= 1) in all: with more than one,
/// save() first; then for each pass restore() (all but the first), flush() (when set), start(),
/// and for all but the last relaunch() and stop(). The last pass is left started for the
/// program's own launch. If a step throws after a relaunch() modified memory, restore() is tried
/// before the exception propagates (the program's memory must stay as it was).
ReplayOutcome run_replay(std::size_t passes, const ReplayOps& ops);

}  // namespace fuselens::collector
