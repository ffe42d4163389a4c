#pragma once
// TimelineLod: the timeline's level of detail, stored in the capture (schema version 10,
// db/TimelineLodStore.h), so that prof-gui opens a ten-million-kernel capture without loading
// every kernel and launch call: zoomed out it draws each row's busy coverage from the stored
// buckets, zoomed in it loads only the items of the visible window (load_timeline_window, through
// the start-time indexes kernel_by_start and api_by_thread).
//
// What is stored (the way Nsight Systems and Perfetto draw a zoomed-out timeline): per row of a
// Gpu lane (device, stream, pid: kernels, memcpys, memsets) and of an Api lane (pid, tid, at each
// nesting depth, assigned as load_timeline does), at kLodLevels resolutions, the ns the row's
// items cover in each bucket (each item's overlap with it, summed: analyzer::busy_ns's definition)
// and the items starting in it. Level 0 has buckets of `finest` ns = max(kLodMinBucketNs,
// ceil(span / B)) from the capture's first timestamp, B = clamp(items / 16, kLodMinBuckets,
// kLodFinestBuckets); level L has buckets of
// finest * 8^L. NVTX lanes and device-memory counters are small and always loaded from the rows.
//
// Trust: the stored rows are a cache. load_timeline_lod uses them only when the capture has
// both tables (version 10's, or a version-9 capture's that storing added) as tables,
// timeline_lod_source's largest ids equal the tables' (rows are only ever appended), and every row
// is plausible: integers where integers belong, blobs of bucket_count int64, 0 <= starts, 0 <=
// busy, every level of a row present with buckets of finest * 8^L from one begin_ns, bucket counts
// covering [begin, last_ns] and at most kLodFinestBuckets + 1, counts adding up to item_count.
// Otherwise it says why in one line and the caller loads the whole timeline (load_timeline) as
// before.
//
// Units: ns on CUPTI's clock. Errors: db::Error from SQLite (store, window loads).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fuselens/db/Reader.h"
#include "store/PreparedStore.h"
#include "timeline/Timeline.h"

namespace fuselens::analyzer {

inline constexpr int kLodLevels = 3;                        ///< resolutions per row
inline constexpr std::int64_t kLodFinestBuckets = 1 << 18;  ///< at most, level 0
inline constexpr std::int64_t kLodMinBucketNs = 1000;       ///< level 0 is never finer
inline constexpr std::int64_t kLodLevelFactor = 8;          ///< buckets of level L+1 / L
/// Level 0 has one bucket per 16 items (at least kLodMinBuckets, at most kLodFinestBuckets), so
/// the stored size follows the items (about one byte per item and row): 47.8 MB for ten million
/// kernels and launch calls in 10 rows.
inline constexpr std::int64_t kLodMinBuckets = 4096;
/// Below this many kernels, copies, memsets and API calls nothing is stored (prof-gui loads a
/// timeline that small whole in well under a second of CPU): the tables hold no rows.
inline constexpr std::int64_t kLodMinItems = 200'000;

/// One resolution of one row: prefix sums over its buckets (size buckets + 1), so the busy time
/// or the items of any run of buckets cost two lookups.
struct LodLevel {
  std::int64_t bucket_ns = 1;
  std::vector<std::int64_t> busy_before;    ///< busy_before[i]: busy ns of buckets [0, i)
  std::vector<std::int64_t> starts_before;  ///< items starting in buckets [0, i)
  std::size_t buckets() const { return busy_before.empty() ? 0 : busy_before.size() - 1; }
};

/// The stored level of detail of one row of a Gpu or Api lane.
struct LodRow {
  LaneKind kind = LaneKind::Gpu;
  std::uint32_t device_id = 0, stream_id = 0;  ///< Gpu rows
  std::uint32_t pid = 0, tid = 0, depth = 0;   ///< tid and depth: Api rows
  std::int64_t begin_ns = 0;  ///< start of bucket 0 of every level (the capture's first time)
  std::int64_t item_count = 0, first_ns = 0, last_ns = 0, max_duration_ns = 0;
  std::vector<LodLevel> levels;  ///< finest first, kLodLevels of them
};

struct TimelineLod {
  std::int64_t begin_ns = 0;  ///< start of bucket 0 of every level
  std::vector<LodRow> rows;   ///< by (kind, device, stream, pid, tid, depth)
  std::int64_t item_count() const;
};

/// Computes the level of detail from the rows of the capture in `reader` (one scan of the GPU
/// tables, one of api_call in thread order; O(items + buckets) time, about 16 bytes per bucket
/// of memory per row). Buckets start at the timeline's begin_ns (load_timeline's span).
TimelineLod compute_timeline_lod(const db::Reader& reader);

/// Computes the level of detail of the capture at `path` and stores it, replacing any stored
/// before (a version-9 capture gets the tables and version 10); with fewer than `min_items`
/// items it stores none (the tables, empty). Throws db::Error when the file cannot be read or
/// written, or is older than version 9 (left as it was).
void store_timeline_lod(const std::string& path, std::int64_t min_items = kLodMinItems);
/// The same through `reader`, whose connection must be ReadWrite (prof-run's finalization).
void store_timeline_lod(db::Reader& reader, std::int64_t min_items = kLodMinItems);
/// Computes what store_timeline_lod stores through a reader of its own on the capture at `path`,
/// for another thread to store (PreparedStore.h). Throws db::Error when it cannot be read.
PreparedStore prepare_timeline_lod(const std::string& path, std::int64_t min_items = kLodMinItems);
/// The same on `reader` (read only here; see prepare_summary_aggregates' reader overload).
PreparedStore prepare_timeline_lod(db::Reader& reader, std::int64_t min_items = kLodMinItems);

/// True when the capture has the level-of-detail tables, whatever its schema version (cheap;
/// whether their rows are trusted is load_timeline_lod's question).
bool has_timeline_lod(const db::Reader& reader);

/// The stored level of detail, or nullopt with `why` set to one line ("no stored level of
/// detail (schema version 9, no timeline_lod tables)", "stale: kernel has rows added after it was
/// stored", "timeline_lod row 3: busy is not a blob", ...). Never throws for a damaged table;
/// db::Error only when SQLite itself fails.
std::optional<TimelineLod> load_timeline_lod(const db::Reader& reader, std::string* why = nullptr);

/// Busy ns of [t0, t1) in `row`, from the coarsest level whose buckets are at most `resolution_ns`
/// wide (the finest when none is): whole buckets exactly, the two edge buckets in proportion to
/// their overlap. Equals busy_ns over the rows' items when t0 and t1 fall on bucket edges of the
/// level used.
std::int64_t lod_busy_ns(const LodRow& row, std::int64_t t0, std::int64_t t1,
                         std::int64_t resolution_ns);
/// Items of `row` starting in the finest buckets that overlap [t0, t1): an upper bound of those
/// starting in it, exact on bucket edges.
std::int64_t lod_items(const LodRow& row, std::int64_t t0, std::int64_t t1);

/// The timeline of the window [t0, t1) as load_timeline would give it, but with only the Gpu and
/// Api items that overlap it (read through kernel_by_start and api_by_thread, each row looked back
/// by its longest item); NVTX lanes, counters and the span (begin_ns, end_ns) are the whole
/// capture's, and every lane and row of `lod` is present (empty when nothing falls in the window),
/// so the lane and row indexes are the same for every window. t1 <= t0: no Gpu or Api items (the
/// lanes alone). Errors: db::Error as load_timeline.
Timeline load_timeline_window(const db::Reader& reader, const TimelineLod& lod, std::int64_t t0,
                              std::int64_t t1, NameKind names = NameKind::Short);

}  // namespace fuselens::analyzer
