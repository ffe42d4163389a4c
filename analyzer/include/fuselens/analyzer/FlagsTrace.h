#pragma once
// FlagsTrace: a capture loaded into plain vectors for the flags rules (Flags.h), with every GPU
// operation joined to the API call that launched it and every call to its calling context.
//
// Calling context: FuseLens has no calling-context tree yet, so the context of a call is what the
// capture holds: its (pid, tid) and the innermost NVTX range open on that thread when the call
// started (the range with the latest start among those with start_ns <= call.start_ns <= end_ns;
// a range never ended counts as open until the end of the capture).
//
// Launch call: the api_call of the same pid and correlation id as the GPU record; the one that
// started first when several share it (a runtime call and the driver call inside it), as
// RangeProjection (CompareProjection.h) does.
//
// Units: ns on CUPTI's timestamp clock for times, bytes for sizes.
// Errors: db::Error when a query fails.

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "fuselens/analyzer/Summary.h"
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
  std::string name;       ///< as stored, e.g. "cudaLaunchKernel_v7000" or "cudaLaunchKernel"
  std::string base_name;  ///< name without a trailing CUPTI version suffix "_v<digits>"
  std::int64_t start_ns = 0, end_ns = 0;
  std::uint32_t correlation_id = 0;
  int range = -1;  ///< index into FlagsTrace::ranges of its innermost enclosing range, or -1
};

enum class OpKind { Kernel, Memcpy, Memset };

/// One GPU operation: a kernel, a memory copy or a memset.
struct TraceOp {
  OpKind kind = OpKind::Kernel;
  std::uint32_t pid = 0, device_id = 0, context_id = 0, stream_id = 0, correlation_id = 0;
  std::int64_t start_ns = 0, end_ns = 0;
  std::string name;  ///< kernel name (in the NameKind asked for), "[CUDA memcpy <kind>]" or
                     ///< "[CUDA memset]"
  int call = -1;     ///< index into FlagsTrace::calls of the launch call, or -1 when unknown
  // Copies and memsets only:
  db::MemcpyKind copy_kind = db::MemcpyKind::Unknown;
  db::MemoryKind src_kind = db::MemoryKind::Unknown, dst_kind = db::MemoryKind::Unknown;
  db::MemoryKind memory_kind = db::MemoryKind::Unknown;  ///< memset target
  std::int64_t bytes = 0;
  bool is_async = false;

  std::int64_t duration_ns() const { return end_ns - start_ns; }
};

/// One CUPTI synchronization record (sync_event).
struct TraceSync {
  std::uint32_t pid = 0, context_id = 0, stream_id = 0, correlation_id = 0;
  std::int64_t start_ns = 0, end_ns = 0;
  db::SyncType type = db::SyncType::Unknown;
  int call = -1;  ///< the API call of the same pid and correlation id, or -1
};

/// The whole capture. ops are sorted by (start_ns, end_ns), calls by start_ns, ranges by
/// (pid, tid, start_ns); the indexes stored in the records refer to these orders.
struct FlagsTrace {
  std::vector<TraceRange> ranges;
  std::vector<TraceCall> calls;
  std::vector<TraceOp> ops;
  std::vector<TraceSync> syncs;
  std::vector<db::DeviceInfo> devices;
  /// Earliest timestamp of any op, call or range (0 for an empty capture): hits print times
  /// relative to it.
  std::int64_t origin_ns = 0;
  bool cuda_used = false;  ///< the capture has a process row

  const TraceCall* launch_call(const TraceOp& op) const {
    return op.call >= 0 ? &calls[static_cast<std::size_t>(op.call)] : nullptr;
  }
  /// Innermost range enclosing the op's launch call, or nullptr.
  const TraceRange* launch_range(const TraceOp& op) const;
  /// Index of that range, or -1.
  int launch_range_index(const TraceOp& op) const;
};

/// Loads the capture opened by `reader`; kernel names in `names` (short by default: the bare
/// function name reads best in hits and chains).
FlagsTrace load_flags_trace(const db::Reader& reader, NameKind names = NameKind::Short);

/// `name` without a trailing "_v<digits>" (CUPTI's versioned API names, "cudaMemcpy_v3020").
std::string api_base_name(const std::string& name);

}  // namespace fuselens::analyzer
