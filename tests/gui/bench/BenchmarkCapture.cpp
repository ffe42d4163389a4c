#include "BenchmarkCapture.h"

#include <filesystem>
#include <string>
#include <utility>

#include "fuselens/db/Writer.h"

namespace fuselens::gui::bench {

void writeBenchmarkCapture(const std::string& path, std::int64_t kernels) {
  using namespace fuselens::db;
  std::filesystem::remove(path);
  RunInfo run;
  run.command_line = {"synthetic"};
  run.working_directory = "/tmp";
  run.host_name = "bench";
  run.fuselens_version = "bench";
  run.trace = "cuda,api,nvtx,memory";
  run.start_utc_ns = 1;
  auto writer = Writer::create(path, run);
  ProcessInfo process;
  process.pid = 1;
  process.executable = "synthetic";
  writer.write_process(process);
  DeviceInfo device;
  device.name = "NVIDIA H100 80GB HBM3";
  device.uuid = "GPU-bench";
  writer.write_device(device);
  RecordBatch batch;
  const char* names[] = {"_Z4gemmPfi", "_Z4reluPf", "_Z4biasPf", "_Z5swishPf"};
  for (std::int64_t i = 0; i < kernels; ++i) {
    const auto start = static_cast<std::uint64_t>(1'000'000 + i * 3000);
    if (i % 1000 == 0) {
      NvtxRangeRecord r;
      r.pid = 1;
      r.tid = 2;
      r.text = "step/" + std::to_string(i / 1000);
      r.start_ns = start - 10;
      r.end_ns = start + 3000 * 1000;
      batch.nvtx_ranges.push_back(r);
      MemoryEventRecord m;
      m.pid = 1;
      m.timestamp_ns = start - 5;
      m.memory_kind = MemoryKind::Device;
      m.operation = (i / 1000) % 2 ? MemoryOperation::Release : MemoryOperation::Allocation;
      m.bytes = 1 << 26;
      batch.memory_events.push_back(m);
    }
    ApiCallRecord call;
    call.pid = 1;
    call.tid = 2;
    call.name = "cudaLaunchKernel";
    call.start_ns = start - 4000;
    call.end_ns = start - 2500;
    call.correlation_id = static_cast<std::uint32_t>(i + 1);
    batch.api_calls.push_back(std::move(call));
    KernelRecord k;
    k.pid = 1;
    k.start_ns = start;
    k.end_ns = start + 1000 + static_cast<std::uint64_t>(i % 7) * 250;
    k.stream_id = static_cast<std::uint32_t>(7 + i % 2);
    k.correlation_id = static_cast<std::uint32_t>(i + 1);
    k.mangled_name = names[i % 4];
    batch.kernels.push_back(std::move(k));
    if (batch.size() >= 100000) {
      writer.write(batch);
      batch.clear();
    }
  }
  writer.write(batch);
  RunEnd end;
  end.reason = EndReason::Exited;
  end.exit_status = 0;
  writer.finalize(end);
}

}  // namespace fuselens::gui::bench
