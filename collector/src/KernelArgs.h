#pragma once
// KernelArgs: the values of each kernel launch's 8-byte parameters (trace group "args", off by
// default; table kernel_arg in db/schema.sql). The analyzer maps them to allocations to tell
// which kernels of a chain share a buffer (docs/rules.md, fusion_chain).
//
// Where: the entry callback of the driver launch calls cuLaunchKernel, cuLaunchKernelEx and their
// _ptsz forms. The runtime's cudaLaunchKernel goes through one of them, with the correlation id
// that the kernel's activity record carries (as RangeProfiler.h relies on), and the callback
// hands over the CUfunction itself, so no cudaGetFuncBySymbol round trip is needed (and none
// would work on a program linked with the static runtime). Cooperative and graph launches are
// not read.
//
// Layout: cuFuncGetParamInfo (CUDA 12.4+; cuKernelGetParamInfo when the handle is a CUkernel)
// gives each parameter's offset and size; the first kMaxKernelParams parameters are probed and
// those of 8 bytes kept: the device-pointer candidates (an 8-byte integer or double is one too;
// values below kMinPointer are dropped, the analyzer keeps those inside a recorded allocation).
// The layout is cached per CUfunction in a small direct-mapped cache of the launching thread, so
// the launch path takes no lock and, after a kernel's first launch on a thread, calls no driver
// function; a miss probes at most kMaxKernelParams + 1 indexes.
//
// Cost: with the group on, a launch costs the cache lookup and up to 16 8-byte reads and appends
// into the thread's own vector (no allocation until it grows). Values are kept in memory per
// thread (at most kMaxRowsPerThread rows; more are counted as dropped and logged) and written at
// process exit. Errors never reach the host program.
//
// A CallbackHandler (CallbackHandler.h): the session starts it under `--trace args` and registers
// it; its callback walk calls on_callback() on every callback; finish() stops recording before
// the final flush, and write_final() hands the rows to the capture's sink on its writer thread.

#include <cuda.h>
#include <cupti.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "CallbackHandler.h"

namespace fuselens::collector {

inline constexpr int kMaxKernelParams = 16;
inline constexpr std::uint64_t kMinPointer = 0x10000;  ///< smaller values are never recorded
inline constexpr std::size_t kMaxRowsPerThread = std::size_t{1} << 21;  // 32 MiB of rows

/// Which parameters of a kernel are 8 bytes wide and where each sits in the packed parameter
/// buffer (CU_LAUNCH_PARAM_BUFFER_POINTER).
struct ParamLayout {
  std::uint8_t params = 0;                    ///< parameters seen, <= kMaxKernelParams
  std::uint8_t count = 0;                     ///< 8-byte parameters among them
  std::uint8_t index[kMaxKernelParams] = {};  ///< their positions in the parameter list
  std::uint16_t offset[kMaxKernelParams] = {};
};

/// Probes parameters 0, 1, ... with `info(index, &offset, &size)` (true when the parameter
/// exists; cuFuncGetParamInfo in the collector) until it refuses an index or kMaxKernelParams
/// were seen; keeps the 8-byte ones.
template <typename Info>
ParamLayout probe_layout(Info&& info) noexcept {
  ParamLayout layout;
  for (std::size_t i = 0; i < static_cast<std::size_t>(kMaxKernelParams); ++i) {
    std::size_t offset = 0, size = 0;
    if (!info(i, &offset, &size)) break;
    ++layout.params;
    if (size == 8 && offset <= 0xFFF0) {
      layout.index[layout.count] = static_cast<std::uint8_t>(i);
      layout.offset[layout.count] = static_cast<std::uint16_t>(offset);
      ++layout.count;
    }
  }
  return layout;
}

/// One launch's 8-byte parameters: from `kernel_params` (one pointer per parameter, as
/// cuLaunchKernel takes them) or, when it is null, from the packed buffer that `extra` passes
/// with CU_LAUNCH_PARAM_BUFFER_POINTER / CU_LAUNCH_PARAM_BUFFER_SIZE. Writes the values and
/// their parameter indexes (values below kMinPointer are skipped); returns how many.
int read_args(const ParamLayout& layout, void* const* kernel_params, void* const* extra,
              std::uint64_t* values, std::uint8_t* indexes) noexcept;

struct KernelArgsState;  // KernelArgs.cpp

/// The kernel-argument capture of process `pid`. One per process records (each thread keeps a
/// pointer to its rows).
class KernelArgs final : public CallbackHandler {
 public:
  explicit KernelArgs(std::uint32_t pid);
  ~KernelArgs() override;

  /// Enables the driver launch callbacks on `subscriber` and starts recording. Returns false
  /// (and logs why) when nothing will be recorded: no callback could be enabled, or the driver
  /// has no cuFuncGetParamInfo (older than CUDA 12.4).
  bool start(CUpti_SubscriberHandle subscriber) noexcept;
  /// Launch entries are read; every other callback is ignored.
  void on_callback(CUpti_CallbackDomain domain, CUpti_CallbackId id,
                   const void* data) noexcept override;
  /// Stops recording (before the collector's final flush). Idempotent.
  void finish() noexcept override;
  /// Hands every thread's rows to `sink` as the process's kernel_arg rows (in chunks of 65,536),
  /// and logs launches without parameter information and dropped values. Call once, after
  /// finish().
  void write_final(CaptureSink& sink) noexcept override;

 private:
  std::uint32_t pid_;
  std::unique_ptr<KernelArgsState> state_;  // set by a successful start()
  std::atomic<bool> recording_{false};
};

}  // namespace fuselens::collector
