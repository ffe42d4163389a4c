#include "store/FlagsStoreJson.h"

#include <limits>

#include "flags/FlagsFormat.h"
#include "fuselens/db/Records.h"

namespace fuselens::analyzer::store {
namespace {

constexpr std::int64_t kMaxNs = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMinNs = std::numeric_limits<std::int64_t>::min();

Json optional_u32(const std::optional<std::uint32_t>& v) { return v ? Json(*v) : Json(nullptr); }

Json hit_to_json(const Hit& h) {
  Json metrics = Json::array();
  for (const auto& [key, value] : h.metrics) metrics.push_back(Json::array({key, value}));
  return {{"rule", h.rule},
          {"subject", h.subject},
          {"device_id", optional_u32(h.device_id)},
          {"stream_id", optional_u32(h.stream_id)},
          {"pid", optional_u32(h.pid)},
          {"tid", optional_u32(h.tid)},
          {"range", h.range},
          {"context", h.context},
          {"count", h.count},
          {"time_ns", h.time_ns},
          {"first_ns", h.first_ns},
          {"detail", h.detail},
          {"advice", h.advice},
          {"metrics", std::move(metrics)}};
}

Hit hit_from_json(const Json& j) {
  Hit h;
  h.rule = text_member(j, "rule");
  bool known = false;
  for (const auto& r : flag_rules()) known = known || r.id == h.rule;
  if (!known) throw BadStore("unknown rule");
  h.subject = text_member(j, "subject");
  h.device_id = u32_or_null(j, "device_id");
  h.stream_id = u32_or_null(j, "stream_id");
  h.pid = u32_or_null(j, "pid");
  h.tid = u32_or_null(j, "tid");
  h.range = text_member(j, "range");
  h.context = text_member(j, "context");
  h.count = int_member(j, "count", 0, kMaxNs);
  h.time_ns = int_member(j, "time_ns", kMinNs, kMaxNs);
  h.first_ns = int_member(j, "first_ns", kMinNs, kMaxNs);
  h.detail = text_member(j, "detail");
  h.advice = text_member(j, "advice");
  for (const Json& m : array_member(j, "metrics")) {
    if (!m.is_array() || m.size() != 2) throw BadStore("a metric is not [key, value]");
    h.metrics.emplace_back(text_of(m[0]), real_of(m[1]));
  }
  return h;
}

}  // namespace

Json flags_to_json(const FlagsReport& r) {
  Json hits = Json::array();
  for (const Hit& h : r.hits) hits.push_back(hit_to_json(h));
  Json thresholds = Json::array();
  for (const auto& [key, value] : r.thresholds) thresholds.push_back(Json::array({key, value}));
  const FlagsWindow& w = r.window;
  const FlagsVerdict& v = r.verdict;
  return {{"origin_ns", r.origin_ns},
          {"cuda_used", r.cuda_used},
          {"rules_run", r.rules_run},
          {"thresholds", std::move(thresholds)},
          {"hits", std::move(hits)},
          {"window",
           {{"label", w.label},
            {"description", w.description},
            {"whole", w.whole},
            {"inside_ns", w.inside_ns},
            {"steps", w.steps.size()},
            {"step_pattern", w.step_pattern},
            {"startup_ns", w.startup_ns},
            {"startup_end_ns", w.startup_end_ns},
            {"startup_before", w.startup_before}}},
          {"verdict", verdict_to_json(v)}};
}

FlagsReport flags_from_json(const Json& j, const std::vector<Step>& steps) {
  FlagsReport r;
  r.origin_ns = int_member(j, "origin_ns", kMinNs, kMaxNs);
  r.cuda_used = bool_member(j, "cuda_used");
  for (const Json& rule : array_member(j, "rules_run")) r.rules_run.push_back(text_of(rule));
  for (const Json& t : array_member(j, "thresholds")) {
    if (!t.is_array() || t.size() != 2) throw BadStore("a threshold is not [key, value]");
    r.thresholds[text_of(t[0])] = real_of(t[1]);
  }
  for (const Json& h : array_member(j, "hits")) r.hits.push_back(hit_from_json(h));
  const Json& w = member(j, "window");
  FlagsWindow& fw = r.window;
  fw.label = text_member(w, "label");
  fw.description = text_member(w, "description");
  fw.whole = bool_member(w, "whole");
  fw.inside_ns = int_member(w, "inside_ns", 0, kMaxNs);
  if (int_member(w, "steps", 0, kMaxNs) != static_cast<std::int64_t>(steps.size()))
    throw BadStore("the window's steps differ");
  fw.steps = steps;
  fw.step_pattern = text_member(w, "step_pattern");
  fw.startup_ns = int_member(w, "startup_ns", 0, kMaxNs);
  fw.startup_end_ns = int_member(w, "startup_end_ns", kMinNs, kMaxNs);
  fw.startup_before = text_member(w, "startup_before");
  const Json& v = member(j, "verdict");
  FlagsVerdict& fv = r.verdict;
  fv.window = text_member(v, "window");
  fv.kind = text_member(v, "kind");
  fv.headline = text_member(v, "headline");
  for (const Json& c : array_member(v, "causes")) fv.causes.push_back(text_of(c));
  fv.steps = static_cast<int>(int_member(v, "steps", 0, std::numeric_limits<int>::max()));
  fv.span_ns = int_member(v, "span_ns", kMinNs, kMaxNs);
  fv.busy_percent = real_member(v, "busy_percent");
  fv.compute_percent = real_member(v, "compute_percent");
  fv.non_compute_percent = real_member(v, "non_compute_percent");
  fv.idle_percent = real_member(v, "idle_percent");
  fv.host_wait_percent = real_member(v, "host_wait_percent");
  fv.kernel_wait_percent = real_member(v, "kernel_wait_percent");
  fv.other_wait_percent = real_member(v, "other_wait_percent");
  fv.sync_percent = real_member(v, "sync_percent");
  fv.startup_ns = int_member(v, "startup_ns", kMinNs, kMaxNs);
  fv.startup = text_member(v, "startup");
  return r;
}

}  // namespace fuselens::analyzer::store
