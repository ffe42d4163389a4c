#include "fuselens/analyzer/ExportChromeTrace.h"

#include <charconv>
#include <filesystem>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "fuselens/analyzer/Export.h"
#include "fuselens/analyzer/ExportJsonWriter.h"
#include "fuselens/db/Records.h"
#include "fuselens/db/Sqlite.h"

namespace fuselens::analyzer {
namespace {

/// strings.value by id, JSON-escaped (without quotes); at most kNameCacheSize kept.
class NameCache {
 public:
  explicit NameCache(const db::Reader& reader)
      : select_(reader.prepare("SELECT value FROM strings WHERE id = ?")) {}

  std::string_view get(std::int64_t id) {
    if (auto it = cache_.find(id); it != cache_.end()) return it->second;
    select_.bind(1, id);
    scratch_.clear();
    if (select_.step()) append_json_escaped(scratch_, select_.text(0));
    select_.reset();
    if (cache_.size() >= kNameCacheSize) return scratch_;
    return cache_.emplace(id, scratch_).first->second;
  }

 private:
  db::Statement select_;
  std::unordered_map<std::int64_t, std::string> cache_;
  std::string scratch_;
};

const char* kernel_name_column(NameKind kind) {
  switch (kind) {
    case NameKind::Short:
      return "short_name_id";
    case NameKind::Mangled:
      return "mangled_name_id";
    case NameKind::Demangled:
      break;
  }
  return "demangled_name_id";
}

// Columns of the GPU query: 0 kind, 1 pid, 2 correlation_id, 3 start_ns, 4 end_ns,
// 5 device_id, 6 context_id, 7 stream_id, 8 graph_id, 9 graph_node_id, then per kind:
//   kernel: 10-12 grid, 13-15 block, 16 registers, 17 static shared, 18 dynamic shared,
//           19 local memory, 20 name id
//   memcpy: 10 copy_kind, 11 src_kind, 12 dst_kind, 13 bytes, 14 is_async
//   memset: 10 bytes, 11 value, 12 memory_kind, 13 is_async
enum GpuKind : int { kKernel = 0, kMemcpy = 1, kMemset = 2 };

std::string gpu_query(NameKind names) {
  const std::string common =
      "pid, correlation_id, start_ns, end_ns, device_id, context_id, stream_id, graph_id, "
      "graph_node_id, ";
  return "SELECT 0, " + common +
         "grid_x, grid_y, grid_z, block_x, block_y, block_z, registers_per_thread, "
         "static_shared_bytes, dynamic_shared_bytes, local_memory_per_thread, " +
         kernel_name_column(names) + " FROM kernel UNION ALL SELECT 1, " + common +
         "copy_kind, src_kind, dst_kind, bytes, is_async, NULL, NULL, NULL, NULL, NULL, NULL "
         "FROM memcpy UNION ALL SELECT 2, " +
         common +
         "bytes, value, memory_kind, is_async, NULL, NULL, NULL, NULL, NULL, NULL, NULL "
         "FROM memset ORDER BY 2, 3, 4";
}

/// A statement and whether it has a current row.
struct Cursor {
  db::Statement statement;
  bool valid = false;
  explicit Cursor(db::Statement s) : statement(std::move(s)) { next(); }
  void next() { valid = statement.step(); }
  std::pair<std::int64_t, std::int64_t> key(int pid_column, int correlation_column) const {
    return {statement.int64(pid_column), statement.int64(correlation_column)};
  }
};

class TraceExporter {
 public:
  TraceExporter(std::ostream& out, const db::Reader& reader, const ChromeTraceOptions& options)
      : out_(out), reader_(reader), options_(options), names_(reader) {
    processes_ = reader.processes();
    for (const auto& p : processes_) process_index(p.pid);
    range_ = capture_time_range(reader);
    origin_ = range_.begin_ns;
  }

  ChromeTraceCounts run() {
    write_header();
    write_host_metadata();
    write_gpu_and_api();
    write_nvtx_ranges();
    write_nvtx_marks();
    write_memory_counter();
    write_gpu_metadata();
    out_.raw("\n]}\n");
    out_.flush();
    return counts_;
  }

 private:
  std::int64_t process_index(std::int64_t pid) {
    return process_index_.emplace(pid, static_cast<std::int64_t>(process_index_.size()))
        .first->second;
  }
  std::int64_t gpu_pid(std::int64_t pid, std::int64_t device) {
    const std::int64_t id = kGpuPidBase + 1000 * process_index(pid) + device;
    gpu_processes_.emplace(id, std::make_pair(pid, device));
    return id;
  }
  std::int64_t since_origin(std::int64_t ns) const { return ns - origin_; }

  /// {"ph":"<ph>","cat":"<cat>","name":<name>,"pid":..,"tid":..,"ts":..  (no closing brace)
  void begin_event(const char* ph, const char* cat, std::string_view escaped_name, std::int64_t pid,
                   std::int64_t tid, std::int64_t ts_ns) {
    out_.next_element();
    out_.raw("{\"ph\":\"").raw(ph).raw("\",\"cat\":\"").raw(cat).raw("\",\"name\":\"");
    out_.raw(escaped_name).raw("\",\"pid\":").integer(pid).raw(",\"tid\":").integer(tid);
    out_.raw(",\"ts\":").microseconds(since_origin(ts_ns));
  }
  void duration(std::int64_t start_ns, std::int64_t end_ns) {
    out_.raw(",\"dur\":").microseconds(end_ns > start_ns ? end_ns - start_ns : 0);
  }
  /// {"ph":"M","name":<name>,"pid":..,"tid":..,"ts":0,"args":{"<key>":  (value and braces next)
  void begin_metadata(const char* name, std::int64_t pid, std::int64_t tid, const char* key) {
    out_.next_element();
    out_.raw("{\"ph\":\"M\",\"name\":\"").raw(name).raw("\",\"pid\":").integer(pid);
    out_.raw(",\"tid\":").integer(tid).raw(",\"ts\":0,\"args\":{\"").raw(key).raw("\":");
    ++counts_.metadata;
  }
  void metadata(const char* name, std::int64_t pid, std::int64_t tid, const char* key,
                const std::string& text) {
    begin_metadata(name, pid, tid, key);
    out_.string(text).raw("}}");
  }
  void metadata(const char* name, std::int64_t pid, std::int64_t tid, const char* key,
                std::int64_t number) {
    begin_metadata(name, pid, tid, key);
    out_.integer(number).raw("}}");
  }

  void write_header() {
    out_.raw("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":");
    out_.string(options_.generator).raw(",\"capture\":").string(reader_.path());
    out_.raw(",\"schema_version\":").integer(reader_.schema_version());
    out_.raw(",\"clock\":\"CUPTI\",\"origin_ns\":").integer(origin_);
    out_.raw(",\"origin_utc_ns\":")
        .integer(origin_ + (processes_.empty() ? 0 : processes_.front().clock_offset_ns));
    out_.raw("},\n\"traceEvents\":[");
  }

  void write_host_metadata() {
    for (const auto& p : processes_) {
      const std::string exe = std::filesystem::path(p.executable).filename().string();
      metadata("process_name", p.pid, 0, "name", exe.empty() ? "process" : exe);
      metadata("process_sort_index", p.pid, 0, "sort_index", process_index(p.pid));
    }
    auto threads = reader_.prepare("SELECT pid, tid, name FROM thread ORDER BY pid, tid");
    while (threads.step()) {
      const std::string name = threads.is_null(2) ? std::string() : threads.text(2);
      metadata("thread_name", threads.int64(0), threads.int64(1), "name",
               name.empty() ? "thread " + std::to_string(threads.int64(1)) : name);
    }
  }

  void write_gpu_metadata() {
    std::map<std::int64_t, std::string> device_names;
    for (const auto& d : reader_.devices()) device_names[d.id] = d.name;
    for (const auto& [id, owner] : gpu_processes_) {
      std::string name = "GPU " + std::to_string(owner.second);
      if (process_index_.size() > 1) name += " (pid " + std::to_string(owner.first) + ")";
      metadata("process_name", id, 0, "name", name);
      metadata("process_sort_index", id, 0, "sort_index", id - kGpuPidBase + 1'000'000);
      if (auto it = device_names.find(owner.second); it != device_names.end()) {
        metadata("process_labels", id, 0, "labels", it->second.empty() ? "GPU" : it->second);
      }
    }
    for (const auto& [pid, stream] : streams_) {
      metadata("thread_name", pid, stream, "name", "stream " + std::to_string(stream));
      metadata("thread_sort_index", pid, stream, "sort_index", stream);
    }
  }

  /// One "s", "t" or "f" event of the launch flow `id`.
  void flow(const char* ph, std::int64_t id, std::int64_t pid, std::int64_t tid,
            std::int64_t ts_ns) {
    begin_event(ph, "launch", "launch", pid, tid, ts_ns);
    out_.raw(",\"id\":").integer(id);
    if (ph[0] == 'f') out_.raw(",\"bp\":\"e\"");
    out_.raw("}");
  }

  void write_api_call(const db::Statement& a) {
    // 0 pid, 1 correlation_id, 2 start_ns, 3 end_ns, 4 tid, 5 domain, 6 callback_id,
    // 7 name_id, 8 return_code
    begin_event("X", "cuda_api", names_.get(a.int64(7)), a.int64(0), a.int64(4), a.int64(2));
    duration(a.int64(2), a.int64(3));
    out_.raw(",\"args\":{\"domain\":\"")
        .raw(a.int64(5) == static_cast<int>(db::ApiDomain::Driver) ? "driver" : "runtime");
    out_.raw("\",\"callback_id\":").integer(a.int64(6));
    out_.raw(",\"correlation_id\":").integer(a.int64(1));
    out_.raw(",\"return_code\":").integer(a.int64(8)).raw("}}");
    ++counts_.api_calls;
  }

  /// Writes the GPU record at `g` and returns (gpu pid, stream) of its track.
  std::pair<std::int64_t, std::int64_t> write_gpu_record(const db::Statement& g) {
    const std::int64_t pid = gpu_pid(g.int64(1), g.int64(5));
    const std::int64_t stream = g.int64(7);
    streams_.emplace(pid, stream);
    const auto kind = static_cast<GpuKind>(g.int64(0));
    std::string name;
    const char* cat = "kernel";
    if (kind == kMemcpy) {
      cat = "memcpy";
      name = std::string("[CUDA memcpy ") +
             db::to_string(static_cast<db::MemcpyKind>(g.int64(10))) + "]";
    } else if (kind == kMemset) {
      cat = "memset";
      name = "[CUDA memset]";
    }
    begin_event("X", cat, kind == kKernel ? names_.get(g.int64(20)) : std::string_view(name), pid,
                stream, g.int64(3));
    duration(g.int64(3), g.int64(4));
    out_.raw(",\"args\":{\"correlation_id\":").integer(g.int64(2));
    out_.raw(",\"device_id\":").integer(g.int64(5)).raw(",\"context_id\":").integer(g.int64(6));
    out_.raw(",\"stream_id\":").integer(stream);
    if (kind == kKernel) {
      out_.raw(",\"grid\":[").integer(g.int64(10)).raw(",").integer(g.int64(11)).raw(",");
      out_.integer(g.int64(12)).raw("],\"block\":[").integer(g.int64(13)).raw(",");
      out_.integer(g.int64(14)).raw(",").integer(g.int64(15));
      out_.raw("],\"registers_per_thread\":").integer(g.int64(16));
      out_.raw(",\"static_shared_bytes\":").integer(g.int64(17));
      out_.raw(",\"dynamic_shared_bytes\":").integer(g.int64(18));
      out_.raw(",\"local_memory_per_thread\":").integer(g.int64(19));
      ++counts_.kernels;
    } else if (kind == kMemcpy) {
      out_.raw(",\"bytes\":").integer(g.int64(13)).raw(",\"copy_kind\":\"");
      out_.raw(db::to_string(static_cast<db::MemcpyKind>(g.int64(10)))).raw("\",\"src_kind\":\"");
      out_.raw(db::to_string(static_cast<db::MemoryKind>(g.int64(11)))).raw("\",\"dst_kind\":\"");
      out_.raw(db::to_string(static_cast<db::MemoryKind>(g.int64(12))));
      out_.raw("\",\"is_async\":").raw(g.int64(14) != 0 ? "true" : "false");
      ++counts_.memcpys;
    } else {
      out_.raw(",\"bytes\":").integer(g.int64(10)).raw(",\"value\":").integer(g.int64(11));
      out_.raw(",\"memory_kind\":\"");
      out_.raw(db::to_string(static_cast<db::MemoryKind>(g.int64(12))));
      out_.raw("\",\"is_async\":").raw(g.int64(13) != 0 ? "true" : "false");
      ++counts_.memsets;
    }
    if (!g.is_null(8)) out_.raw(",\"graph_id\":").integer(g.int64(8));
    if (!g.is_null(9)) out_.raw(",\"graph_node_id\":").integer(g.int64(9));
    out_.raw("}}");
    return {pid, stream};
  }

  /// API calls and GPU records, both sorted by (pid, correlation id, start), merged so that
  /// each correlation id's launching call and GPU work are written together with their flow.
  void write_gpu_and_api() {
    Cursor api(reader_.prepare(
        "SELECT pid, correlation_id, start_ns, end_ns, tid, domain, callback_id, name_id, "
        "return_code FROM api_call ORDER BY pid, correlation_id, start_ns"));
    Cursor gpu(reader_.prepare(gpu_query(options_.kernel_names)));
    const bool several_processes = process_index_.size() > 1;
    while (api.valid || gpu.valid) {
      const auto key = !gpu.valid   ? api.key(0, 1)
                       : !api.valid ? gpu.key(1, 2)
                                    : std::min(api.key(0, 1), gpu.key(1, 2));
      bool launched = false;  // the earliest call of the key: its thread and middle
      std::int64_t launch_tid = 0, launch_ts = 0;
      for (; api.valid && api.key(0, 1) == key; api.next()) {
        write_api_call(api.statement);
        const auto& a = api.statement;
        if (launched) continue;
        launched = key.second != 0;  // correlation id 0: no correlation
        launch_tid = a.int64(4);
        launch_ts = a.int64(2) + (a.int64(3) - a.int64(2)) / 2;
      }
      const std::int64_t flow_id =
          key.second + (several_processes ? process_index(key.first) << 32 : 0);
      bool first = true;
      while (gpu.valid && gpu.key(1, 2) == key) {
        const auto [pid, stream] = write_gpu_record(gpu.statement);
        const std::int64_t start = gpu.statement.int64(3), end = gpu.statement.int64(4);
        const std::int64_t middle = start + (end > start ? (end - start) / 2 : 0);
        gpu.next();
        if (!launched) continue;
        if (first) {
          flow("s", flow_id, key.first, launch_tid, launch_ts);
          ++counts_.flows;
          first = false;
        }
        const bool last = !(gpu.valid && gpu.key(1, 2) == key);
        flow(last ? "f" : "t", flow_id, pid, stream, middle);
        if (!last) ++counts_.flow_steps;
      }
    }
  }

  /// ,"domain":..,"category":..,"color":"#AARRGGBB","payload":..
  void nvtx_args(const db::Statement& s, int domain, int category, int color, int kind,
                 int payload) {
    out_.raw(",\"args\":{\"domain\":\"").raw(names_.get(s.int64(domain)));
    out_.raw("\",\"category\":").integer(s.int64(category));
    char hex[16];
    const auto argb = static_cast<std::uint32_t>(s.int64(color));
    const auto end = std::to_chars(hex, hex + sizeof hex, argb, 16).ptr;
    out_.raw(",\"color\":\"#")
        .raw(std::string(static_cast<std::size_t>(8 - (end - hex)), '0'))
        .raw(std::string_view(hex, static_cast<std::size_t>(end - hex)))
        .raw("\"");
    if (!s.is_null(payload)) {
      const auto k = static_cast<db::PayloadKind>(s.int64(kind));
      out_.raw(",\"payload\":");
      if (k == db::PayloadKind::Double || k == db::PayloadKind::Float) {
        out_.real(s.real(payload));
      } else {
        out_.integer(s.int64(payload));
      }
    }
  }

  /// "domain:text" escaped, or "text" for the default domain.
  std::string nvtx_name(std::int64_t domain_id, std::int64_t text_id) {
    std::string name(names_.get(domain_id));
    if (!name.empty()) name += ':';
    name += names_.get(text_id);
    return name;
  }

  void write_nvtx_ranges() {
    auto s = reader_.prepare(
        "SELECT pid, tid, domain_id, text_id, start_ns, end_ns, depth, category, color, "
        "payload_kind, payload FROM nvtx_range");
    while (s.step()) {
      const bool ended = !s.is_null(5);
      begin_event("X", "nvtx", nvtx_name(s.int64(2), s.int64(3)), s.int64(0), s.int64(1),
                  s.int64(4));
      duration(s.int64(4), ended ? s.int64(5) : range_.end_ns);
      nvtx_args(s, 2, 7, 8, 9, 10);
      out_.raw(",\"depth\":").integer(s.int64(6));
      if (!ended) out_.raw(",\"unterminated\":true");
      out_.raw("}}");
      ++counts_.nvtx_ranges;
    }
  }

  void write_nvtx_marks() {
    auto s = reader_.prepare(
        "SELECT pid, tid, domain_id, text_id, timestamp_ns, category, color, payload_kind, "
        "payload FROM nvtx_mark");
    while (s.step()) {
      begin_event("i", "nvtx_mark", nvtx_name(s.int64(2), s.int64(3)), s.int64(0), s.int64(1),
                  s.int64(4));
      out_.raw(",\"s\":\"t\"");
      nvtx_args(s, 2, 5, 6, 7, 8);
      out_.raw("}}");
      ++counts_.nvtx_marks;
    }
  }

  void write_memory_counter() {
    auto s = reader_.prepare(
        "SELECT pid, device_id, timestamp_ns, operation, bytes FROM memory_event"
        " WHERE memory_kind = " +
        std::to_string(static_cast<int>(db::MemoryKind::Device)) +
        " ORDER BY pid, device_id, timestamp_ns, id");
    std::pair<std::int64_t, std::int64_t> track{-1, -1};
    std::int64_t in_use = 0;
    while (s.step()) {
      if (std::make_pair(s.int64(0), s.int64(1)) != track) {
        track = {s.int64(0), s.int64(1)};
        in_use = 0;
      }
      const bool release = s.int64(3) == static_cast<int>(db::MemoryOperation::Release);
      in_use += release ? -s.int64(4) : s.int64(4);
      begin_event("C", "memory", "Device memory", gpu_pid(track.first, track.second), 0,
                  s.int64(2));
      out_.raw(",\"args\":{\"bytes\":").integer(in_use).raw("}}");
      ++counts_.memory_samples;
    }
  }

  JsonWriter out_;
  const db::Reader& reader_;
  const ChromeTraceOptions& options_;
  NameCache names_;
  std::vector<db::ProcessInfo> processes_;
  TimeRange range_;
  std::int64_t origin_ = 0;
  std::map<std::int64_t, std::int64_t> process_index_;  // pid -> index in the process table
  std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> gpu_processes_;  // (pid, dev)
  std::set<std::pair<std::int64_t, std::int64_t>> streams_;  // (gpu pid, stream)
  ChromeTraceCounts counts_;
};

}  // namespace

ChromeTraceCounts write_chrome_trace(std::ostream& out, const db::Reader& reader,
                                     const ChromeTraceOptions& options) {
  return TraceExporter(out, reader, options).run();
}

}  // namespace fuselens::analyzer
