#include "ActivityConverter.h"

#include <cupti_callbacks.h>

#include <utility>

namespace fuselens::collector {
namespace {

// db enumerations share CUPTI's values; these checks keep the schema's documented values honest.
static_assert(static_cast<int>(db::MemcpyKind::HostToDevice) == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
static_assert(static_cast<int>(db::MemcpyKind::DeviceToHost) == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH);
static_assert(static_cast<int>(db::MemcpyKind::DeviceToDevice) == CUPTI_ACTIVITY_MEMCPY_KIND_DTOD);
static_assert(static_cast<int>(db::MemcpyKind::PeerToPeer) == CUPTI_ACTIVITY_MEMCPY_KIND_PTOP);
static_assert(static_cast<int>(db::MemoryKind::Pageable) == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE);
static_assert(static_cast<int>(db::MemoryKind::Device) == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
static_assert(static_cast<int>(db::MemoryKind::ManagedStatic) ==
              CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC);
static_assert(static_cast<int>(db::SyncType::ContextSynchronize) ==
              CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE);
static_assert(static_cast<int>(db::MemoryOperation::Release) ==
              CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE);

db::MemcpyKind memcpy_kind(std::uint8_t v) {
  return v <= 10 ? static_cast<db::MemcpyKind>(v) : db::MemcpyKind::Unknown;
}
db::MemoryKind memory_kind(std::uint32_t v) {
  return v <= 7 ? static_cast<db::MemoryKind>(v) : db::MemoryKind::Unknown;
}
std::optional<std::uint32_t> graph_id(std::uint32_t id) {
  return id ? std::optional<std::uint32_t>(id) : std::nullopt;
}
std::optional<std::uint64_t> graph_node(std::uint32_t graph, std::uint64_t node) {
  return graph ? std::optional<std::uint64_t>(node) : std::nullopt;
}

// CUPTI's overhead kinds are 1 or n<<16; the schema numbers them 0..9.
std::uint32_t overhead_kind(std::uint32_t v) {
  if (v == CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER) return 1;
  const std::uint32_t n = v >> 16;
  return (v & 0xFFFF) == 0 && n >= 1 && n <= 8 ? n + 1 : 0;
}

// The fields every GPU operation record shares (kernel, memcpy, memset).
template <typename Cupti, typename Record>
Record gpu_operation(const Cupti& c, std::uint32_t pid) {
  Record r;
  r.pid = pid;
  r.start_ns = c.start;
  r.end_ns = c.end;
  r.device_id = c.deviceId;
  r.context_id = c.contextId;
  r.stream_id = c.streamId;
  r.correlation_id = c.correlationId;
  r.graph_id = graph_id(c.graphId);
  r.graph_node_id = graph_node(c.graphId, c.graphNodeId);
  return r;
}

db::KernelRecord kernel(const CUpti_ActivityKernel10& k, std::uint32_t pid) {
  auto r = gpu_operation<CUpti_ActivityKernel10, db::KernelRecord>(k, pid);
  r.grid_x = k.gridX;
  r.grid_y = k.gridY;
  r.grid_z = k.gridZ;
  r.block_x = k.blockX;
  r.block_y = k.blockY;
  r.block_z = k.blockZ;
  r.registers_per_thread = k.registersPerThread;
  r.static_shared_bytes = k.staticSharedMemory;
  r.dynamic_shared_bytes = k.dynamicSharedMemory;
  r.local_memory_per_thread = k.localMemoryPerThread;
  r.mangled_name = k.name ? k.name : "<unknown kernel>";
  return r;
}

}  // namespace

std::string runtime_api_display_name(std::string_view name) {
  // CUPTI names runtime callbacks with the version that introduced them
  // ("cudaLaunchKernel_v7000"); users know the function name, as Nsight Systems prints it.
  const auto cut = name.rfind("_v");
  if (cut != std::string_view::npos && cut + 2 < name.size() &&
      name.find_first_not_of("0123456789", cut + 2) == std::string_view::npos) {
    name = name.substr(0, cut);
  }
  return std::string(name);
}

ActivityConverter::ActivityConverter(std::uint32_t pid, ApiNameResolver resolver)
    : pid_(pid), resolver_(std::move(resolver)) {}

std::string ActivityConverter::cupti_api_name(db::ApiDomain domain, std::uint32_t callback_id) {
  const char* name = nullptr;
  const auto cupti_domain =
      domain == db::ApiDomain::Runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
  if (cuptiGetCallbackName(cupti_domain, callback_id, &name) == CUPTI_SUCCESS && name) {
    return domain == db::ApiDomain::Runtime ? runtime_api_display_name(name) : std::string(name);
  }
  return (domain == db::ApiDomain::Runtime ? "runtime#" : "driver#") + std::to_string(callback_id);
}

const std::string& ActivityConverter::api_name(db::ApiDomain domain, std::uint32_t callback_id) {
  const std::uint64_t key = (static_cast<std::uint64_t>(domain) << 32) | callback_id;
  auto it = api_names_.find(key);
  if (it == api_names_.end()) it = api_names_.emplace(key, resolver_(domain, callback_id)).first;
  return it->second;
}

void ActivityConverter::convert(const CUpti_Activity& record, db::RecordBatch& out) {
  switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      out.kernels.push_back(kernel(reinterpret_cast<const CUpti_ActivityKernel10&>(record), pid_));
      break;
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto& m = reinterpret_cast<const CUpti_ActivityMemcpy6&>(record);
      auto r = gpu_operation<CUpti_ActivityMemcpy6, db::MemcpyRecord>(m, pid_);
      r.copy_kind = memcpy_kind(m.copyKind);
      r.src_kind = memory_kind(m.srcKind);
      r.dst_kind = memory_kind(m.dstKind);
      r.bytes = m.bytes;
      r.is_async = (m.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) != 0;
      out.memcpys.push_back(r);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {  // peer to peer: deviceId is the device that copies
      const auto& m = reinterpret_cast<const CUpti_ActivityMemcpyPtoP4&>(record);
      auto r = gpu_operation<CUpti_ActivityMemcpyPtoP4, db::MemcpyRecord>(m, pid_);
      r.copy_kind = m.copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN ? db::MemcpyKind::PeerToPeer
                                                                     : memcpy_kind(m.copyKind);
      r.src_kind = memory_kind(m.srcKind);
      r.dst_kind = memory_kind(m.dstKind);
      r.bytes = m.bytes;
      r.is_async = (m.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) != 0;
      out.memcpys.push_back(r);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto& m = reinterpret_cast<const CUpti_ActivityMemset4&>(record);
      auto r = gpu_operation<CUpti_ActivityMemset4, db::MemsetRecord>(m, pid_);
      r.bytes = m.bytes;
      r.value = m.value;
      r.memory_kind = memory_kind(m.memoryKind);
      r.is_async = (m.flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC) != 0;
      out.memsets.push_back(r);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY2: {
      const auto& m = reinterpret_cast<const CUpti_ActivityMemory4&>(record);
      if (m.memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION &&
          m.memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE) {
        ++skipped_;
        break;
      }
      db::MemoryEventRecord r;
      r.pid = pid_;
      r.timestamp_ns = m.timestamp;
      r.operation = static_cast<db::MemoryOperation>(m.memoryOperationType);
      r.memory_kind = memory_kind(m.memoryKind);
      r.address = m.address;
      r.bytes = m.bytes;
      r.device_id = m.deviceId;
      r.context_id = m.contextId;
      r.stream_id = m.streamId;
      r.correlation_id = m.correlationId;
      r.is_async = m.isAsync != 0;
      out.memory_events.push_back(r);
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto& a = reinterpret_cast<const CUpti_ActivityAPI&>(record);
      db::ApiCallRecord r;
      r.pid = a.processId ? a.processId : pid_;
      r.tid = a.threadId;
      r.domain = record.kind == CUPTI_ACTIVITY_KIND_RUNTIME ? db::ApiDomain::Runtime
                                                            : db::ApiDomain::Driver;
      r.callback_id = a.cbid;
      r.name = api_name(r.domain, a.cbid);
      r.start_ns = a.start;
      r.end_ns = a.end;
      r.correlation_id = a.correlationId;
      r.return_code = a.returnValue;
      threads_.insert(r.tid);
      out.api_calls.push_back(std::move(r));
      break;
    }
    case CUPTI_ACTIVITY_KIND_MARKER:
      convert_marker(reinterpret_cast<const CUpti_ActivityMarker2&>(record));
      break;
    case CUPTI_ACTIVITY_KIND_MARKER_DATA:
      convert_marker_data(reinterpret_cast<const CUpti_ActivityMarkerData2&>(record));
      break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto& s = reinterpret_cast<const CUpti_ActivitySynchronization2&>(record);
      db::SyncRecord r;
      r.pid = pid_;
      r.start_ns = s.start;
      r.end_ns = s.end;
      r.type = s.type <= 4 ? static_cast<db::SyncType>(s.type) : db::SyncType::Unknown;
      r.context_id = s.contextId;
      r.stream_id = s.streamId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? 0 : s.streamId;
      r.cuda_event_id = s.cudaEventId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? 0 : s.cudaEventId;
      r.correlation_id = s.correlationId;
      out.syncs.push_back(r);
      break;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      const auto& o = reinterpret_cast<const CUpti_ActivityOverhead3&>(record);
      db::OverheadRecord r;
      r.pid = pid_;
      r.overhead_kind = overhead_kind(o.overheadKind);
      r.object_kind = o.objectKind;
      r.object_id = o.objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS ||
                            o.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD
                        ? o.objectId.pt.threadId
                        : o.objectId.dcs.deviceId;
      r.start_ns = o.start;
      r.end_ns = o.end;
      out.overheads.push_back(r);
      break;
    }
    default:
      ++skipped_;
  }
}

void ActivityConverter::convert_marker(const CUpti_ActivityMarker2& m) {
  const std::uint32_t tid =
      m.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? m.objectId.pt.threadId : 0;
  const std::uint32_t pid = m.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD && m.objectId.pt.processId
                                ? m.objectId.pt.processId
                                : pid_;
  if (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
    db::NvtxRangeRecord r;
    r.pid = pid;
    r.tid = tid;
    r.domain = m.domain ? m.domain : "";
    r.text = m.name ? m.name : "";
    r.start_ns = m.timestamp;
    r.depth = open_depth_[tid]++;
    if (auto it = marker_data_.find(m.id); it != marker_data_.end()) {
      apply(it->second, r);
      marker_data_.erase(it);
    }
    threads_.insert(tid);
    open_ranges_[m.id] = std::move(r);
  } else if (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
    auto it = open_ranges_.find(m.id);
    if (it == open_ranges_.end()) {
      ++unmatched_ends_;
      return;
    }
    it->second.end_ns = m.timestamp;
    auto depth = open_depth_.find(it->second.tid);
    if (depth != open_depth_.end() && depth->second > 0) --depth->second;
    done_ranges_.emplace_back(m.id, std::move(it->second));
    open_ranges_.erase(it);
  } else if (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
    db::NvtxMarkRecord r;
    r.pid = pid;
    r.tid = tid;
    r.domain = m.domain ? m.domain : "";
    r.text = m.name ? m.name : "";
    r.timestamp_ns = m.timestamp;
    threads_.insert(tid);
    done_marks_.emplace_back(m.id, std::move(r));
  } else {
    ++skipped_;  // synchronization markers are not stored in schema v1
  }
}

void ActivityConverter::convert_marker_data(const CUpti_ActivityMarkerData2& d) {
  MarkerData data;
  data.color = d.color;
  data.category = d.category;
  switch (d.payloadKind) {
    case CUPTI_METRIC_VALUE_KIND_UINT64:
      data.kind = db::PayloadKind::UInt64;
      data.integer = static_cast<std::int64_t>(d.payload.metricValueUint64);
      break;
    case CUPTI_METRIC_VALUE_KIND_INT64:
      data.kind = db::PayloadKind::Int64;
      data.integer = d.payload.metricValueInt64;
      break;
    case CUPTI_METRIC_VALUE_KIND_DOUBLE:
      data.kind = db::PayloadKind::Double;
      data.real = d.payload.metricValueDouble;
      break;
    default:
      break;
  }
  if (auto it = open_ranges_.find(d.id); it != open_ranges_.end()) {
    apply(data, it->second);
  } else {
    marker_data_[d.id] = data;  // before its start marker, or for a completed range or a mark
  }
}

template <typename Record>
void ActivityConverter::apply(const MarkerData& data, Record& record) {
  record.color = data.color;
  record.category = data.category;
  record.payload_kind = data.kind;
  record.payload_real = data.real;
  record.payload_int = data.integer;
}

void ActivityConverter::finish_batch(db::RecordBatch& out) {
  for (auto& [id, range] : done_ranges_) {
    if (auto it = marker_data_.find(id); it != marker_data_.end()) {
      apply(it->second, range);
      marker_data_.erase(it);
    }
    out.nvtx_ranges.push_back(std::move(range));
  }
  for (auto& [id, mark] : done_marks_) {
    if (auto it = marker_data_.find(id); it != marker_data_.end()) {
      apply(it->second, mark);
      marker_data_.erase(it);
    }
    out.nvtx_marks.push_back(std::move(mark));
  }
  done_ranges_.clear();
  done_marks_.clear();
}

void ActivityConverter::flush_open_ranges(db::RecordBatch& out) {
  for (auto& [id, range] : open_ranges_) done_ranges_.emplace_back(id, std::move(range));
  open_ranges_.clear();
  open_depth_.clear();
  finish_batch(out);
}

std::size_t ActivityConverter::convert_buffer(std::uint8_t* buffer, std::size_t valid_size,
                                              db::RecordBatch& out) {
  std::size_t count = 0;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
    convert(*record, out);
    ++count;
  }
  finish_batch(out);
  return count;
}

}  // namespace fuselens::collector
