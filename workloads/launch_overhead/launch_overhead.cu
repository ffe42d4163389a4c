// launch_overhead: host cost of launching an empty kernel, the number a profiler's per-launch
// overhead is measured against (ANCHORS.md: 3.2–3.7 µs per launch on an H100 host without a
// profiler).
//
//   launch_overhead [--launches N] [--repeat R] [--warmup W] [--batch B] [--aux-calls K] [--help]
//
// 1. W (default 100) launches of tiny_kernel<<<1, 1>>>, then cudaDeviceSynchronize (not measured).
// 2. R (default 5) times: steady_clock around a loop of N (default 20000) launches of
//    tiny_kernel<<<1, 1>>> (nothing else in the loop, no sync), then cudaGetLastError and
//    cudaDeviceSynchronize outside the timed part.
//    With --batch B (B >= 1), the N launches are timed in batches of B with an untimed
//    cudaDeviceSynchronize after each batch, and the batches' times summed: with B well below the
//    depth of the GPU's launch queue the host never waits for the GPU inside a timed batch, so
//    the figure is the host's cost alone even where the GPU runs each (instrumented) kernel
//    slower than the host launches them. Without --batch, a GPU slower than the host pushes back
//    on the launch loop and the figure becomes the GPU's rate.
//    With --aux-calls K, each launch is preceded by K cheap runtime calls that put no work on the
//    GPU, cycling through cudaGetDevice, cudaStreamIsCapturing and cudaGetLastError: the calls
//    PyTorch makes around every kernel (about ten per kernel), which a profiler that hooks the
//    whole runtime API may slow down even when it records none of them.
// 3. One JSON line on stdout:
//    {"launches":N,"repeat":R,"warmup":W,"total_kernels_launched":W+N*R,
//     "host_us_per_launch_median":...,"host_us_per_launch_all":[...]}
// total_kernels_launched is every kernel launch the process makes. Exit: 0 ok, 1 CUDA error,
// 2 bad command line, 77 no CUDA device.
// Run under the measurement floor: CUDA_INJECTION64_PATH=.../libfuselens_cupti_floor.so
// launch_overhead

#include "common/cuda_check.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

__global__ void tiny_kernel() {}

namespace {

constexpr int kExitUsage = 2;
constexpr int kExitNoDevice = 77;

struct Options {
  long long launches = 20000;
  long long repeat = 5;
  long long warmup = 100;
  long long batch = 0;  // 0: one timed loop of N launches
  long long aux_calls = 0;
  bool help = false;
};

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

long long parse_count(std::string_view option, std::string_view text, long long minimum) {
  long long value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc{} || ptr != end || value < minimum) {
    throw UsageError(std::string(option) + " expects an integer >= " + std::to_string(minimum) +
                     ", got '" + std::string(text) + "'");
  }
  return value;
}

Options parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    std::string_view name = arg;
    std::string_view value;
    bool has_value = false;
    if (const auto eq = arg.find('='); arg.starts_with("--") && eq != std::string_view::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }
    auto take_value = [&]() -> std::string_view {
      if (has_value) {
        return value;
      }
      if (i + 1 >= argc) {
        throw UsageError(std::string(name) + " needs a value");
      }
      return argv[++i];
    };
    if (name == "--launches") {
      options.launches = parse_count(name, take_value(), 1);
    } else if (name == "--repeat") {
      options.repeat = parse_count(name, take_value(), 1);
    } else if (name == "--warmup") {
      options.warmup = parse_count(name, take_value(), 0);
    } else if (name == "--batch") {
      options.batch = parse_count(name, take_value(), 1);
    } else if (name == "--aux-calls") {
      options.aux_calls = parse_count(name, take_value(), 0);
    } else if ((name == "--help" || name == "-h") && !has_value) {
      options.help = true;
    } else {
      throw UsageError("unknown option '" + std::string(arg) + "'");
    }
  }
  return options;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

// Runtime calls that put no work on the GPU (results deliberately unused: only their cost counts).
void aux_calls(long long count) {
  for (long long k = 0; k < count; ++k) {
    switch (k % 3) {
      case 0: {
        int device = 0;
        (void)cudaGetDevice(&device);
        break;
      }
      case 1: {
        cudaStreamCaptureStatus status{};
        (void)cudaStreamIsCapturing(cudaStreamLegacy, &status);
        break;
      }
      default:
        (void)cudaGetLastError();
    }
  }
}

void launch_tiny(long long count, long long aux) {
  for (long long i = 0; i < count; ++i) {
    aux_calls(aux);
    tiny_kernel<<<1, 1>>>();
  }
}

int run(const Options& options) {
  launch_tiny(options.warmup, options.aux_calls);
  FUSELENS_CUDA_CHECK_LAST();
  FUSELENS_CUDA_CHECK(cudaDeviceSynchronize());

  std::vector<double> us_per_launch;
  const long long batch = options.batch > 0 ? options.batch : options.launches;
  for (long long r = 0; r < options.repeat; ++r) {
    double us = 0;
    for (long long done = 0; done < options.launches; done += batch) {
      const auto start = std::chrono::steady_clock::now();
      launch_tiny(std::min(batch, options.launches - done), options.aux_calls);
      const auto stop = std::chrono::steady_clock::now();
      FUSELENS_CUDA_CHECK_LAST();
      FUSELENS_CUDA_CHECK(cudaDeviceSynchronize());
      us += std::chrono::duration<double, std::micro>(stop - start).count();
    }
    us_per_launch.push_back(us / static_cast<double>(options.launches));
  }

  const long long total = options.warmup + options.launches * options.repeat;
  std::string json = "{\"launches\":" + std::to_string(options.launches) +
                     ",\"repeat\":" + std::to_string(options.repeat) +
                     ",\"warmup\":" + std::to_string(options.warmup) +
                     ",\"batch\":" + std::to_string(options.batch) +
                     ",\"aux_calls\":" + std::to_string(options.aux_calls) +
                     ",\"total_kernels_launched\":" + std::to_string(total);
  char number[64];
  std::snprintf(number, sizeof number, "%.4f", median(us_per_launch));
  json += ",\"host_us_per_launch_median\":";
  json += number;
  json += ",\"host_us_per_launch_all\":[";
  for (std::size_t i = 0; i < us_per_launch.size(); ++i) {
    std::snprintf(number, sizeof number, "%s%.4f", i == 0 ? "" : ",", us_per_launch[i]);
    json += number;
  }
  json += "]}";
  std::puts(json.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  try {
    options = parse_options(argc, argv);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "launch_overhead: error: %s (see --help)\n", e.what());
    return kExitUsage;
  }
  if (options.help) {
    std::puts(
        "usage: launch_overhead [--launches N] [--repeat R] [--warmup W] [--batch B]\n"
        "                       [--aux-calls K] [--help]\n"
        "  Times R loops of N empty-kernel launches (host wall clock, no sync in the loop)\n"
        "  after W unmeasured warm-up launches; prints one JSON line. --batch B times the\n"
        "  launches in batches of B with an untimed synchronize after each batch. --aux-calls K\n"
        "  makes K runtime calls without GPU work (cudaGetDevice, cudaStreamIsCapturing,\n"
        "  cudaGetLastError) before each launch, as PyTorch does around its kernels.\n"
        "  Defaults: N 20000, R 5, W 100. Exit: 0 ok, 1 CUDA error, 2 bad command line,\n"
        "  77 no CUDA device.");
    return 0;
  }
  int device_count = 0;
  const cudaError_t status = cudaGetDeviceCount(&device_count);
  if (status != cudaSuccess || device_count == 0) {
    std::fprintf(stderr, "launch_overhead: no CUDA device available (%s)\n",
                 status != cudaSuccess ? cudaGetErrorString(status) : "device count is 0");
    return kExitNoDevice;
  }
  try {
    return run(options);
  } catch (const fuselens::kernels::CudaError&) {
    return 1;  // FUSELENS_CUDA_CHECK already printed the error line
  } catch (const std::exception& e) {
    std::fprintf(stderr, "launch_overhead: error: %s\n", e.what());
    return 1;
  }
}
