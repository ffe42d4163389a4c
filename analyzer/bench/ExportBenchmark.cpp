// Chrome-trace export of large captures: time, output size and peak memory.
//
// Builds a synthetic capture of N kernels (each with its cudaLaunchKernel call, so every kernel
// also gets a flow), plus one NVTX range per 1000 kernels and an allocation/release pair per
// 10000 kernels, written through db::Writer in batches of 20000 records. Then times
// write_chrome_trace into a sink that counts bytes and discards them (no disk in the timing).
//
//   export_benchmark --benchmark_counters_tabular=true
//
// Counters:
//   events_per_s     trace events (X, s, f, C) written per second
//   output_MB        size of the trace (1 MB = 1e6 bytes)
//   export_rss_MiB   peak resident set of a child process that opens the capture and exports
//                    it once (getrusage(RUSAGE_CHILDREN).ru_maxrss): the export's own peak,
//                    not the benchmark's (which also built the capture)
//   process_rss_MiB  peak resident set of this process so far (ru_maxrss)

#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <streambuf>
#include <string>

#include "export/ExportChromeTrace.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/Writer.h"

namespace {

using namespace fuselens;

/// A stream buffer that counts what is written and keeps nothing.
class CountingBuffer : public std::streambuf {
 public:
  std::int64_t bytes = 0;

 protected:
  std::streamsize xsputn(const char*, std::streamsize n) override {
    bytes += n;
    return n;
  }
  int_type overflow(int_type c) override {
    ++bytes;
    return traits_type::not_eof(c);
  }
};

std::string capture_path(std::int64_t kernels) {
  return (std::filesystem::temp_directory_path() /
          ("fuselens_export_bench_" + std::to_string(kernels) + ".sqlite"))
      .string();
}

/// Writes the synthetic capture of `total` kernels (see the file comment).
void write_capture(const std::string& path, std::int64_t total) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  db::RunInfo info;
  info.command_line = {"./bench"};
  info.host_name = "bench";
  auto writer = db::Writer::create(path, info);
  db::ProcessInfo process;
  process.pid = 1000;
  process.executable = "/bench/bench";
  writer.write_process(process);
  db::DeviceInfo device;
  device.name = "Synthetic GPU";
  writer.write_device(device);
  constexpr std::int64_t kBatch = 20000;
  std::uint64_t t = 1'000'000;
  for (std::int64_t done = 0; done < total;) {
    db::RecordBatch batch;
    for (std::int64_t i = 0; i < kBatch && done < total; ++i, ++done) {
      const auto correlation = static_cast<std::uint32_t>(done + 1);
      db::ApiCallRecord call;
      call.pid = 1000;
      call.tid = 1000;
      call.name = "cudaLaunchKernel_v7000";
      call.start_ns = t;
      call.end_ns = t + 2500;
      call.correlation_id = correlation;
      batch.api_calls.push_back(call);
      db::KernelRecord k;
      k.pid = 1000;
      k.start_ns = t + 4000;
      k.end_ns = t + 4000 + 1000 + static_cast<std::uint64_t>(done % 7) * 300;
      k.stream_id = 7 + static_cast<std::uint32_t>(done % 4);
      k.correlation_id = correlation;
      k.grid_x = 128;
      k.grid_y = k.grid_z = 1;
      k.block_x = 256;
      k.block_y = k.block_z = 1;
      k.registers_per_thread = 32;
      k.mangled_name = "_ZN8fuselens7kernels6kernelILi" + std::to_string(done % 300) + "EEEvPKfPfi";
      batch.kernels.push_back(std::move(k));
      if (done % 1000 == 0) {
        db::NvtxRangeRecord r;
        r.pid = 1000;
        r.tid = 1000;
        r.text = "step " + std::to_string(done / 1000);
        r.start_ns = t;
        r.end_ns = t + 1000 * 3000;
        batch.nvtx_ranges.push_back(r);
      }
      if (done % 10000 == 0) {
        for (const auto op : {db::MemoryOperation::Allocation, db::MemoryOperation::Release}) {
          db::MemoryEventRecord m;
          m.pid = 1000;
          m.timestamp_ns = t + (op == db::MemoryOperation::Release ? 2000 : 0);
          m.operation = op;
          m.memory_kind = db::MemoryKind::Device;
          m.bytes = 1 << 20;
          batch.memory_events.push_back(m);
        }
      }
      t += 3000;
    }
    writer.write(batch);
  }
  writer.finalize({db::EndReason::Exited, 0, std::nullopt, t});
}

/// Peak RSS in MiB of a child process that exports the capture once.
double export_peak_rss_in_child(const std::string& path) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    CountingBuffer sink;
    std::ostream out(&sink);
    analyzer::write_chrome_trace(out, db::Reader(path));
    ::_exit(0);
  }
  int status = 0;
  struct rusage usage {};
  if (pid < 0 || ::wait4(pid, &status, 0, &usage) != pid) return -1;
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

double own_peak_rss() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

void BM_ChromeTraceExport(benchmark::State& state) {
  const std::int64_t kernels = state.range(0);
  const std::string path = capture_path(kernels);
  write_capture(path, kernels);
  std::int64_t bytes = 0, events = 0;
  for (auto _ : state) {
    CountingBuffer sink;
    std::ostream out(&sink);
    const auto counts = analyzer::write_chrome_trace(out, db::Reader(path));
    bytes = sink.bytes;
    events = counts.kernels + counts.api_calls + counts.nvtx_ranges + counts.memory_samples +
             2 * counts.flows;
  }
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
  state.counters["output_MB"] = static_cast<double>(bytes) / 1e6;
  state.counters["export_rss_MiB"] = export_peak_rss_in_child(path);
  state.counters["process_rss_MiB"] = own_peak_rss();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

BENCHMARK(BM_ChromeTraceExport)
    ->Arg(100'000)
    ->Arg(1'000'000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
