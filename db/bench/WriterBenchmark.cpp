// Writer throughput: how long it takes to store kernel records, and how many bytes each one
// costs in the finished capture. Kernel names repeat as they do in real runs (a few hundred
// distinct kernels), so interning is exercised the way the collector exercises it.
//
//   writer_benchmark --benchmark_counters_tabular=true
//
// Counters: records_per_s, bytes_per_record (file size after finalize / records).

#include <benchmark/benchmark.h>

#include <filesystem>
#include <random>
#include <string>

#include "fuselens/db/Writer.h"

namespace {

using namespace fuselens::db;

RecordBatch make_batch(std::size_t n, std::uint64_t& t, std::uint32_t& correlation) {
  RecordBatch batch;
  batch.kernels.reserve(n);
  std::mt19937 rng(42);
  for (std::size_t i = 0; i < n; ++i) {
    KernelRecord k;
    k.pid = 1000;
    k.start_ns = t;
    t += 1000 + rng() % 5000;
    k.end_ns = t;
    k.stream_id = 7 + static_cast<std::uint32_t>(rng() % 4);
    k.correlation_id = ++correlation;
    k.grid_x = 128;
    k.grid_y = k.grid_z = 1;
    k.block_x = 256;
    k.block_y = k.block_z = 1;
    k.registers_per_thread = 32;
    k.mangled_name = "_ZN8fuselens7kernels6kernelILi" + std::to_string(rng() % 300) + "EEEvPKfPfi";
    batch.kernels.push_back(std::move(k));
  }
  return batch;
}

void BM_WriteKernelRecords(benchmark::State& state) {
  const auto total = static_cast<std::size_t>(state.range(0));
  constexpr std::size_t kBatch = 20000;  // about one 4 MiB CUPTI buffer of kernel records
  const auto path = (std::filesystem::temp_directory_path() / "fuselens_writer_bench.sqlite").string();
  std::uint64_t bytes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(path + s);
    std::uint64_t t = 1'000'000;
    std::uint32_t correlation = 0;
    std::vector<RecordBatch> batches;
    for (std::size_t done = 0; done < total; done += kBatch) {
      batches.push_back(make_batch(std::min(kBatch, total - done), t, correlation));
    }
    state.ResumeTiming();
    auto writer = Writer::create(path, RunInfo{});
    for (const auto& b : batches) writer.write(b);
    writer.finalize({EndReason::Exited, 0, std::nullopt, t});
    state.PauseTiming();
    bytes = std::filesystem::file_size(path);
    state.ResumeTiming();
  }
  state.counters["records_per_s"] = benchmark::Counter(
      static_cast<double>(total) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["bytes_per_record"] = static_cast<double>(bytes) / static_cast<double>(total);
  for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(path + s);
}

BENCHMARK(BM_WriteKernelRecords)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
