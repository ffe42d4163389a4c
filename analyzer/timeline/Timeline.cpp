#include "timeline/Timeline.h"

#include <algorithm>
#include <future>
#include <iterator>
#include <limits>
#include <map>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "fuselens/db/ActivityCursors.h"
#include "fuselens/db/Strings.h"
#include "fuselens/db/TraceCursors.h"
#include "timeline/TimelineLod.h"

namespace fuselens::analyzer {
namespace {

/// Interns display names: string-table ids and literal names map to indexes of Timeline::names.
class Names {
 public:
  Names(const db::Reader& reader, std::vector<std::string>& out) : lookup_(reader), out_(out) {}

  std::uint32_t by_id(std::int64_t id) {
    if (auto it = ids_.find(id); it != ids_.end()) return it->second;
    std::string value("<unknown>");
    lookup_.with(id, [&](std::string text) { value = std::move(text); });
    const auto index = literal(value);
    ids_.emplace(id, index);
    return index;
  }

  std::uint32_t literal(const std::string& value) {
    if (auto it = literals_.find(value); it != literals_.end()) return it->second;
    const auto index = static_cast<std::uint32_t>(out_.size());
    out_.push_back(value);
    literals_.emplace(value, index);
    return index;
  }

 private:
  db::StringLookup lookup_;
  std::vector<std::string>& out_;
  std::unordered_map<std::int64_t, std::uint32_t> ids_;
  std::unordered_map<std::string, std::uint32_t> literals_;
};

std::uint32_t u32(std::int64_t v) { return static_cast<std::uint32_t>(v); }
std::int32_t i32(std::int64_t v) { return static_cast<std::int32_t>(v); }

void sort_row(TimelineRow& row) {
  const auto before = [](const TimelineItem& a, const TimelineItem& b) {
    return std::tie(a.start_ns, a.end_ns) < std::tie(b.start_ns, b.end_ns);
  };
  // Records usually arrive in time order already.
  if (!std::is_sorted(row.items.begin(), row.items.end(), before)) {
    std::sort(row.items.begin(), row.items.end(), before);
  }
  row.max_duration_ns = 0;
  row.busy_before.assign(1, 0);
  row.busy_before.reserve(row.items.size() + 1);
  for (const auto& item : row.items) {
    std::int64_t duration = 0, sum = 0;
    if (__builtin_sub_overflow(item.end_ns, item.start_ns, &duration) || duration < 0) duration = 0;
    row.max_duration_ns = std::max(row.max_duration_ns, duration);
    if (__builtin_add_overflow(row.busy_before.back(), duration, &sum)) {
      sum = std::numeric_limits<std::int64_t>::max();
    }
    row.busy_before.push_back(sum);
  }
}

TimelineRow& row_at(TimelineLane& lane, std::size_t depth) {
  if (lane.rows.size() <= depth) lane.rows.resize(depth + 1);
  return lane.rows[depth];
}

/// Lanes keyed by (device, stream, pid or 0) or (pid, tid, 0), created on first use.
class LaneSet {
 public:
  using Key = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>;
  TimelineLane& get(std::uint32_t a, std::uint32_t b, std::uint32_t c = 0) {
    auto [it, inserted] = index_.try_emplace({a, b, c}, lanes_.size());
    if (inserted) lanes_.emplace_back();
    return lanes_[it->second];
  }
  /// Lanes in key order, with their keys.
  std::vector<std::pair<Key, TimelineLane>> take() {
    std::vector<std::pair<Key, TimelineLane>> out;
    out.reserve(lanes_.size());
    for (const auto& [key, i] : index_) out.emplace_back(key, std::move(lanes_[i]));
    return out;
  }

 private:
  std::map<Key, std::size_t> index_;
  std::vector<TimelineLane> lanes_;
};

/// A window load (load_timeline_window): the stored level of detail gives the Gpu and Api lanes
/// and rows; only the items overlapping [t0, t1) are read. Null in Window* arguments: everything.
struct Window {
  const TimelineLod* lod = nullptr;
  std::int64_t t0 = 0, t1 = 0;
  /// t0 less `back` (an item that long starting then reaches t0), saturating.
  std::int64_t from(std::int64_t back) const {
    std::int64_t v = 0;
    return __builtin_sub_overflow(t0, back, &v) ? std::numeric_limits<std::int64_t>::min() : v;
  }
  bool keeps(std::int64_t start, std::int64_t end) const { return start < t1 && end >= t0; }
};

/// The filters of one window's reads of a Gpu lane (served by kernel_by_start for kernels).
db::ActivityFilter gpu_filter(const Window& w, const LodRow& row) {
  db::ActivityFilter f;
  f.pid = row.pid;
  f.device_id = row.device_id;
  f.stream_id = row.stream_id;
  f.t0_ns = w.from(row.max_duration_ns);
  f.t1_ns = w.t1;
  return f;
}

template <typename LaneOf>
void load_gpu_part(const db::Reader& reader, NameKind kind, Names& names, Timeline& t,
                   LaneOf&& lane_of, const db::ActivityFilter& filter, const Window* window) {
  auto kernels = db::kernel_details(reader, kind, filter);
  while (auto k = kernels.next()) {
    if (window && !window->keeps(k->start_ns, k->end_ns)) continue;
    TimelineLane& lane = lane_of(k->device_id, k->stream_id, k->pid);
    if (lane.rows.empty()) lane.pid = u32(k->pid);
    KernelDetail d;
    d.pid = u32(k->pid);
    d.correlation_id = u32(k->correlation_id);
    const std::int64_t grid[3] = {k->grid_x, k->grid_y, k->grid_z};
    const std::int64_t block[3] = {k->block_x, k->block_y, k->block_z};
    for (int i = 0; i < 3; ++i) {
      d.grid[i] = i32(grid[i]);
      d.block[i] = i32(block[i]);
    }
    d.registers_per_thread = u32(k->registers_per_thread);
    d.static_shared_bytes = i32(k->static_shared_bytes);
    d.dynamic_shared_bytes = i32(k->dynamic_shared_bytes);
    d.demangled_name = names.by_id(k->demangled_name_id);
    row_at(lane, 0).items.push_back({k->start_ns, k->end_ns, names.by_id(k->name_id),
                                     u32(static_cast<std::int64_t>(t.kernels.size())),
                                     TimelineItemKind::Kernel});
    t.kernels.push_back(d);
  }
  auto copies = db::copy_details(reader, filter);
  while (auto c = copies.next()) {
    if (window && !window->keeps(c->start_ns, c->end_ns)) continue;
    TimelineLane& lane = lane_of(c->device_id, c->stream_id, c->pid);
    if (lane.rows.empty()) lane.pid = u32(c->pid);
    const auto copy_kind = static_cast<int>(c->copy_kind);
    const auto name = names.literal(std::string("Memcpy ") +
                                    db::to_string(static_cast<db::MemcpyKind>(copy_kind)));
    row_at(lane, 0).items.push_back({c->start_ns, c->end_ns, name,
                                     u32(static_cast<std::int64_t>(t.copies.size())),
                                     TimelineItemKind::Memcpy});
    t.copies.push_back(
        {u32(c->pid), u32(c->correlation_id), c->bytes, copy_kind, c->is_async != 0});
  }
  auto sets = db::memset_details(reader, filter);
  const auto memset_name = names.literal("Memset");
  while (auto s = sets.next()) {
    if (window && !window->keeps(s->start_ns, s->end_ns)) continue;
    TimelineLane& lane = lane_of(s->device_id, s->stream_id, s->pid);
    if (lane.rows.empty()) lane.pid = u32(s->pid);
    row_at(lane, 0).items.push_back({s->start_ns, s->end_ns, memset_name,
                                     u32(static_cast<std::int64_t>(t.copies.size())),
                                     TimelineItemKind::Memset});
    t.copies.push_back({u32(s->pid), u32(s->correlation_id), s->bytes, -1, s->is_async != 0});
  }
}

/// Gpu lanes are per (device, stream, pid): processes sharing a device and stream keep their own
/// lanes.
void load_gpu(const db::Reader& reader, NameKind kind, Names& names, Timeline& t, LaneSet& gpu,
              const Window* window) {
  const auto lane_of = [&](std::int64_t device, std::int64_t stream, std::int64_t pid) -> auto& {
    return gpu.get(u32(device), u32(stream), u32(pid));
  };
  std::vector<db::ActivityFilter> filters(1);  // everything, or one per Gpu row of the window
  if (window) {
    filters.clear();
    for (const auto& row : window->lod->rows) {
      if (row.kind != LaneKind::Gpu) continue;
      TimelineLane& lane = lane_of(row.device_id, row.stream_id, row.pid);
      lane.pid = row.pid;
      row_at(lane, 0);
      if (window->t1 > window->t0) filters.push_back(gpu_filter(*window, row));
    }
  }
  for (const auto& filter : filters) load_gpu_part(reader, kind, names, t, lane_of, filter, window);
}

void load_nvtx(const db::Reader& reader, Names& names, Timeline& t, LaneSet& lanes) {
  auto ranges = db::nvtx_ranges(reader, /*with_style=*/false);
  std::unordered_map<std::int64_t, std::string> domains;
  while (auto r = ranges.next()) {
    TimelineLane& lane = lanes.get(u32(r->pid), u32(r->tid));
    lane.pid = u32(r->pid);
    lane.tid = u32(r->tid);
    NvtxDetail d;
    d.pid = lane.pid;
    d.tid = lane.tid;
    d.depth = u32(r->depth);
    d.unterminated = !r->end_ns;
    if (r->payload_kind != 0 && r->payload_real) d.payload = *r->payload_real;
    // Names as Summary's NVTX rows: "domain:text" when the domain is not empty.
    const auto domain_id = r->domain_id;
    auto dom = domains.find(domain_id);
    if (dom == domains.end()) {
      dom = domains.emplace(domain_id, t.names[names.by_id(domain_id)]).first;
    }
    const auto text = names.by_id(r->text_id);
    const auto name = dom->second.empty() ? text : names.literal(dom->second + ":" + t.names[text]);
    const auto end = d.unterminated ? std::numeric_limits<std::int64_t>::max() : *r->end_ns;
    row_at(lane, d.depth)
        .items.push_back({r->start_ns, end, name,
                          u32(static_cast<std::int64_t>(t.nvtx_ranges.size())),
                          TimelineItemKind::Nvtx});
    t.nvtx_ranges.push_back(d);
  }
}

void load_api_part(const db::Reader& reader, Names& names, Timeline& t, LaneSet& lanes,
                   const db::ActivityFilter& filter, const Window* window) {
  // Ordered per thread by start, longest first, so that a call's enclosing call comes first.
  auto calls = db::api_calls_by_thread(reader, filter);
  std::vector<std::int64_t> open_ends;  // ends of the calls enclosing the current one
  std::pair<std::int64_t, std::int64_t> thread{-1, -1};
  while (auto a = calls.next()) {
    const std::pair<std::int64_t, std::int64_t> key{a->pid, a->tid};
    if (key != thread) {
      open_ends.clear();
      thread = key;
    }
    const auto start = a->start_ns, end = a->end_ns;
    while (!open_ends.empty() && open_ends.back() <= start) open_ends.pop_back();
    const std::size_t depth = open_ends.size();
    open_ends.push_back(end);
    TimelineLane& lane = lanes.get(u32(key.first), u32(key.second));
    // A window keeps the rows of the level of detail: calls looked back at only to find the
    // depth of the others, and any deeper than the stored rows, are left out.
    if (window && (!window->keeps(start, end) || depth >= lane.rows.size())) continue;
    lane.pid = u32(key.first);
    lane.tid = u32(key.second);
    row_at(lane, depth)
        .items.push_back({start, end, names.by_id(a->name_id),
                          u32(static_cast<std::int64_t>(t.api_calls.size())),
                          TimelineItemKind::Api});
    t.api_calls.push_back({lane.pid, lane.tid, u32(a->correlation_id), u32(a->return_code),
                           a->domain == static_cast<int>(db::ApiDomain::Driver)});
  }
}

void load_api(const db::Reader& reader, Names& names, Timeline& t, LaneSet& lanes,
              const Window* window) {
  if (!window) {
    load_api_part(reader, names, t, lanes, {}, nullptr);
    return;
  }
  // Per thread: its rows, and the longest call of any depth (how far back to read).
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::int64_t> longest;
  for (const auto& row : window->lod->rows) {
    if (row.kind != LaneKind::Api) continue;
    TimelineLane& lane = lanes.get(row.pid, row.tid);
    lane.pid = row.pid;
    lane.tid = row.tid;
    row_at(lane, row.depth);
    auto& l = longest[{row.pid, row.tid}];
    l = std::max(l, row.max_duration_ns);
  }
  if (window->t1 <= window->t0) return;
  for (const auto& [thread, back] : longest) {
    db::ActivityFilter f;
    f.pid = thread.first;
    f.tid = thread.second;
    f.t0_ns = window->from(back);
    f.t1_ns = window->t1;
    load_api_part(reader, names, t, lanes, f, window);
  }
}

/// One device-memory event: +bytes (allocation) or -bytes (release) of a process on a device.
struct MemoryDelta {
  std::int64_t time_ns = 0;
  std::uint32_t device = 0, pid = 0;
  std::int64_t bytes = 0;
};

/// The device-memory events in time order (per process in (timestamp, id) order; events of
/// several processes at one timestamp by pid).
std::vector<MemoryDelta> load_memory_events(const db::Reader& reader) {
  auto events = db::device_memory_events(reader, db::MemoryOrder::ByProcessDevice);
  std::vector<MemoryDelta> out;
  while (auto m = events.next()) {
    const bool alloc = m->operation == static_cast<int>(db::MemoryOperation::Allocation);
    out.push_back({m->timestamp_ns, u32(m->device_id), u32(m->pid), alloc ? m->bytes : -m->bytes});
  }
  std::stable_sort(out.begin(), out.end(), [](const MemoryDelta& a, const MemoryDelta& b) {
    return a.time_ns < b.time_ns;
  });
  return out;
}

/// Device-memory tracks: per device the sum over processes of each one's running total, where a
/// process's total drops to zero at `process_end` (its memory is freed when it exits; CUPTI
/// records no release for it). A process without an end keeps its memory.
void build_memory_tracks(const std::vector<MemoryDelta>& events,
                         const std::map<std::uint32_t, std::int64_t>& process_end, Timeline& t) {
  // The ends as negative deltas, placed after the events at the same time.
  struct Step {
    std::int64_t time_ns;
    bool end;
    std::size_t index;  // into events, or the pid for an end
  };
  std::vector<Step> steps;
  steps.reserve(events.size() + process_end.size());
  for (std::size_t i = 0; i < events.size(); ++i) steps.push_back({events[i].time_ns, false, i});
  std::map<std::uint32_t, bool> has_memory;
  for (const auto& e : events) has_memory[e.pid] = true;
  for (const auto& [pid, end] : process_end) {
    if (has_memory.count(pid) != 0) steps.push_back({end, true, pid});
  }
  std::stable_sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) {
    return std::tie(a.time_ns, a.end) < std::tie(b.time_ns, b.end);
  });
  std::map<std::uint32_t, CounterTrack> tracks;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::int64_t> held;  // (device, pid) -> bytes
  std::map<std::uint32_t, bool> ended;
  const auto set = [](CounterTrack& track, std::int64_t time, std::int64_t value) {
    if (!track.points.empty() && track.points.back().time_ns == time) {
      track.points.back().value = value;
    } else {
      track.points.push_back({time, value});
    }
    track.max_value = std::max(track.max_value, value);
  };
  for (const Step& step : steps) {
    if (step.end) {
      const auto pid = static_cast<std::uint32_t>(step.index);
      ended[pid] = true;
      for (auto& [key, bytes] : held) {
        if (key.second != pid || bytes == 0) continue;
        CounterTrack& track = tracks[key.first];
        const std::int64_t last = track.points.empty() ? 0 : track.points.back().value;
        set(track, step.time_ns, last - bytes);
        bytes = 0;
      }
      continue;
    }
    const MemoryDelta& e = events[step.index];
    if (ended[e.pid]) continue;  // after its end: not counted (its end was estimated too early)
    CounterTrack& track = tracks[e.device];
    track.device_id = e.device;
    const std::int64_t last = track.points.empty() ? 0 : track.points.back().value;
    held[{e.device, e.pid}] += e.bytes;
    set(track, e.time_ns, last + e.bytes);
  }
  for (auto& [device, track] : tracks) {
    track.title = "GPU " + std::to_string(device) + " memory";
    t.counters.push_back(std::move(track));
  }
}

/// "CUDA API · thread 1234" with the thread's name when it has one: "... thread 1234 (python3)".
std::string thread_title(
    const char* kind, std::uint32_t pid, std::uint32_t tid,
    const std::map<std::pair<std::uint32_t, std::uint32_t>, std::string>& names) {
  std::string title = std::string(kind) + " · thread " + std::to_string(tid);
  const auto it = names.find({pid, tid});
  if (it != names.end() && !it->second.empty()) title += " (" + it->second + ")";
  return title;
}

/// Ranks and title prefixes of the lanes of a capture with ranks or several processes, then its
/// lane order: by rank (processes without one last, by pid), then kind, keeping the key order
/// within (a stable sort).
void group_by_process(const std::unordered_map<std::uint32_t, std::int32_t>& rank_of,
                      std::vector<TimelineLane>& lanes) {
  for (auto& lane : lanes) {
    const auto it = rank_of.find(lane.pid);
    lane.rank = it == rank_of.end() ? -1 : it->second;
    lane.title =
        (lane.rank >= 0 ? "rank " + std::to_string(lane.rank) : "pid " + std::to_string(lane.pid)) +
        " · " + lane.title;
  }
  const auto group = [](const TimelineLane& lane) {
    const std::int64_t rank = lane.rank >= 0 ? lane.rank : std::numeric_limits<std::int64_t>::max();
    return std::make_tuple(rank, lane.rank >= 0 ? 0U : lane.pid, static_cast<int>(lane.kind));
  };
  std::stable_sort(lanes.begin(), lanes.end(), [&](const TimelineLane& a, const TimelineLane& b) {
    return group(a) < group(b);
  });
}

}  // namespace

const char* to_string(TimelineItemKind kind) {
  // In TimelineItemKind's order; a value outside it reads as "item".
  constexpr const char* kNames[] = {"kernel", "memcpy", "memset", "API call", "NVTX range"};
  const auto i = static_cast<std::size_t>(kind);
  return i < std::size(kNames) ? kNames[i] : "item";
}

std::size_t TimelineLane::item_count() const {
  std::size_t n = 0;
  for (const auto& row : rows) n += row.items.size();
  return n;
}

std::size_t Timeline::item_count() const {
  std::size_t n = 0;
  for (const auto& lane : lanes) n += lane.item_count();
  return n;
}

namespace {

Timeline load_timeline_impl(const db::Reader& reader, NameKind name_kind, const Window* window) {
  Timeline t;
  t.path = reader.path();
  std::unordered_map<std::uint32_t, std::int32_t> rank_of;  // pid -> rank
  for (const auto& r : reader.process_ranks()) rank_of.emplace(r.pid, r.rank);
  t.has_ranks = !rank_of.empty();
  // API calls are read on a second connection in parallel with the GPU records (the two biggest
  // tables), each into its own names; the API names are appended after the others at the end.
  Timeline api_part;
  LaneSet gpu, nvtx, api;
  std::vector<MemoryDelta> memory;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::string> thread_names;
  auto api_done = std::async(std::launch::async, [&] {
    // A window reads few API calls through cursors, which check each row's times: the full
    // timestamp check of api_call (every row) is left to the readers that read them all.
    const db::Reader api_reader(reader.path(), window ? db::TimestampCheck::DeferLargeTables
                                                      : db::TimestampCheck::All);
    Names api_names(api_reader, api_part.names);
    load_api(api_reader, api_names, api_part, api, window);
  });
  try {
    Names names(reader, t.names);
    load_gpu(reader, name_kind, names, t, gpu, window);
    load_nvtx(reader, names, t, nvtx);
    memory = load_memory_events(reader);
    if (reader.has_table("thread")) {
      auto threads = db::threads(reader, /*ordered=*/false);
      while (auto th = threads.next()) {
        if (th->name) thread_names[{u32(th->pid), u32(th->tid)}] = *th->name;
      }
    }
  } catch (...) {
    api_done.wait();
    throw;
  }
  api_done.get();  // rethrows the API thread's db::Error
  const auto api_name_offset = static_cast<std::uint32_t>(t.names.size());
  for (auto& n : api_part.names) t.names.push_back(std::move(n));
  t.api_calls = std::move(api_part.api_calls);

  for (auto& [key, lane] : gpu.take()) {
    lane.kind = LaneKind::Gpu;
    lane.device_id = std::get<0>(key);
    lane.stream_id = std::get<1>(key);
    lane.pid = std::get<2>(key);
    lane.title =
        "GPU " + std::to_string(lane.device_id) + " · stream " + std::to_string(lane.stream_id);
    t.lanes.push_back(std::move(lane));
  }
  for (auto& [key, lane] : nvtx.take()) {
    lane.kind = LaneKind::Nvtx;
    lane.title = thread_title("NVTX", lane.pid, lane.tid, thread_names);
    t.lanes.push_back(std::move(lane));
  }
  for (auto& [key, lane] : api.take()) {
    for (auto& row : lane.rows)
      for (auto& item : row.items) item.name += api_name_offset;
    lane.kind = LaneKind::Api;
    lane.title = thread_title("CUDA API", lane.pid, lane.tid, thread_names);
    t.lanes.push_back(std::move(lane));
  }
  std::map<std::uint32_t, std::int64_t> process_end;  // pid -> end of its last item
  for (const auto& lane : t.lanes) {
    auto& last =
        process_end.try_emplace(lane.pid, std::numeric_limits<std::int64_t>::min()).first->second;
    for (const auto& row : lane.rows) {
      for (const auto& item : row.items) {
        if (item.end_ns != std::numeric_limits<std::int64_t>::max())
          last = std::max(last, item.end_ns);
        last = std::max(last, item.start_ns);
      }
    }
  }
  for (const auto& e : memory) {
    auto& last =
        process_end.try_emplace(e.pid, std::numeric_limits<std::int64_t>::min()).first->second;
    last = std::max(last, e.time_ns);
  }
  if (window) {  // the items not loaded: as the whole capture's, from the level of detail
    for (const auto& row : window->lod->rows) {
      auto& last =
          process_end.try_emplace(row.pid, std::numeric_limits<std::int64_t>::min()).first->second;
      if (row.item_count > 0) last = std::max(last, row.last_ns);
    }
  }
  t.several_processes = process_end.size() > 1;
  if (t.has_ranks || t.several_processes) group_by_process(rank_of, t.lanes);

  // Span, then close unterminated ranges at its end.
  std::int64_t begin = std::numeric_limits<std::int64_t>::max();
  std::int64_t end = std::numeric_limits<std::int64_t>::min();
  for (const auto& lane : t.lanes) {
    for (const auto& row : lane.rows) {
      for (const auto& item : row.items) {
        begin = std::min(begin, item.start_ns);
        if (item.end_ns != std::numeric_limits<std::int64_t>::max()) {
          end = std::max(end, item.end_ns);
        }
        end = std::max(end, item.start_ns);
      }
    }
  }
  for (const auto& e : memory) {
    begin = std::min(begin, e.time_ns);
    end = std::max(end, e.time_ns);
  }
  if (window) {
    for (const auto& row : window->lod->rows) {
      if (row.item_count == 0) continue;
      begin = std::min(begin, row.first_ns);
      end = std::max(end, row.last_ns);
    }
  }
  if (begin > end) begin = end = 0;
  // A process's memory is dropped when it ends: its exit (process.end_utc_ns on its CUPTI clock)
  // when recorded and not before its last record, else its last record. Ends at or after the end
  // of the span change nothing drawn and are left out.
  for (const auto& p : reader.processes()) {
    const auto it = process_end.find(p.pid);
    if (it == process_end.end() || !p.end_utc_ns ||
        *p.end_utc_ns > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      continue;
    }
    std::int64_t exit_ns = 0;
    if (!__builtin_sub_overflow(static_cast<std::int64_t>(*p.end_utc_ns), p.clock_offset_ns,
                                &exit_ns)) {
      it->second = std::max(it->second, exit_ns);
    }
  }
  std::map<std::uint32_t, std::int64_t> ends_inside;
  for (const auto& [pid, when] : process_end) {
    if (when < end) ends_inside[pid] = when;
  }
  build_memory_tracks(memory, ends_inside, t);
  t.begin_ns = begin;
  t.end_ns = end;
  for (auto& lane : t.lanes) {
    for (auto& row : lane.rows) {
      for (auto& item : row.items) item.end_ns = std::min(item.end_ns, end);
      sort_row(row);
    }
  }

  for (std::uint32_t l = 0; l < t.lanes.size(); ++l) {
    const auto& lane = t.lanes[l];
    if (lane.kind != LaneKind::Api) continue;
    for (std::uint32_t r = 0; r < lane.rows.size(); ++r) {
      const auto& items = lane.rows[r].items;
      for (std::uint32_t i = 0; i < items.size(); ++i) {
        const auto& d = t.api_calls[items[i].detail];
        t.calls_by_correlation.push_back({d.pid, d.correlation_id, l, r, i});
      }
    }
  }
  std::sort(t.calls_by_correlation.begin(), t.calls_by_correlation.end(),
            [](const CallRef& a, const CallRef& b) {
              return std::tie(a.pid, a.correlation_id, a.row) <
                     std::tie(b.pid, b.correlation_id, b.row);
            });
  return t;
}

}  // namespace

Timeline load_timeline(const db::Reader& reader, NameKind name_kind) {
  return load_timeline_impl(reader, name_kind, nullptr);
}

Timeline load_timeline_window(const db::Reader& reader, const TimelineLod& lod, std::int64_t t0,
                              std::int64_t t1, NameKind name_kind) {
  const Window window{&lod, t0, t1};
  return load_timeline_impl(reader, name_kind, &window);
}

std::size_t first_visible(const TimelineRow& row, std::int64_t t0) {
  const auto& items = row.items;
  const std::int64_t back = t0 - row.max_duration_ns;
  auto it = std::lower_bound(items.begin(), items.end(), back,
                             [](const TimelineItem& a, std::int64_t t) { return a.start_ns < t; });
  while (it != items.end() && it->end_ns < t0 && it->start_ns < t0) ++it;
  return static_cast<std::size_t>(it - items.begin());
}

constexpr std::size_t kBusyLookBack = 8;

std::int64_t busy_ns(const TimelineRow& row, std::int64_t t0, std::int64_t t1) {
  const auto& items = row.items;
  if (t1 <= t0 || items.empty() || row.busy_before.size() != items.size() + 1) return 0;
  const auto overlap = [&](const TimelineItem& item) {
    const std::int64_t a = std::max(item.start_ns, t0), b = std::min(item.end_ns, t1);
    return b > a ? b - a : 0;
  };
  std::int64_t busy = 0;
  // Items starting before t0 that reach into the window: in a row without overlaps only the one
  // just before; Gpu rows with overlapping items look back a few more.
  const std::size_t first = first_starting_at(row, 0, t0);
  for (std::size_t k = first, seen = 0; k-- > 0 && seen < kBusyLookBack; ++seen) {
    busy += overlap(items[k]);
  }
  // Items starting inside: their durations, less what reaches past t1 (in a row without
  // overlaps only the last one can).
  const std::size_t last = first_starting_at(row, first, t1);
  if (last > first) {
    busy += row.busy_before[last] - row.busy_before[first];
    for (std::size_t k = last; k-- > first && items[k].end_ns > t1;) {
      busy -= items[k].end_ns - std::max(items[k].start_ns, t1);
    }
  }
  return std::clamp<std::int64_t>(busy, 0, std::numeric_limits<std::int64_t>::max());
}

std::size_t first_starting_at(const TimelineRow& row, std::size_t from, std::int64_t t) {
  const auto& items = row.items;
  const auto begin = items.begin() + static_cast<std::ptrdiff_t>(std::min(from, items.size()));
  auto it = std::lower_bound(begin, items.end(), t,
                             [](const TimelineItem& a, std::int64_t v) { return a.start_ns < v; });
  return static_cast<std::size_t>(it - items.begin());
}

LaunchContext launch_context(const Timeline& t, const TimelineItem& item) {
  LaunchContext context;
  std::uint32_t pid = 0, correlation = 0;
  switch (item.kind) {
    case TimelineItemKind::Kernel:
      pid = t.kernels[item.detail].pid;
      correlation = t.kernels[item.detail].correlation_id;
      break;
    case TimelineItemKind::Memcpy:
    case TimelineItemKind::Memset:
      pid = t.copies[item.detail].pid;
      correlation = t.copies[item.detail].correlation_id;
      break;
    default:
      return context;
  }
  const auto& calls = t.calls_by_correlation;
  auto it =
      std::lower_bound(calls.begin(), calls.end(), std::make_pair(pid, correlation),
                       [](const CallRef& c, const std::pair<std::uint32_t, std::uint32_t>& k) {
                         return std::tie(c.pid, c.correlation_id) < std::tie(k.first, k.second);
                       });
  if (it == calls.end() || it->pid != pid || it->correlation_id != correlation) return context;
  const TimelineItem& call = t.lanes[it->lane].rows[it->row].items[it->index];
  context.call = &call;
  context.tid = t.lanes[it->lane].tid;
  for (const auto& lane : t.lanes) {
    if (lane.kind != LaneKind::Nvtx || lane.pid != pid || lane.tid != context.tid) continue;
    for (const auto& row : lane.rows) {
      // Ranges of one depth do not overlap: the last one starting at or before the call.
      const auto n = first_starting_at(row, 0, call.start_ns + 1);
      if (n == 0) continue;
      const TimelineItem& range = row.items[n - 1];
      if (range.start_ns <= call.start_ns && call.start_ns <= range.end_ns) {
        context.ranges.push_back(&range);
      }
    }
  }
  return context;
}

}  // namespace fuselens::analyzer
