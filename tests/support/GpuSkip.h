#pragma once
// Why a GPU test cannot run on this machine: the driver is probed with dlopen, so test binaries
// link no libcuda and run (and skip) on machines without one. Header-only, test support.
//
//   FUSELENS_SKIP_WITHOUT_GPU();   // first statement of a GPU test or of SetUp()
// skips with "GPU test skipped: <reason>" (for example "no CUDA driver (libcuda.so.1 not found)").

#include <cuda.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>

namespace fuselens::test {

/// Empty when a CUDA device is usable, otherwise the reason none is (probed once per process).
inline const std::string& no_gpu_reason() {
  static const std::string reason = [] {
    void* cuda = dlopen("libcuda.so.1", RTLD_LAZY);
    if (!cuda) return std::string("no CUDA driver (libcuda.so.1 not found)");
    using Init = CUresult (*)(unsigned);
    using Count = CUresult (*)(int*);
    auto init = reinterpret_cast<Init>(dlsym(cuda, "cuInit"));
    auto count = reinterpret_cast<Count>(dlsym(cuda, "cuDeviceGetCount"));
    int n = 0;
    if (!init || !count || init(0) != CUDA_SUCCESS) return std::string("cuInit failed: no usable CUDA device");
    if (count(&n) != CUDA_SUCCESS || n == 0) return std::string("no CUDA device");
    return std::string();
  }();
  return reason;
}

}  // namespace fuselens::test

#define FUSELENS_SKIP_WITHOUT_GPU()                                                  \
  do {                                                                               \
    if (!::fuselens::test::no_gpu_reason().empty())                                  \
      GTEST_SKIP() << "GPU test skipped: " << ::fuselens::test::no_gpu_reason();     \
  } while (false)
