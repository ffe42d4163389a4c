#pragma once
// Microbenchmarks of the running GPU's ceilings, the Empirical Roofline Toolkit's method: each
// runs a kernel built to saturate one unit, several times after warm-up, and reports the median.
//
//   dram_copy_bandwidth   float4 copy between two buffers far larger than L2 (default 1 GiB
//                         each); bytes/s counting bytes read + bytes written
//   dram_read_bandwidth   float4 sum over one such buffer (reads only); bytes/s
//   l2_read_bandwidth     float4 __ldcg (L2, not L1) sweeps over a buffer that fits in L2 (default
//                         8 MiB), many sweeps per launch; bytes/s of L2 hits
//   fp32_fma_rate         16 independent FMA chains per thread, 8 blocks of 256 threads per SM;
//                         FLOP/s with an FMA counted as 2
// Every call selects the current device, allocates what it needs with cudaMalloc and frees it.
// Errors: fuselens::kernels::CudaError (kernels/common/cuda_check.h).

#include <cstddef>
#include <string>

namespace fuselens::ceilings {

/// One measured ceiling: value in bytes/s or FLOP/s, and how it was obtained (for people).
struct Measurement {
    double value = 0;
    std::string method;
};

struct MicrokernelOptions {
    std::size_t dram_bytes = std::size_t{1} << 30;  ///< per buffer for the DRAM kernels
    std::size_t l2_bytes = std::size_t{8} << 20;     ///< the L2-resident buffer
    int repetitions = 20;                            ///< timed launches (median reported)
};

Measurement dram_copy_bandwidth(const MicrokernelOptions& options);
Measurement dram_read_bandwidth(const MicrokernelOptions& options);
Measurement l2_read_bandwidth(const MicrokernelOptions& options);
Measurement fp32_fma_rate(const MicrokernelOptions& options);

/// Median of `repetitions` launches of `launch`, timed with CUDA events, after 3 warm-ups; ms.
double median_ms(int repetitions, void (*launch)(void*), void* context);

}  // namespace fuselens::ceilings
