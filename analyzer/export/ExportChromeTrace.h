#pragma once
// ExportChromeTrace: a capture as Chrome Trace Event JSON ("JSON Object Format" of Google's
// Trace Event Format document) following the PyTorch profiler's (Kineto's) conventions, so that
// Perfetto (ui.perfetto.dev), chrome://tracing, TensorBoard's profiler plugin and Holistic Trace
// Analysis (HTA) read it as they read a torch.profiler trace.
//
// Layout (docs/formats.md has every field):
//   {"schemaVersion": 1,
//    "distributedInfo": {"rank": R, "world_size": W, ...},   (see below; HTA keys on it)
//    "deviceProperties": [{"id", "name", "totalGlobalMem", "computeMajor", "computeMinor",
//                          "numSms", "maxThreadsPerMultiprocessor", "regsPerMultiprocessor",
//                          "sharedMemPerMultiprocessor", "l2CacheSize", "clockRate" (kHz),
//                          "uuid"}, ...],                       (the capture's device table)
//    "displayTimeUnit": "ns", "baseTimeNanoseconds": <UTC ns of ts 0>,
//    "otherData": {...}, "traceEvents": [...]}
// distributedInfo: the rank of the exported processes when the capture's process_rank table
//   gives every one of them the same rank (with world_size, local_rank, launcher and host where
//   known); {"rank": 0, "world_size": 1} for one process that no launcher ranked; left out
//   otherwise (several ranks in one file: export one rank at a time with
//   ChromeTraceOptions::pids, `prof-analyze export --rank N`). It is written on its own line with
//   a space after each colon: HTA finds the rank with the pattern "rank":\s+(\d+).
// Tracks: each host process is its OS pid with its OS threads as tids (metadata events
//   "process_name", "thread_name", "process_sort_index"). Each GPU seen by a process is a
//   synthetic process "GPU <device>" with pid kGpuPidBase + 1000 * <index of the process in
//   the capture's process table> + <device id>, and each stream a thread "stream <id>" whose
//   tid is the CUDA stream id.
// Events (categories and argument names are Kineto's):
//   kernels: "X", cat "kernel", args "device", "context", "stream", "correlation",
//     "registers per thread", "shared memory" (static + dynamic bytes), "blocks per SM" and
//     "warps per SM" (grid blocks / SMs, times warps per block; when the SM count is known),
//     "grid", "block", and FuseLens's "static shared memory", "dynamic shared memory", "local
//     memory per thread", "graph_id", "graph_node_id" (graph launches);
//   copies: "X", cat "gpu_memcpy", named "Memcpy HtoD (Pageable -> Device)"; memsets: cat
//     "gpu_memset", named "Memset (Device)"; args "device", "context", "stream",
//     "correlation", "bytes", "memory bandwidth (GB/s)" (bytes / duration ns; "N/A" for 0 ns),
//     "is_async" (and "copy_kind" or "value");
//   CUDA API calls: "X" on their host thread, cat "cuda_runtime" or "cuda_driver", args
//     "cbid" (CUPTI callback id), "correlation", "return_code"; no "stream" arg (HTA tells host
//     from GPU events by it);
//   NVTX ranges: "X" on their host thread, cat "user_annotation", named "domain:text" ("text"
//     in the default domain, so a "ProfilerStep#N" range is HTA's iteration N); NVTX marks:
//     thread-scoped instant events ("ph":"i") of the same category;
//   device memory in use: a counter ("ph":"C", name "Device memory", cat "memory") of the GPU
//     process, one sample per memory event of kind Device;
//   launch flows ("ac2g", Kineto's async CPU-to-GPU link): "ph":"s" in the launching API call,
//     then "t" steps and a final "f" with "bp":"e" in the GPU work of the same pid and
//     correlation id, in start order; "id" = the "correlation" arg. The launching call is the
//     earliest API call with that pid and correlation id; flow points sit at the middle of the
//     call and of the GPU work, so each binds to its own slice. Correlation id 0 (none) gets no
//     flow.
// Correlation: the capture's correlation id when one process is exported; plus 2^32 * the
//   process's index in the process table when several are (each process numbers its own, and a
//   reader joining launches to kernels by "correlation" must not mix them). otherData says which.
// Time: "ts" and "dur" are microseconds with three decimals (exact nanoseconds) since the
//   earliest timestamp of capture_time_range (CUPTI clock); baseTimeNanoseconds is that origin
//   in UTC (origin + the first process's clock_offset_ns), and otherData records it in CUPTI ns
//   and UTC ns. Negative durations (corrupt records) are written as 0; an NVTX range that never
//   ended lasts until the end of the capture's time range and has "unterminated": true in its
//   args. (HTA rounds each event inward to whole microseconds unless HTA_DISABLE_NS_ROUNDING=1,
//   as it does with the PyTorch profiler's own nanosecond traces.)
//
// Memory: the records are streamed from SQLite and written as they are read (buffered in 64 kB
//   chunks); what is held is bounded by the number of distinct streams, threads and the name
//   cache (kernel and API names, at most kNameCacheSize entries), never by the record count.
//   SQLite sorts the GPU records and API calls by (pid, correlation id, start) in its own
//   bounded temporary storage to pair them.
//
// Errors: db::Error when a query fails. Stream errors are left in the stream's state.

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "fuselens/db/Reader.h"
#include "summary/Summary.h"

namespace fuselens::analyzer {

/// First synthetic pid of the GPU tracks; above Linux's largest pid (2^22).
inline constexpr std::int64_t kGpuPidBase = 1'000'000'000;
/// Most distinct strings (kernel, API and NVTX names) kept JSON-escaped between records.
inline constexpr std::size_t kNameCacheSize = 65536;

struct ChromeTraceOptions {
  NameKind kernel_names = NameKind::Demangled;  ///< the name shown on kernel slices
  std::string generator = "FuseLens";           ///< written to otherData.generator
  std::string window;  ///< written to otherData.window when set (Window::description)
  /// Only these processes (OS pids) and their GPU work; empty: every process of the capture.
  std::vector<std::int64_t> pids;
};

/// How many events of each kind were written.
struct ChromeTraceCounts {
  std::int64_t kernels = 0, memcpys = 0, memsets = 0;  ///< "X" on GPU tracks
  std::int64_t api_calls = 0, nvtx_ranges = 0;         ///< "X" on host threads
  std::int64_t nvtx_marks = 0;                         ///< "i"
  std::int64_t memory_samples = 0;                     ///< "C"
  std::int64_t flows = 0;                              ///< "s" (each with one "f"), "ac2g"
  std::int64_t flow_steps = 0;                         ///< "t"
  std::int64_t metadata = 0;                           ///< "M"
};

/// Writes the capture opened by `reader` to `out` as described above.
ChromeTraceCounts write_chrome_trace(std::ostream& out, const db::Reader& reader,
                                     const ChromeTraceOptions& options = {});

}  // namespace fuselens::analyzer
