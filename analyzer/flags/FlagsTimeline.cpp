// stream_idle (HTA idle time breakdown), gpu_gaps and gpu_utilization (Nsight Systems rules).
// Busy time is any GPU operation: kernels, copies and memsets.
#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "flags/FlagsRules.h"

namespace fuselens::analyzer {
namespace {

struct Interval {
  std::int64_t start, end;
  std::size_t op;  // index in trace.ops of the operation that opens the interval
};

/// Union of the intervals of `ops` (indexes into trace.ops, in start order).
std::vector<Interval> busy_union(const FlagsTrace& trace, const std::vector<std::size_t>& ops) {
  std::vector<Interval> merged;
  for (const std::size_t i : ops) {
    const TraceOp& op = trace.ops[i];
    if (!merged.empty() && op.start_ns <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, op.end_ns);
    } else {
      merged.push_back({op.start_ns, op.end_ns, i});
    }
  }
  return merged;
}

std::string at(const FlagsTrace& trace, std::int64_t t) {
  // In double: a damaged capture's timestamps may be far apart enough to overflow int64 (fuzz/).
  return "+" + flags_duration(static_cast<double>(t) - static_cast<double>(trace.origin_ns));
}

// The stream_idle site of an operation (SiteCache::stream): its stream, and its launch thread
// and range when it was launched inside one (`outside`: the stream's site for work outside or
// between ranges). No call path: the idle of a range's stream spans the launches of many call
// sites.

void stream_idle(const FlagsTrace& trace, const FlagsConfig& config, std::vector<Hit>& hits) {
  const std::int64_t kernel_wait_ns = config.get_ns("stream_idle.kernel_wait_ns");
  const double min_percent = config.get("stream_idle.min_idle_percent");
  const std::int64_t startup_end = config.startup_end_ns();  // idle before it is start-up
  using StreamKey = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>;
  std::map<StreamKey, std::vector<std::size_t>> streams;
  for (std::size_t i = 0; i < trace.ops.size(); ++i) {
    const TraceOp& op = trace.ops[i];
    streams[{op.pid, op.device_id, op.context_id, op.stream_id}].push_back(i);
  }
  HitAggregator idle("stream_idle");
  SiteCache sites(trace);
  // Span (first start, last end) of each (pid, device, stream): the denominator of the idle
  // share outside or between ranges.
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>,
           std::pair<std::int64_t, std::int64_t>>
      spans;
  for (const auto& [key, ops] : streams) {
    std::int64_t prev_end = 0;
    int prev_range = -1;
    for (std::size_t n = 0; n < ops.size(); ++n) {
      const TraceOp& op = trace.ops[ops[n]];
      const int range = trace.launch_range_index(op);
      // A gap belongs to the launch site of the operation after it when both operations were
      // launched in the same range instance; gaps between ranges go to the stream's "outside"
      // site (no range), so that setup between benchmark cases is not charged to a case.
      const bool same_site = n > 0 && range == prev_range && range >= 0;
      const HitSite& own = sites.stream(op, /*outside=*/false);
      const HitSite& site = same_site || n == 0 ? own : sites.stream(op, /*outside=*/true);
      const std::int64_t gap_start = std::max(prev_end, startup_end);
      const std::int64_t gap = n > 0 ? std::max<std::int64_t>(0, op.start_ns - gap_start) : 0;
      if (op.start_ns >= startup_end) {  // start-up work is not a site's busy time
        idle.add_cached(own, 0, op.start_ns)
            .add_metric("busy_ns", static_cast<double>(op.duration_ns()));
      }
      if (gap > 0) {
        const TraceCall* call = trace.launch_call(op);
        const char* category = "other_ns";
        if (call != nullptr && call->start_ns > prev_end) {
          category = "host_wait_ns";
        } else if (gap < kernel_wait_ns) {
          category = "kernel_wait_ns";
        }
        Hit& h = idle.add_cached(site, gap, gap_start);
        h.add_metric(category, static_cast<double>(gap));
        h.add_metric("gaps", 1);
      }
      prev_end = n > 0 ? std::max(prev_end, op.end_ns) : op.end_ns;
      prev_range = range;
    }
    const std::int64_t first =
        std::min(prev_end, std::max(trace.ops[ops.front()].start_ns, startup_end));
    auto [span, inserted] =
        spans.try_emplace({std::get<0>(key), std::get<1>(key), std::get<3>(key)}, first, prev_end);
    if (!inserted) {
      span->second.first = std::min(span->second.first, first);
      span->second.second = std::max(span->second.second, prev_end);
    }
  }
  for (Hit& h : idle.take()) {
    if (h.time_ns <= 0) continue;
    const double gap_total = static_cast<double>(h.time_ns);
    // In a range: idle / (busy + idle) of that range's work on the stream. Outside ranges:
    // idle / the stream's span, as the work around those gaps belongs to the ranges.
    double total = h.metric("busy_ns") + gap_total;
    if (h.range.empty()) {
      const auto& span = spans[{*h.pid, *h.device_id, *h.stream_id}];
      total = static_cast<double>(span.second - span.first);
    }
    const double percent = total > 0 ? 100.0 * gap_total / total : 0.0;
    if (percent < min_percent) continue;
    h.count = static_cast<std::int64_t>(h.metric("gaps"));
    const double host = h.metric("host_wait_ns"), kernel = h.metric("kernel_wait_ns"),
                 other = h.metric("other_ns");
    h.set_metric("idle_percent", percent);
    h.detail = fmt::format(
        "stream idle {} of {} ({:.1f} %) in {} gaps{}: host wait {}, kernel wait {}, other {}",
        flags_duration(gap_total), flags_duration(total), percent, h.count,
        h.range.empty() ? " outside or between NVTX ranges (share of the stream's span)" : "",
        flags_duration(host), flags_duration(kernel), flags_duration(other));
    if (host >= kernel && host >= other) {
      h.advice =
          "Host wait: the CPU did not enqueue work fast enough. Fuse kernels, batch more work "
          "per launch, use CUDA Graphs, or move CPU work off the launching thread.";
    } else if (kernel >= other) {
      h.advice = "Kernel wait: back-to-back launch overhead; CUDA Graphs or fusion remove it.";
    } else {
      h.advice =
          "Other: launches were queued in time, yet the stream idled: cross-stream dependencies "
          "(events), synchronization, or the GPU-side launch latency of many small kernels "
          "(fuse them or use CUDA Graphs).";
    }
    hits.push_back(std::move(h));
  }
}

/// Operations per (pid, device), in start order.
std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::size_t>> device_ops(
    const FlagsTrace& trace) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::size_t>> devices;
  for (std::size_t i = 0; i < trace.ops.size(); ++i) {
    devices[{trace.ops[i].pid, trace.ops[i].device_id}].push_back(i);
  }
  return devices;
}

void gpu_gaps(const FlagsTrace& trace, const FlagsConfig& config, std::vector<Hit>& hits) {
  const std::int64_t min_gap = config.get_ns("gpu_gaps.min_gap_ms");
  const std::int64_t startup_end = config.startup_end_ns();  // idle before it is start-up
  for (const auto& [device, ops] : device_ops(trace)) {
    const auto busy = busy_union(trace, ops);
    for (std::size_t n = 1; n < busy.size(); ++n) {
      const std::int64_t gap_start = std::max(busy[n - 1].end, startup_end);
      const std::int64_t gap = busy[n].start - gap_start;
      if (gap < std::max<std::int64_t>(min_gap, 1)) continue;
      const TraceOp& next = trace.ops[busy[n].op];
      HitSite site = op_site(trace, next);
      Hit h = make_hit("gpu_gaps", site, gap, gap_start);
      h.detail = fmt::format("device {} idle for {} from {} until {} starts at {}", device.second,
                             flags_duration(static_cast<double>(gap)), at(trace, gap_start),
                             next.name, at(trace, busy[n].start));
      h.advice =
          "Nothing ran on the GPU: look at what the host did then (initialization, data "
          "loading, CPU computation, synchronization) and overlap it with GPU work.";
      hits.push_back(std::move(h));
    }
  }
}

void gpu_utilization(const FlagsTrace& trace, const FlagsConfig& config, std::vector<Hit>& hits) {
  const auto chunks = static_cast<std::int64_t>(config.get("gpu_utilization.chunks"));
  const double max_percent = config.get("gpu_utilization.max_percent");
  for (const auto& [device, ops] : device_ops(trace)) {
    const auto busy = busy_union(trace, ops);
    if (busy.empty()) continue;
    // Start-up is reported once by the verdict: the chunks cut the time after it.
    const std::int64_t last = busy.back().end;
    const std::int64_t first =
        std::min(last, std::max(busy.front().start, config.startup_end_ns()));
    std::int64_t span = 0;
    // Timestamps come from the file: a damaged capture may hold any values (found by fuzz/).
    if (__builtin_sub_overflow(last, first, &span) || span <= 0 || chunks <= 0) continue;
    // first + span * c / chunks without overflowing span * c.
    const auto boundary = [&](std::int64_t c) {
      return first + (span / chunks) * c + (span % chunks) * c / chunks;
    };
    std::size_t b = 0;
    for (std::int64_t c = 0; c < chunks; ++c) {
      const std::int64_t lo = boundary(c), hi = boundary(c + 1);
      if (hi <= lo) continue;
      while (b < busy.size() && busy[b].end <= lo) ++b;
      std::int64_t used = 0;
      for (std::size_t i = b; i < busy.size() && busy[i].start < hi; ++i) {
        used += std::min(hi, busy[i].end) - std::max(lo, busy[i].start);
      }
      const double percent = 100.0 * static_cast<double>(used) / static_cast<double>(hi - lo);
      if (percent >= max_percent) continue;
      Hit h;
      h.rule = "gpu_utilization";
      h.device_id = device.second;
      h.pid = device.first;
      h.count = 1;
      h.time_ns = (hi - lo) - used;
      h.first_ns = lo;
      h.metrics = {{"chunk", static_cast<double>(c + 1)},
                   {"utilization_percent", percent},
                   {"chunk_ns", static_cast<double>(hi - lo)}};
      h.detail = fmt::format("chunk {}/{} ({} to {}, {}): device {} busy {:.1f} % of the time",
                             c + 1, chunks, at(trace, lo), at(trace, hi),
                             flags_duration(static_cast<double>(hi - lo)), device.second, percent);
      h.advice =
          "The GPU is mostly idle here: overlap host work with GPU work, remove synchronization, "
          "or give the GPU more work per launch.";
      hits.push_back(std::move(h));
    }
  }
}

}  // namespace

std::vector<Hit> find_timeline_hits(const FlagsTrace& trace, const FlagsConfig& config) {
  std::vector<Hit> hits;
  if (config.enabled("stream_idle")) stream_idle(trace, config, hits);
  if (config.enabled("gpu_gaps")) gpu_gaps(trace, config, hits);
  if (config.enabled("gpu_utilization")) gpu_utilization(trace, config, hits);
  return hits;
}

}  // namespace fuselens::analyzer
