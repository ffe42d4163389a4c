#include "flags/Flags.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <exception>
#include <iterator>
#include <string_view>
#include <system_error>
#include <thread>
#include <unordered_map>

#include "flags/FlagsRules.h"
#include "summary/SummaryFormat.h"

namespace fuselens::analyzer {
namespace {

constexpr std::string_view kHta = "Holistic Trace Analysis (HTA)";
constexpr std::string_view kNsys = "Nsight Systems expert rules";

std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t");
  return std::string(text.substr(first, last - first + 1));
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

bool known_rule(std::string_view id) {
  const auto& rules = flag_rules();
  return std::any_of(rules.begin(), rules.end(), [&](const RuleInfo& r) { return r.id == id; });
}

std::size_t rule_order(std::string_view id) {
  const auto& rules = flag_rules();
  for (std::size_t i = 0; i < rules.size(); ++i) {
    if (rules[i].id == id) return i;
  }
  return rules.size();
}

}  // namespace

const std::vector<RuleInfo>& flag_rules() {
  static const std::vector<RuleInfo> rules{
      {"launch_short", "Launch-overhead-dominated kernels (GPU time < CPU launch time)", kHta},
      {"launch_delay", "Launch-delay outliers (kernel starts long after its launch returned)",
       kHta},
      {"runtime_outlier", "Runtime-call outliers (slow kernel launch calls)", kHta},
      {"stream_idle", "GPU idle per stream: host wait, kernel wait, other", kHta},
      {"gpu_gaps", "GPU gaps (device idle between its first and last operation)", kNsys},
      {"gpu_utilization", "Low GPU time utilization (chunks of the timeline)", kNsys},
      {"sync_memcpy", "Synchronous memory copies", kNsys},
      {"async_pageable", "Asynchronous copies touching pageable host memory", kNsys},
      {"sync_memset", "Synchronous memsets on pinned or managed memory", kNsys},
      {"sync_api", "Synchronization calls in the hot path", kNsys},
      {"fusion_chain", "Fusion opportunities: repeated back-to-back kernel chains",
       "FuseLens (launch costs as HTA; memory-bound test as the roofline model)"},
  };
  return rules;
}

const std::vector<ThresholdInfo>& flag_thresholds() {
  static const std::vector<ThresholdInfo> thresholds{
      {"launch_short.runtime_cutoff_us", 50, "launch calls up to this CPU time qualify", kHta},
      {"launch_delay.cutoff_us", 100, "launch delay above this is an outlier", kHta},
      {"runtime_outlier.cutoff_us", 50, "launch calls above this CPU time are outliers", kHta},
      {"stream_idle.kernel_wait_ns", 30,
       "gaps below this (and not host wait) are kernel wait (consecutive_kernel_delay)", kHta},
      {"stream_idle.min_idle_percent", 10,
       "report a stream and launch site when idle is at least this share of its span", "FuseLens"},
      {"gpu_gaps.min_gap_ms", 500, "device idle stretches of at least this length", kNsys},
      {"gpu_utilization.chunks", 30, "number of equal chunks the device timeline is cut into",
       kNsys},
      {"gpu_utilization.max_percent", 50, "chunks busy less than this share are reported", kNsys},
      {"sync_memcpy.small_htod_bytes", 65536,
       "synchronous Host-to-Device copies up to this size are not reported", kNsys},
      {"fusion_chain.max_gap_us", 20,
       "largest GPU gap between two kernels of a chain (the top of the 5-20 us typical launch "
       "cost)",
       "FuseLens"},
      {"fusion_chain.min_kernels", 2, "kernels per chain", "FuseLens"},
      {"fusion_chain.min_repeats", 2, "occurrences of the same chain needed to report it",
       "FuseLens"},
  };
  return thresholds;
}

FlagsConfig::FlagsConfig() {
  for (const auto& t : flag_thresholds()) thresholds_.emplace(std::string(t.key), t.default_value);
}

double FlagsConfig::get(std::string_view key) const {
  const auto it = thresholds_.find(key);
  if (it == thresholds_.end()) throw FlagsError("unknown threshold '" + std::string(key) + "'");
  return it->second;
}

std::int64_t FlagsConfig::get_ns(std::string_view key) const {
  const double v = get(key);
  double scale = 1;
  if (ends_with(key, "_us")) scale = 1e3;
  if (ends_with(key, "_ms")) scale = 1e6;
  return static_cast<std::int64_t>(std::llround(v * scale));
}

void FlagsConfig::set(std::string_view key, double value) {
  const auto it = thresholds_.find(key);
  if (it == thresholds_.end()) {
    std::string known;
    for (const auto& t : flag_thresholds())
      known += (known.empty() ? "" : ", ") + std::string(t.key);
    throw FlagsError("unknown threshold '" + std::string(key) + "' (known: " + known + ")");
  }
  if (!std::isfinite(value) || value < 0 || value > 1e15) {
    throw FlagsError("threshold '" + std::string(key) + "' must be a number between 0 and 1e15");
  }
  if ((key == "gpu_utilization.chunks" && value < 1) ||
      (key == "fusion_chain.min_kernels" && value < 2) ||
      (key == "fusion_chain.min_repeats" && value < 1)) {
    throw FlagsError("threshold '" + std::string(key) + "' is too small");
  }
  it->second = value;
}

void FlagsConfig::set(std::string_view assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string_view::npos) {
    throw FlagsError("threshold '" + std::string(assignment) + "' is not KEY=VALUE");
  }
  const std::string key = trim(assignment.substr(0, eq));
  const std::string text = trim(assignment.substr(eq + 1));
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    throw FlagsError("threshold '" + key + "': '" + text + "' is not a number");
  }
  set(key, value);
}

void FlagsConfig::select_rules(const std::vector<std::string>& rules) {
  for (const auto& r : rules) {
    if (!known_rule(r)) throw FlagsError("unknown rule '" + r + "'");
  }
  selected_ = rules;
}

bool FlagsConfig::enabled(std::string_view rule) const {
  return selected_.empty() ||
         std::find(selected_.begin(), selected_.end(), rule) != selected_.end();
}

std::vector<std::string> parse_rule_list(std::string_view comma_separated) {
  std::vector<std::string> rules;
  while (!comma_separated.empty()) {
    const auto comma = comma_separated.find(',');
    const std::string item = trim(comma_separated.substr(0, comma));
    comma_separated =
        comma == std::string_view::npos ? std::string_view() : comma_separated.substr(comma + 1);
    if (item.empty()) continue;
    if (!known_rule(item)) {
      std::string known;
      for (const auto& r : flag_rules()) known += (known.empty() ? "" : ", ") + std::string(r.id);
      throw FlagsError("unknown rule '" + item + "' (known: " + known + ")");
    }
    rules.push_back(item);
  }
  return rules;
}

void Hit::add_metric(const std::string& key, double value) {
  for (auto& [k, v] : metrics) {
    if (k == key) {
      v += value;
      return;
    }
  }
  metrics.emplace_back(key, value);
}

void Hit::set_metric(const std::string& key, double value) {
  for (auto& [k, v] : metrics) {
    if (k == key) {
      v = value;
      return;
    }
  }
  metrics.emplace_back(key, value);
}

double Hit::metric(std::string_view key) const {
  for (const auto& [k, v] : metrics) {
    if (k == key) return v;
  }
  return 0;
}

std::size_t FlagsReport::hit_count(std::string_view rule) const {
  return static_cast<std::size_t>(
      std::count_if(hits.begin(), hits.end(), [&](const Hit& h) { return h.rule == rule; }));
}

std::int64_t FlagsReport::time_at_stake(std::string_view rule) const {
  std::int64_t total = 0;
  for (const Hit& h : hits) {
    if (h.rule == rule) total += h.time_ns;
  }
  return total;
}

HitSite op_site(const FlagsTrace& trace, const TraceOp& op) {
  HitSite site;
  site.subject = std::string(op.name);
  site.device_id = op.device_id;
  site.stream_id = op.stream_id;
  site.pid = op.pid;
  if (const TraceCall* call = trace.launch_call(op)) {
    site.tid = call->tid;
    if (call->context >= 0) {
      site.context = trace.context_texts[static_cast<std::size_t>(call->context)];
    }
  }
  if (const TraceRange* range = trace.launch_range(op)) site.range = range->name;
  return site;
}

HitSite call_site(const FlagsTrace& trace, const TraceCall& call, std::string subject) {
  HitSite site;
  site.subject = std::move(subject);
  site.pid = call.pid;
  site.tid = call.tid;
  if (call.range >= 0) site.range = trace.ranges[static_cast<std::size_t>(call.range)].name;
  if (call.context >= 0) site.context = trace.context_texts[static_cast<std::size_t>(call.context)];
  return site;
}

Hit make_hit(std::string rule, const HitSite& site, std::int64_t time_ns, std::int64_t start_ns) {
  Hit h;
  h.rule = std::move(rule);
  h.subject = site.subject;
  h.device_id = site.device_id;
  h.stream_id = site.stream_id;
  h.pid = site.pid;
  h.tid = site.tid;
  h.range = site.range;
  h.context = site.context;
  h.count = 1;
  h.time_ns = time_ns;
  h.first_ns = start_ns;
  h.instance_ns.push_back(start_ns);
  return h;
}

void HitAggregator::count(Hit& h, std::int64_t time_ns, std::int64_t start_ns) {
  ++h.count;
  h.time_ns += time_ns;
  h.first_ns = std::min(h.first_ns, start_ns);
  h.instance_ns.push_back(start_ns);
}

Hit& HitAggregator::add(const HitSite& site, std::int64_t time_ns, std::int64_t start_ns) {
  auto it = hits_.find(site);
  if (it == hits_.end()) {
    return hits_.emplace(site, make_hit(rule_, site, time_ns, start_ns)).first->second;
  }
  count(it->second, time_ns, start_ns);
  return it->second;
}

Hit& HitAggregator::add_cached(const HitSite& site, std::int64_t time_ns, std::int64_t start_ns) {
  if (const auto known = by_address_.find(&site); known != by_address_.end()) {
    count(*known->second, time_ns, start_ns);
    return *known->second;
  }
  Hit& h = add(site, time_ns, start_ns);  // std::map: the hit's address is stable
  by_address_.emplace(&site, &h);
  return h;
}

std::vector<Hit> HitAggregator::take() {
  std::vector<Hit> out;
  out.reserve(hits_.size());
  for (auto& [site, hit] : hits_) out.push_back(std::move(hit));
  hits_.clear();
  by_address_.clear();
  return out;
}

std::size_t SiteCache::KeyHash::operator()(const Key& k) const {
  std::size_t h = std::hash<const void*>()(k.name);
  const auto mix = [&h](std::uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
  mix(k.name_size);
  mix(static_cast<std::uint64_t>(k.device) << 32 | k.stream);
  mix(static_cast<std::uint64_t>(k.pid) << 32 | static_cast<std::uint32_t>(k.range));
  mix(static_cast<std::uint64_t>(k.tid));
  mix(static_cast<std::uint32_t>(k.context));
  mix(k.stream_site ? 1 : 0);
  return h;
}

SiteCache::SiteCache(const FlagsTrace& trace) : trace_(trace) {
  std::unordered_map<std::string_view, int> ids;
  range_names_.reserve(trace.ranges.size());
  for (const TraceRange& r : trace.ranges) {
    range_names_.push_back(ids.try_emplace(r.name, static_cast<int>(ids.size())).first->second);
  }
}

const HitSite& SiteCache::find(const Key& key, const TraceOp& op) {
  auto& slot = sites_[key];
  if (!slot) {
    HitSite site = op_site(trace_, op);
    if (key.stream_site) {
      site.subject.clear();
      site.context.clear();
      if (key.range < 0) {
        site.range.clear();
        site.tid.reset();
      }
    }
    slot = std::make_unique<HitSite>(std::move(site));
  }
  return *slot;
}

const HitSite& SiteCache::op(const TraceOp& op) {
  Key key;
  key.name = op.name.data();
  key.name_size = op.name.size();
  key.device = op.device_id;
  key.stream = op.stream_id;
  key.pid = op.pid;
  if (const TraceCall* call = trace_.launch_call(op)) {
    key.tid = call->tid;
    key.range = call->range >= 0 ? range_names_[static_cast<std::size_t>(call->range)] : -1;
    key.context = call->context;
  }
  return find(key, op);
}

const HitSite& SiteCache::stream(const TraceOp& op, bool outside) {
  Key key;
  key.stream_site = true;
  key.device = op.device_id;
  key.stream = op.stream_id;
  key.pid = op.pid;
  const TraceCall* call = trace_.launch_call(op);
  if (!outside && call != nullptr && call->range >= 0) {
    key.tid = call->tid;
    key.range = range_names_[static_cast<std::size_t>(call->range)];
  }
  return find(key, op);
}

std::string flags_duration(double ns) { return format_duration(ns); }

FlagsReport run_flags(const FlagsTrace& trace, const FlagsConfig& given,
                      const FlagsWindow& window) {
  FlagsConfig config = given;
  config.set_startup_end_ns(window.startup_end_ns);
  FlagsReport report;
  report.origin_ns = trace.origin_ns;
  report.cuda_used = trace.cuda_used;
  report.thresholds = config.thresholds();
  for (const auto& r : flag_rules()) {
    if (config.enabled(r.id)) report.rules_run.emplace_back(r.id);
  }
  // The families read the trace and nothing else: each on a thread of its own (fusion_chain and
  // the launch rules take about as long as the rest together on ten million launches), their
  // hits then taken in family order as before.
  using Family = std::vector<Hit> (*)(const FlagsTrace&, const FlagsConfig&);
  constexpr Family kFamilies[] = {&find_launch_hits, &find_timeline_hits, &find_memory_hits,
                                  &find_fusion_hits};
  constexpr std::size_t kCount = std::size(kFamilies);
  std::vector<Hit> found[kCount];
  std::exception_ptr errors[kCount];
  const auto run = [&](std::size_t i) {
    try {
      found[i] = kFamilies[i](trace, config);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(kCount - 1);  // no allocation once a thread runs: a throw would leave it unjoined
  try {
    for (std::size_t i = 1; i < kCount; ++i) threads.emplace_back(run, i);
  } catch (const std::system_error&) {
  }
  run(0);
  for (std::size_t i = threads.size() + 1; i < kCount; ++i) run(i);  // those without a thread
  for (auto& t : threads) t.join();
  for (std::size_t i = 0; i < kCount; ++i) {
    if (errors[i]) std::rethrow_exception(errors[i]);
    for (auto& h : found[i]) {
      if (config.enabled(h.rule)) report.hits.push_back(std::move(h));
    }
  }
  // Rule order first, so that the ranking below breaks ties in it.
  std::stable_sort(report.hits.begin(), report.hits.end(), [](const Hit& a, const Hit& b) {
    const auto ra = rule_order(a.rule), rb = rule_order(b.rule);
    if (ra != rb) return ra < rb;
    if (a.time_ns != b.time_ns) return a.time_ns > b.time_ns;
    return a.first_ns < b.first_ns;
  });
  apply_window_to_flags(trace, window, config.get_ns("stream_idle.kernel_wait_ns"), report);
  return report;
}

FlagsReport run_flags(const db::Reader& reader, const FlagsConfig& config, NameKind names,
                      const Window* window, FramesMode frames) {
  const FlagsWindow context = flags_window(reader, window);
  FlagsReport report = run_flags(load_flags_trace(reader, names, frames), config, context);
  report.path = reader.path();
  return report;
}

}  // namespace fuselens::analyzer
