#pragma once
// The synthetic capture gui_benchmark (gui/bench/TimelineBenchmark.cpp) measures, written with
// db::Writer. It lives here, beside the GUI tests' other capture writer, because nothing under
// gui/ touches the database layer: the GUI reads captures only through the analyzer.

#include <cstdint>
#include <string>

namespace fuselens::gui::bench {

/// A finalized capture at `path` (replaced if present) of `kernels` kernels on device 0, process
/// 1: kernel i starts at 1 ms + 3 µs·i and lasts 1 µs + 250 ns·(i mod 7), alternating over
/// streams 7 and 8 and over four names (gemm, relu, bias, swish); each is launched by a
/// cudaLaunchKernel call (thread 2) 4 µs to 2.5 µs before it starts; an NVTX range "step/<n>"
/// opens 10 ns before every 1000th kernel and spans 3 ms, with a 64 MiB device allocation or
/// release 5 ns before it, alternately. Throws db::Error when the file cannot be written.
void writeBenchmarkCapture(const std::string& path, std::int64_t kernels);

}  // namespace fuselens::gui::bench
