// exit_with: launches a few empty kernels and exits with a chosen status, so tests can check that a
// profiler wrapping a program propagates its exit code.
//
//   exit_with CODE [KERNELS]
//
// CODE: exit status 0..255. KERNELS: number of tiny_kernel<<<1, 1>>> launches (default 10, >= 0).
// Launches them, synchronizes, prints "exit_with: launched K kernels, exiting with CODE" to stdout
// and returns CODE. Bad arguments: one line on stderr, exit 2. CUDA error: one line on stderr,
// exit 1.

#include "common/cuda_check.h"

#include <cuda_runtime.h>

#include <charconv>
#include <cstdio>
#include <exception>
#include <string_view>
#include <system_error>

__global__ void tiny_kernel() {}

namespace {

bool parse_int(std::string_view text, int minimum, int maximum, int& out) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc{} && ptr == end && out >= minimum && out <= maximum;
}

}  // namespace

int main(int argc, char** argv) {
  int code = 0;
  int kernels = 10;
  if (argc < 2 || argc > 3 || !parse_int(argv[1], 0, 255, code) ||
      (argc == 3 && !parse_int(argv[2], 0, 1 << 30, kernels))) {
    std::fprintf(stderr,
                 "usage: exit_with CODE [KERNELS]  (CODE 0..255, KERNELS >= 0, default 10)\n");
    return 2;
  }
  try {
    for (int i = 0; i < kernels; ++i) {
      tiny_kernel<<<1, 1>>>();
    }
    FUSELENS_CUDA_CHECK_LAST();
    FUSELENS_CUDA_CHECK(cudaDeviceSynchronize());
  } catch (const fuselens::kernels::CudaError&) {
    return 1;  // FUSELENS_CUDA_CHECK already printed the error line
  } catch (const std::exception& e) {
    std::fprintf(stderr, "exit_with: error: %s\n", e.what());
    return 1;
  }
  std::printf("exit_with: launched %d kernels, exiting with %d\n", kernels, code);
  return code;
}
