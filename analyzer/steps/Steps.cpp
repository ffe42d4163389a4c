// Step detection: NVTX ranges, a step function's calls, or the period of the launch sequence.

#include "steps/Steps.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "fuselens/db/ActivityCursors.h"
#include "fuselens/db/Instrumentation.h"
#include "fuselens/db/Strings.h"
#include "fuselens/db/TraceCursors.h"
#include "steps/StepsData.h"

namespace fuselens::analyzer {

namespace {

using steps_detail::Launch;

constexpr double kMinMatch = 0.9;  // the automatic method's match fraction threshold
constexpr double kMinCover = 0.5;  // the fallback's least share of launches in the repetition
constexpr std::size_t kMaxPeriod = 4096;
constexpr std::size_t kMaxMeasured = 65536;  // launches the match fraction is measured over  // the
                                             // longest step it looks for, in kernel launches

/// Ranges matching `pattern` (of process `pid` only when given), outermost per thread, in time
/// order.
std::vector<Step> steps_from_ranges(const db::Reader& reader, const std::string& pattern,
                                    std::optional<std::int64_t> pid) {
  std::vector<db::NvtxRow> matched;
  db::ended_nvtx_ranges_named(reader).for_each([&](const db::NvtxRow& row) {
    if (pid && row.pid != *pid) return;
    if (!db::is_fuselens_instrumentation(row.text) && glob_match_nocase(pattern, row.text))
      matched.push_back(row);
  });
  std::sort(matched.begin(), matched.end(), [](const db::NvtxRow& a, const db::NvtxRow& b) {
    return std::tuple(a.pid, a.tid, a.start_ns, -*a.end_ns) <
           std::tuple(b.pid, b.tid, b.start_ns, -*b.end_ns);
  });
  std::vector<Step> steps;
  for (const auto& row : matched) {
    if (!steps.empty() && steps.back().pid == row.pid && steps.back().tid == row.tid &&
        row.start_ns < steps.back().end_ns) {
      continue;  // inside (or overlapping) the outer matching range kept before it
    }
    Step step;
    step.pid = row.pid;
    step.tid = row.tid;
    step.start_ns = row.start_ns;
    step.end_ns = *row.end_ns;
    step.label = row.text;
    steps.push_back(std::move(step));
  }
  return steps;
}

/// The function name without its parameter list (a demangled name's "(...)" and what follows).
std::string bare_function(const std::string& function) {
  std::size_t depth = 0;
  for (std::size_t i = 0; i < function.size(); ++i) {
    const char c = function[i];
    if (c == '<') ++depth;
    if (c == '>' && depth > 0) --depth;
    if (c == '(' && depth == 0 && i > 0) return function.substr(0, i);
  }
  return function;
}

/// True when frame function `function` is `name`: equal, or ending in `name` after "::" or ".".
bool function_matches(const std::string& name, const std::string& function) {
  const std::string bare = bare_function(function);
  if (bare == name || function == name) return true;
  if (bare.size() <= name.size() || bare.compare(bare.size() - name.size(), name.size(), name) != 0)
    return false;
  const std::size_t at = bare.size() - name.size();
  return bare[at - 1] == '.' || (at >= 2 && bare[at - 1] == ':' && bare[at - 2] == ':');
}

/// Steps from the calls of `name`: a step starts at a launch under the function that follows a
/// launch of the same thread not under it (the calling-context tree merges calls of one path, so
/// back-to-back calls with no launch between them are one step).
std::vector<Step> steps_from_function(const db::Reader& reader, const std::vector<Launch>& launches,
                                      const std::string& name) {
  std::unordered_map<std::int64_t, std::int64_t> frame_of, parent_of;
  db::cct_nodes(reader).for_each([&](const db::CctNodeRow& row) {
    frame_of[row.id] = row.frame_id;
    parent_of[row.id] = row.parent_id;
  });
  std::set<std::int64_t> matching_frames;
  db::frames(reader).for_each([&](const db::FrameRow& row) {
    if (function_matches(name, row.function)) matching_frames.insert(row.id);
  });
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> node_of;  // (pid, corr) -> node
  db::launch_contexts(reader).for_each([&](const db::LaunchContextRow& row) {
    node_of[{row.pid, row.correlation_id}] = row.node_id;
  });
  std::unordered_map<std::int64_t, bool> under_cache;
  auto under = [&](std::int64_t node) {
    const std::int64_t first = node;
    if (auto it = under_cache.find(first); it != under_cache.end()) return it->second;
    bool hit = false;
    for (int walk = 0; node != 0 && walk < 4096; ++walk) {
      auto f = frame_of.find(node);
      if (f == frame_of.end()) break;
      if (matching_frames.count(f->second) != 0) {
        hit = true;
        break;
      }
      node = parent_of[node];
    }
    under_cache[first] = hit;
    return hit;
  };

  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<Step>> by_thread;
  std::map<std::pair<std::int64_t, std::int64_t>, bool> was_under;
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> last_end;
  for (const auto& launch : launches) {
    const std::pair key{launch.pid, launch.tid};
    auto node = node_of.find({launch.pid, launch.correlation_id});
    const bool is_under = node != node_of.end() && under(node->second);
    auto& steps = by_thread[key];
    if (is_under) {
      if (!was_under[key]) {
        if (!steps.empty()) steps.back().end_ns = launch.call_start_ns;
        Step step;
        step.pid = launch.pid;
        step.tid = launch.tid;
        step.start_ns = launch.call_start_ns;
        steps.push_back(step);
      }
      if (!steps.empty()) last_end[key] = launch.call_end_ns;
    }
    was_under[key] = is_under;
  }
  std::vector<Step> steps;
  for (auto& [key, list] : by_thread) {
    if (!list.empty() && list.back().end_ns == 0) list.back().end_ns = last_end[key];
    for (auto& step : list) steps.push_back(step);
  }
  return steps;
}

PeriodFit period_of_ids(const std::vector<std::uint32_t>& id, std::size_t distinct,
                        const std::vector<std::int64_t>& gaps_before, std::size_t& anchor_at);

/// The automatic method on the thread with the most kernel launches.
std::vector<Step> steps_from_period(const std::vector<Launch>& launches, StepReport& report) {
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<const Launch*>> kernels_by_thread;
  for (const auto& launch : launches) {
    if (launch.table == db::GpuTable::Kernel)
      kernels_by_thread[{launch.pid, launch.tid}].push_back(&launch);
  }
  const std::vector<const Launch*>* busiest = nullptr;
  for (const auto& [key, list] : kernels_by_thread) {
    if (busiest == nullptr || list.size() > busiest->size()) busiest = &list;
  }
  if (busiest == nullptr) {
    report.note = "no kernel launches: no steps";
    return {};
  }
  // The names as small integers, by their text (read_launches shares one string per name id,
  // but two ids may hold one text): no copy of a name per launch (ten million launches).
  std::vector<std::uint32_t> id;
  std::vector<std::int64_t> gaps;
  id.reserve(busiest->size());
  gaps.reserve(busiest->size());
  std::map<std::string_view, std::uint32_t> ids;
  const std::string* last_name = nullptr;
  std::uint32_t last_id = 0;
  for (std::size_t i = 0; i < busiest->size(); ++i) {
    const std::string* name = (*busiest)[i]->name.get();
    if (name != last_name) {  // launches of one kernel run back to back: one lookup a run
      last_id = ids.emplace(*name, static_cast<std::uint32_t>(ids.size())).first->second;
      last_name = name;
    }
    id.push_back(last_id);
    gaps.push_back(i == 0 ? 0 : (*busiest)[i]->call_start_ns - (*busiest)[i - 1]->call_end_ns);
  }
  const std::size_t n_launches = id.size();
  std::size_t anchor_at = 0;
  PeriodFit fit = period_of_ids(id, ids.size(), gaps, anchor_at);
  if (fit.period != 0) fit.anchor = *(*busiest)[anchor_at]->name;
  report.confidence = fit.confidence;
  report.period = fit.period;
  if (fit.starts.empty()) {
    char best[16];
    std::snprintf(best, sizeof best, "%.2f", fit.confidence);
    report.note = "no repetition: no step repeats in the kernel sequence of the busiest thread (" +
                  std::to_string(n_launches) + " launches, best match fraction " + best +
                  " < 0.9, no exact repetition over half of them): no steps";
    return {};
  }
  report.note = "period of " + std::to_string(fit.period) +
                " kernel launches, each step starting at " + fit.anchor;
  std::vector<Step> steps;
  for (std::size_t k = 0; k < fit.starts.size(); ++k) {
    Step step;
    const Launch& first = *(*busiest)[fit.starts[k]];
    step.pid = first.pid;
    step.tid = first.tid;
    step.start_ns = first.call_start_ns;
    if (k + 1 < fit.starts.size()) {
      step.end_ns = (*busiest)[fit.starts[k + 1]]->call_start_ns;
    } else {
      // The last step has no next start: it ends with the last launch call of its process that
      // starts within 1.5x the median step time (the earlier steps') of its start.
      std::vector<std::int64_t> walls;
      for (const Step& s : steps) walls.push_back(s.end_ns - s.start_ns);
      std::sort(walls.begin(), walls.end());
      const std::int64_t reach = walls.empty() ? 0 : walls[walls.size() / 2] * 3 / 2;
      step.end_ns = first.call_end_ns;
      for (const auto& launch : launches) {
        if (launch.pid == first.pid && launch.call_start_ns >= step.start_ns &&
            launch.call_start_ns < step.start_ns + reach) {
          step.end_ns = std::max(step.end_ns, launch.call_end_ns);
        }
      }
    }
    steps.push_back(step);
  }
  return steps;
}

}  // namespace

const char* step_method_name(StepMethod method) {
  static constexpr const char* kNames[] = {"range", "function", "auto"};
  return kNames[static_cast<int>(method)];
}

namespace {

/// find_period on the names as small integers (`id[i]`, 0 .. distinct - 1: compared n * p times),
/// leaving the anchor's text to the caller: the position of a launch of it in `anchor_at`.
PeriodFit period_of_ids(const std::vector<std::uint32_t>& id, std::size_t distinct,
                        const std::vector<std::int64_t>& gaps_before, std::size_t& anchor_at) {
  PeriodFit fit;
  const std::size_t n = id.size();
  // One name (a benchmark launching one kernel): no position of any period holds a name once,
  // so nothing anchors a step: no steps, without the search below (which on ten million
  // launches of one name grows a run over all of them for every period: minutes).
  if (distinct < 2) return fit;
  // The anchor of period p over the measured part [lo, hi): a position of the period whose name
  // occurs once per period, the one after the longest host gap (where the host loops); n if none.
  auto anchor = [&](std::size_t p, std::size_t lo, std::size_t hi) {
    std::map<std::size_t, std::size_t> per_period;
    for (std::size_t i = lo; i < lo + p && i < hi; ++i) ++per_period[id[i]];
    std::size_t best = n;
    double best_gap = -1;
    for (std::size_t phase = 0; phase < p && lo + phase < hi; ++phase) {
      if (per_period[id[lo + phase]] != 1) continue;
      std::vector<std::int64_t> g;
      for (std::size_t i = lo + phase; i < hi; i += p) g.push_back(gaps_before[i]);
      std::nth_element(g.begin(), g.begin() + static_cast<std::ptrdiff_t>(g.size() / 2), g.end());
      const double median = static_cast<double>(g[g.size() / 2]);
      if (median > best_gap) {
        best_gap = median;
        best = lo + phase;
      }
    }
    return best;
  };
  std::size_t best = n;
  // Steps of at least 2 launches: a step of one kernel cannot be told from a stream of it.
  // Skip the start-up quarter when measuring the match; measure at most the last kMaxMeasured.
  const std::size_t from = std::max(n / 4, n > kMaxMeasured ? n - kMaxMeasured : 0);
  for (std::size_t p = 2; p * 2 <= n - from && p <= kMaxPeriod; ++p) {
    std::size_t same = 0, total = 0;
    for (std::size_t i = from; i + p < n; ++i, ++total) same += id[i] == id[i + p] ? 1 : 0;
    const double match = total == 0 ? 0 : static_cast<double>(same) / static_cast<double>(total);
    if (match < kMinMatch) {
      fit.confidence = std::max(fit.confidence, match);
      continue;
    }
    if ((best = anchor(p, n - ((n - from) / p) * p, n)) == n) continue;  // aligned to the end
    fit.period = static_cast<int>(p);
    fit.confidence = match;
    break;
  }
  if (fit.period == 0) {
    // No period over the whole: the longest stretch that repeats exactly (at least 4 periods and
    // half of the launches; a program whose step changes halfway), the smallest period among
    // those within 5 % of the longest. Confidence: the share of the launches it covers.
    std::size_t best_run = 0;
    for (std::size_t p = 2; p * 4 <= n && p <= kMaxPeriod; ++p) {
      if (fit.period != 0 && p % static_cast<std::size_t>(fit.period) == 0) continue;  // shorter
      // A run of i with name[i] == name[i+p] long enough to count (over n/4 of the n - p
      // positions) holds one of the probes k (n - p) / 8: grow the run from those.
      const std::size_t positions = n - p;
      std::size_t longest = 0, longest_start = 0;
      for (std::size_t k = 1; k < 8; ++k) {
        const std::size_t probe = k * positions / 8;
        if (id[probe] != id[probe + p]) continue;
        if (probe >= longest_start && probe < longest_start + longest) continue;  // seen
        std::size_t a = probe, b = probe + 1;
        while (a > 0 && id[a - 1] == id[a - 1 + p]) --a;
        while (b < positions && id[b] == id[b + p]) ++b;
        if (b - a > longest) {
          longest = b - a;
          longest_start = a;
        }
      }
      if (longest < 3 * p || longest * 100 <= best_run * 105) continue;
      if (static_cast<double>(longest + p) < kMinCover * static_cast<double>(n)) continue;
      const std::size_t at = anchor(p, longest_start, longest_start + longest + p);
      if (at == n) continue;
      best = at;
      best_run = longest;
      fit.period = static_cast<int>(p);
      fit.confidence = static_cast<double>(longest + p) / static_cast<double>(n);
    }
    if (fit.period == 0) return fit;
  }
  anchor_at = best;
  for (std::size_t i = 0; i < n; ++i) {
    if (id[i] == id[best]) fit.starts.push_back(i);
  }
  if (fit.starts.size() < 2) fit.starts.clear();
  return fit;
}

}  // namespace

PeriodFit find_period(const std::vector<std::string>& names,
                      const std::vector<std::int64_t>& gaps_before) {
  std::vector<std::uint32_t> id(names.size());
  std::map<std::string, std::uint32_t> ids;
  for (std::size_t i = 0; i < names.size(); ++i) {
    id[i] = ids.emplace(names[i], static_cast<std::uint32_t>(ids.size())).first->second;
  }
  std::size_t anchor_at = 0;
  PeriodFit fit = period_of_ids(id, ids.size(), gaps_before, anchor_at);
  if (fit.period != 0) fit.anchor = names[anchor_at];
  return fit;
}

StepReport analyze_steps(const db::Reader& reader, const StepOptions& options) {
  const int methods =
      (options.range_glob ? 1 : 0) + (options.function ? 1 : 0) + (options.automatic ? 1 : 0);
  if (methods > 1)
    throw std::invalid_argument("choose one of --step-range, --step-function, --auto");
  // Every launch in memory only for the methods that search the launch sequence; the steps of
  // NVTX ranges are filled streaming (stream_steps).
  std::optional<std::vector<Launch>> launches;
  const auto all_launches = [&]() -> const std::vector<Launch>& {
    if (!launches) {
      launches = steps_detail::read_launches(reader);
      if (options.pid)
        std::erase_if(*launches, [&](const Launch& l) { return l.pid != *options.pid; });
    }
    return *launches;
  };
  StepReport report;
  if (options.range_glob) {
    report.method = StepMethod::Range;
    report.pattern = *options.range_glob;
    report.steps = steps_from_ranges(reader, report.pattern, options.pid);
    if (report.steps.empty()) {
      throw StepError("no NVTX range " +
                      (options.pid ? "of process " + std::to_string(*options.pid) + " " : "") +
                      "matches '" + report.pattern + "'");
    }
    report.note = "NVTX ranges matching '" + report.pattern + "'";
  } else if (options.function) {
    report.method = StepMethod::Function;
    report.pattern = *options.function;
    report.steps = steps_from_function(reader, all_launches(), report.pattern);
    if (report.steps.empty()) {
      throw StepError("no launch's calling context holds function '" + report.pattern + "'");
    }
    report.note = "launches under '" + report.pattern + "'";
  } else {
    if (!options.automatic) {
      for (const auto& pattern : default_step_patterns()) {
        report.steps = steps_from_ranges(reader, pattern, options.pid);
        if (!report.steps.empty()) {
          report.method = StepMethod::Range;
          report.pattern = pattern;
          report.note = "NVTX ranges matching '" + pattern + "' (default pattern)";
          break;
        }
      }
    }
    if (report.steps.empty() && db::single_kernel_name_id(reader)) {
      // One kernel name (a benchmark's loop of one kernel): whatever the period, no position of
      // it holds a name once, so nothing anchors a step (steps_from_period would conclude so
      // after reading every launch: ten million of them, 57 s of CPU and 1.6 GB).
      report.method = StepMethod::Auto;
      report.confidence = 0;  // no period (as steps_from_period reports it)
      report.note =
          "every kernel has one name: a step of one kernel cannot be told from a stream of it: "
          "no steps";
    } else if (report.steps.empty() && options.streamed_only) {
      report.method = StepMethod::Auto;
      report.note =
          "no NVTX range matches the default patterns (the launch sequence's search holds every "
          "launch)";
      report.skipped = true;
      return report;
    } else if (report.steps.empty()) {
      report.method = StepMethod::Auto;
      report.steps = steps_from_period(all_launches(), report);
    }
  }
  std::sort(report.steps.begin(), report.steps.end(), [](const Step& a, const Step& b) {
    return std::tuple(a.start_ns, a.pid, a.tid) < std::tuple(b.start_ns, b.pid, b.tid);
  });
  // Under prof-run's capture control only the recorded windows hold GPU work: the steps are those
  // that overlap one (the NVTX ranges outside are recorded too, since they open windows; a step
  // whose push opened a window starts a moment before it).
  if (const auto recorded = db::capture_windows(reader); !recorded.empty()) {
    std::erase_if(report.steps, [&recorded](const Step& s) {
      for (const auto& w : recorded) {
        if (s.start_ns < w.end_ns && s.end_ns > w.start_ns) return false;
      }
      return true;
    });
    report.note += " (those inside the " + std::to_string(recorded.size()) + " recorded window" +
                   (recorded.size() == 1 ? ")" : "s)");
  }
  for (std::size_t i = 0; i < report.steps.size(); ++i)
    report.steps[i].index = static_cast<int>(i + 1);
  report.step_count = static_cast<int>(report.steps.size());
  if (!report.steps.empty()) {
    const steps_detail::StepContext context(reader);
    const auto delay = options.consecutive_kernel_delay_ns;
    if (launches) {
      steps_detail::fill_steps(context, *launches, delay, report.steps);
    } else {
      const std::vector<Step> windows = report.steps;
      if (!steps_detail::stream_steps(reader, context, delay, report.steps)) {
        if (options.streamed_only) {
          report.steps.clear();
          report.step_count = 0;
          report.note =
              "the launches come out of call order (filling the steps then holds every launch)";
          report.skipped = true;
          return report;
        }
        report.steps = windows;
        steps_detail::fill_steps(context, all_launches(), delay, report.steps);
      }
    }
  }
  steps_detail::summarize_steps(reader, report);
  return report;
}

}  // namespace fuselens::analyzer
