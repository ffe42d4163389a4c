#pragma once
// FlagsTrace: a capture loaded into plain vectors for the flags rules (Flags.h), with every GPU
// operation joined to the API call that launched it and every call to its calling context.
//
// Calling context of a call: its (pid, tid), the innermost NVTX range open on that thread when
// the call started (the range with the latest start among those with start_ns <= call.start_ns
// <= end_ns; a range never ended counts as open until the end of the capture), and, in captures
// recorded with the `context` trace group (schema version 2), its call path (launch_paths in
// CallingContext.h: user frames from "main" down to the launch site, CUDA and collector frames
// hidden).
//
// Fusion evidence (the fusion_chain rule, docs/rules.md): the kernels' 8-byte arguments (trace
// group `args`, table kernel_arg, schema version 3), device allocations (memory_event), the work
// of each kernel launch (hardware counters) and of NVTX ranges (work annotations,
// fuselens/annotate.h, by range name) as Roofline.h computes them, and each device's own ceilings
// (measured in the capture, else its datasheet profile, Peaks.h).
//
// Launch call: the api_call of the same pid and correlation id as the GPU record; the one that
// started first when several share it (a runtime call and the driver call inside it), as
// RangeProjection (CompareProjection.h) does.
//
// Units: ns on CUPTI's timestamp clock for times, bytes for sizes.
// Errors: db::Error when a query fails.

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "cct/CallingContext.h"
#include "roofline/RooflineMath.h"
#include "summary/Summary.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/Records.h"

namespace fuselens::analyzer {

inline constexpr std::int64_t kOpenEnd = std::numeric_limits<std::int64_t>::max();

/// One NVTX push/pop or start/end range.
struct TraceRange {
  std::uint32_t pid = 0, tid = 0;
  std::string name;  ///< the text, prefixed "domain:" when the domain is not empty (as Summary)
  std::int64_t start_ns = 0;
  std::int64_t end_ns = kOpenEnd;  ///< kOpenEnd when the range never ended
  std::uint32_t depth = 0;
  std::optional<std::int64_t> payload_int;  ///< the payload when it has an integer type
};

/// One CUDA runtime or driver API call.
struct TraceCall {
  std::uint32_t pid = 0, tid = 0;
  /// As stored, e.g. "cudaLaunchKernel_v7000" or "cudaLaunchKernel" (FlagsTrace::texts holds it).
  std::string_view name;
  std::string_view base_name;  ///< name without a trailing CUPTI version suffix "_v<digits>"
  std::int64_t start_ns = 0, end_ns = 0;
  std::uint32_t correlation_id = 0;
  int range = -1;  ///< index into FlagsTrace::ranges of its innermost enclosing range, or -1
  int context = -1;  ///< index into FlagsTrace::contexts of its call path, or -1 when unknown
};

enum class OpKind { Kernel, Memcpy, Memset };

/// One GPU operation: a kernel, a memory copy or a memset.
struct TraceOp {
  OpKind kind = OpKind::Kernel;
  std::uint32_t pid = 0, device_id = 0, context_id = 0, stream_id = 0, correlation_id = 0;
  std::int64_t start_ns = 0, end_ns = 0;
  /// Kernel name (in the NameKind asked for), "[CUDA memcpy <kind>]" or "[CUDA memset]", held
  /// by FlagsTrace::texts (one copy of each name for ten million launches).
  std::string_view name;
  int call = -1;     ///< index into FlagsTrace::calls of the launch call, or -1 when unknown
  // Copies and memsets only:
  db::MemcpyKind copy_kind = db::MemcpyKind::Unknown;
  db::MemoryKind src_kind = db::MemoryKind::Unknown, dst_kind = db::MemoryKind::Unknown;
  db::MemoryKind memory_kind = db::MemoryKind::Unknown;  ///< memset target
  std::int64_t bytes = 0;
  bool is_async = false;
  /// Kernels only: index into FlagsTrace::op_args of the values of its 8-byte parameters
  /// (FlagsTrace::args), -1 when not recorded.
  int args_index = -1;
  /// Kernels only: index into FlagsTrace::op_work of its work from hardware counters
  /// (FlagsTrace::counters), -1 when the capture has none for this launch.
  int work_index = -1;

  std::int64_t duration_ns() const { return end_ns - start_ns; }
};

/// One device allocation (memory_event, kind Device or Managed): [address, address + bytes)
/// from its allocation to its release (kOpenEnd when never released in the capture).
struct TraceAllocation {
  std::uint32_t pid = 0, device_id = 0;
  std::uint64_t address = 0, bytes = 0;
  std::int64_t start_ns = 0, end_ns = kOpenEnd;
};

/// The ceilings a device's memory-bound test and byte savings use: its measured ceilings when
/// the capture has them (`ceiling` table), else its datasheet profile (analyzer/data/peaks.json).
struct DeviceCeilings {
  Ceilings ceilings;
  /// Where the DRAM bandwidth and the compute ceilings come from, for people: "measured on this
  /// device, ceiling table" or "datasheet peak of NVIDIA H100 SXM5 80 GB".
  std::string dram_source, compute_source;
};

/// One CUPTI synchronization record (sync_event).
struct TraceSync {
  std::uint32_t pid = 0, context_id = 0, stream_id = 0, correlation_id = 0;
  std::int64_t start_ns = 0, end_ns = 0;
  db::SyncType type = db::SyncType::Unknown;
  int call = -1;  ///< the API call of the same pid and correlation id, or -1
};

/// The whole capture. ops are sorted by (start_ns, end_ns), calls by start_ns, ranges by
/// (pid, tid, start_ns); the indexes stored in the records refer to these orders. Move-only: the
/// names of ops and calls point into its `texts`.
struct FlagsTrace {
  FlagsTrace() = default;
  FlagsTrace(FlagsTrace&&) = default;
  FlagsTrace& operator=(FlagsTrace&&) = default;
  FlagsTrace(const FlagsTrace&) = delete;
  FlagsTrace& operator=(const FlagsTrace&) = delete;

  std::vector<TraceRange> ranges;
  std::vector<TraceCall> calls;
  std::vector<TraceOp> ops;
  std::vector<TraceSync> syncs;
  std::vector<db::DeviceInfo> devices;
  /// Earliest timestamp of any op, call or range (0 for an empty capture): hits print times
  /// relative to it.
  std::int64_t origin_ns = 0;
  bool cuda_used = false;  ///< the capture has a process row

  /// Distinct call paths (TraceCall::context), root first; empty without calling contexts.
  std::vector<std::vector<CallPathFrame>> contexts;
  std::vector<std::string> context_texts;  ///< format_context of each of `contexts`
  /// The capture has kernel_arg rows (recorded with the `args` trace group).
  bool args_captured = false;
  /// Device allocations sorted by (pid, address, start_ns).
  std::vector<TraceAllocation> allocations;
  std::uint64_t largest_allocation = 0;  ///< bytes of the largest one (bounds allocation_at)
  /// Declared work by NVTX range name (TraceRange::name), from work annotations: the sum over
  /// the range's instances (an intensity, FLOPs over bytes, does not depend on how many).
  std::map<std::string, Work, std::less<>> range_work;
  /// Ceilings by device id; a device with neither measured ceilings nor a datasheet profile is
  /// absent.
  std::map<std::uint32_t, DeviceCeilings> ceilings;

  /// Every distinct name of an op or call, once (node-based: views into it survive a move).
  std::unordered_set<std::string> texts;
  /// The parameter values of the kernels that have them (TraceOp::args_index), in parameter
  /// order, and their work from counters (TraceOp::work_index).
  std::vector<std::vector<std::uint64_t>> op_args;
  std::vector<Work> op_work;

  /// `text` held by `texts` (added when new).
  std::string_view intern(std::string_view text) { return *texts.emplace(text).first; }
  /// The op's 8-byte parameter values (device-pointer candidates; trace group `args`); empty
  /// when not recorded.
  const std::vector<std::uint64_t>& args(const TraceOp& op) const;
  /// The op's work from hardware counters (work_from_counters, Roofline.h), or nullptr when the
  /// capture has no counters for this launch.
  const Work* counters(const TraceOp& op) const {
    return op.work_index >= 0 ? &op_work[static_cast<std::size_t>(op.work_index)] : nullptr;
  }

  const TraceCall* launch_call(const TraceOp& op) const {
    return op.call >= 0 ? &calls[static_cast<std::size_t>(op.call)] : nullptr;
  }
  /// Innermost range enclosing the op's launch call, or nullptr.
  const TraceRange* launch_range(const TraceOp& op) const;
  /// Index of that range, or -1.
  int launch_range_index(const TraceOp& op) const;
  /// The call path of the op's launch call, or nullptr when unknown.
  const std::vector<CallPathFrame>* launch_context(const TraceOp& op) const;
  /// The allocation of process `pid` that holds `address` at time `t_ns`, or nullptr.
  const TraceAllocation* allocation_at(std::uint32_t pid, std::uint64_t address,
                                       std::int64_t t_ns) const;
};

/// "main > run_shape > launch_relu [gemm_bias_relu.cu:120]": the frames from the outermost
/// "main" (or the root when no frame is "main") down, each by its bare function name (as
/// db::short_kernel_name: no namespaces, template arguments or parameters), without the C
/// library's process and thread start (__libc_start_main, start_thread, libc.so frames), the
/// C++ library's frames (std::...) and the compiler's kernel launch stubs (__device_stub__...);
/// runs of frames no symbol covers in one module shown as one ("libcublasLt.so.13 (8 frames)");
/// the last frame shown carries its source location.
std::string format_context(const std::vector<CallPathFrame>& path);

/// Loads the capture opened by `reader`; kernel names in `names` (short by default: the bare
/// function name reads best in hits and chains).
FlagsTrace load_flags_trace(const db::Reader& reader, NameKind names = NameKind::Short,
                            FramesMode frames = FramesMode::All);

/// Loads the fusion evidence of the capture into `trace` (kernel arguments, allocations, work
/// from counters and annotations, device ceilings): the part of load_flags_trace in
/// FlagsTraceFusion.cpp. Needs trace.ops and trace.devices loaded.
void load_fusion_evidence(const db::Reader& reader, NameKind names, FlagsTrace& trace);

/// `name` without a trailing "_v<digits>" (CUPTI's versioned API names, "cudaMemcpy_v3020").
std::string_view api_base_name(std::string_view name);

}  // namespace fuselens::analyzer
