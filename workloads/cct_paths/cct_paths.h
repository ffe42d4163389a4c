#pragma once
// cct_paths: launches kernels from known call paths, so that calling-context capture can be
// checked path by path (tests/integration/CctCaptureTest.cpp and tests/gpu). The paths and counts
// are documented in cct_paths.cu.
#include <cuda_runtime.h>

extern "C" cudaError_t lib_launch(float* out);
