// graph_replay: CUDA graphs built two ways and replayed from other functions, for the attribution
// of replayed kernels to the code that captured them (docs/calling-context.md, "CUDA graphs") and
// its GPU test (tests/gpu/GraphReplayGpuTest.cpp).
//
//   graph_replay [--replays N] [--json PATH]
//
// 1. Stream capture (capture_stream_graph): capture_fill() launches graph_fill and a memset,
//    capture_scale_add() launches graph_scale and graph_add, into one graph on a capturing stream.
// 2. Explicit construction (build_explicit_graph): add_axpy_node() and add_square_node() add
//    explicit_axpy and explicit_square with cudaGraphAddKernelNode, the second depending on the
//    first.
// 3. Replays: the stream graph N times (default 20) from replay_stream_graph() and N / 2 times
//    from replay_stream_graph_again(); the explicit graph N times from replay_explicit_graph().
//    plain_kernel is launched directly from main, once, outside every graph.
// Every function named above is a frame of its own (noinline, built with -g and without
// sibling-call optimization); kernels are extern "C", so their recorded names are the names above.
//
// Output: one JSON object (stdout, or PATH): for each kernel (and "<memset>"), the function whose
// call put it into its graph ("captured_in") and the launches per replaying function
// ("replayed_from"); plain_kernel's "launched_from". Exit status: 0, 77 without a CUDA device, 2
// on bad options, 1 on a CUDA error.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

extern "C" __global__ void graph_fill(float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 1.0f;
}
extern "C" __global__ void graph_scale(float* x, float a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
extern "C" __global__ void graph_add(float* y, const float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += x[i];
}
extern "C" __global__ void explicit_axpy(float* y, const float* x, float a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}
extern "C" __global__ void explicit_square(float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] *= y[i];
}
extern "C" __global__ void plain_kernel(float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 0.0f;
}

namespace {

constexpr int kN = 1 << 16, kThreads = 256, kBlocks = (kN + kThreads - 1) / kThreads;

[[noreturn]] void usage(const char* message) {
  std::fprintf(stderr, "graph_replay: %s\nusage: graph_replay [--replays N] [--json PATH]\n",
               message);
  std::exit(2);
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "graph_replay: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

struct Buffers {
  float* x = nullptr;
  float* y = nullptr;
};

}  // namespace

// Stream capture: each function launches into the capturing stream from its own call sites.
__attribute__((noinline)) void capture_fill(cudaStream_t s, Buffers& b) {
  graph_fill<<<kBlocks, kThreads, 0, s>>>(b.x, kN);
  check(cudaMemsetAsync(b.y, 0, kN * sizeof(float), s), "cudaMemsetAsync");
}

__attribute__((noinline)) void capture_scale_add(cudaStream_t s, Buffers& b) {
  graph_scale<<<kBlocks, kThreads, 0, s>>>(b.x, 1.5f, kN);
  graph_add<<<kBlocks, kThreads, 0, s>>>(b.y, b.x, kN);
}

__attribute__((noinline)) cudaGraph_t capture_stream_graph(cudaStream_t s, Buffers& b) {
  cudaGraph_t graph = nullptr;
  check(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
  capture_fill(s, b);
  capture_scale_add(s, b);
  check(cudaStreamEndCapture(s, &graph), "cudaStreamEndCapture");
  return graph;
}

// Explicit construction: each kernel node added from its own function.
__attribute__((noinline)) cudaGraphNode_t add_axpy_node(cudaGraph_t graph, Buffers& b) {
  float a = 0.5f;
  int n = kN;
  void* args[] = {&b.y, &b.x, &a, &n};  // copied into the node by cudaGraphAddKernelNode
  cudaKernelNodeParams p{};
  p.func = reinterpret_cast<void*>(&explicit_axpy);
  p.gridDim = dim3(kBlocks);
  p.blockDim = dim3(kThreads);
  p.kernelParams = args;
  cudaGraphNode_t node = nullptr;
  check(cudaGraphAddKernelNode(&node, graph, nullptr, 0, &p), "cudaGraphAddKernelNode");
  return node;
}

__attribute__((noinline)) void add_square_node(cudaGraph_t graph, cudaGraphNode_t after,
                                               Buffers& b) {
  int n = kN;
  void* args[] = {&b.y, &n};
  cudaKernelNodeParams p{};
  p.func = reinterpret_cast<void*>(&explicit_square);
  p.gridDim = dim3(kBlocks);
  p.blockDim = dim3(kThreads);
  p.kernelParams = args;
  cudaGraphNode_t node = nullptr;
  check(cudaGraphAddKernelNode(&node, graph, &after, 1, &p), "cudaGraphAddKernelNode");
}

__attribute__((noinline)) cudaGraph_t build_explicit_graph(Buffers& b) {
  cudaGraph_t graph = nullptr;
  check(cudaGraphCreate(&graph, 0), "cudaGraphCreate");
  const cudaGraphNode_t axpy = add_axpy_node(graph, b);
  add_square_node(graph, axpy, b);
  return graph;
}

// Replays, each from its own function.
__attribute__((noinline)) void replay_stream_graph(cudaGraphExec_t exec, cudaStream_t s,
                                                   long times) {
  for (long i = 0; i < times; ++i) check(cudaGraphLaunch(exec, s), "cudaGraphLaunch");
}

__attribute__((noinline)) void replay_stream_graph_again(cudaGraphExec_t exec, cudaStream_t s,
                                                         long times) {
  for (long i = 0; i < times; ++i) check(cudaGraphLaunch(exec, s), "cudaGraphLaunch");
}

__attribute__((noinline)) void replay_explicit_graph(cudaGraphExec_t exec, cudaStream_t s,
                                                     long times) {
  for (long i = 0; i < times; ++i) check(cudaGraphLaunch(exec, s), "cudaGraphLaunch");
}

int main(int argc, char** argv) {
  long replays = 20;
  std::string json;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage(("missing value after " + a).c_str());
    const char* v = argv[++i];
    if (a == "--replays") {
      char* end = nullptr;
      replays = std::strtol(v, &end, 10);
      if (!*v || *end || replays < 2 || replays > 1000000) usage("bad --replays (2 to 1000000)");
    } else if (a == "--json") {
      json = v;
    } else {
      usage(("unknown option " + a).c_str());
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "graph_replay: no CUDA device\n");
    return 77;
  }
  Buffers b;
  check(cudaMalloc(&b.x, kN * sizeof(float)), "cudaMalloc");
  check(cudaMalloc(&b.y, kN * sizeof(float)), "cudaMalloc");
  cudaStream_t s = nullptr;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");

  const cudaGraph_t stream_graph = capture_stream_graph(s, b);
  const cudaGraph_t explicit_graph = build_explicit_graph(b);
  cudaGraphExec_t stream_exec = nullptr, explicit_exec = nullptr;
  check(cudaGraphInstantiate(&stream_exec, stream_graph, 0), "cudaGraphInstantiate");
  check(cudaGraphInstantiate(&explicit_exec, explicit_graph, 0), "cudaGraphInstantiate");

  const long again = replays / 2;
  replay_stream_graph(stream_exec, s, replays);
  replay_stream_graph_again(stream_exec, s, again);
  replay_explicit_graph(explicit_exec, s, replays);
  check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  plain_kernel<<<kBlocks, kThreads>>>(b.x, kN);
  check(cudaGetLastError(), "plain_kernel");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");

  check(cudaGraphExecDestroy(stream_exec), "cudaGraphExecDestroy");
  check(cudaGraphExecDestroy(explicit_exec), "cudaGraphExecDestroy");
  check(cudaGraphDestroy(stream_graph), "cudaGraphDestroy");
  check(cudaGraphDestroy(explicit_graph), "cudaGraphDestroy");
  check(cudaStreamDestroy(s), "cudaStreamDestroy");
  check(cudaFree(b.x), "cudaFree");
  check(cudaFree(b.y), "cudaFree");

  std::FILE* f = json.empty() ? stdout : std::fopen(json.c_str(), "w");
  if (!f) usage("cannot write the --json file");
  const auto stream_kernel = [&](const char* name, const char* site, bool last) {
    std::fprintf(f,
                 "    \"%s\": {\"captured_in\": \"%s\", \"replayed_from\": "
                 "{\"replay_stream_graph\": %ld, \"replay_stream_graph_again\": %ld}}%s\n",
                 name, site, replays, again, last ? "" : ",");
  };
  std::fprintf(f, "{\n  \"replays\": %ld,\n  \"graph_operations\": {\n", replays);
  stream_kernel("graph_fill", "capture_fill", false);
  stream_kernel("<memset>", "capture_fill", false);
  stream_kernel("graph_scale", "capture_scale_add", false);
  stream_kernel("graph_add", "capture_scale_add", false);
  std::fprintf(f,
               "    \"explicit_axpy\": {\"captured_in\": \"add_axpy_node\", \"replayed_from\": "
               "{\"replay_explicit_graph\": %ld}},\n"
               "    \"explicit_square\": {\"captured_in\": \"add_square_node\", "
               "\"replayed_from\": {\"replay_explicit_graph\": %ld}}\n  },\n",
               replays, replays);
  std::fprintf(f, "  \"plain_kernel\": {\"launched_from\": \"main\", \"launches\": 1}\n}\n");
  if (f != stdout) std::fclose(f);
  return 0;
}
