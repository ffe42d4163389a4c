#include "export/ExportChromeTrace.h"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "export/Export.h"
#include "export/ExportJsonWriter.h"
#include "fuselens/db/ActivityCursors.h"
#include "fuselens/db/Records.h"
#include "fuselens/db/Strings.h"
#include "fuselens/db/TraceCursors.h"

namespace fuselens::analyzer {
namespace {

/// strings.value by id, JSON-escaped (without quotes); at most kNameCacheSize kept.
class NameCache {
 public:
  explicit NameCache(const db::Reader& reader) : lookup_(reader) {}

  std::string_view get(std::int64_t id) {
    if (auto it = cache_.find(id); it != cache_.end()) return it->second;
    scratch_.clear();
    lookup_.with(id, [&](const std::string& value) { append_json_escaped(scratch_, value); });
    if (cache_.size() >= kNameCacheSize) return scratch_;
    return cache_.emplace(id, scratch_).first->second;
  }

 private:
  db::StringLookup lookup_;
  std::unordered_map<std::int64_t, std::string> cache_;
  std::string scratch_;
};

/// The PyTorch profiler's short names of CUPTI's copy kinds (db::MemcpyKind has CUPTI's values).
const char* kineto_copy_kind(std::int64_t kind) {
  static constexpr const char* names[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                          "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
  return kind >= 0 && kind < static_cast<std::int64_t>(std::size(names)) ? names[kind] : "Unknown";
}

/// The PyTorch profiler's names of CUPTI's memory kinds (db::MemoryKind has CUPTI's values).
const char* kineto_memory_kind(std::int64_t kind) {
  static constexpr const char* names[] = {"Unknown", "Pageable", "Pinned",        "Device",
                                          "Array",   "Managed",  "Device Static", "Managed Static"};
  return kind >= 0 && kind < static_cast<std::int64_t>(std::size(names)) ? names[kind] : "Unknown";
}

/// A typed cursor and its current row (nullopt once read to the end).
template <typename Row>
struct Current {
  db::Cursor<Row> cursor;
  std::optional<Row> row;
  explicit Current(db::Cursor<Row> c) : cursor(std::move(c)), row(cursor.next()) {}
  void next() { row = cursor.next(); }
  bool valid() const { return row.has_value(); }
  std::pair<std::int64_t, std::int64_t> key() const { return {row->pid, row->correlation_id}; }
};

class TraceExporter {
 public:
  TraceExporter(std::ostream& out, const db::Reader& reader, const ChromeTraceOptions& options)
      : out_(out), reader_(reader), options_(options), names_(reader) {
    processes_ = reader.processes();
    for (const auto& p : processes_) process_index(p.pid);
    for (const auto pid : options.pids) selected_.insert(pid);
    std::int64_t exported = 0;
    for (const auto& p : processes_) exported += selected(p.pid) ? 1 : 0;
    several_processes_ = exported > 1;
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
  bool selected(std::int64_t pid) const { return selected_.empty() || selected_.count(pid) > 0; }
  /// The "correlation" arg and flow id: unique in the file, as each process numbers its own.
  std::int64_t correlation(std::int64_t pid, std::int64_t id) {
    if (!several_processes_) return id;
    // Modular (well defined) for ids near the int64 limits of a damaged capture.
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(id) +
                                     (static_cast<std::uint64_t>(process_index(pid)) << 32));
  }

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

  /// distributedInfo: the rank of the exported processes when process_rank gives all of them
  /// one rank; rank 0 of 1 for a single process that no launcher ranked; nothing otherwise.
  void write_distributed_info() {
    std::optional<db::ProcessRank> common;
    bool one_rank = true;
    std::int64_t exported = 0, ranked = 0;
    const auto ranks = reader_.process_ranks();
    for (const auto& p : processes_) {
      if (!selected(p.pid)) continue;
      ++exported;
      for (const auto& r : ranks) {
        if (r.pid != p.pid) continue;
        ++ranked;
        if (common && common->rank != r.rank) one_rank = false;
        if (!common) common = r;
      }
    }
    // HTA finds the rank with the pattern "rank":\s+(\d+): the space after the colon matters.
    if (common && one_rank && ranked == exported) {
      out_.raw("\"distributedInfo\": {\"rank\": ").integer(common->rank);
      if (common->world_size) out_.raw(", \"world_size\": ").integer(*common->world_size);
      if (common->local_rank) out_.raw(", \"local_rank\": ").integer(*common->local_rank);
      if (!common->launcher.empty()) out_.raw(", \"launcher\": ").string(common->launcher);
      if (!common->host_name.empty()) out_.raw(", \"host\": ").string(common->host_name);
      out_.raw("},\n");
    } else if (ranks.empty() && exported == 1) {
      out_.raw("\"distributedInfo\": {\"rank\": 0, \"world_size\": 1},\n");
    }
  }

  void write_device_properties() {
    out_.raw("\"deviceProperties\": [");
    bool first = true;
    for (const auto& d : reader_.devices()) {
      out_.raw(first ? "\n" : ",\n");
      first = false;
      out_.raw("{\"id\": ").integer(d.id).raw(", \"name\": ").string(d.name);
      out_.raw(", \"totalGlobalMem\": ").integer(static_cast<std::int64_t>(d.global_memory_bytes));
      out_.raw(", \"computeMajor\": ").integer(d.cc_major);
      out_.raw(", \"computeMinor\": ").integer(d.cc_minor);
      out_.raw(", \"numSms\": ").integer(d.sm_count);
      out_.raw(", \"maxThreadsPerMultiprocessor\": ").integer(d.max_threads_per_sm);
      out_.raw(", \"regsPerMultiprocessor\": ").integer(d.registers_per_sm);
      out_.raw(", \"sharedMemPerMultiprocessor\": ").integer(d.shared_memory_per_sm_bytes);
      out_.raw(", \"l2CacheSize\": ").integer(d.l2_cache_bytes);
      out_.raw(", \"clockRate\": ").integer(d.core_clock_khz);
      out_.raw(", \"uuid\": ").string(d.uuid).raw("}");
      sm_counts_[d.id] = d.sm_count;
    }
    out_.raw("],\n");
  }

  void write_header() {
    out_.raw("{\"schemaVersion\": 1,\n");
    write_distributed_info();
    write_device_properties();
    const std::int64_t utc_origin =
        origin_ + (processes_.empty() ? 0 : processes_.front().clock_offset_ns);
    out_.raw("\"displayTimeUnit\": \"ns\", \"baseTimeNanoseconds\": ").integer(utc_origin);
    out_.raw(",\n\"otherData\": {\"generator\": ");
    out_.string(options_.generator).raw(",\"capture\":").string(reader_.path());
    if (!options_.window.empty()) out_.raw(",\"window\":").string(options_.window);
    out_.raw(",\"schema_version\":").integer(reader_.schema_version());
    out_.raw(",\"clock\":\"CUPTI\",\"origin_ns\":").integer(origin_);
    out_.raw(",\"origin_utc_ns\":").integer(utc_origin);
    out_.raw(",\"correlation\":")
        .string(several_processes_ ? "capture correlation id + 2^32 * process index"
                                   : "capture correlation id");
    out_.raw("},\n\"traceEvents\":[");
  }

  void write_host_metadata() {
    for (const auto& p : processes_) {
      if (!selected(p.pid)) continue;
      const std::string exe = std::filesystem::path(p.executable).filename().string();
      metadata("process_name", p.pid, 0, "name", exe.empty() ? "process" : exe);
      metadata("process_sort_index", p.pid, 0, "sort_index", process_index(p.pid));
    }
    auto threads = db::threads(reader_, /*ordered=*/true);
    while (auto t = threads.next()) {
      if (!selected(t->pid)) continue;
      const std::string name = t->name.value_or(std::string());
      metadata("thread_name", t->pid, t->tid, "name",
               name.empty() ? "thread " + std::to_string(t->tid) : name);
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
    begin_event(ph, "ac2g", "ac2g", pid, tid, ts_ns);
    out_.raw(",\"id\":").integer(id);
    if (ph[0] == 'f') out_.raw(",\"bp\":\"e\"");
    out_.raw("}");
  }

  void write_api_call(const db::ApiCallRow& a) {
    const bool driver = a.domain == static_cast<int>(db::ApiDomain::Driver);
    begin_event("X", driver ? "cuda_driver" : "cuda_runtime", names_.get(a.name_id), a.pid, a.tid,
                a.start_ns);
    duration(a.start_ns, a.end_ns);
    out_.raw(",\"args\":{\"cbid\":").integer(a.callback_id);
    out_.raw(",\"correlation\":").integer(correlation(a.pid, a.correlation_id));
    out_.raw(",\"return_code\":").integer(a.return_code).raw("}}");
    ++counts_.api_calls;
  }

  /// Writes the GPU record at `g` and returns (gpu pid, stream) of its track.
  std::pair<std::int64_t, std::int64_t> write_gpu_record(const db::GpuRecordRow& g) {
    const std::int64_t pid = gpu_pid(g.pid, g.device_id);
    const std::int64_t stream = g.stream_id;
    streams_.emplace(pid, stream);
    const db::GpuTable kind = g.table;
    std::string name;
    const char* cat = "kernel";
    if (kind == db::GpuTable::Memcpy) {
      cat = "gpu_memcpy";
      name = std::string("Memcpy ") + kineto_copy_kind(g.copy_kind) + " (" +
             kineto_memory_kind(g.src_kind) + " -> " + kineto_memory_kind(g.dst_kind) + ")";
    } else if (kind == db::GpuTable::Memset) {
      cat = "gpu_memset";
      name = std::string("Memset (") + kineto_memory_kind(g.memory_kind) + ")";
    }
    begin_event("X", cat,
                kind == db::GpuTable::Kernel ? names_.get(g.name_id) : std::string_view(name), pid,
                stream, g.start_ns);
    duration(g.start_ns, g.end_ns);
    out_.raw(",\"args\":{\"device\":").integer(g.device_id);
    out_.raw(",\"context\":").integer(g.context_id).raw(",\"stream\":").integer(stream);
    out_.raw(",\"correlation\":").integer(correlation(g.pid, g.correlation_id));
    if (kind == db::GpuTable::Kernel) {
      out_.raw(",\"registers per thread\":").integer(g.registers_per_thread);
      std::int64_t shared = 0;  // static + dynamic; saturated for a damaged capture
      if (__builtin_add_overflow(g.static_shared_bytes, g.dynamic_shared_bytes, &shared)) {
        shared = std::numeric_limits<std::int64_t>::max();
      }
      out_.raw(",\"shared memory\":").integer(shared);
      kernel_occupancy_args(g);
      out_.raw(",\"grid\":[").integer(g.grid_x).raw(",").integer(g.grid_y).raw(",");
      out_.integer(g.grid_z).raw("],\"block\":[").integer(g.block_x).raw(",");
      out_.integer(g.block_y).raw(",").integer(g.block_z).raw("]");
      out_.raw(",\"static shared memory\":").integer(g.static_shared_bytes);
      out_.raw(",\"dynamic shared memory\":").integer(g.dynamic_shared_bytes);
      out_.raw(",\"local memory per thread\":").integer(g.local_memory_per_thread);
      ++counts_.kernels;
    } else {
      out_.raw(",\"bytes\":").integer(g.bytes).raw(",\"memory bandwidth (GB/s)\":");
      // bytes per ns = GB/s (1 GB = 1e9 B), as the PyTorch profiler writes it.
      std::int64_t ns = 0;  // a damaged capture's far-apart timestamps: "N/A", not overflow
      if (!__builtin_sub_overflow(g.end_ns, g.start_ns, &ns) && ns > 0) {
        out_.real(static_cast<double>(g.bytes) / static_cast<double>(ns));
      } else {
        out_.raw("\"N/A\"");
      }
      if (kind == db::GpuTable::Memcpy) {
        out_.raw(",\"copy_kind\":\"");
        out_.raw(db::to_string(static_cast<db::MemcpyKind>(g.copy_kind))).raw("\"");
      } else {
        out_.raw(",\"value\":").integer(g.value);
      }
      out_.raw(",\"is_async\":").raw(g.is_async != 0 ? "true" : "false");
      ++(kind == db::GpuTable::Memcpy ? counts_.memcpys : counts_.memsets);
    }
    if (g.graph_id) out_.raw(",\"graph_id\":").integer(*g.graph_id);
    if (g.graph_node_id) out_.raw(",\"graph_node_id\":").integer(*g.graph_node_id);
    out_.raw("}}");
    return {pid, stream};
  }

  /// "blocks per SM" and "warps per SM" (the PyTorch profiler's: grid blocks / SMs, times warps
  /// per block) when the device's SM count is known.
  void kernel_occupancy_args(const db::GpuRecordRow& g) {
    const auto it = sm_counts_.find(g.device_id);
    if (it == sm_counts_.end() || it->second <= 0) return;
    const double blocks = static_cast<double>(g.grid_x) * static_cast<double>(g.grid_y) *
                          static_cast<double>(g.grid_z) / it->second;
    const double threads = static_cast<double>(g.block_x) * static_cast<double>(g.block_y) *
                           static_cast<double>(g.block_z);
    out_.raw(",\"blocks per SM\":").real(blocks);
    out_.raw(",\"warps per SM\":").real(blocks * std::ceil(threads / 32.0));
  }

  /// API calls and GPU records, both sorted by (pid, correlation id, start), merged so that
  /// each correlation id's launching call and GPU work are written together with their flow.
  void write_gpu_and_api() {
    Current<db::ApiCallRow> api(db::api_calls_by_correlation(reader_));
    Current<db::GpuRecordRow> gpu(db::gpu_records_by_correlation(reader_, options_.kernel_names));
    while (api.valid() || gpu.valid()) {
      const auto key = !gpu.valid()   ? api.key()
                       : !api.valid() ? gpu.key()
                                      : std::min(api.key(), gpu.key());
      if (!selected(key.first)) {
        while (api.valid() && api.key() == key) api.next();
        while (gpu.valid() && gpu.key() == key) gpu.next();
        continue;
      }
      bool launched = false;  // the earliest call of the key: its thread and middle
      std::int64_t launch_tid = 0, launch_ts = 0;
      for (; api.valid() && api.key() == key; api.next()) {
        write_api_call(*api.row);
        const auto& a = *api.row;
        if (launched) continue;
        launched = key.second != 0;  // correlation id 0: no correlation
        launch_tid = a.tid;
        launch_ts = a.start_ns + (a.end_ns - a.start_ns) / 2;
      }
      const std::int64_t flow_id = correlation(key.first, key.second);
      bool first = true;
      while (gpu.valid() && gpu.key() == key) {
        const auto [pid, stream] = write_gpu_record(*gpu.row);
        const std::int64_t start = gpu.row->start_ns, end = gpu.row->end_ns;
        const std::int64_t middle = start + (end > start ? (end - start) / 2 : 0);
        gpu.next();
        if (!launched) continue;
        if (first) {
          flow("s", flow_id, key.first, launch_tid, launch_ts);
          ++counts_.flows;
          first = false;
        }
        const bool last = !(gpu.valid() && gpu.key() == key);
        flow(last ? "f" : "t", flow_id, pid, stream, middle);
        if (!last) ++counts_.flow_steps;
      }
    }
  }

  /// ,"domain":..,"category":..,"color":"#AARRGGBB","payload":..
  void nvtx_args(const db::NvtxRow& s) {
    out_.raw(",\"args\":{\"domain\":\"").raw(names_.get(s.domain_id));
    out_.raw("\",\"category\":").integer(s.category);
    char hex[16];
    const auto argb = static_cast<std::uint32_t>(s.color);
    const auto end = std::to_chars(hex, hex + sizeof hex, argb, 16).ptr;
    out_.raw(",\"color\":\"#")
        .raw(std::string(static_cast<std::size_t>(8 - (end - hex)), '0'))
        .raw(std::string_view(hex, static_cast<std::size_t>(end - hex)))
        .raw("\"");
    if (s.payload_int) {
      const auto k = static_cast<db::PayloadKind>(s.payload_kind);
      out_.raw(",\"payload\":");
      if (k == db::PayloadKind::Double || k == db::PayloadKind::Float) {
        out_.real(*s.payload_real);
      } else {
        out_.integer(*s.payload_int);
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
    auto ranges = db::nvtx_ranges(reader_, /*with_style=*/true);
    while (auto s = ranges.next()) {
      if (!selected(s->pid)) continue;
      const bool ended = s->end_ns.has_value();
      begin_event("X", "user_annotation", nvtx_name(s->domain_id, s->text_id), s->pid, s->tid,
                  s->start_ns);
      duration(s->start_ns, ended ? *s->end_ns : range_.end_ns);
      nvtx_args(*s);
      out_.raw(",\"depth\":").integer(s->depth);
      if (!ended) out_.raw(",\"unterminated\":true");
      out_.raw("}}");
      ++counts_.nvtx_ranges;
    }
  }

  void write_nvtx_marks() {
    auto marks = db::nvtx_marks(reader_);
    while (auto s = marks.next()) {
      if (!selected(s->pid)) continue;
      begin_event("i", "user_annotation", nvtx_name(s->domain_id, s->text_id), s->pid, s->tid,
                  s->start_ns);
      out_.raw(",\"s\":\"t\"");
      nvtx_args(*s);
      out_.raw("}}");
      ++counts_.nvtx_marks;
    }
  }

  void write_memory_counter() {
    auto events = db::device_memory_events(reader_, db::MemoryOrder::ByProcessDevice);
    std::pair<std::int64_t, std::int64_t> track{-1, -1};
    std::int64_t in_use = 0;
    while (auto s = events.next()) {
      if (!selected(s->pid)) continue;
      if (std::make_pair(s->pid, s->device_id) != track) {
        track = {s->pid, s->device_id};
        in_use = 0;
      }
      const bool release = s->operation == static_cast<int>(db::MemoryOperation::Release);
      in_use += release ? -s->bytes : s->bytes;
      begin_event("C", "memory", "Device memory", gpu_pid(track.first, track.second), 0,
                  s->timestamp_ns);
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
  std::set<std::int64_t> selected_;                          // pids exported; empty: all
  bool several_processes_ = false;                           // more than one pid exported
  std::map<std::int64_t, int> sm_counts_;                    // device id -> SMs
  ChromeTraceCounts counts_;
};

}  // namespace

ChromeTraceCounts write_chrome_trace(std::ostream& out, const db::Reader& reader,
                                     const ChromeTraceOptions& options) {
  return TraceExporter(out, reader, options).run();
}

}  // namespace fuselens::analyzer
