#include "TestSupport.h"

#include <stdlib.h>

#include <optional>
#include <stdexcept>

#include "fuselens/db/Records.h"
#include "fuselens/db/Writer.h"

namespace fuselens::analyzer::test {
namespace {

constexpr std::uint32_t kPid = 100;

db::RunInfo run_info() {
  db::RunInfo run;
  run.command_line = {"./bench", "--size", "two words"};
  run.working_directory = "/tmp";
  run.host_name = "testhost";
  run.fuselens_version = "0.1.0";
  run.trace = "cuda,nvtx";
  run.start_utc_ns = 1'700'000'000'000'000'000ULL;
  return run;
}

db::RunEnd exited() {
  db::RunEnd end;
  end.reason = db::EndReason::Exited;
  end.exit_status = 0;
  end.end_utc_ns = 1'700'000'001'000'000'000ULL;
  return end;
}

db::KernelRecord kernel(const char* mangled, std::uint32_t correlation, std::uint64_t start,
                        std::uint64_t duration) {
  db::KernelRecord k;
  k.pid = kPid;
  k.start_ns = start;
  k.end_ns = start + duration;
  k.correlation_id = correlation;
  k.stream_id = 7;
  k.grid_x = k.grid_y = k.grid_z = 1;
  k.block_x = 128;
  k.block_y = k.block_z = 1;
  k.mangled_name = mangled;
  return k;
}

db::ApiCallRecord api(const char* name, std::uint32_t tid, std::uint32_t correlation,
                      std::uint64_t start, std::uint64_t end,
                      db::ApiDomain domain = db::ApiDomain::Runtime) {
  db::ApiCallRecord a;
  a.pid = kPid;
  a.tid = tid;
  a.domain = domain;
  a.name = name;
  a.start_ns = start;
  a.end_ns = end;
  a.correlation_id = correlation;
  return a;
}

db::NvtxRangeRecord range(std::uint32_t pid, std::uint32_t tid, const char* domain,
                          const char* text, std::uint64_t start, std::optional<std::uint64_t> end,
                          std::uint32_t depth) {
  db::NvtxRangeRecord r;
  r.pid = pid;
  r.tid = tid;
  r.domain = domain;
  r.text = text;
  r.start_ns = start;
  r.end_ns = end;
  r.depth = depth;
  return r;
}

db::MemcpyRecord copy(db::MemcpyKind kind, std::uint64_t bytes, std::uint64_t start,
                      std::uint64_t duration) {
  db::MemcpyRecord m;
  m.pid = kPid;
  m.copy_kind = kind;
  m.bytes = bytes;
  m.start_ns = start;
  m.end_ns = start + duration;
  return m;
}

db::MemoryEventRecord memory(std::uint32_t device, std::uint64_t t, db::MemoryOperation op,
                             std::uint64_t bytes, std::uint64_t address,
                             db::MemoryKind kind = db::MemoryKind::Device) {
  db::MemoryEventRecord e;
  e.pid = kPid;
  e.device_id = device;
  e.timestamp_ns = t;
  e.operation = op;
  e.memory_kind = kind;
  e.bytes = bytes;
  e.address = address;
  return e;
}

}  // namespace

// The reference capture, pid 100 (times in ns):
//   kernels (name, correlation id, start, duration):
//     gemm<64> 1 2000 100 | gemm<64> 2 4000 200 | quoted 3 5000 1000 | gemm<64> 4 4500 300 |
//     quoted 5 11000 3000 | relu 6 6000 50 | gemm<128> 7 13000 400      -> 7 kernels, 5050 ns
//   API calls (tid, correlation, start-end): cudaMalloc 1 10 500-900; cudaLaunchKernel 1 1
//     1000-1010, 1 2 3000-3010, 1 3 4000-4010, 2 4 3500-3510, 1 5 9500-10200, 1 6 5000-5010,
//     1 7 12000-12010; cuLaunchKernel (driver, inside the runtime call) 1 5 10100-10150;
//     cudaMemcpy 1 11 13000-15000
//   NVTX ranges: tid 1 "outer" [0,10000] > "inner" [2000,5000], "inner" [6000,7000];
//     tid 1 "inner" from 20000, never ended; tid 2 "dom:other" [0,10000]; pid 200 tid 1
//     "elsewhere" [0,10000]
//     -> outer: kernels 1,2,3,5 (earliest call 9500 is inside),6 = 5 kernels, 4350 ns;
//        inner: 2,3,6 (5000 = end, inclusive) = 3 kernels, 1250 ns; dom:other: 4 = 300 ns;
//        elsewhere: none; kernel 7 is launched outside every range.
//   memcpy: HtoD 1e6 B 1000 ns, HtoD 3e6 B 3000 ns, DtoH 5e5 B 2000 ns; memset 2 x 1 MiB,
//     100 ns and 300 ns
//   device memory: device 0: +1000 @100, (pinned +1e9 @150, ignored), +500 @200, -1000 @300,
//     +2000 @400, -500 @500 -> peak 2500 @400, end 2000; device 1 (no device row): +10 @50
void write_reference_capture(const std::string& path, bool finalize) {
  auto writer = db::Writer::create(path, run_info());
  db::ProcessInfo process;
  process.pid = kPid;
  process.parent_pid = 1;
  process.executable = "/tmp/bench";
  process.start_utc_ns = 1'700'000'000'100'000'000ULL;
  writer.write_process(process);
  db::DeviceInfo device;
  device.id = 0;
  device.uuid = "GPU-0000";
  device.name = kDeviceName;
  device.cc_major = 9;
  device.sm_count = 132;
  device.global_memory_bytes = 85'000'000'000ULL;
  writer.write_device(device);

  db::RecordBatch batch;
  batch.kernels = {kernel(kGemm64Mangled, 1, 2000, 100),
                   kernel(kGemm64Mangled, 2, 4000, 200),
                   kernel(kQuoted, 3, 5000, 1000),
                   kernel(kGemm64Mangled, 4, 4500, 300),
                   kernel(kQuoted, 5, 11000, 3000),
                   kernel("_Z4reluPf", 6, 6000, 50),
                   kernel("_Z4gemmILi128EEvPfi", 7, 13000, 400)};
  batch.api_calls = {api("cudaMalloc", 1, 10, 500, 900),
                     api("cudaLaunchKernel", 1, 1, 1000, 1010),
                     api("cudaLaunchKernel", 1, 2, 3000, 3010),
                     api("cudaLaunchKernel", 1, 3, 4000, 4010),
                     api("cudaLaunchKernel", 2, 4, 3500, 3510),
                     api("cudaLaunchKernel", 1, 5, 9500, 10200),
                     api("cuLaunchKernel", 1, 5, 10100, 10150, db::ApiDomain::Driver),
                     api("cudaLaunchKernel", 1, 6, 5000, 5010),
                     api("cudaLaunchKernel", 1, 7, 12000, 12010),
                     api("cudaMemcpy", 1, 11, 13000, 15000)};
  batch.nvtx_ranges = {range(kPid, 1, "", "outer", 0, 10000, 0),
                       range(kPid, 1, "", "inner", 2000, 5000, 1),
                       range(kPid, 1, "", "inner", 6000, 7000, 1),
                       range(kPid, 1, "", "inner", 20000, std::nullopt, 0),
                       range(kPid, 2, "dom", "other", 0, 10000, 0),
                       range(200, 1, "", "elsewhere", 0, 10000, 0)};
  batch.memcpys = {copy(db::MemcpyKind::HostToDevice, 1'000'000, 13000, 1000),
                   copy(db::MemcpyKind::HostToDevice, 3'000'000, 16000, 3000),
                   copy(db::MemcpyKind::DeviceToHost, 500'000, 20000, 2000)};
  for (const std::uint64_t duration : {100, 300}) {
    db::MemsetRecord m;
    m.pid = kPid;
    m.bytes = 1 << 20;
    m.start_ns = 30000;
    m.end_ns = 30000 + duration;
    m.memory_kind = db::MemoryKind::Device;
    batch.memsets.push_back(m);
  }
  using Op = db::MemoryOperation;
  batch.memory_events = {
      memory(0, 100, Op::Allocation, 1000, 0xA000),
      memory(0, 150, Op::Allocation, 1'000'000'000, 0xF000, db::MemoryKind::Pinned),
      memory(0, 200, Op::Allocation, 500, 0xB000),
      memory(0, 300, Op::Release, 1000, 0xA000),
      memory(0, 400, Op::Allocation, 2000, 0xC000),
      memory(0, 500, Op::Release, 500, 0xB000),
      memory(1, 50, Op::Allocation, 10, 0xD000)};
  writer.write(batch);
  if (finalize) writer.finalize(exited());
}

void write_capture_without_process(const std::string& path) {
  auto writer = db::Writer::create(path, run_info());
  writer.finalize(exited());
}

std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false, field_started = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = field_started = true;
    } else if (c == ',') {
      record.push_back(std::move(field));
      field.clear();
      field_started = true;
    } else if (c == '\n') {
      if (field_started || !field.empty()) record.push_back(std::move(field));
      records.push_back(std::move(record));
      record.clear();
      field.clear();
      field_started = false;
    } else if (c != '\r') {
      field += c;
      field_started = true;
    }
  }
  if (quoted) throw std::runtime_error("CSV ends inside a quoted field");
  if (field_started || !field.empty()) {
    record.push_back(std::move(field));
    records.push_back(std::move(record));
  }
  return records;
}

}  // namespace fuselens::analyzer::test
