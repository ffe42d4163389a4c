#pragma once
// Plain records: the collector converts CUPTI activity records into these at its boundary, the
// Writer stores them, and tests build them by hand. No CUDA or CUPTI types appear here.
//
// Units: every *_ns field is nanoseconds on CUPTI's timestamp clock (see db/schema.sql), every
// *_bytes / bytes field is bytes. Enumerations use the stable values documented in db/schema.sql.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fuselens::db {

inline constexpr int kSchemaVersion = 10;  ///< db/schema.sql; readers also read versions 1 to 9
inline constexpr std::int32_t kApplicationId = 0x46534C4E;  // "FSLN"

enum class MemcpyKind : int {
  Unknown = 0,
  HostToDevice = 1,
  DeviceToHost = 2,
  HostToArray = 3,
  ArrayToHost = 4,
  ArrayToArray = 5,
  ArrayToDevice = 6,
  DeviceToArray = 7,
  DeviceToDevice = 8,
  HostToHost = 9,
  PeerToPeer = 10,
};
enum class MemoryKind : int {
  Unknown = 0,
  Pageable = 1,
  Pinned = 2,
  Device = 3,
  Array = 4,
  Managed = 5,
  DeviceStatic = 6,
  ManagedStatic = 7,
};
enum class MemoryOperation : int { Allocation = 1, Release = 2 };
enum class ApiDomain : int { Runtime = 1, Driver = 2 };
enum class SyncType : int {
  Unknown = 0,
  EventSynchronize = 1,
  StreamWaitEvent = 2,
  StreamSynchronize = 3,
  ContextSynchronize = 4,
};
enum class PayloadKind : int {
  None = 0,
  Double = 1,
  UInt64 = 2,
  Int64 = 3,
  UInt32 = 4,
  Int32 = 5,
  Float = 6
};
enum class EndReason : int { NotFinalized = 0, Exited = 1, Signaled = 2, ProfilerInterrupted = 3 };

/// Human-readable names of the enumerations ("Host-to-Device", "Device", ...), as in schema.sql.
const char* to_string(MemcpyKind kind);
const char* to_string(MemoryKind kind);

struct KernelRecord {
  std::uint32_t pid = 0;
  std::uint64_t start_ns = 0, end_ns = 0;
  std::uint32_t device_id = 0, context_id = 0, stream_id = 0, correlation_id = 0;
  std::int32_t grid_x = 0, grid_y = 0, grid_z = 0;
  std::int32_t block_x = 0, block_y = 0, block_z = 0;
  std::uint32_t registers_per_thread = 0;
  std::int32_t static_shared_bytes = 0, dynamic_shared_bytes = 0;
  std::uint32_t local_memory_per_thread = 0;
  std::string mangled_name;  ///< as the driver reports it; demangled and short names derive from it
  std::optional<std::uint32_t> graph_id;
  std::optional<std::uint64_t> graph_node_id;
};

struct MemcpyRecord {
  std::uint32_t pid = 0;
  std::uint64_t start_ns = 0, end_ns = 0;
  std::uint32_t device_id = 0, context_id = 0, stream_id = 0, correlation_id = 0;
  MemcpyKind copy_kind = MemcpyKind::Unknown;
  MemoryKind src_kind = MemoryKind::Unknown, dst_kind = MemoryKind::Unknown;
  std::uint64_t bytes = 0;
  bool is_async = false;
  std::optional<std::uint32_t> graph_id;
  std::optional<std::uint64_t> graph_node_id;
};

struct MemsetRecord {
  std::uint32_t pid = 0;
  std::uint64_t start_ns = 0, end_ns = 0;
  std::uint32_t device_id = 0, context_id = 0, stream_id = 0, correlation_id = 0;
  std::uint64_t bytes = 0;
  std::uint32_t value = 0;
  MemoryKind memory_kind = MemoryKind::Unknown;
  bool is_async = false;
  std::optional<std::uint32_t> graph_id;
  std::optional<std::uint64_t> graph_node_id;
};

struct MemoryEventRecord {
  std::uint32_t pid = 0;
  std::uint64_t timestamp_ns = 0;
  MemoryOperation operation = MemoryOperation::Allocation;
  MemoryKind memory_kind = MemoryKind::Unknown;
  std::uint64_t address = 0, bytes = 0;
  std::uint32_t device_id = 0, context_id = 0, stream_id = 0, correlation_id = 0;
  bool is_async = false;
};

struct ApiCallRecord {
  std::uint32_t pid = 0, tid = 0;
  ApiDomain domain = ApiDomain::Runtime;
  std::uint32_t callback_id = 0;
  std::string name;  ///< e.g. "cudaLaunchKernel", "cuMemAlloc_v2"
  std::uint64_t start_ns = 0, end_ns = 0;
  std::uint32_t correlation_id = 0;
  std::uint32_t return_code = 0;
};

struct NvtxRangeRecord {
  std::uint32_t pid = 0, tid = 0;
  std::string domain;  ///< empty for the default domain
  std::string text;
  std::uint64_t start_ns = 0;
  std::optional<std::uint64_t> end_ns;  ///< empty when the range never ended
  std::uint32_t depth = 0;
  std::uint32_t category = 0, color = 0;
  PayloadKind payload_kind = PayloadKind::None;
  double payload_real = 0;       ///< valid for Double and Float
  std::int64_t payload_int = 0;  ///< valid for the integer kinds (UInt64 stored as int64 bits)
};

struct NvtxMarkRecord {
  std::uint32_t pid = 0, tid = 0;
  std::string domain, text;
  std::uint64_t timestamp_ns = 0;
  std::uint32_t category = 0, color = 0;
  PayloadKind payload_kind = PayloadKind::None;
  double payload_real = 0;
  std::int64_t payload_int = 0;
};

struct SyncRecord {
  std::uint32_t pid = 0;
  std::uint64_t start_ns = 0, end_ns = 0;
  SyncType type = SyncType::Unknown;
  std::uint32_t context_id = 0, stream_id = 0, cuda_event_id = 0, correlation_id = 0;
};

struct OverheadRecord {
  std::uint32_t pid = 0;
  std::uint32_t overhead_kind = 0;  ///< enum_overhead_kind
  std::uint32_t object_kind = 0, object_id = 0;
  std::uint64_t start_ns = 0, end_ns = 0;
};

/// Module (schema version 9): the nn.Module instance whose call (torch.nn.Module._call_impl)
/// encloses the frames below it; function is its class name (tp_name), module_offset the
/// object's address (the key of the "fuselens:module:name:" marks; docs/calling-context.md).
enum class FrameKind : int { Native = 1, Python = 2, Module = 3 };

/// One symbolized frame. Native frames carry their module and the offset of the return
/// address in it; function, file and line are empty/0 where no symbol or debug information
/// covers the address.
struct FrameInfo {
  FrameKind kind = FrameKind::Native;
  std::string module;
  std::uint64_t module_offset = 0;
  std::string function;
  std::string file;
  std::uint32_t line = 0;
};

/// The calling context tree of one process, in the collector's numbering: nodes[0] is the root
/// (its parent and frame are ignored); every other node's parent index is smaller than its own.
struct CallingContextTree {
  struct Node {
    std::uint32_t parent = 0;
    std::uint32_t frame = 0;  ///< index into frames
  };
  struct Context {
    std::uint32_t correlation_id = 0;
    std::uint32_t tid = 0;
    std::uint32_t node = 0;  ///< index into nodes
    /// PyTorch autograd sequence numbers (schema version 9; -1: none). forward_seq: the calling
    /// thread's next sequence number (at::sequence_number::peek()) at a forward launch, one more
    /// than the node the op being run created; backward_seq: the sequence number of the autograd
    /// node being evaluated (torch::autograd::get_current_node()) at a backward launch.
    std::int64_t forward_seq = -1, backward_seq = -1;
  };
  /// A CUDA graph node (schema version 7, table graph_node): created by the traced call
  /// `correlation_id` (original_node_id 0), or cloned from `original_node_id` (correlation_id 0).
  /// Ids are CUPTI's (cuptiGetGraphNodeId, cuptiGetGraphId).
  struct GraphNode {
    std::uint64_t node_id = 0;
    std::uint64_t original_node_id = 0;
    std::uint32_t graph_id = 0;
    std::uint32_t correlation_id = 0;
    bool operator==(const GraphNode&) const = default;
  };
  std::uint32_t pid = 0;
  std::vector<Node> nodes;
  std::vector<FrameInfo> frames;
  std::vector<Context> contexts;
  std::vector<GraphNode> graph_nodes;
};

/// One 8-byte parameter of a kernel launch (trace group `args`): a device-pointer candidate.
struct KernelArgRecord {
  std::uint32_t pid = 0;
  std::uint32_t correlation_id = 0;  ///< of the launch call, as the kernel record carries it
  std::uint32_t index = 0;           ///< position in the parameter list, from 0
  std::uint64_t value = 0;
};

/// A span of the run the collector recorded under prof-run's capture control (--capture-range,
/// --delay/--duration, --steps; docs/capture-control.md). CUPTI ns; end 0 when the process ended
/// inside it.
struct CaptureWindowRecord {
  std::uint32_t pid = 0;
  std::uint64_t start_ns = 0, end_ns = 0;
  std::string reason;  ///< "nvtx:NAME", "cudaProfilerApi", "time", "steps 3-5"
};

/// Sampled tracing of one process (prof-run --sample 1/N; schema 10: sampling, sample_step,
/// sample_step_api). Step k (0-based) was traced when k % every == every - 1; every step has its
/// launch calls counted from CUPTI's callbacks. CUPTI ns; end_ns 0 when the process ended inside
/// the step.
struct SampleStepRecord {
  std::uint64_t step = 0;
  std::uint64_t start_ns = 0, end_ns = 0;
  bool traced = false;
  std::vector<std::pair<std::string, std::uint64_t>> calls;  ///< (driver API function, calls)
};
struct SamplingRecord {
  std::uint32_t pid = 0;
  std::uint32_t every = 1;
  std::uint64_t steps = 0, steps_lost = 0;  ///< seen; of them not in `step_rows`
  std::vector<SampleStepRecord> step_rows;
};

/// A batch of records committed in one transaction.
struct RecordBatch {
  std::vector<KernelRecord> kernels;
  std::vector<MemcpyRecord> memcpys;
  std::vector<MemsetRecord> memsets;
  std::vector<MemoryEventRecord> memory_events;
  std::vector<ApiCallRecord> api_calls;
  std::vector<NvtxRangeRecord> nvtx_ranges;
  std::vector<NvtxMarkRecord> nvtx_marks;
  std::vector<SyncRecord> syncs;
  std::vector<OverheadRecord> overheads;

  std::size_t size() const {
    return kernels.size() + memcpys.size() + memsets.size() + memory_events.size() +
           api_calls.size() + nvtx_ranges.size() + nvtx_marks.size() + syncs.size() +
           overheads.size();
  }
  bool empty() const { return size() == 0; }
  void clear();
};

/// What `prof-run` knows before the workload starts.
struct RunInfo {
  std::vector<std::string> command_line;
  std::string working_directory;
  std::string host_name;
  std::string fuselens_version;
  std::string trace;  ///< activity groups, comma separated
  std::uint64_t start_utc_ns = 0;
};

/// How the run ended; written by `prof-run` when it finalizes the database.
struct RunEnd {
  EndReason reason = EndReason::NotFinalized;
  std::optional<int> exit_status;
  std::optional<int> exit_signal;
  std::uint64_t end_utc_ns = 0;
};

/// One process in which the collector ran.
struct ProcessInfo {
  std::uint32_t pid = 0, parent_pid = 0;
  std::string executable;
  std::uint64_t start_utc_ns = 0;
  std::optional<std::uint64_t> end_utc_ns;
  std::int64_t clock_offset_ns = 0;
  int cuda_driver_version = 0, cuda_runtime_version = 0;
  std::uint32_t cupti_version = 0;
  std::uint64_t dropped_records = 0, buffers_used = 0, records_written = 0;
};

/// The rank a distributed launcher gave a process (table process_rank, schema 8; the variables
/// read are listed in db/schema.sql). Values are as the launcher set them, checked to be decimal
/// integers in [0, 2^31) by whoever fills this (the collector).
struct ProcessRank {
  std::uint32_t pid = 0;
  std::int32_t rank = 0;
  std::optional<std::int32_t> local_rank, world_size, local_world_size;
  std::string launcher;   ///< "torch", "openmpi", "pmi", "slurm"
  std::string host_name;  ///< gethostname() of the process
};

struct ThreadInfo {
  std::uint32_t pid = 0, tid = 0;
  std::string name;
};

struct DeviceInfo {
  std::uint32_t id = 0;  ///< CUDA device ordinal
  std::string uuid, name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int core_clock_khz = 0, memory_clock_khz = 0, memory_bus_width_bits = 0;
  std::uint64_t global_memory_bytes = 0;
  int l2_cache_bytes = 0;
  int max_threads_per_sm = 0, shared_memory_per_sm_bytes = 0, registers_per_sm = 0;
};

}  // namespace fuselens::db
