#pragma once
// FUSELENS_CUDA_CHECK / FUSELENS_CUDA_CHECK_LAST: the one check macro pair for the CUDA runtime API
// in FuseLens's host code (kernels, workloads, tests).
//
// On failure they print one line to stderr,
//   [fuselens] CUDA error: <cudaGetErrorString(code)> in <call text> at <file>:<line>
// and throw fuselens::kernels::CudaError (a std::runtime_error carrying the same text and the
// code). Host code only: never use them inside __device__ functions.
//
//   FUSELENS_CUDA_CHECK(cudaMalloc(&p, bytes));
//   my_kernel<<<grid, block, 0, stream>>>(...);
//   FUSELENS_CUDA_CHECK_LAST();   // cudaGetLastError(): launch-configuration errors, no device
//   sync
//
// Style source: nvbench's and the CUDA samples' error macros, which report call text, file and
// line.

#include <cuda_runtime_api.h>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace fuselens::kernels {

/// A failed CUDA runtime call. what() is the line printed to stderr without the "[fuselens] "
/// prefix.
class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const std::string& message)
      : std::runtime_error(message), code_(code) {}

  /// The cudaError_t the call returned.
  [[nodiscard]] cudaError_t code() const noexcept { return code_; }

 private:
  cudaError_t code_;
};

namespace detail {

/// Prints the error line and throws CudaError. Called only by the macros below.
[[noreturn]] inline void throw_cuda_error(cudaError_t code, const char* call_text, const char* file,
                                          int line) {
  std::string message = std::string("CUDA error: ") + cudaGetErrorString(code) + " in " +
                        call_text + " at " + file + ":" + std::to_string(line);
  std::fprintf(stderr, "[fuselens] %s\n", message.c_str());
  throw CudaError(code, message);
}

}  // namespace detail
}  // namespace fuselens::kernels

/// Evaluates a CUDA runtime call once; throws fuselens::kernels::CudaError unless it returns
/// cudaSuccess.
#define FUSELENS_CUDA_CHECK(call)                                                           \
  do {                                                                                      \
    const cudaError_t fuselens_cuda_status_ = (call);                                       \
    if (fuselens_cuda_status_ != cudaSuccess) {                                             \
      ::fuselens::kernels::detail::throw_cuda_error(fuselens_cuda_status_, #call, __FILE__, \
                                                    __LINE__);                              \
    }                                                                                       \
  } while (false)

/// Checks (and clears) the last launch error with cudaGetLastError(); does not synchronize.
#define FUSELENS_CUDA_CHECK_LAST() FUSELENS_CUDA_CHECK(cudaGetLastError())
