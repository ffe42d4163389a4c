#include "TestSupport.h"

#include <stdlib.h>

#include <optional>
#include <stdexcept>

#include "fuselens/db/Reader.h"
#include "fuselens/db/Records.h"
#include "fuselens/db/Sqlite.h"
#include "fuselens/db/Writer.h"

#include <map>

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

namespace {

std::uint64_t at(std::int64_t t) { return static_cast<std::uint64_t>(kFlagsT0 + t); }

}  // namespace

void FlagsCapture::range(const std::string& text, std::int64_t start, std::int64_t end,
                         std::uint32_t tid, std::uint32_t depth) {
  db::NvtxRangeRecord r;
  r.pid = kFlagsPid;
  r.tid = tid;
  r.text = text;
  r.start_ns = at(start);
  r.end_ns = at(end);
  r.depth = depth;
  batch_.nvtx_ranges.push_back(r);
}

std::uint32_t FlagsCapture::call(const std::string& name, std::int64_t start, std::int64_t end,
                                 std::uint32_t tid) {
  db::ApiCallRecord a;
  a.pid = kFlagsPid;
  a.tid = tid;
  a.name = name;
  a.start_ns = at(start);
  a.end_ns = at(end);
  a.correlation_id = next_correlation_++;
  batch_.api_calls.push_back(a);
  return a.correlation_id;
}

std::uint32_t FlagsCapture::kernel(const std::string& name, std::int64_t start,
                                   std::int64_t duration, std::int64_t call_start,
                                   std::int64_t call_duration, std::uint32_t tid,
                                   const std::string& api) {
  db::KernelRecord k;
  k.pid = kFlagsPid;
  k.stream_id = kFlagsStream;
  k.correlation_id = call(api, call_start, call_start + call_duration, tid);
  k.start_ns = at(start);
  k.end_ns = at(start + duration);
  k.grid_x = k.grid_y = k.grid_z = k.block_x = k.block_y = k.block_z = 1;
  k.mangled_name = name;
  batch_.kernels.push_back(k);
  return k.correlation_id;
}

void FlagsCapture::copy(db::MemcpyKind kind, std::uint64_t bytes, std::int64_t start,
                        std::int64_t duration, bool async, db::MemoryKind src, db::MemoryKind dst) {
  db::MemcpyRecord m;
  m.pid = kFlagsPid;
  m.stream_id = kFlagsStream;
  m.correlation_id =
      call(async ? "cudaMemcpyAsync" : "cudaMemcpy", start - us(1), start + duration + us(1));
  m.start_ns = at(start);
  m.end_ns = at(start + duration);
  m.copy_kind = kind;
  m.src_kind = src;
  m.dst_kind = dst;
  m.bytes = bytes;
  m.is_async = async;
  batch_.memcpys.push_back(m);
}

void FlagsCapture::memset(db::MemoryKind kind, std::int64_t start, std::int64_t duration,
                          bool async) {
  db::MemsetRecord m;
  m.pid = kFlagsPid;
  m.stream_id = kFlagsStream;
  m.correlation_id =
      call(async ? "cudaMemsetAsync" : "cudaMemset", start - us(1), start + duration + us(1));
  m.start_ns = at(start);
  m.end_ns = at(start + duration);
  m.bytes = 4096;
  m.memory_kind = kind;
  m.is_async = async;
  batch_.memsets.push_back(m);
}

void FlagsCapture::sync(db::SyncType type, std::int64_t start, std::int64_t end,
                        std::uint32_t correlation) {
  db::SyncRecord s;
  s.pid = kFlagsPid;
  s.type = type;
  s.start_ns = at(start);
  s.end_ns = at(end);
  s.correlation_id = correlation;
  batch_.syncs.push_back(s);
}

void FlagsCapture::context(std::uint32_t correlation, const std::vector<std::string>& path,
                           std::uint32_t leaf_line) {
  contexts_.push_back({correlation, path, leaf_line});
}

void FlagsCapture::args(std::uint32_t correlation, const std::vector<std::uint64_t>& values) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    args_.push_back({kFlagsPid, correlation, static_cast<std::uint32_t>(i), values[i]});
  }
}

void FlagsCapture::allocation(std::uint64_t address, std::uint64_t bytes, std::int64_t start,
                              std::optional<std::int64_t> end) {
  db::MemoryEventRecord e;
  e.pid = kFlagsPid;
  e.timestamp_ns = at(start);
  e.operation = db::MemoryOperation::Allocation;
  e.memory_kind = db::MemoryKind::Device;
  e.address = address;
  e.bytes = bytes;
  batch_.memory_events.push_back(e);
  if (end) {
    e.timestamp_ns = at(*end);
    e.operation = db::MemoryOperation::Release;
    batch_.memory_events.push_back(e);
  }
}

void FlagsCapture::counters(std::uint32_t correlation, double fp32_flops, double dram_bytes,
                            double l2_bytes) {
  db::KernelMetricRecord m;
  m.pid = kFlagsPid;
  m.correlation_id = correlation;
  m.values = {{db::metric::kFfma, fp32_flops / 2},
              {db::metric::kDramRead, dram_bytes / 2},
              {db::metric::kDramWrite, dram_bytes / 2}};
  if (l2_bytes > 0) m.values.emplace_back(db::metric::kL2Bytes, l2_bytes);
  counters_.push_back(std::move(m));
}

void FlagsCapture::mark(const std::string& text, std::int64_t t, std::uint32_t tid) {
  db::NvtxMarkRecord m;
  m.pid = kFlagsPid;
  m.tid = tid;
  m.text = text;
  m.timestamp_ns = at(t);
  batch_.nvtx_marks.push_back(m);
}

void FlagsCapture::annotation(std::int64_t t, double flops, double bytes) {
  db::NvtxMarkRecord m;
  m.pid = kFlagsPid;
  m.tid = kFlagsTid;
  m.domain = "fuselens";
  m.text = "fuselens:work flops=" + std::to_string(static_cast<std::int64_t>(flops)) +
           " bytes=" + std::to_string(static_cast<std::int64_t>(bytes)) + " precision=fp32";
  m.timestamp_ns = at(t);
  batch_.nvtx_marks.push_back(m);
}

void FlagsCapture::device(const std::string& name, int sm_count) {
  db::DeviceInfo d;
  d.id = 0;
  d.uuid = "GPU-0000";
  d.name = name;
  d.cc_major = 9;
  d.sm_count = sm_count;
  device_ = d;
}

void FlagsCapture::ceiling(const std::string& name, double value) {
  db::CeilingRecord c;
  c.device_id = 0;
  c.device_name = device_ ? device_->name : std::string(kDeviceName);
  c.name = name;
  c.value = value;
  c.method = "synthetic";
  c.measured_utc_ns = 1;
  ceilings_.push_back(c);
}

void FlagsCapture::write(const std::string& path, bool with_process) const {
  db::RunInfo run;
  run.command_line = {"./synthetic"};
  run.start_utc_ns = 1;
  auto writer = db::Writer::create(path, run);
  if (with_process) {
    db::ProcessInfo p;
    p.pid = kFlagsPid;
    p.executable = "/tmp/synthetic";
    writer.write_process(p);
  }
  if (device_) writer.write_device(*device_);
  writer.write(batch_);
  if (!threads_.empty()) writer.write_threads(threads_);
  if (!contexts_.empty()) {
    // Frames interned by (function, line); nodes by (parent, frame).
    db::CallingContextTree tree;
    tree.pid = kFlagsPid;
    tree.nodes.push_back({0, 0});
    std::map<std::pair<std::string, std::uint32_t>, std::uint32_t> frames;
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> nodes;
    for (const auto& [correlation, path_frames, leaf_line] : contexts_) {
      std::uint32_t node = 0;
      for (std::size_t i = 0; i < path_frames.size(); ++i) {
        const std::uint32_t line = i + 1 == path_frames.size() ? leaf_line : 0;
        auto [f, fresh] = frames.try_emplace({path_frames[i], line},
                                             static_cast<std::uint32_t>(tree.frames.size()));
        if (fresh && path_frames[i].rfind("module:", 0) == 0) {
          // "module:CLASS@HEXADDRESS": an nn.Module instance frame (schema 9).
          const auto at_sign = path_frames[i].find('@');
          db::FrameInfo m;
          m.kind = db::FrameKind::Module;
          m.function = path_frames[i].substr(7, at_sign - 7);
          m.module_offset = std::stoull(path_frames[i].substr(at_sign + 1), nullptr, 16);
          tree.frames.push_back(m);
        } else if (fresh) {
          tree.frames.push_back({db::FrameKind::Native, "/tmp/synthetic", 0x1000 + f->second,
                                 path_frames[i], line ? "/src/synthetic.cu" : "", line});
        }
        auto [n, added] =
            nodes.try_emplace({node, f->second}, static_cast<std::uint32_t>(tree.nodes.size()));
        if (added) tree.nodes.push_back({node, f->second});
        node = n->second;
      }
      std::uint32_t tid = kFlagsTid;  // the launching call's thread
      for (const auto& a : batch_.api_calls) {
        if (a.correlation_id == correlation) tid = a.tid;
      }
      db::CallingContextTree::Context c{correlation, tid, node};
      if (const auto seq = seqs_.find(correlation); seq != seqs_.end()) {
        c.forward_seq = seq->second.first;
        c.backward_seq = seq->second.second;
      }
      tree.contexts.push_back(c);
    }
    writer.write_calling_contexts(tree);
  }
  writer.write_kernel_args(args_);
  db::RunEnd end;
  end.reason = db::EndReason::Exited;
  end.exit_status = 0;
  writer.finalize(end);
  if (!counters_.empty() || !ceilings_.empty()) {
    db::RooflineWriter roofline(path);
    if (!ceilings_.empty()) roofline.write_ceilings(ceilings_);
    if (!counters_.empty()) roofline.write_kernel_metrics(counters_);
  }
}

FlagsReport flags_of(const FlagsCapture& capture, const FlagsConfig& config) {
  TempDir dir;
  const auto path = dir.file("capture.sqlite");
  capture.write(path);
  const db::Reader reader(path);
  return run_flags(reader, config);
}

std::set<std::string> fired(const FlagsReport& r) {
  std::set<std::string> rules;
  for (const auto& h : r.hits) rules.insert(h.rule);
  return rules;
}

std::vector<const Hit*> hits_of(const FlagsReport& r, const std::string& rule) {
  std::vector<const Hit*> out;
  for (const auto& h : r.hits) {
    if (h.rule == rule) out.push_back(&h);
  }
  return out;
}

void exec_sql(const std::string& path, const std::string& sql) {
  db::Connection c(path, db::Connection::Mode::ReadWrite);
  c.exec(sql);
}

}  // namespace fuselens::analyzer::test
