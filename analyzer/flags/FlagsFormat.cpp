#include "flags/FlagsFormat.h"

#include <fmt/format.h>

#include <ostream>
#include <string>

namespace fuselens::analyzer {
namespace {

using nlohmann::json;

json optional_id(const std::optional<std::uint32_t>& id) { return id ? json(*id) : json(nullptr); }

std::string id_text(const std::optional<std::uint32_t>& id) {
  return id ? std::to_string(*id) : std::string();
}

std::string metrics_text(const Hit& h) {
  std::string out;
  for (const auto& [key, value] : h.metrics) {
    if (!out.empty()) out += ';';
    out += key + '=' + fmt::format("{}", value);
  }
  return out;
}

std::string rel(const FlagsReport& r, std::int64_t t) {
  return "+" + format_duration(static_cast<double>(t - r.origin_ns));
}

std::string where(const Hit& h) {
  std::string out = h.subject.empty() ? std::string("(timeline)") : h.subject;
  if (h.device_id || h.stream_id) {
    out += "  [";
    if (h.device_id) out += "device " + std::to_string(*h.device_id);
    if (h.stream_id)
      out += std::string(h.device_id ? ", " : "") + "stream " + std::to_string(*h.stream_id);
    out += "]";
  }
  out += "  range: " + (h.range.empty() ? std::string("(none)") : h.range);
  if (h.pid) {
    out += "  pid " + std::to_string(*h.pid);
    if (h.tid) out += " tid " + std::to_string(*h.tid);
  }
  return out;
}

void write_verdict(std::ostream& out, const FlagsReport& r) {
  const FlagsVerdict& v = r.verdict;
  out << "Verdict: " << v.headline << "\n";
  if (!v.causes.empty()) {
    out << "  top causes:\n";
    for (std::size_t i = 0; i < v.causes.size(); ++i) {
      out << fmt::format("  {}. {}\n", i + 1, v.causes[i]);
    }
  }
  // A window other than the whole capture names its start-up on its own "Window:" line.
  if (!v.startup.empty() && r.window.whole) out << "  " << v.startup << "\n";
  out << "\n";
}

void write_table(std::ostream& out, const FlagsReport& r, std::size_t limit) {
  out << "FuseLens flags: " << r.path << "\n";
  std::string rules;
  for (const auto& id : r.rules_run) rules += (rules.empty() ? "" : ", ") + id;
  out << "Rules run: " << rules << "\n";
  std::string changed;
  for (const auto& t : flag_thresholds()) {
    const auto it = r.thresholds.find(t.key);
    if (it != r.thresholds.end() && it->second != t.default_value) {
      changed +=
          (changed.empty() ? "" : ", ") + std::string(t.key) + "=" + fmt::format("{}", it->second);
    }
  }
  out << "Thresholds: " << (changed.empty() ? "defaults" : changed) << "\n\n";
  write_verdict(out, r);

  out << "Summary:\n\n";
  out << fmt::format(" {:<16}  {:>5}  {:>14}  {}\n", "Rule", "Hits", "Time at stake", "Title");
  out << fmt::format(" {:<16}  {:>5}  {:>14}  {}\n", "----", "----", "-------------", "-----");
  for (const auto& info : flag_rules()) {
    const std::string id(info.id);
    if (std::find(r.rules_run.begin(), r.rules_run.end(), id) == r.rules_run.end()) continue;
    const std::size_t n = r.hit_count(id);
    // fmt's width counts code points, so "µs" lines up.
    out << fmt::format(" {:<16}  {:>5}  {:>14}  {}\n", id, n,
                       n ? format_duration(static_cast<double>(r.time_at_stake(id))) : "-",
                       info.title);
  }
  out << "\n";
  if (r.hits.empty()) {
    out << "No rule fired.\n";
    return;
  }
  out << (r.window.steps.empty() ? "Hits, ranked by time at stake in the window:\n\n"
                                 : "Hits, ranked by time at stake per step:\n\n");
  std::string advice;
  std::size_t n = 0;
  for (const Hit& h : r.hits) {
    if (limit > 0 && n >= limit) break;
    out << fmt::format(" {:>3}. [{}] {}\n", ++n, h.rule, where(h));
    if (!h.context.empty()) out << "      called from " << h.context << "\n";
    out << fmt::format(
        "      at stake {} ({:.1f} % of the window) over {} instance{}, first at {}\n",
        format_duration(static_cast<double>(h.time_ns)), h.metric("window_percent"), h.count,
        h.count == 1 ? "" : "s", rel(r, h.first_ns));
    if (!h.detail.empty()) out << "      " << h.detail << "\n";
    // Advice repeats: print it when it changes.
    if (!h.advice.empty() && h.advice != advice) out << "      -> " << h.advice << "\n";
    advice = h.advice;
    out << "\n";
  }
  if (limit > 0 && r.hits.size() > limit) {
    out << fmt::format("      ... {} more hits (--limit 0 shows all; --rules picks rules)\n",
                       r.hits.size() - limit);
  }
}

void write_csv(std::ostream& out, const FlagsReport& r) {
  out << "rule,time_ns,count,subject,device_id,stream_id,pid,tid,range,context,first_ns,detail,"
         "advice,metrics\n";
  const FlagsVerdict& v = r.verdict;
  std::string causes, numbers;
  for (const auto& c : v.causes) causes += (causes.empty() ? "" : " | ") + c;
  numbers = fmt::format(
      "steps={};busy_percent={};compute_percent={};non_compute_percent={};idle_percent={};"
      "host_wait_percent={};kernel_wait_percent={};other_wait_percent={};sync_percent={}",
      v.steps, v.busy_percent, v.compute_percent, v.non_compute_percent, v.idle_percent,
      v.host_wait_percent, v.kernel_wait_percent, v.other_wait_percent, v.sync_percent);
  out << "verdict," << v.span_ns << ',' << v.steps << ',' << csv_field(v.kind) << ",,,,,,,,"
      << csv_field(v.headline) << ',' << csv_field(causes) << ',' << csv_field(numbers) << '\n';
  if (v.startup_ns > 0) {
    out << "startup," << v.startup_ns << ",1,,,,,,,,," << csv_field(v.startup) << ",,\n";
  }
  for (const Hit& h : r.hits) {
    out << csv_field(h.rule) << ',' << h.time_ns << ',' << h.count << ',' << csv_field(h.subject)
        << ',' << id_text(h.device_id) << ',' << id_text(h.stream_id) << ',' << id_text(h.pid)
        << ',' << id_text(h.tid) << ',' << csv_field(h.range) << ',' << csv_field(h.context) << ','
        << h.first_ns << ',' << csv_field(h.detail) << ',' << csv_field(h.advice) << ','
        << csv_field(metrics_text(h)) << '\n';
  }
}

}  // namespace

json verdict_to_json(const FlagsVerdict& v) {
  return {{"window", v.window},
          {"kind", v.kind},
          {"headline", v.headline},
          {"causes", v.causes},
          {"steps", v.steps},
          {"span_ns", v.span_ns},
          {"busy_percent", v.busy_percent},
          {"compute_percent", v.compute_percent},
          {"non_compute_percent", v.non_compute_percent},
          {"idle_percent", v.idle_percent},
          {"host_wait_percent", v.host_wait_percent},
          {"kernel_wait_percent", v.kernel_wait_percent},
          {"other_wait_percent", v.other_wait_percent},
          {"sync_percent", v.sync_percent},
          {"startup_ns", v.startup_ns},
          {"startup", v.startup}};
}

json flags_to_json(const FlagsReport& r) {
  json doc;
  doc["capture"] = r.path;
  doc["origin_ns"] = r.origin_ns;
  doc["rules_run"] = r.rules_run;
  doc["thresholds"] = json::object();
  for (const auto& [key, value] : r.thresholds) doc["thresholds"][key] = value;
  doc["summary"] = json::array();
  for (const auto& info : flag_rules()) {
    const std::string id(info.id);
    if (std::find(r.rules_run.begin(), r.rules_run.end(), id) == r.rules_run.end()) continue;
    doc["summary"].push_back({{"rule", id},
                              {"title", std::string(info.title)},
                              {"hits", r.hit_count(id)},
                              {"time_ns", r.time_at_stake(id)}});
  }
  doc["verdict"] = verdict_to_json(r.verdict);
  doc["verdict"]["window_inside_ns"] = r.window.inside_ns;
  doc["hits"] = json::array();
  for (const Hit& h : r.hits) {
    json metrics = json::object();
    for (const auto& [key, value] : h.metrics) metrics[key] = value;
    doc["hits"].push_back({{"rule", h.rule},
                           {"time_ns", h.time_ns},
                           {"count", h.count},
                           {"subject", h.subject},
                           {"device_id", optional_id(h.device_id)},
                           {"stream_id", optional_id(h.stream_id)},
                           {"pid", optional_id(h.pid)},
                           {"tid", optional_id(h.tid)},
                           {"range", h.range},
                           {"context", h.context},
                           {"first_ns", h.first_ns},
                           {"detail", h.detail},
                           {"advice", h.advice},
                           {"metrics", metrics}});
  }
  return doc;
}

void write_flags(std::ostream& out, const FlagsReport& report, OutputFormat format,
                 std::size_t table_limit) {
  switch (format) {
    case OutputFormat::Table:
      write_table(out, report, table_limit);
      return;
    case OutputFormat::Csv:
      write_csv(out, report);
      return;
    case OutputFormat::Json:
      out << flags_to_json(report).dump(2) << '\n';
      return;
  }
}

}  // namespace fuselens::analyzer
