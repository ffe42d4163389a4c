// Writer throughput with the record mix of real captures: how many kernel records a second
// db::Writer stores together with the records that come with each kernel, and what finalize()
// then costs. Single thread; pin it to one core as the measurement does:
//
//   taskset -c 0 writer_benchmark --benchmark_counters_tabular=true
//
// The third argument is the trace layout (Layout.h): 0 full (the default), 1 lean
// (`prof-run --layout lean`); the fourth when the indexes are built (CaptureIndexes.h): 0 at
// finalize, 1 while writing (prof-run's captures: the cost moves from finalize into the writes).
// Mixes (per kernel record; the first argument):
//   0 "launch loop": `launch_overhead` (docs/BENCHMARKS.md, "Ten million kernels"): one kernel
//     name, and per kernel its cudaLaunchKernel call record and that call's api_context row.
//   1 "PyTorch": the ratios of the real capture tests/data/train_steps.sqlite (a PyTorch CNN
//     training run, 5,803 kernels): per 1,000 kernels 1,139 API call records (11 names: launches,
//     copies, memsets, synchronizations, allocations), each with an api_context row, 29 copies,
//     63 memsets, 265 allocations/releases, 11 NVTX ranges and 24 CUPTI overhead records; 91
//     distinct kernel names of about 187 characters (mangled), 368 calling-context nodes used.
// Records reach the writer as the collector hands them over: batches of 20,000 kernels with their
// companions (about one 4 MiB CUPTI buffer), one transaction each, and the calling contexts of the
// whole process in one write_calling_contexts() call at its end (collector/src/Collector.cpp,
// write_final). The batches are built before the clock starts.
//
// Counters:
//   kernels_per_s   kernel records (with their companions) per second of writing: write() of
//                   every batch plus write_calling_contexts(), the iteration's time;
//   rows_per_s      rows of every table per second of the same time;
//   kernels_per_cpu_s  the same per second of the thread's CPU time (steadier on a shared machine);
//   finalize_s      Writer::finalize() alone (the run row, the indexes, the WAL checkpoint), wall;
//   finalize_cpu_s  its CPU time;
//   bytes_per_kernel  file size after finalize / kernel records.

#include <benchmark/benchmark.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "fuselens/db/Writer.h"

namespace {

using namespace fuselens::db;

constexpr std::size_t kBatch = 20000;
constexpr std::uint32_t kPid = 4242;

struct Mix {
  int kernel_names;
  std::vector<const char*> api_names;
  // per 1,000 kernels
  int api_calls, memcpys, memsets, memory_events, ranges, overheads;
  int context_nodes;
};

Mix mix_of(int which) {
  if (which == 0) return {1, {"cudaLaunchKernel"}, 1000, 0, 0, 0, 0, 0, 1};
  return {91,
          {"cudaLaunchKernel", "cudaLaunchKernelExC", "cudaMemsetAsync", "cudaMemcpyAsync",
           "cudaDeviceSynchronize", "cudaEventSynchronize", "cuLaunchKernel", "cudaMalloc",
           "cudaStreamSynchronize", "cudaFree", "cudaHostAlloc"},
          1139,
          29,
          63,
          265,
          11,
          24,
          368};
}

// A mangled name of about 187 characters, as PyTorch's templated kernels have.
std::string kernel_name(int i, bool long_names) {
  if (!long_names) return "_Z15launch_overheadPfi";
  std::string name = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13BUnaryFunctorIfff" +
                     std::to_string(i) + "ENS0_15binary_internal10MulFunctorIfEEEESt5arrayIPcLm3" +
                     "EEEEviT0_T1_";
  while (name.size() < 187) name.insert(name.size() - 12, "x");
  return name;
}

struct Workload {
  std::vector<RecordBatch> batches;
  CallingContextTree tree;
  std::size_t kernels = 0, rows = 0;
};

// Counts of each companion kind spread evenly over the kernels (per-1,000 ratios).
struct Spread {
  int per_1000, acc = 0;
  int next() {
    acc += per_1000;
    const int n = acc / 1000;
    acc %= 1000;
    return n;
  }
};

Workload make_workload(int which, std::size_t total) {
  const Mix mix = mix_of(which);
  Workload w;
  std::mt19937 rng(42);
  std::vector<std::string> names;
  for (int i = 0; i < mix.kernel_names; ++i) names.push_back(kernel_name(i, which != 0));
  w.tree.pid = kPid;
  w.tree.nodes.push_back({0, 0});
  for (int i = 0; i < mix.context_nodes; ++i) {
    FrameInfo f;
    f.module = "/usr/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so";
    f.module_offset = 0x1000 + 64 * static_cast<std::uint64_t>(i);
    f.function = "op_" + std::to_string(i);
    w.tree.frames.push_back(f);
    w.tree.nodes.push_back({static_cast<std::uint32_t>(i / 8), static_cast<std::uint32_t>(i)});
  }
  Spread apis{mix.api_calls}, copies{mix.memcpys}, sets{mix.memsets}, mems{mix.memory_events},
      ranges{mix.ranges}, overheads{mix.overheads};
  std::uint64_t t = 1'795'355'418'935'892'046ULL;
  std::uint32_t correlation = 0;
  // The collector lists contexts thread by thread (CallingContextRegistry::merge_and_symbolize).
  std::vector<CallingContextTree::Context> other_thread;
  for (std::size_t done = 0; done < total;) {
    RecordBatch b;
    const std::size_t n = std::min(kBatch, total - done);
    b.kernels.reserve(n);
    b.api_calls.reserve(n * static_cast<std::size_t>(mix.api_calls) / 1000 + 1);
    for (std::size_t i = 0; i < n; ++i, ++done) {
      // Each API call first; the first one of the kernel is its launch.
      const int calls = std::max(1, apis.next());
      std::uint32_t launch = 0;
      for (int c = 0; c < calls; ++c) {
        ApiCallRecord a;
        a.pid = kPid;
        a.tid = kPid + (done % 16 == 15 ? 7 : 0);
        a.callback_id = 211;
        a.name = mix.api_names[c == 0 ? 0 : 1 + rng() % (mix.api_names.size() - 1)];
        a.start_ns = t;
        t += 2000 + rng() % 3000;
        a.end_ns = t;
        a.correlation_id = ++correlation;
        if (c == 0) launch = a.correlation_id;
        (a.tid == kPid ? w.tree.contexts : other_thread)
            .push_back({a.correlation_id, a.tid,
                        1 + static_cast<std::uint32_t>(rng() % mix.context_nodes)});
        b.api_calls.push_back(std::move(a));
      }
      KernelRecord k;
      k.pid = kPid;
      k.start_ns = t + 3000;
      k.end_ns = k.start_ns + 1000 + rng() % 50000;
      k.stream_id = 7 + static_cast<std::uint32_t>(rng() % 4);
      k.context_id = 1;
      k.correlation_id = launch;
      k.grid_x = 128 << (rng() % 4);
      k.grid_y = k.grid_z = 1;
      k.block_x = 256;
      k.block_y = k.block_z = 1;
      k.registers_per_thread = 32;
      k.mangled_name = names[rng() % names.size()];
      b.kernels.push_back(std::move(k));
      for (int c = copies.next(); c > 0; --c) {
        MemcpyRecord m;
        m.pid = kPid;
        m.start_ns = t;
        m.end_ns = t + 10000;
        m.stream_id = 7;
        m.correlation_id = launch;
        m.copy_kind = MemcpyKind::HostToDevice;
        m.bytes = 1 << 20;
        b.memcpys.push_back(m);
      }
      for (int c = sets.next(); c > 0; --c) {
        MemsetRecord m;
        m.pid = kPid;
        m.start_ns = t;
        m.end_ns = t + 2000;
        m.correlation_id = launch;
        m.bytes = 4096;
        b.memsets.push_back(m);
      }
      for (int c = mems.next(); c > 0; --c) {
        MemoryEventRecord m;
        m.pid = kPid;
        m.timestamp_ns = t;
        m.address = 0x7f0000000000ULL + (rng() % 4096) * 4096;
        m.bytes = 1 << 16;
        m.correlation_id = launch;
        b.memory_events.push_back(m);
      }
      for (int c = ranges.next(); c > 0; --c) {
        NvtxRangeRecord r;
        r.pid = kPid;
        r.tid = kPid;
        r.text = "ProfilerStep#" + std::to_string(done / 100);
        r.start_ns = t - 100000;
        r.end_ns = t;
        b.nvtx_ranges.push_back(r);
      }
      for (int c = overheads.next(); c > 0; --c) {
        OverheadRecord o;
        o.pid = kPid;
        o.overhead_kind = 2;
        o.object_kind = 3;
        o.start_ns = t;
        o.end_ns = t + 5000;
        b.overheads.push_back(o);
      }
    }
    w.kernels += b.kernels.size();
    w.rows += b.size();
    w.batches.push_back(std::move(b));
  }
  w.tree.contexts.insert(w.tree.contexts.end(), other_thread.begin(), other_thread.end());
  w.rows += w.tree.contexts.size();
  return w;
}

// CPU time of the calling thread, s: on a shared machine the steadier figure.
double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void BM_Writer(benchmark::State& state) {
  const int which = static_cast<int>(state.range(0));
  const auto total = static_cast<std::size_t>(state.range(1));
  const auto layout = state.range(2) == 1 ? TraceLayout::Lean : TraceLayout::Full;
  const auto indexes = state.range(3) == 1 ? IndexBuild::WhileWriting : IndexBuild::AtFinalize;
  const auto path =
      (std::filesystem::temp_directory_path() / "fuselens_writer_bench.sqlite").string();
  const Workload w = make_workload(which, total);
  std::uint64_t bytes = 0;
  double finalize_s = 0, write_cpu_s = 0, finalize_cpu_s = 0;
  for (auto _ : state) {
    for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(path + s);
    const double c0 = thread_cpu_s();
    const auto t0 = std::chrono::steady_clock::now();
    auto writer = Writer::create(path, RunInfo{}, layout, indexes);
    for (const auto& b : w.batches) writer.write(b);
    writer.write_calling_contexts(w.tree);
    const auto t1 = std::chrono::steady_clock::now();
    const double c1 = thread_cpu_s();
    writer.finalize({EndReason::Exited, 0, std::nullopt, 1});
    const auto t2 = std::chrono::steady_clock::now();
    const double c2 = thread_cpu_s();
    write_cpu_s += c1 - c0;
    finalize_cpu_s += c2 - c1;
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
    finalize_s += std::chrono::duration<double>(t2 - t1).count();
    bytes = std::filesystem::file_size(path);
  }
  // WRITER_BENCHMARK_KEEP=DIR keeps the last capture of each benchmark there, for a look at
  // where its bytes go (sqlite3's dbstat: SELECT name, SUM(pgsize) FROM dbstat GROUP BY name).
  if (const char* keep = std::getenv("WRITER_BENCHMARK_KEEP"); keep != nullptr && *keep) {
    const std::string name = "writer_mix" + std::to_string(which) + "_" + std::to_string(total) +
                             (layout == TraceLayout::Lean ? "_lean" : "_full") +
                             (indexes == IndexBuild::WhileWriting ? "_live" : "") + ".sqlite";
    std::filesystem::copy_file(path, std::filesystem::path(keep) / name,
                               std::filesystem::copy_options::overwrite_existing);
  }
  const auto iterations = static_cast<double>(state.iterations());
  state.counters["kernels_per_s"] =
      benchmark::Counter(static_cast<double>(w.kernels) * iterations, benchmark::Counter::kIsRate);
  state.counters["rows_per_s"] =
      benchmark::Counter(static_cast<double>(w.rows) * iterations, benchmark::Counter::kIsRate);
  state.counters["kernels_per_cpu_s"] =
      static_cast<double>(w.kernels) * iterations / std::max(write_cpu_s, 1e-9);
  state.counters["finalize_s"] = finalize_s / iterations;
  state.counters["finalize_cpu_s"] = finalize_cpu_s / iterations;
  state.counters["bytes_per_kernel"] = static_cast<double>(bytes) / static_cast<double>(w.kernels);
  state.SetLabel(std::string(which == 0 ? "launch loop" : "PyTorch") +
                 (layout == TraceLayout::Lean ? ", lean" : ", full") +
                 (indexes == IndexBuild::WhileWriting ? ", live indexes" : ""));
  for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(path + s);
}

BENCHMARK(BM_Writer)
    ->ArgNames({"mix", "kernels", "lean", "live"})
    ->Args({0, 100000, 0, 0})
    ->Args({1, 100000, 0, 0})
    ->Args({0, 100000, 1, 0})
    ->Args({1, 100000, 1, 0})
    ->Args({0, 100000, 0, 1})
    ->Args({1, 100000, 0, 1})
    ->Args({0, 1000000, 0, 0})
    ->Args({1, 1000000, 0, 0})
    ->Args({0, 1000000, 1, 0})
    ->Args({1, 1000000, 1, 0})
    ->Args({0, 1000000, 0, 1})
    ->Args({1, 1000000, 0, 1})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
