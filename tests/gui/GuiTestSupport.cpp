#include "GuiTestSupport.h"

#include <algorithm>
#include <filesystem>

#include "fuselens/db/Writer.h"
#include "window/Window.h"

namespace fuselens::gui::test {

std::string dataFile(const std::string& name) {
  return std::string(FUSELENS_TEST_DATA_DIR) + "/" + name;
}

std::unique_ptr<db::Reader> windowedReader(const std::string& path, const std::string& window) {
  auto reader = std::make_unique<db::Reader>(path);
  analyzer::apply_window(*reader,
                         analyzer::resolve_window(*reader, analyzer::parse_window(window)));
  return reader;
}

SyntheticCapture writeSyntheticCapture(const std::string& path, std::int64_t kernels, int streams) {
  std::filesystem::remove(path);
  db::RunInfo run;
  run.command_line = {"synthetic", std::to_string(kernels)};
  run.working_directory = "/tmp";
  run.host_name = "test";
  run.fuselens_version = "test";
  run.trace = "cuda,api,nvtx,memory";
  run.start_utc_ns = 1'700'000'000'000'000'000;
  auto writer = db::Writer::create(path, run);
  db::ProcessInfo process;
  process.pid = 100;
  process.executable = "synthetic";
  writer.write_process(process);
  db::DeviceInfo device;
  device.id = 0;
  device.uuid = "GPU-synthetic";
  device.name = "NVIDIA H100 80GB HBM3";
  device.cc_major = 9;
  device.sm_count = 132;
  writer.write_device(device);

  SyntheticCapture out;
  constexpr std::int64_t kBase = 1'000'000'000;
  constexpr std::int64_t kPerRange = 1000;
  constexpr std::uint64_t kRangeBytes = 1 << 20, kKeptBytes = 64ull << 20;
  db::RecordBatch batch;
  auto flush = [&] {
    writer.write(batch);
    batch.clear();
  };
  auto memory = [&](std::int64_t t, bool alloc, std::uint64_t bytes, std::uint64_t address) {
    db::MemoryEventRecord m;
    m.pid = 100;
    m.timestamp_ns = static_cast<std::uint64_t>(t);
    m.operation = alloc ? db::MemoryOperation::Allocation : db::MemoryOperation::Release;
    m.memory_kind = db::MemoryKind::Device;
    m.address = address;
    m.bytes = bytes;
    batch.memory_events.push_back(m);
    ++out.memory_events;
  };
  memory(kBase - 100, true, kKeptBytes, 1);
  for (std::int64_t i = 0; i < kernels; ++i) {
    const std::int64_t start = kBase + i * 3000;
    if (i % kPerRange == 0) {
      const std::int64_t last = std::min(kernels, i + kPerRange) - 1;
      db::NvtxRangeRecord r;
      r.pid = 100;
      r.tid = 7;
      r.text = "step/" + std::to_string(i / kPerRange);
      r.start_ns = static_cast<std::uint64_t>(start - 10);
      r.end_ns = static_cast<std::uint64_t>(kBase + last * 3000 + 2000);
      batch.nvtx_ranges.push_back(r);
      ++out.ranges;
      memory(start - 8, true, kRangeBytes, 2);
      memory(kBase + last * 3000 + 1000, false, kRangeBytes, 2);
    }
    db::ApiCallRecord call;
    call.pid = 100;
    call.tid = 7;
    call.name = "cudaLaunchKernel";
    call.callback_id = 211;
    call.start_ns = static_cast<std::uint64_t>(start - 5000 + 4);
    call.end_ns = call.start_ns + 1500;
    call.correlation_id = static_cast<std::uint32_t>(i + 1);
    batch.api_calls.push_back(call);
    db::KernelRecord k;
    k.pid = 100;
    k.start_ns = static_cast<std::uint64_t>(start);
    k.end_ns = static_cast<std::uint64_t>(start + 2000);
    k.stream_id = static_cast<std::uint32_t>(7 + i % streams);
    k.correlation_id = call.correlation_id;
    k.grid_x = 128;
    k.grid_y = k.grid_z = 1;
    k.block_x = 256;
    k.block_y = k.block_z = 1;
    k.mangled_name = i % 3 == 0 ? "_Z4gemmPfi" : (i % 3 == 1 ? "_Z4reluPf" : "_Z4biasPf");
    batch.kernels.push_back(std::move(k));
    if (batch.size() >= 50000) flush();
  }
  flush();
  db::RunEnd end;
  end.reason = db::EndReason::Exited;
  end.exit_status = 0;
  end.end_utc_ns = run.start_utc_ns + 1;
  writer.finalize(end);
  out.kernels = kernels;
  out.api_calls = kernels;
  out.first_ns = kernels > 0 ? kBase - 5000 + 4 : kBase - 100;  // the first launch call
  out.last_ns = kBase + (kernels - 1) * 3000 + 2000;
  out.peak_bytes = static_cast<std::int64_t>(kKeptBytes + (kernels > 0 ? kRangeBytes : 0));
  return out;
}

}  // namespace fuselens::gui::test
