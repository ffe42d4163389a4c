// CPU cost of recording one calling context (ContextCapture::record), without CUDA: the part of
// the collector's launch-path overhead that calling contexts add on top of CUPTI's callback.
//
//   BM_Record/<method>/<depth>: record() from a call site <depth> frames below main, in a loop
//     (the same site every time, as a launch loop does): method 0 cached (the default), 1 unwind
//     (unw_backtrace at every call, the first collector), 2 none (bookkeeping only).
//   BM_PythonCall/<record>: an embedded CPython (libpython loaded at run time; skipped without
//     one) calls, through ctypes, a C function 1000 times per iteration from 8 nested Python
//     functions; record 1: the function records the context with Python frames, 0: it returns.
//     The difference per call is what the native cache check plus the Python walk cost.
//     record 2: two C functions (two native paths) called alternately from two Python lines, as
//     a PyTorch step alternates ops: the case where the Python suffix must be remembered per
//     native path (ThreadTree::intern_suffix).
//
// Run: context_capture_benchmark --benchmark_counters_tabular=true (docs/BENCHMARKS.md).
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <memory>

#include "CallingContext.h"
#include "ContextCapture.h"
#include "PythonFrames.h"

using fuselens::collector::CallingContextRegistry;
using fuselens::collector::ContextCapture;
using fuselens::collector::ContextMethod;
using fuselens::collector::PythonFrames;

namespace {

ContextMethod method_of(std::int64_t index) {
  return index == 0   ? ContextMethod::Cached
         : index == 1 ? ContextMethod::Unwind
                      : ContextMethod::None;
}

__attribute__((noinline)) void record_loop(benchmark::State& state, ContextCapture& capture) {
  std::uint32_t correlation = 0;
  for (auto _ : state) capture.record(++correlation);
}

__attribute__((noinline)) void descend(int depth, benchmark::State& state,
                                       ContextCapture& capture) {
  if (depth <= 0) {
    record_loop(state, capture);
  } else {
    descend(depth - 1, state, capture);
  }
  benchmark::DoNotOptimize(depth);
}

void BM_Record(benchmark::State& state) {
  CallingContextRegistry registry;
  ContextCapture capture(registry, method_of(state.range(0)), nullptr);
  descend(static_cast<int>(state.range(1)), state, capture);
  state.counters["nodes"] = static_cast<double>(registry.this_thread().nodes().size());
}
BENCHMARK(BM_Record)
    ->ArgsProduct({{0, 1, 2}, {10, 50}})
    ->ArgNames({"method", "depth"})
    ->Iterations(1'000'000);

// Python: an interpreter in this process, a C function it calls through ctypes.PyDLL.
ContextCapture* g_capture = nullptr;
std::uint32_t g_correlation = 0;

void* python_library() {
  static void* lib = [] {
    void* handle = nullptr;
    for (const char* name : {"libpython3.13.so.1.0", "libpython3.12.so.1.0", "libpython3.11.so.1.0",
                             "libpython3.10.so.1.0", "libpython3.9.so.1.0"}) {
      if ((handle = ::dlopen(name, RTLD_NOW | RTLD_GLOBAL)) != nullptr) break;
    }
    auto initialize =
        handle ? reinterpret_cast<void (*)(int)>(::dlsym(handle, "Py_InitializeEx")) : nullptr;
    if (!initialize) return static_cast<void*>(nullptr);
    initialize(0);
    auto run = reinterpret_cast<int (*)(const char*)>(::dlsym(handle, "PyRun_SimpleString"));
    run("import ctypes\n"
        "lib = ctypes.PyDLL(None)\n"
        "def nest(n, f):\n"
        "    return f() if n == 0 else nest(n - 1, f)\n"
        "def calls(f):\n"
        "    for _ in range(1000):\n"
        "        nest(8, f)\n"
        "def alternate(f, g):\n"
        "    for _ in range(500):\n"
        "        nest(8, f)\n"
        "        nest(8, g)\n");
    return handle;
  }();
  return lib;
}

}  // namespace

extern "C" __attribute__((visibility("default"), used, noinline)) void fuselens_bench_record() {
  g_capture->record(++g_correlation);
}

extern "C" __attribute__((visibility("default"), used, noinline)) void fuselens_bench_record_b() {
  g_capture->record(++g_correlation);
  benchmark::ClobberMemory();  // not folded into fuselens_bench_record: another native path
}

extern "C" __attribute__((visibility("default"), used, noinline)) void fuselens_bench_nothing() {
  benchmark::ClobberMemory();
}

namespace {

void BM_PythonCall(benchmark::State& state) {
  void* lib = python_library();
  if (!lib) {
    state.SkipWithError("no libpython3.9+ shared library");
    return;
  }
  auto run = reinterpret_cast<int (*)(const char*)>(::dlsym(lib, "PyRun_SimpleString"));
  CallingContextRegistry registry;
  ContextCapture capture(registry, ContextMethod::Cached,
                         std::make_unique<PythonFrames>(PythonFrames::from_process()));
  g_capture = &capture;
  const char* scripts[] = {"calls(lib.fuselens_bench_nothing)", "calls(lib.fuselens_bench_record)",
                           "alternate(lib.fuselens_bench_record, lib.fuselens_bench_record_b)"};
  const char* script = scripts[state.range(0)];
  for (auto _ : state) run(script);
  state.SetItemsProcessed(state.iterations() * 1000);
  state.counters["ns_per_call"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * 1000,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  const auto [hits, misses] = registry.stack_cache_counts();
  state.counters["cache_hits"] = static_cast<double>(hits);
  state.counters["cache_misses"] = static_cast<double>(misses);
}
BENCHMARK(BM_PythonCall)->Arg(0)->Arg(1)->Arg(2)->ArgName("record")->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
