// step_loop: a training-like loop with NVTX steps, for capture control (prof-run --capture-range,
// --steps; docs/capture-control.md) and its GPU test (tests/gpu/CaptureControlGpuTest.cpp).
//
//   step_loop [--steps N] [--outer NAME] [--domain NAME] [--profiler-api A-B] [--tiny K]
//             [--json PATH]
//
// Start-up first: allocations and a warm-up kernel outside every range. Then the range NAME
// (default "train") around N steps (default 10), each an NVTX range "step#<i>" holding, in order:
// scale_kernel, add_kernel, reduce_kernel (a block reduction), one device-to-device copy and K
// tiny_kernel launches (default 0: --tiny is the tight loop of launches the overhead measurement
// times). After the loop, tail_kernel outside every range. --domain puts both ranges in the NVTX
// domain NAME instead of the default domain. --profiler-api A-B calls cudaProfilerStart before
// step A and cudaProfilerStop after step B (0-based, inclusive).
// Kernels are extern "C", so their recorded names are exactly the names above.
//
// Output: one JSON object (stdout, or PATH): the launches per kernel name outside every step and
// in each step, the copies, the profiler-API steps, and the host time of the loop in ns
// ("loop_ns", first step's push to the synchronize after the last step) with the launch count in
// it. Exit status: 0, 77 without a CUDA device, 2 on bad options, 1 on a CUDA error.
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

extern "C" __global__ void warmup_kernel(float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 1.0f;
}
extern "C" __global__ void scale_kernel(float* x, float a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
extern "C" __global__ void add_kernel(float* y, const float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += x[i];
}
extern "C" __global__ void reduce_kernel(const float* x, float* out, int n) {
  __shared__ float partial[256];
  float sum = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    sum += x[i];
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, partial[0]);
}
extern "C" __global__ void tiny_kernel() {}
extern "C" __global__ void log_kernel(const float* sum, float* last) { *last = *sum; }
extern "C" __global__ void tail_kernel(float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 0.0f;
}

namespace {

using Counts = std::map<std::string, long>;

[[noreturn]] void usage(const char* message) {
  std::fprintf(stderr,
               "step_loop: %s\nusage: step_loop [--steps N] [--outer NAME] [--domain NAME] "
               "[--profiler-api A-B] [--tiny K] [--json PATH]\n",
               message);
  std::exit(2);
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "step_loop: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

long to_count(const char* text) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (!*text || *end || v < 0 || v > 100000000) usage("bad count");
  return v;
}

// Ranges in the default domain, or in `domain` when one was created.
struct Ranges {
  nvtxDomainHandle_t domain = nullptr;
  void push(const std::string& name) const {
    if (!domain) {
      nvtxRangePushA(name.c_str());
      return;
    }
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = name.c_str();
    nvtxDomainRangePushEx(domain, &a);
  }
  void pop() const { domain ? nvtxDomainRangePop(domain) : nvtxRangePop(); }
};

void write_counts(std::FILE* f, const Counts& c) {
  std::fprintf(f, "{");
  bool first = true;
  for (const auto& [name, n] : c) {
    std::fprintf(f, "%s\"%s\": %ld", first ? "" : ", ", name.c_str(), n);
    first = false;
  }
  std::fprintf(f, "}");
}

}  // namespace

// One training step's work: the function `prof-analyze steps --step-function train_step` finds in
// the launches' calling contexts. Not inlined, so that it is a frame of its own.
__attribute__((noinline)) void train_step(float* x, float* y, float* sum, int n, int blocks,
                                          int threads, long tiny, Counts& c) {
  scale_kernel<<<blocks, threads>>>(x, 1.0001f, n);
  ++c["scale_kernel"];
  add_kernel<<<blocks, threads>>>(y, x, n);
  ++c["add_kernel"];
  reduce_kernel<<<64, threads>>>(y, sum, n);
  ++c["reduce_kernel"];
  check(cudaMemcpyAsync(x, y, n * sizeof(float), cudaMemcpyDeviceToDevice), "cudaMemcpyAsync");
  for (long k = 0; k < tiny; ++k) tiny_kernel<<<1, 1>>>();
  if (tiny) c["tiny_kernel"] += tiny;
}

int main(int argc, char** argv) {
  long steps = 10, tiny = 0, api_first = -1, api_last = -1;
  std::string outer = "train", domain_name, json;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage(("missing value after " + a).c_str());
    const char* v = argv[++i];
    if (a == "--steps")
      steps = to_count(v);
    else if (a == "--tiny")
      tiny = to_count(v);
    else if (a == "--outer")
      outer = v;
    else if (a == "--domain")
      domain_name = v;
    else if (a == "--json")
      json = v;
    else if (a == "--profiler-api") {
      const char* dash = std::strchr(v, '-');
      if (!dash) usage("--profiler-api needs A-B");
      api_first = to_count(std::string(v, dash).c_str());
      api_last = to_count(dash + 1);
      if (api_last < api_first) usage("--profiler-api: B < A");
    } else
      usage(("unknown option " + a).c_str());
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "step_loop: no CUDA device\n");
    return 77;
  }
  Ranges ranges;
  if (!domain_name.empty()) ranges.domain = nvtxDomainCreateA(domain_name.c_str());

  // Start-up: allocations and a warm-up kernel, outside every range.
  constexpr int n = 1 << 16, threads = 256, blocks = (n + threads - 1) / threads;
  float *x = nullptr, *y = nullptr, *sum = nullptr;
  check(cudaMalloc(&x, n * sizeof(float)), "cudaMalloc");
  check(cudaMalloc(&y, n * sizeof(float)), "cudaMalloc");
  check(cudaMalloc(&sum, sizeof(float)), "cudaMalloc");
  Counts outside;
  warmup_kernel<<<blocks, threads>>>(x, n);
  ++outside["warmup_kernel"];
  check(cudaDeviceSynchronize(), "warm-up");

  std::vector<Counts> per_step(static_cast<std::size_t>(steps));
  std::vector<long> copies(static_cast<std::size_t>(steps), 0);
  const auto start = std::chrono::steady_clock::now();
  ranges.push(outer);
  for (long s = 0; s < steps; ++s) {
    if (s == api_first) check(cudaProfilerStart(), "cudaProfilerStart");
    ranges.push("step#" + std::to_string(s));
    Counts& c = per_step[static_cast<std::size_t>(s)];
    train_step(x, y, sum, n, blocks, threads, tiny, c);
    ++copies[static_cast<std::size_t>(s)];
    log_kernel<<<1, 1>>>(sum, y);  // in the step's range, outside train_step (a metrics read-out)
    ++c["log_kernel"];
    ranges.pop();
    if (s == api_last) {
      check(cudaDeviceSynchronize(), "synchronize");
      check(cudaProfilerStop(), "cudaProfilerStop");
    }
  }
  ranges.pop();
  check(cudaDeviceSynchronize(), "synchronize");
  const auto loop_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count();
  check(cudaGetLastError(), "launch");
  tail_kernel<<<blocks, threads>>>(x, n);
  ++outside["tail_kernel"];
  check(cudaDeviceSynchronize(), "tail");
  check(cudaFree(x), "cudaFree");
  check(cudaFree(y), "cudaFree");
  check(cudaFree(sum), "cudaFree");

  long launches = 0;
  for (const auto& c : per_step)
    for (const auto& [name, k] : c) launches += k;
  std::FILE* f = json.empty() ? stdout : std::fopen(json.c_str(), "w");
  if (!f) usage("cannot write the --json file");
  std::fprintf(
      f, "{\"outer\": \"%s\", \"domain\": \"%s\", \"profiler_api\": [%ld, %ld], \"outside\": ",
      outer.c_str(), domain_name.c_str(), api_first, api_last);
  write_counts(f, outside);
  std::fprintf(f, ", \"steps\": [");
  for (std::size_t s = 0; s < per_step.size(); ++s) {
    std::fprintf(f, "%s{\"name\": \"step#%zu\", \"copies\": %ld, \"kernels\": ", s ? ", " : "", s,
                 copies[s]);
    write_counts(f, per_step[s]);
    std::fprintf(f, "}");
  }
  std::fprintf(f, "], \"loop_launches\": %ld, \"loop_ns\": %lld}\n", launches,
               static_cast<long long>(loop_ns));
  if (f != stdout) std::fclose(f);
  return 0;
}
