// The flags run's window context, per-step attribution, ranking and verdict (FlagsVerdict.h).
#include "flags/FlagsVerdict.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>

#include "flags/Flags.h"
#include "flags/FlagsRules.h"
#include "flags/FlagsTrace.h"
#include "window/Window.h"

namespace fuselens::analyzer {
namespace {

double percent(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }

/// `ns` as an integer, clamped: sums over a damaged capture's timestamps may leave int64's range
/// (fuzz/), so the breakdowns add in double.
std::int64_t to_ns(double ns) {
  constexpr double kMax = 9.2e18;
  return static_cast<std::int64_t>(std::clamp(ns, -kMax, kMax));
}

/// a - b, exact when it fits int64 (absolute CUPTI times are ~1.8e18 ns, beyond double's exact
/// integers), else in double.
double diff(std::int64_t a, std::int64_t b) {
  std::int64_t d = 0;
  if (!__builtin_sub_overflow(a, b, &d)) return static_cast<double>(d);
  return static_cast<double>(a) - static_cast<double>(b);
}

/// HTA's temporal and idle breakdowns summed over the window's steps or its whole span (ns).
struct Breakdown {
  double span = 0, busy = 0, compute = 0, non_compute = 0, idle = 0;
  double host = 0, kernel = 0, other = 0, sync = 0;
};

/// Length of the union of [start, end) intervals (sorted by start).
double union_length(std::vector<std::pair<std::int64_t, std::int64_t>> spans) {
  std::sort(spans.begin(), spans.end());
  double total = 0;
  std::int64_t open = 0, close = 0;
  bool any = false;
  for (const auto& [s, e] : spans) {
    if (any && s <= close) {
      close = std::max(close, e);
      continue;
    }
    if (any) total += diff(close, open);
    open = s;
    close = e;
    any = true;
  }
  if (any) total += diff(close, open);
  return total;
}

bool is_sync_call(const TraceCall& call) {
  return call.base_name.find("Synchronize") != std::string::npos;
}

/// The breakdown of the trace's operations starting at or after `lo`, as Steps computes it per
/// step (Steps.h): compute = union of kernels, non-compute = union of everything minus it,
/// idle = span - busy, stream gaps split into host wait, kernel wait and other.
Breakdown window_breakdown(const FlagsTrace& trace, std::int64_t lo, std::int64_t kernel_wait_ns) {
  Breakdown b;
  std::vector<std::pair<std::int64_t, std::int64_t>> all, kernels;
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>,
           std::vector<const TraceOp*>>
      streams;
  std::int64_t first = 0, last = 0;
  for (const TraceOp& op : trace.ops) {
    if (op.start_ns < lo || op.end_ns < op.start_ns) continue;
    if (all.empty()) first = op.start_ns;
    first = std::min(first, op.start_ns);
    last = std::max(last, op.end_ns);
    all.emplace_back(op.start_ns, op.end_ns);
    if (op.kind == OpKind::Kernel) kernels.emplace_back(op.start_ns, op.end_ns);
    streams[{op.pid, op.device_id, op.context_id, op.stream_id}].push_back(&op);
  }
  if (all.empty()) return b;
  b.span = diff(last, first);
  b.busy = union_length(all);
  b.compute = union_length(std::move(kernels));
  b.non_compute = b.busy - b.compute;
  b.idle = b.span - b.busy;
  for (const auto& [key, ops] : streams) {
    std::int64_t prev_end = ops.front()->end_ns;
    for (std::size_t n = 1; n < ops.size(); ++n) {
      const TraceOp& op = *ops[n];
      const double gap = diff(op.start_ns, prev_end);
      if (gap > 0) {
        const TraceCall* call = trace.launch_call(op);
        if (call != nullptr && call->start_ns > prev_end) {
          b.host += gap;
        } else if (gap <= static_cast<double>(kernel_wait_ns)) {
          b.kernel += gap;
        } else {
          b.other += gap;
        }
      }
      prev_end = std::max(prev_end, op.end_ns);
    }
  }
  for (const TraceCall& call : trace.calls) {
    if (call.start_ns >= first && call.start_ns < last && is_sync_call(call)) {
      b.sync += diff(call.end_ns, call.start_ns);
    }
  }
  return b;
}

Breakdown step_breakdown(const FlagsTrace& trace, const std::vector<Step>& steps) {
  Breakdown b;
  for (const Step& s : steps) {
    b.span += static_cast<double>(s.span_ns);
    b.busy += static_cast<double>(s.gpu_busy_ns);
    b.compute += static_cast<double>(s.compute_ns);
    b.non_compute += static_cast<double>(s.non_compute_ns);
    b.idle += static_cast<double>(s.idle_ns);
    b.host += static_cast<double>(s.host_wait_ns);
    b.kernel += static_cast<double>(s.kernel_wait_ns);
    b.other += static_cast<double>(s.other_wait_ns);
  }
  const std::int64_t lo = steps.front().start_ns, hi = steps.back().end_ns;
  for (const TraceCall& call : trace.calls) {
    if (call.start_ns >= lo && call.start_ns < hi && is_sync_call(call)) {
      b.sync += diff(call.end_ns, call.start_ns);
    }
  }
  return b;
}

/// The step an instance at `t` belongs to: the last one started at or before it (0-based), or
/// -1 before the first step or after the last one's end plus its span.
int step_of(const std::vector<Step>& steps, std::int64_t t) {
  const auto it = std::upper_bound(steps.begin(), steps.end(), t,
                                   [](std::int64_t v, const Step& s) { return v < s.start_ns; });
  if (it == steps.begin()) return -1;
  const auto index = static_cast<int>(it - steps.begin()) - 1;
  const Step& s = steps[static_cast<std::size_t>(index)];
  if (it == steps.end() && diff(t, s.start_ns) >= 2 * std::max(diff(s.end_ns, s.start_ns),
                                                               static_cast<double>(s.span_ns))) {
    return -1;
  }
  return index;
}

/// One device's gpu_utilization chunks as one hit: the verdict already gives the busy share of
/// each step, so thirty chunk rows would only repeat it.
void merge_utilization(FlagsReport& report) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, Hit> merged;
  std::vector<Hit> kept;
  for (Hit& h : report.hits) {
    if (h.rule != "gpu_utilization") {
      kept.push_back(std::move(h));
      continue;
    }
    const auto key = std::make_pair(h.pid.value_or(0), h.device_id.value_or(0));
    auto it = merged.find(key);
    if (it == merged.end()) {
      h.metrics = {{"chunks", 1},
                   {"busy_ns", h.metric("chunk_ns") - static_cast<double>(h.time_ns)},
                   {"chunk_ns", h.metric("chunk_ns")}};
      merged.emplace(key, std::move(h));
      continue;
    }
    Hit& m = it->second;
    m.count += h.count;
    m.time_ns += h.time_ns;
    m.first_ns = std::min(m.first_ns, h.first_ns);
    m.add_metric("chunks", 1);
    m.add_metric("busy_ns", h.metric("chunk_ns") - static_cast<double>(h.time_ns));
    m.add_metric("chunk_ns", h.metric("chunk_ns"));
    m.instance_ns.insert(m.instance_ns.end(), h.instance_ns.begin(), h.instance_ns.end());
  }
  for (auto& [key, m] : merged) {
    const double chunk_ns = m.metric("chunk_ns");
    m.set_metric("utilization_percent", percent(m.metric("busy_ns"), chunk_ns));
    m.detail = fmt::format(
        "{} chunks of the timeline ({} in all) under the utilization threshold: device {} busy "
        "{:.1f} % of that time",
        m.count, flags_duration(chunk_ns), m.device_id.value_or(0),
        m.metric("utilization_percent"));
    kept.push_back(std::move(m));
  }
  report.hits = std::move(kept);
}

bool summed_metric(const std::string& key) {
  const auto ends = [&](std::string_view suffix) {
    return key.size() >= suffix.size() &&
           key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return key.rfind("max_", 0) != 0 && key.rfind("mean_", 0) != 0 && key != "gap_per_launch_ns" &&
         (ends("_ns") || ends("bytes") || key == "gaps" || key == "launches_removed" ||
          key.rfind("occurrences_", 0) == 0);
}

/// Hits in different steps' ranges as one hit under the step pattern (FlagsVerdict.h).
void merge_step_ranges(FlagsReport& report, const FlagsWindow& w) {
  if (w.step_pattern.empty() || w.steps.size() < 2) return;
  std::set<std::string> labels;
  for (const Step& s : w.steps) {
    if (!s.label.empty()) labels.insert(s.label);
  }
  const auto is_step_range = [&](const std::string& range) {
    if (labels.count(range) > 0) return true;
    const auto colon = range.find(':');  // "domain:text"
    return colon != std::string::npos && labels.count(range.substr(colon + 1)) > 0;
  };
  using Key = std::tuple<std::string, std::string, std::optional<std::uint32_t>,
                         std::optional<std::uint32_t>, std::optional<std::uint32_t>,
                         std::optional<std::uint32_t>, std::string>;
  std::map<Key, std::size_t> merged;  // index into kept
  std::vector<Hit> kept;
  std::vector<std::size_t> ranges;  // step ranges merged into each kept hit
  for (Hit& h : report.hits) {
    if (h.range.empty() || !is_step_range(h.range)) {
      kept.push_back(std::move(h));
      ranges.push_back(1);
      continue;
    }
    h.range = w.step_pattern;
    const Key key{h.rule, h.subject, h.device_id, h.stream_id, h.pid, h.tid, h.context};
    const auto [it, inserted] = merged.try_emplace(key, kept.size());
    if (inserted) {
      kept.push_back(std::move(h));
      ranges.push_back(1);
      continue;
    }
    Hit& m = kept[it->second];
    ++ranges[it->second];
    const bool larger = h.time_ns > m.time_ns;
    m.count += h.count;
    m.time_ns += h.time_ns;
    m.first_ns = std::min(m.first_ns, h.first_ns);
    m.instance_ns.insert(m.instance_ns.end(), h.instance_ns.begin(), h.instance_ns.end());
    if (larger) m.detail = h.detail;
    for (const auto& [name, value] : h.metrics) {
      if (summed_metric(name)) {
        m.add_metric(name, value);
      } else if (name.rfind("max_", 0) == 0) {
        m.set_metric(name, std::max(value, m.metric(name)));
      } else if (larger) {
        m.set_metric(name, value);
      }
    }
  }
  for (std::size_t i = 0; i < kept.size(); ++i) {
    if (ranges[i] < 2) continue;
    Hit& h = kept[i];
    if (h.rule == "stream_idle") {
      const double idle = static_cast<double>(h.time_ns), total = h.metric("busy_ns") + idle;
      h.set_metric("idle_percent", percent(idle, total));
      h.detail = fmt::format(
          "stream idle {} of {} ({:.1f} %) in {} gaps: host wait {}, kernel wait {}, other {}",
          flags_duration(idle), flags_duration(total), percent(idle, total), h.count,
          flags_duration(h.metric("host_wait_ns")), flags_duration(h.metric("kernel_wait_ns")),
          flags_duration(h.metric("other_ns")));
    } else {
      h.detail = "the step with the most: " + h.detail;
    }
    h.detail = fmt::format("in {} step ranges; ", ranges[i]) + h.detail;
  }
  report.hits = std::move(kept);
}

/// What one instance of `rule` is, for "61 launches per step".
const char* instance_noun(const std::string& rule) {
  if (rule == "stream_idle") return "gaps";
  if (rule == "launch_short" || rule == "launch_delay" || rule == "runtime_outlier") {
    return "launches";
  }
  if (rule == "fusion_chain") return "chains";
  if (rule == "gpu_utilization") return "chunks";
  if (rule == "sync_api") return "calls";
  if (rule == "sync_memcpy" || rule == "async_pageable") return "copies";
  if (rule == "sync_memset") return "memsets";
  return "instances";
}

std::string cause_text(const Hit& h, int steps) {
  std::string where = h.subject;
  if (where.empty()) {  // a span of time: name the device and stream it is about
    where = h.stream_id ? fmt::format("device {} stream {}", h.device_id.value_or(0), *h.stream_id)
                        : fmt::format("device {}", h.device_id.value_or(0));
    if (!h.range.empty()) where += " in " + h.range;
  }
  if (where.size() > 80) where = where.substr(0, 77) + "...";
  std::string text;
  if (steps > 0 && h.metric("per_step_ns") > 0) {
    text = fmt::format("{}: {}: {:.0f} {} per step, {} per step ({:.1f} % of the step)", h.rule,
                       where, h.metric("per_step_count"), instance_noun(h.rule),
                       flags_duration(h.metric("per_step_ns")), h.metric("step_percent"));
  } else {
    text = fmt::format("{}: {}: {} instance{}, {} ({:.1f} % of the window)", h.rule, where, h.count,
                       h.count == 1 ? "" : "s", flags_duration(static_cast<double>(h.time_ns)),
                       h.metric("window_percent"));
  }
  if (!h.context.empty()) {
    // The launch site: the innermost frames say most.
    const auto cut = h.context.rfind(" > ", h.context.size() > 60 ? h.context.size() - 60 : 0);
    text += ", called from " + (cut == std::string::npos || h.context.size() <= 60
                                    ? h.context
                                    : "... " + h.context.substr(cut + 3));
  }
  return text;
}

FlagsVerdict make_verdict(const FlagsTrace& trace, const FlagsWindow& w, std::int64_t lo,
                          std::int64_t kernel_wait_ns, const std::vector<Hit>& hits) {
  FlagsVerdict v;
  v.window = w.label;
  v.steps = static_cast<int>(w.steps.size());
  const Breakdown b = w.steps.empty() ? window_breakdown(trace, lo, kernel_wait_ns)
                                      : step_breakdown(trace, w.steps);
  const auto n = std::max(1, v.steps);
  v.span_ns = to_ns(b.span / n);
  const double span = b.span;
  v.busy_percent = percent(b.busy, span);
  v.compute_percent = percent(b.compute, span);
  v.non_compute_percent = percent(b.non_compute, span);
  v.idle_percent = percent(b.idle, span);
  const double waits = b.host + b.kernel + b.other;
  v.host_wait_percent = percent(b.host, waits);
  v.kernel_wait_percent = percent(b.kernel, waits);
  v.other_wait_percent = percent(b.other, waits);
  v.sync_percent = percent(b.sync, span);
  const std::string of =
      v.steps > 0 ? fmt::format("of each step (mean step span {}, {} steps)",
                                flags_duration(static_cast<double>(v.span_ns)), v.steps)
                  : fmt::format("of the window's GPU span ({}, first to last GPU operation)",
                                flags_duration(span));
  if (b.busy <= 0) {
    v.kind = "no GPU work";
    v.headline = "no GPU work: no kernel, copy or memset in the window";
    return v;
  }
  const bool gpu_busy = v.busy_percent >= kBusyPercent;
  if (gpu_busy) {
    v.kind = b.non_compute > b.compute ? "copy-bound" : "GPU-bound";
    v.headline = fmt::format(
        "{}: GPU busy {:.1f} % {}: kernels {:.1f} %, copies and memsets "
        "{:.1f} %, idle {:.1f} %",
        v.kind, v.busy_percent, of, v.compute_percent, v.non_compute_percent, v.idle_percent);
    // The operations with the most GPU time, per step.
    std::map<std::string, double> by_name;
    for (const TraceOp& op : trace.ops) {
      if (op.start_ns >= lo && op.end_ns > op.start_ns) {
        by_name[std::string(op.name)] += diff(op.end_ns, op.start_ns);
      }
    }
    std::vector<std::pair<double, std::string>> top;
    for (const auto& [name, ns] : by_name) top.emplace_back(ns, name);
    std::sort(top.rbegin(), top.rend());
    for (std::size_t i = 0; i < top.size() && i < 3; ++i) {
      const double each = top[i].first / n;
      v.causes.push_back(fmt::format("{}: {} GPU time {} ({:.1f} %)", top[i].second,
                                     flags_duration(each),
                                     v.steps > 0 ? "per step" : "in the window",
                                     percent(each, static_cast<double>(v.span_ns))));
    }
  } else {
    if (b.sync * 2 >= b.idle) {
      v.kind = "sync-bound";
    } else if (b.host >= b.kernel && b.host >= b.other) {
      v.kind = "host-bound";
    } else if (b.kernel >= b.other) {
      v.kind = "launch-bound";
    } else {
      v.kind = "latency-bound";
    }
    v.headline = fmt::format(
        "{}: GPU busy {:.1f} % {}; idle {:.1f} %: host wait {:.0f} %, kernel wait {:.0f} %, "
        "other {:.0f} % of the stream idle; synchronization calls {:.1f} %",
        v.kind, v.busy_percent, of, v.idle_percent, v.host_wait_percent, v.kernel_wait_percent,
        v.other_wait_percent, v.sync_percent);
    std::int64_t short_launches = 0;
    for (const Hit& h : hits) {
      if (h.rule == "launch_short") short_launches += h.count;
    }
    if (short_launches > 0) {
      v.headline += fmt::format(
          "; {:.0f} launches {} whose launch call outlasts the kernel (launch_short)",
          static_cast<double>(short_launches) / n, v.steps > 0 ? "per step" : "in the window");
    }
  }
  for (std::size_t i = 0; i < hits.size() && v.causes.size() < (gpu_busy ? 5U : 3U); ++i) {
    if (hits[i].rule == "gpu_utilization") continue;  // the headline's busy share says it
    v.causes.push_back(cause_text(hits[i], v.steps));
  }
  return v;
}

}  // namespace

FlagsWindow whole_capture_window(const StepReport& steps) {
  FlagsWindow w;
  w.steps = steps.steps;
  if (steps.method == StepMethod::Range) w.step_pattern = steps.pattern;
  if (!w.steps.empty()) {
    w.startup_end_ns = w.steps.front().start_ns;
    w.startup_before = "the first step";
  }
  return w;
}

FlagsWindow flags_window(const db::Reader& reader, const Window* window) {
  if (window != nullptr && !window->whole) {
    FlagsWindow w;
    w.label = window->label;
    w.description = window->description;
    w.whole = false;
    w.inside_ns = window->inside_ns;
    if (window->steps && window->steps->method == StepMethod::Range) {
      w.step_pattern = window->steps->pattern;
    }
    if (window->steps && window->first_step > 0) {
      const auto& all = window->steps->steps;
      for (int i = window->first_step; i <= window->last_step; ++i) {
        if (i >= 1 && static_cast<std::size_t>(i) <= all.size()) {
          w.steps.push_back(all[static_cast<std::size_t>(i - 1)]);
        }
      }
    }
    w.startup_ns = window->startup_ns;
    if (!window->intervals.empty()) w.startup_end_ns = window->intervals.front().start_ns;
    w.startup_before =
        window->first_step > 0 ? fmt::format("step {}", window->first_step) : "the window";
    return w;
  }
  FlagsWindow w;
  if (window != nullptr && window->steps) {
    w = whole_capture_window(*window->steps);
  } else {
    try {
      // The steps prof-run stored when the run ended, else a search (as the steady window).
      const auto stored = stored_step_report(reader);
      w = whole_capture_window(stored ? *stored : analyze_steps(reader));
    } catch (const StepError&) {
      // no steps: the verdict covers the whole capture
    }
  }
  if (window != nullptr) {
    w.label = window->label;
    w.description = window->description;
  }
  return w;
}

void apply_window_to_flags(const FlagsTrace& trace, const FlagsWindow& window,
                           std::int64_t kernel_wait_ns, FlagsReport& report) {
  report.window = window;
  FlagsWindow& w = report.window;
  std::int64_t last = trace.origin_ns;
  for (const TraceOp& op : trace.ops) last = std::max(last, op.end_ns);
  for (const TraceCall& call : trace.calls) last = std::max(last, call.end_ns);
  if (w.whole && w.startup_end_ns > trace.origin_ns) {
    w.startup_ns = to_ns(diff(w.startup_end_ns, trace.origin_ns));
  }
  const std::int64_t lo = std::max(trace.origin_ns, w.startup_end_ns);
  if (w.inside_ns <= 0) w.inside_ns = to_ns(std::max(0.0, diff(last, lo)));
  if (w.steps.size() >= 2) merge_utilization(report);
  merge_step_ranges(report, w);

  const auto n = static_cast<double>(w.steps.size());
  double mean_span = 0;
  for (const Step& s : w.steps) mean_span += static_cast<double>(s.span_ns) / n;
  for (Hit& h : report.hits) {
    h.set_metric("window_percent",
                 percent(static_cast<double>(h.time_ns), static_cast<double>(w.inside_ns)));
    if (w.steps.empty()) continue;
    std::vector<bool> seen(w.steps.size(), false);
    for (const std::int64_t t : h.instance_ns) {
      const int s = step_of(w.steps, t);
      if (s >= 0) seen[static_cast<std::size_t>(s)] = true;
    }
    const auto with = static_cast<double>(std::count(seen.begin(), seen.end(), true));
    h.set_metric("steps_with", with);
    if (w.steps.size() >= 2 && with >= kEveryStepShare * n) {
      const double per_step = static_cast<double>(h.time_ns) / n;
      h.set_metric("per_step_ns", per_step);
      h.set_metric("per_step_count", static_cast<double>(h.count) / n);
      h.set_metric("step_percent", percent(per_step, mean_span));
      h.detail = fmt::format(
                     "every step ({:.0f} of {:.0f}): {:.1f} per step, {} per step "
                     "({:.1f} % of the step). ",
                     with, n, h.metric("per_step_count"), flags_duration(per_step),
                     h.metric("step_percent")) +
                 h.detail;
    }
  }
  // Ranked across rules by time at stake (per step: each hit divided by the same step count).
  const bool utilization_last = w.steps.size() >= 2;
  std::stable_sort(report.hits.begin(), report.hits.end(), [&](const Hit& a, const Hit& b) {
    if (utilization_last && (a.rule == "gpu_utilization") != (b.rule == "gpu_utilization")) {
      return b.rule == "gpu_utilization";
    }
    return a.time_ns > b.time_ns;
  });
  for (Hit& h : report.hits) {
    h.instance_ns.clear();
    h.instance_ns.shrink_to_fit();
  }
  report.verdict = make_verdict(trace, w, lo, kernel_wait_ns, report.hits);
  report.verdict.startup_ns = w.startup_ns;
  if (w.startup_ns > 0) {
    const double captured = diff(last, trace.origin_ns);
    report.verdict.startup =
        w.whole
            ? fmt::format(
                  "start-up: {} before {} ({:.1f} % of the {} captured), reported "
                  "once here: the idle rules leave it out",
                  flags_duration(static_cast<double>(w.startup_ns)), w.startup_before,
                  percent(static_cast<double>(w.startup_ns), captured), flags_duration(captured))
            : fmt::format("start-up: {} before {}, outside the window (not analysed)",
                          flags_duration(static_cast<double>(w.startup_ns)), w.startup_before);
  }
}

}  // namespace fuselens::analyzer
