// cct_paths: a workload whose kernel launches come from known call paths.
//
//   main > a > b > path_kernel            kRounds (5) launches
//   main > a > c > path_kernel            kRounds (5) launches
//   main > recurse(3) > recurse(2) > recurse(1) > recurse(0) > path_kernel     kRecursions (3)
//   main > lib_launch (libcct_paths_lib.so) > library_kernel                     kLibrary (4)
//   thread_body (2 threads, each) > thread_kernel                                kPerThread (6)
//   main > d > cudaMemcpy Host-to-Device (4096 bytes)                            1
// Every function is noinline and built with -g and without sibling-call optimization, so each
// keeps its frame. Exit status 0 when every CUDA call succeeded.

#include <cstdio>
#include <thread>
#include <vector>

#include "cct_paths.h"

namespace {

constexpr int kRounds = 5, kRecursions = 3, kLibrary = 4, kThreads = 2, kPerThread = 6;

__global__ void path_kernel(float* out) { out[threadIdx.x] += 1.0f; }
__global__ void thread_kernel(float* out) { out[threadIdx.x] *= 0.5f; }

bool ok(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return true;
  std::fprintf(stderr, "cct_paths: %s failed: %s\n", what, cudaGetErrorString(status));
  return false;
}

__attribute__((noinline)) bool b(float* out) {
  path_kernel<<<1, 32>>>(out);
  return ok(cudaGetLastError(), "launch from b");
}

__attribute__((noinline)) bool c(float* out) {
  path_kernel<<<1, 32>>>(out);
  return ok(cudaGetLastError(), "launch from c");
}

__attribute__((noinline)) bool a(float* out) {
  const bool first = b(out);
  const bool second = c(out);
  return first && second;
}

__attribute__((noinline)) bool recurse(int depth, float* out) {
  if (depth == 0) {
    path_kernel<<<1, 32>>>(out);
    return ok(cudaGetLastError(), "launch from recurse");
  }
  const bool result = recurse(depth - 1, out);
  asm volatile("" ::: "memory");
  return result;
}

__attribute__((noinline)) bool d(float* out) {
  std::vector<float> host(1024, 1.0f);
  return ok(cudaMemcpy(out, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice),
            "memcpy from d");
}

__attribute__((noinline)) void thread_body(float* out, bool* result) {
  bool all = true;
  for (int i = 0; i < kPerThread; ++i) {
    thread_kernel<<<1, 32>>>(out);
    all = ok(cudaGetLastError(), "launch from thread_body") && all;
  }
  all = ok(cudaStreamSynchronize(nullptr), "sync in thread_body") && all;
  *result = all;
}

}  // namespace

int main() {
  float* buffers[kThreads + 1] = {};
  for (auto& p : buffers) {
    if (!ok(cudaMalloc(&p, 1024 * sizeof(float)), "cudaMalloc")) return 1;
  }
  bool all = d(buffers[0]);
  for (int i = 0; i < kRounds; ++i) all = a(buffers[0]) && all;
  for (int i = 0; i < kRecursions; ++i) all = recurse(3, buffers[0]) && all;
  for (int i = 0; i < kLibrary; ++i) all = ok(lib_launch(buffers[0]), "lib_launch") && all;
  bool results[kThreads] = {};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(thread_body, buffers[t + 1], &results[t]);
  for (auto& t : threads) t.join();
  for (const bool r : results) all = r && all;
  all = ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize") && all;
  for (auto* p : buffers) cudaFree(p);
  std::printf("cct_paths: %d path launches, %d library launches, %d thread launches: %s\n",
              2 * kRounds + kRecursions, kLibrary, kThreads * kPerThread, all ? "ok" : "FAILED");
  return all ? 0 : 1;
}
