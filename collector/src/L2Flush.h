#pragma once
// L2Flush: writes back and evicts the GPU's L2 (and the SMs' instruction caches) before a profiled launch (`prof-run --metrics
// roofline --replay application --cache-control all`), after Nsight Compute's `--cache-control
// all`, so that a kernel's DRAM counters hold its own compulsory traffic plus what it evicts,
// not the write-back of lines other kernels left dirty nor hits on data they left behind.
//
// How: a read-only kernel (PTX below, JIT-compiled by the driver for the running GPU) streams
// through a device buffer of twice the L2's size (CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE; the buffer is
// never written, so the lines it leaves in L2 are clean) with `ld.global.cg` (cached in L2 only),
// and its result is stored only when it equals a constant, which keeps the loads alive. Every
// dirty line of the program is written back while the flush kernel runs, not while the profiled
// kernel does. Before it, a kernel of 512 KiB of straight-line code runs on every SM, so that the
// profiled kernel's code is not left in the SMs' instruction caches from its previous launch but
// fetched from DRAM, as after Nsight Compute's flush (which invalidates those caches too: without
// this step small kernels read 4 to 26 kB less from DRAM than ncu counts, the size of their
// code; docs/BENCHMARKS.md). run() first synchronizes the context (the program's earlier work
// has finished), then launches both on a stream of its own and waits for them.
//
// Driver entry points come from the libcuda.so.1 that injected the collector (like DeviceQuery),
// so nothing here links libcuda. The buffer and module live until the process exits (the
// collector never frees them: the context may be gone at exit). The buffer is an allocation of
// the program's context, so it appears in the capture's memory rows when `memory` is traced.
//
// Errors: create() and run() throw std::runtime_error with the failing driver call and its
// error name; the caller (RangeProfiler) logs it and stops counters on that context.

#include <cuda.h>

#include <cstddef>
#include <memory>

namespace fuselens::collector {

class L2Flush {
 public:
  /// Loads the flush kernel into `context` (made current for the call) and allocates its buffer.
  static std::unique_ptr<L2Flush> create(CUcontext context);
  /// Synchronizes the context, runs the flush kernel and waits for it.
  void run();
  /// Bytes the flush kernel reads (twice the L2 size).
  std::size_t bytes() const { return bytes_; }

 private:
  L2Flush() = default;
  CUcontext context_ = nullptr;
  CUfunction kernel_ = nullptr;
  CUfunction icache_kernel_ = nullptr;
  unsigned sms_ = 0;
  CUstream stream_ = nullptr;
  CUdeviceptr buffer_ = 0;
  std::size_t bytes_ = 0;
  unsigned blocks_ = 0;
};

}  // namespace fuselens::collector
