#pragma once
// ExportChromeTrace: a capture as Chrome Trace Event JSON ("JSON Object Format" of Google's
// Trace Event Format document), which Perfetto (ui.perfetto.dev) and chrome://tracing open.
//
// Layout (docs/formats.md has every field):
//   {"displayTimeUnit": "ns", "otherData": {...}, "traceEvents": [...]}
// Tracks: each host process is its OS pid with its OS threads as tids (metadata events
//   "process_name", "thread_name", "process_sort_index"). Each GPU seen by a process is a
//   synthetic process "GPU <device>" with pid kGpuPidBase + 1000 * <index of the process in
//   the capture's process table> + <device id>, and each stream a thread "stream <id>" whose
//   tid is the CUDA stream id.
// Events: kernels (cat "kernel"), copies ("memcpy") and memsets ("memset") as complete events
//   ("ph":"X") on their stream; CUDA API calls ("cuda_api") and NVTX ranges ("nvtx") as complete
//   events on their host thread; NVTX marks as thread-scoped instant events ("ph":"i", cat
//   "nvtx_mark"); device memory in use as a counter ("ph":"C", name "Device memory", cat
//   "memory") of the GPU process, one sample per memory event of kind Device. Each launching API
//   call is tied to its GPU work by a flow ("ph":"s" in the call, then "t" steps and a final
//   "f" with "bp":"e" in the GPU work of the same pid and correlation id, in start order; cat
//   and name "launch"; "id" = the correlation id, plus 2^32 * the process index when the
//   capture has several processes). The launching call is the earliest API call with that pid
//   and correlation id; flow points sit at the middle of the call and of the GPU work, so each
//   binds to its own slice. Correlation id 0 (none) gets no flow.
// Time: "ts" and "dur" are microseconds with three decimals (exact nanoseconds) since the
//   earliest timestamp of capture_time_range (CUPTI clock); otherData records that origin in
//   CUPTI ns and in UTC ns (origin + the first process's clock_offset_ns). Negative durations
//   (corrupt records) are written as 0; an NVTX range that never ended lasts until the end of
//   the capture's time range and has "unterminated": true in its args.
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
};

/// How many events of each kind were written.
struct ChromeTraceCounts {
  std::int64_t kernels = 0, memcpys = 0, memsets = 0;  ///< "X" on GPU tracks
  std::int64_t api_calls = 0, nvtx_ranges = 0;         ///< "X" on host threads
  std::int64_t nvtx_marks = 0;                         ///< "i"
  std::int64_t memory_samples = 0;                     ///< "C"
  std::int64_t flows = 0;                              ///< "s" (each with one "f")
  std::int64_t flow_steps = 0;                         ///< "t"
  std::int64_t metadata = 0;                           ///< "M"
};

/// Writes the capture opened by `reader` to `out` as described above.
ChromeTraceCounts write_chrome_trace(std::ostream& out, const db::Reader& reader,
                                     const ChromeTraceOptions& options = {});

}  // namespace fuselens::analyzer
