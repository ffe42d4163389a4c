#pragma once
// Timeline: every timed record of one capture laid out in lanes, as plain sorted vectors, for
// timeline views (prof-gui's Timeline page) and anything else that draws or scans time.
//
// Lanes, in this order:
//   Gpu   one per (device, stream, pid): kernels, memcpys and memsets of that stream and process
//         (processes that share a device and stream, e.g. spawned workers, keep their own lanes);
//   Nvtx  one per (pid, tid) with NVTX ranges: ranges at their nesting depth (schema depth);
//   Api   one per (pid, tid) with API calls: runtime and driver calls at their nesting depth
//         (a driver call inside a runtime call of the same thread is one level deeper).
// Nvtx and Api titles name the thread by id and, when the thread table has it, by name:
// "CUDA API · thread 1234 (pt_autograd_0)".
// Several processes (items of more than one pid) or ranks (schema 8's process_rank rows, written
// for processes a distributed launcher started): lanes are grouped by process: by rank (rank 0's
// Gpu lanes by (device, stream), its Nvtx lanes, its Api lanes, then rank 1's, and so on), then
// the processes without a rank by pid (a launcher's own CUDA process, spawned workers), each in
// the order above. Titles then start with "rank R · " ("rank 1 · GPU 1 · stream 7", "rank 1 ·
// NVTX · thread 1234"), or "pid P · " for a process without a rank ("pid 810 · GPU 0 · stream
// 7"). Captures of one process keep the plain titles and order.
// Within a lane, items are split into rows by depth (Gpu lanes have one row: overlapping items
// of one stream, rare, share it). Each row is sorted by (start_ns, end_ns) and holds no
// overlapping items except in Gpu rows, so a view finds the items of [t0, t1] with a binary
// search and can merge runs of items narrower than a pixel (level of detail) with more binary
// searches, without scanning the row: see first_visible().
// Counters: one device-memory track per device with Device-kind memory events: per process the
// running sum in (timestamp, row id) order of +bytes per allocation, -bytes per release, and the
// track the sum over the processes alive (issue 22): a process's memory is dropped when it ends,
// at its exit (process.end_utc_ns - clock_offset_ns) when recorded and not before its last
// record, else at its last record (the end of its last item or memory event); CUPTI records no
// release for what a process still held at exit. Ends at or after the span's end are not drawn.
// For one process that never ends inside the span this is Summary's DeviceMemoryRow sum (whose
// peak_bytes then equals the track's max_value).
//
// Units: every *_ns is nanoseconds on CUPTI's timestamp clock (db/schema.sql); bytes are bytes.
// Unterminated NVTX ranges (NULL end_ns) end at the end of the capture's time span.
// Errors: db::Error when a query fails (a corrupt capture).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fuselens/db/Reader.h"
#include "summary/Summary.h"

namespace fuselens::analyzer {

enum class TimelineItemKind : std::uint8_t { Kernel, Memcpy, Memset, Api, Nvtx };

/// "kernel", "memcpy", "memset", "API call", "NVTX range".
const char* to_string(TimelineItemKind kind);

/// One bar. 32 bytes, so a million kernels take 32 MB.
struct TimelineItem {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::uint32_t name = 0;    ///< index into Timeline::names
  std::uint32_t detail = 0;  ///< index into the Timeline vector of its kind (kernels, ...)
  TimelineItemKind kind = TimelineItemKind::Kernel;
};

/// Items of one depth of a lane, sorted by (start_ns, end_ns).
struct TimelineRow {
  std::vector<TimelineItem> items;
  std::int64_t max_duration_ns = 0;  ///< longest item: how far back an item can reach t0
  /// busy_before[i]: summed durations (end_ns - start_ns, saturating) of items[0..i); size
  /// items.size() + 1. The time covered by a run of items costs two lookups (busy_ns).
  std::vector<std::int64_t> busy_before;
};

/// Nanoseconds of [t0, t1) covered by the items of `row` (the sum of each item's overlap with
/// it; overlapping items, which only Gpu rows may hold, each count, and of the items starting
/// before t0 only the last 8 are looked at). Exact and O(log n) in a row whose items do not
/// overlap. A view draws a pixel column of merged items by busy_ns / its width: the
/// busy fraction (Nsight Systems' coverage drawing of a zoomed-out timeline).
std::int64_t busy_ns(const TimelineRow& row, std::int64_t t0, std::int64_t t1);

enum class LaneKind : std::uint8_t { Gpu, Nvtx, Api };

struct TimelineLane {
  LaneKind kind = LaneKind::Gpu;
  /// "GPU 0 · stream 7", "NVTX · thread 1234", "CUDA API · thread 1234"; with ranks
  /// "rank 1 · GPU 1 · stream 7" (see the top of this header).
  std::string title;
  std::uint32_t device_id = 0, stream_id = 0;  ///< Gpu lanes
  std::uint32_t pid = 0, tid = 0;  ///< the lane's process; Nvtx and Api lanes: its thread too
  std::int32_t rank = -1;          ///< rank of `pid` (process_rank); -1 when it has none
  std::vector<TimelineRow> rows;   ///< by depth, 0 = outermost
  std::size_t item_count() const;
};

/// Details of the records behind items, by TimelineItem::detail.
struct KernelDetail {
  std::uint32_t pid = 0, correlation_id = 0;
  std::int32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  std::uint32_t registers_per_thread = 0;
  std::int32_t static_shared_bytes = 0, dynamic_shared_bytes = 0;
  std::uint32_t demangled_name = 0;  ///< index into Timeline::names
};
struct CopyDetail {  ///< memcpy or memset
  std::uint32_t pid = 0, correlation_id = 0;
  std::int64_t bytes = 0;
  int copy_kind = 0;  ///< db::MemcpyKind for memcpy; -1 for memset
  bool is_async = false;
};
struct ApiDetail {
  std::uint32_t pid = 0, tid = 0, correlation_id = 0, return_code = 0;
  bool driver = false;
};
struct NvtxDetail {
  std::uint32_t pid = 0, tid = 0, depth = 0;
  bool unterminated = false;
  std::optional<double> payload;
};

struct CounterPoint {
  std::int64_t time_ns = 0;
  std::int64_t value = 0;  ///< value from this time until the next point
};

/// A step function; points sorted by time.
struct CounterTrack {
  std::string title;  ///< "GPU 0 memory"
  std::uint32_t device_id = 0;
  std::vector<CounterPoint> points;
  std::int64_t max_value = 0;
};

/// Where an API call sits, for lookups by (pid, correlation id).
struct CallRef {
  std::uint32_t pid = 0, correlation_id = 0;
  std::uint32_t lane = 0, row = 0, index = 0;  ///< lanes[lane].rows[row].items[index]
};

struct Timeline {
  std::string path;
  std::int64_t begin_ns = 0, end_ns = 0;  ///< span of every item and counter point
  std::vector<std::string> names;         ///< interned display names
  /// Gpu lanes by (device, stream, pid), then Nvtx, then Api; with ranks or several processes
  /// grouped by process first (see the top of this header).
  std::vector<TimelineLane> lanes;
  bool has_ranks = false;              ///< the capture has process_rank rows: lanes carry ranks
  bool several_processes = false;      ///< items of more than one pid: lanes grouped by process
  std::vector<CounterTrack> counters;  ///< by device id
  std::vector<KernelDetail> kernels;
  std::vector<CopyDetail> copies;
  std::vector<ApiDetail> api_calls;
  std::vector<NvtxDetail> nvtx_ranges;
  /// Every API call, sorted by (pid, correlation_id, depth): the outermost call of a
  /// correlation id comes first.
  std::vector<CallRef> calls_by_correlation;

  std::size_t item_count() const;
};

/// Reads kernels, memcpys, memsets, API calls, NVTX ranges, device-memory events and the
/// ranks of processes (process_rank, schema 8; none before). Kernel names are in `names` form
/// (Short by default, as Nsight Systems' timeline).
/// O(n log n) time, about 40 bytes per record.
Timeline load_timeline(const db::Reader& reader, NameKind names = NameKind::Short);

/// Index of the first item of `row` that may overlap [t0, +inf): items before it end before
/// t0 (approximately: it backs off by the row's longest item, then skips those ending before).
std::size_t first_visible(const TimelineRow& row, std::int64_t t0);

/// Index of the first item of `row` at or after `from` whose start_ns >= t.
std::size_t first_starting_at(const TimelineRow& row, std::size_t from, std::int64_t t);

/// Where a GPU item came from: its launching API call (same pid and correlation id, the
/// outermost one when a runtime call and its driver call share it) and the NVTX ranges open on
/// that thread when the call started, outermost first.
struct LaunchContext {
  const TimelineItem* call = nullptr;
  std::uint32_t tid = 0;
  std::vector<const TimelineItem*> ranges;
};

/// The launch context of a Gpu item (kernel, memcpy, memset); empty for other kinds or when no
/// call matches. O(lanes + log n).
LaunchContext launch_context(const Timeline& timeline, const TimelineItem& item);

}  // namespace fuselens::analyzer
