#include "LaunchReplay.h"

// cupti.h (via LaunchReplay.h) brings generated_cuda_meta.h: the cuLaunchKernel*_params structs.
#include "DriverSymbols.h"

namespace fuselens::collector {
namespace {

template <typename P>
LaunchCall classic(RelaunchForm form, const P& p) {
  LaunchCall c;
  c.form = form;
  c.function = p.f;
  c.grid[0] = p.gridDimX;
  c.grid[1] = p.gridDimY;
  c.grid[2] = p.gridDimZ;
  c.block[0] = p.blockDimX;
  c.block[1] = p.blockDimY;
  c.block[2] = p.blockDimZ;
  c.shared_bytes = p.sharedMemBytes;
  c.stream = p.hStream;
  c.kernel_params = p.kernelParams;
  return c;
}

template <typename P>
LaunchCall extended(RelaunchForm form, const P& p) {
  LaunchCall c;
  if (!p.config) {
    c.why_not = "cuLaunchKernelEx without a launch configuration";
    return c;
  }
  c.form = form;
  c.function = p.f;
  c.config = p.config;
  c.grid[0] = p.config->gridDimX;
  c.grid[1] = p.config->gridDimY;
  c.grid[2] = p.config->gridDimZ;
  c.block[0] = p.config->blockDimX;
  c.block[1] = p.config->blockDimY;
  c.block[2] = p.config->blockDimZ;
  c.shared_bytes = p.config->sharedMemBytes;
  c.stream = p.config->hStream;
  c.kernel_params = p.kernelParams;
  c.extra = p.extra;
  return c;
}

struct Entries {
  using Classic = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                               unsigned, unsigned, CUstream, void**, void**);
  using Cooperative = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                   unsigned, unsigned, CUstream, void**);
  using Ex = CUresult (*)(const CUlaunchConfig*, CUfunction, void**, void**);
  Classic kernel = nullptr, kernel_ptsz = nullptr;
  Ex ex = nullptr, ex_ptsz = nullptr;
  Cooperative coop = nullptr, coop_ptsz = nullptr;
  CUresult (*synchronize)() = nullptr;

  Entries() {
    void* h = injected_libcuda();
    if (!h) return;
    load_driver_symbol(h, kernel, "cuLaunchKernel");
    load_driver_symbol(h, kernel_ptsz, "cuLaunchKernel_ptsz");
    load_driver_symbol(h, ex, "cuLaunchKernelEx");
    load_driver_symbol(h, ex_ptsz, "cuLaunchKernelEx_ptsz");
    load_driver_symbol(h, coop, "cuLaunchCooperativeKernel");
    load_driver_symbol(h, coop_ptsz, "cuLaunchCooperativeKernel_ptsz");
    load_driver_symbol(h, synchronize, "cuCtxSynchronize");
  }
};

const Entries& entries() {
  static const Entries e;
  return e;
}

}  // namespace

LaunchCall read_launch_call(CUpti_CallbackId id, const void* params) noexcept {
  LaunchCall none;
  if (!params) {
    none.why_not = "the launch call's parameters are missing";
    return none;
  }
  switch (id) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel: {
      const auto& p = *static_cast<const cuLaunchKernel_params*>(params);
      LaunchCall c = classic(RelaunchForm::Kernel, p);
      c.extra = p.extra;
      return c;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: {
      const auto& p = *static_cast<const cuLaunchKernel_ptsz_params*>(params);
      LaunchCall c = classic(RelaunchForm::KernelPtsz, p);
      c.extra = p.extra;
      return c;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
      return extended(RelaunchForm::KernelEx, *static_cast<const cuLaunchKernelEx_params*>(params));
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
      return extended(RelaunchForm::KernelExPtsz,
                      *static_cast<const cuLaunchKernelEx_ptsz_params*>(params));
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
      return classic(RelaunchForm::Cooperative,
                     *static_cast<const cuLaunchCooperativeKernel_params*>(params));
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      return classic(RelaunchForm::CooperativePtsz,
                     *static_cast<const cuLaunchCooperativeKernel_ptsz_params*>(params));
    case CUPTI_DRIVER_TRACE_CBID_cuLaunch:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync:
      none.why_not =
          "a legacy launch (cuLaunch, cuLaunchGrid*): its configuration is earlier calls' state";
      return none;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernelMultiDevice:
      none.why_not = "cuLaunchCooperativeKernelMultiDevice launches on several contexts at once";
      return none;
    default:
      none.why_not = "not a kernel launch call the collector can make again";
      return none;
  }
}

namespace {

// The driver's own ptsz macro (cuda.h) is not used: each form calls the entry point the program
// called, so a _ptsz launch on stream 0 goes to the calling thread's default stream again.
CUresult launch_again(const LaunchCall& c) noexcept {
  const Entries& e = entries();
  switch (c.form) {
    case RelaunchForm::Kernel:
    case RelaunchForm::KernelPtsz: {
      const auto fn = c.form == RelaunchForm::Kernel ? e.kernel : e.kernel_ptsz;
      if (!fn) return CUDA_ERROR_NOT_SUPPORTED;
      return fn(c.function, c.grid[0], c.grid[1], c.grid[2], c.block[0], c.block[1], c.block[2],
                c.shared_bytes, c.stream, c.kernel_params, c.extra);
    }
    case RelaunchForm::KernelEx:
    case RelaunchForm::KernelExPtsz: {
      const auto fn = c.form == RelaunchForm::KernelEx ? e.ex : e.ex_ptsz;
      if (!fn || !c.config) return CUDA_ERROR_NOT_SUPPORTED;
      return fn(c.config, c.function, c.kernel_params, c.extra);
    }
    case RelaunchForm::Cooperative:
    case RelaunchForm::CooperativePtsz: {
      const auto fn = c.form == RelaunchForm::Cooperative ? e.coop : e.coop_ptsz;
      if (!fn) return CUDA_ERROR_NOT_SUPPORTED;
      return fn(c.function, c.grid[0], c.grid[1], c.grid[2], c.block[0], c.block[1], c.block[2],
                c.shared_bytes, c.stream, c.kernel_params);
    }
    case RelaunchForm::None:
      break;
  }
  return CUDA_ERROR_NOT_SUPPORTED;
}

}  // namespace

CUresult relaunch(const LaunchCall& c) noexcept {
  const CUresult launched = launch_again(c);
  if (launched != CUDA_SUCCESS) return launched;
  const Entries& e = entries();
  return e.synchronize ? e.synchronize() : CUDA_ERROR_NOT_SUPPORTED;
}

ReplayOutcome run_replay(std::size_t passes, const ReplayOps& ops) {
  if (passes == 0) passes = 1;
  const bool saved = passes > 1;
  if (saved && !ops.save()) return ReplayOutcome::NotReplayed;
  bool modified = false;  // a relaunch ran since the last restore
  try {
    for (std::size_t pass = 0; pass < passes; ++pass) {
      if (pass > 0) {
        ops.restore();
        modified = false;
      }
      if (ops.flush) ops.flush();
      ops.start();
      if (pass + 1 == passes) return ReplayOutcome::LaunchIsLastPass;
      modified = true;
      ops.relaunch();
      if (ops.stop()) {
        ops.restore();
        modified = false;
        return ReplayOutcome::AllPassesDone;
      }
    }
  } catch (...) {
    if (modified) ops.restore();  // throws in turn when memory cannot be put back
    throw;
  }
  return ReplayOutcome::LaunchIsLastPass;  // not reached: the last pass returns above
}

}  // namespace fuselens::collector
