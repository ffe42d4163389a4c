#include "compare/CompareFormat.h"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace fuselens::analyzer {
namespace {

using nlohmann::json;

/// One CSV/JSON section: the column order and the rows as objects keyed by column.
struct Section {
  const char* name;
  std::vector<const char*> columns;
  std::vector<json> rows;
};

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

const char* basis_name(TimeBasis basis) { return basis == TimeBasis::Span ? "span" : "gpu"; }

/// The gate's columns of a comparison row (null where the entry has no gate or no value).
void add_gate_columns(json& row, const CompareReport& report, const CompareEntry& e) {
  const EntryGate* g = e.gate ? &*e.gate : nullptr;
  const auto interval = [g](double RatioInterval::*field) {
    return g && g->interval ? json((*g->interval).*field) : json(nullptr);
  };
  const auto noise = [g](const Noise EntryGate::*side, std::optional<double> Noise::*field) {
    return g ? opt((g->*side).*field) : json(nullptr);
  };
  row["time_basis"] = report.gate ? json(basis_name(report.gate->basis)) : json(nullptr);
  row["baseline_instances"] = e.baseline ? json(e.baseline->instances) : json(nullptr);
  row["candidate_instances"] = e.candidate ? json(e.candidate->instances) : json(nullptr);
  row["speedup_ci_low"] = interval(&RatioInterval::low);
  row["speedup_ci_high"] = interval(&RatioInterval::high);
  row["baseline_cv"] = noise(&EntryGate::baseline_noise, &Noise::cv);
  row["candidate_cv"] = noise(&EntryGate::candidate_noise, &Noise::cv);
  row["baseline_iqr_over_median"] = noise(&EntryGate::baseline_noise, &Noise::iqr_over_median);
  row["candidate_iqr_over_median"] = noise(&EntryGate::candidate_noise, &Noise::iqr_over_median);
  row["mann_whitney_p"] = g && g->rank_test ? json(g->rank_test->p_two_sided) : json(nullptr);
  row["verdict"] = g ? json(to_string(g->verdict)) : json(nullptr);
  std::string note;
  if (g && g->by_medians) note = std::string(describe(g->problem)) + "; decided on the medians";
  row["verdict_note"] = g ? json(note) : json(nullptr);
}

json matrix_row(const CompareEntry& e, const RangeStats& r, bool baseline) {
  json peaks = json::object();
  for (const auto& [device, bytes] : r.peak_device_bytes) peaks[std::to_string(device)] = bytes;
  std::optional<double> speedup;
  if (baseline) {
    speedup = 1.0;
  } else if (e.speedup) {
    speedup = e.speedup;
  }
  return {{"op", e.op},
          {"shape", e.shape},
          {"variant", baseline ? e.baseline_variant : e.candidate_variant},
          {"role", baseline ? "baseline" : "candidate"},
          {"range", r.name},
          {"instances", r.instances},
          {"iterations", r.iterations},
          {"median_gpu_ns_per_iter", r.median_gpu_ns_per_iter},
          {"kernels_per_iter", r.kernels_per_iter},
          {"launches_per_iter", r.launches_per_iter},
          {"memcpy_bytes_per_iter", r.memcpy_bytes_per_iter},
          {"memset_bytes_per_iter", r.memset_bytes_per_iter},
          {"peak_device_bytes", r.max_peak_bytes()},
          {"peak_device_bytes_by_device", peaks},
          {"iterations_per_s", r.iterations_per_s},
          {"items_per_s", opt(r.items_per_s)},
          {"speedup_vs_baseline", opt(e.speedup ? speedup : std::nullopt)},
          {"median_span_ns_per_iter", r.median_span_ns_per_iter},
          {"span_speedup_vs_baseline",
           opt(e.span_speedup ? (baseline ? 1.0 : *e.span_speedup) : std::optional<double>())},
          {"projection", to_string(r.projection)},
          {"left_out_kernels", r.left_out_kernels}};
}

std::vector<Section> sections(const CompareReport& report) {
  // clang-format off
  Section comparisons{
      "comparisons",
      {"op", "shape", "key", "baseline_range", "candidate_range", "baseline_ns_per_iter",
       "candidate_ns_per_iter", "speedup", "baseline_kernels_per_iter",
       "candidate_kernels_per_iter", "baseline_launches_per_iter", "candidate_launches_per_iter",
       "baseline_span_ns_per_iter", "candidate_span_ns_per_iter", "span_speedup",
       // the gate's (CompareGate.h), on its time basis
       "time_basis", "baseline_instances", "candidate_instances", "speedup_ci_low",
       "speedup_ci_high", "baseline_cv", "candidate_cv", "baseline_iqr_over_median",
       "candidate_iqr_over_median", "mann_whitney_p", "verdict", "verdict_note"},
      {}};
  Section matrix{"matrix",
                 {"op", "shape", "variant", "role", "range", "instances", "iterations",
                  "median_gpu_ns_per_iter", "kernels_per_iter", "launches_per_iter",
                  "memcpy_bytes_per_iter", "memset_bytes_per_iter", "peak_device_bytes",
                  "iterations_per_s", "items_per_s", "speedup_vs_baseline",
                  "median_span_ns_per_iter", "span_speedup_vs_baseline", "projection",
                  "left_out_kernels"},
                 {}};
  // clang-format on
  for (const CompareEntry& e : report.entries) {
    const auto side = [](const std::optional<RangeStats>& r, auto field) -> json {
      return r ? json(field(*r)) : json(nullptr);
    };
    comparisons.rows.push_back(
        {{"op", e.op},
         {"shape", e.shape},
         {"key", e.key},
         {"baseline_range", side(e.baseline, [](const RangeStats& r) { return r.name; })},
         {"candidate_range", side(e.candidate, [](const RangeStats& r) { return r.name; })},
         {"baseline_ns_per_iter",
          side(e.baseline, [](const RangeStats& r) { return r.median_gpu_ns_per_iter; })},
         {"candidate_ns_per_iter",
          side(e.candidate, [](const RangeStats& r) { return r.median_gpu_ns_per_iter; })},
         {"speedup", opt(e.speedup)},
         {"baseline_kernels_per_iter",
          side(e.baseline, [](const RangeStats& r) { return r.kernels_per_iter; })},
         {"candidate_kernels_per_iter",
          side(e.candidate, [](const RangeStats& r) { return r.kernels_per_iter; })},
         {"baseline_launches_per_iter",
          side(e.baseline, [](const RangeStats& r) { return r.launches_per_iter; })},
         {"candidate_launches_per_iter",
          side(e.candidate, [](const RangeStats& r) { return r.launches_per_iter; })},
         {"baseline_span_ns_per_iter",
          side(e.baseline, [](const RangeStats& r) { return r.median_span_ns_per_iter; })},
         {"candidate_span_ns_per_iter",
          side(e.candidate, [](const RangeStats& r) { return r.median_span_ns_per_iter; })},
         {"span_speedup", opt(e.span_speedup)}});
    add_gate_columns(comparisons.rows.back(), report, e);
    if (e.baseline) matrix.rows.push_back(matrix_row(e, *e.baseline, true));
    if (e.candidate) matrix.rows.push_back(matrix_row(e, *e.candidate, false));
  }
  std::vector<Section> out{std::move(comparisons), std::move(matrix)};
  if (report.two_captures) {
    Section diff{
        "kernel_diff",
        {"change", "name", "baseline_count", "candidate_count", "baseline_median_ns",
         "candidate_median_ns", "change_percent", "baseline_total_ns", "candidate_total_ns"},
        {}};
    for (const KernelDiffRow& k : report.kernel_diff) {
      diff.rows.push_back({{"change", to_string(k.change)},
                           {"name", k.name},
                           {"baseline_count", k.baseline_count},
                           {"candidate_count", k.candidate_count},
                           {"baseline_median_ns", k.baseline_median_ns},
                           {"candidate_median_ns", k.candidate_median_ns},
                           {"change_percent", opt(k.change_percent)},
                           {"baseline_total_ns", k.baseline_total_ns},
                           {"candidate_total_ns", k.candidate_total_ns}});
    }
    out.push_back(std::move(diff));
  }
  return out;
}

std::string csv_value(const json& v) {
  if (v.is_null()) return {};
  if (v.is_string()) return csv_field(v.get<std::string>());
  return v.dump();
}

void write_csv(std::ostream& out, const CompareReport& report) {
  const auto all = sections(report);
  for (std::size_t n = 0; n < all.size(); ++n) {
    const Section& s = all[n];
    if (n > 0) out << '\n';
    out << "# " << s.name << '\n';
    for (std::size_t i = 0; i < s.columns.size(); ++i) out << (i ? "," : "") << s.columns[i];
    out << '\n';
    for (const json& row : s.rows) {
      for (std::size_t i = 0; i < s.columns.size(); ++i) {
        out << (i ? "," : "") << csv_value(row.at(s.columns[i]));
      }
      out << '\n';
    }
  }
}

std::size_t width(std::string_view text) {
  std::size_t n = 0;
  for (const char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

/// Aligned text table: text columns (left_count first columns) left-aligned, others right.
void write_aligned(std::ostream& out, const std::vector<std::string>& headers,
                   const std::vector<std::vector<std::string>>& rows, std::size_t left_count) {
  std::vector<std::size_t> w;
  for (const auto& h : headers) w.push_back(width(h));
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) w[i] = std::max(w[i], width(row[i]));
  }
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const std::string fill(w[i] - width(cells[i]), ' ');
      text += i == 0 ? " " : "  ";
      text += i < left_count ? cells[i] + fill : fill + cells[i];
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out << text << '\n';
  };
  line(headers);
  std::vector<std::string> rule;
  for (const auto n : w) rule.emplace_back(n, '-');
  line(rule);
  for (const auto& row : rows) line(row);
  out << '\n';
}

std::string per_iter(double v) { return fmt::format("{:.2f}", v); }

/// "9.940 k it/s": three decimals with an SI prefix.
std::string rate(double per_s, const char* unit) {
  const char* prefix = "";
  for (const char* p : {"k", "M", "G", "T"}) {
    if (per_s < 1000) break;
    per_s /= 1000;
    prefix = p;
  }
  return fmt::format("{:.3f} {}{}", per_s, prefix, unit);
}

std::string pair_text(const std::optional<RangeStats>& a, const std::optional<RangeStats>& b,
                      std::string (*f)(const RangeStats&)) {
  return (a ? f(*a) : "-") + " -> " + (b ? f(*b) : "-");
}

std::string gate_interval(const CompareEntry& e) {
  if (!e.gate || !e.gate->interval) return "-";
  return fmt::format("[{:.2f}x, {:.2f}x]", e.gate->interval->low, e.gate->interval->high);
}

std::string gate_noise(const CompareEntry& e) {
  if (!e.gate) return "-";
  const auto cv = [](const Noise& n) {
    return n.n >= 2 && n.cv ? fmt::format("{:.1f} %", *n.cv * 100) : std::string("-");
  };
  return cv(e.gate->baseline_noise) + " -> " + cv(e.gate->candidate_noise);
}

std::string gate_verdict(const CompareEntry& e) {
  if (!e.gate) return "-";
  return std::string(to_string(e.gate->verdict)) + (e.gate->by_medians ? " (medians)" : "");
}

void write_table(std::ostream& out, const CompareReport& r) {
  const auto label = [](const std::string& path, const std::string& pattern) {
    return pattern.empty() ? path : path + "  ranges '" + pattern + "'";
  };
  out << "Baseline:  " << label(r.baseline_path, r.baseline_pattern) << "\n";
  out << "Candidate: " << label(r.candidate_path, r.candidate_pattern) << "\n\n";
  std::int64_t left_out = 0;
  for (const CompareEntry& e : r.entries) {
    for (const auto* s : {&e.baseline, &e.candidate}) left_out += *s ? (*s)->left_out_kernels : 0;
  }
  out << "Comparison (medians per iteration; speedup = baseline / candidate):\n"
         "  Time = GPU time, the durations of the kernels launched inside summed;\n"
      << fmt::format("  GPU projection: {} ({}; {} kernels launched inside the ranges left out)\n",
                     to_string(r.projection),
                     r.projection == NvtxProjection::Thread
                         ? "kernels launched by the range's own thread, as nvtx_gpu_proj_sum"
                         : "kernels launched by any thread of the range's process",
                     left_out)
      << "  Span = first start to last end of the GPU work launched inside, launch gaps "
         "included (what CUDA events around the loop measure)\n";
  if (r.gate) {
    const GateOptions& g = *r.gate;
    out << fmt::format(
        "  Gate on {}: Interval = {:g} % percentile bootstrap interval of the speedup, the ratio "
        "of the medians over the range instances ({} resamples, seed {})\n"
        "  Noise = coefficient of variation over the instances, baseline -> candidate\n"
        "  Verdict = slower, not slower, or inconclusive (the interval contains the threshold) "
        "by more than {:g} %; (medians): no interval (one instance on a side, or times that are "
        "0, negative or not finite), decided on the medians\n",
        g.basis == TimeBasis::Span ? "GPU span" : "GPU time", g.bootstrap.level * 100,
        std::max(g.bootstrap.resamples, 100), g.bootstrap.seed, g.threshold_percent);
  }
  out << "\n";
  std::vector<std::vector<std::string>> rows;
  for (const CompareEntry& e : r.entries) {
    const auto ns = [](const std::optional<RangeStats>& s) {
      return s ? format_duration(s->median_gpu_ns_per_iter) : std::string("-");
    };
    rows.push_back(
        {e.op, e.shape.empty() ? "-" : e.shape, e.baseline ? e.baseline_variant : "-",
         ns(e.baseline), e.candidate ? e.candidate_variant : "-", ns(e.candidate),
         e.speedup ? fmt::format("{:.2f}x", *e.speedup) : "-",
         pair_text(e.baseline, e.candidate,
                   [](const RangeStats& s) { return format_duration(s.median_span_ns_per_iter); }),
         e.span_speedup ? fmt::format("{:.2f}x", *e.span_speedup) : "-", gate_interval(e),
         gate_noise(e), gate_verdict(e),
         pair_text(e.baseline, e.candidate,
                   [](const RangeStats& s) { return per_iter(s.kernels_per_iter); }),
         pair_text(e.baseline, e.candidate,
                   [](const RangeStats& s) { return per_iter(s.launches_per_iter); }),
         pair_text(e.baseline, e.candidate,
                   [](const RangeStats& s) {
                     return format_bytes(s.memcpy_bytes_per_iter + s.memset_bytes_per_iter);
                   }),
         pair_text(e.baseline, e.candidate,
                   [](const RangeStats& s) {
                     return format_bytes(static_cast<double>(s.max_peak_bytes()));
                   }),
         pair_text(e.baseline, e.candidate, [](const RangeStats& s) {
           return s.items_per_s ? rate(*s.items_per_s, "items/s")
                                : rate(s.iterations_per_s, "it/s");
         })});
  }
  if (rows.empty()) {
    out << " (no NVTX ranges to compare)\n\n";
  } else {
    write_aligned(out,
                  {"Op", "Shape", "Baseline", "Time/iter", "Candidate", "Time/iter", "Speedup",
                   "Span/iter", "Span speedup", "Interval", "Noise", "Verdict", "Kernels/iter",
                   "Launches/iter", "Copied+set/iter", "Peak device memory", "Throughput"},
                  rows, 2);
  }
  if (!r.two_captures) return;
  out << fmt::format("Kernel diff (median duration; faster/slower beyond +-{} %):\n\n",
                     r.diff_threshold_percent);
  rows.clear();
  for (const KernelDiffRow& k : r.kernel_diff) {
    rows.push_back({k.name, to_string(k.change), std::to_string(k.baseline_count),
                    std::to_string(k.candidate_count),
                    k.baseline_count ? format_duration(k.baseline_median_ns) : "-",
                    k.candidate_count ? format_duration(k.candidate_median_ns) : "-",
                    k.change_percent ? fmt::format("{:+.1f}", *k.change_percent) : "-"});
  }
  if (rows.empty()) {
    out << " (no kernels in either capture)\n\n";
    return;
  }
  const std::vector<std::string> headers{"Name",     "Change",   "Base n",    "Cand n",
                                         "Base med", "Cand med", "Change (%)"};
  write_aligned(out, headers, rows, 2);
}

}  // namespace

json compare_to_json(const CompareReport& report) {
  json doc;
  doc["baseline"] = {{"path", report.baseline_path}, {"pattern", report.baseline_pattern}};
  doc["candidate"] = {{"path", report.candidate_path}, {"pattern", report.candidate_pattern}};
  doc["two_captures"] = report.two_captures;
  doc["diff_threshold_percent"] = report.diff_threshold_percent;
  doc["projection"] = to_string(report.projection);
  if (report.gate) {
    const GateOptions& g = *report.gate;
    doc["gate"] = {{"time_basis", basis_name(g.basis)},
                   {"threshold_percent", g.threshold_percent},
                   {"confidence", g.bootstrap.level},
                   {"interval",
                    "percentile bootstrap of median(baseline) / median(candidate) "
                    "over the range instances"},
                   {"resamples", std::max(g.bootstrap.resamples, 100)},
                   {"seed", g.bootstrap.seed},
                   {"rank_test", "Mann-Whitney U, normal approximation, two-sided"}};
  } else {
    doc["gate"] = nullptr;
  }
  for (const Section& s : sections(report)) doc[s.name] = s.rows;
  if (!report.two_captures) doc["kernel_diff"] = json::array();
  return doc;
}

void write_compare(std::ostream& out, const CompareReport& report, OutputFormat format) {
  switch (format) {
    case OutputFormat::Table:
      write_table(out, report);
      return;
    case OutputFormat::Csv:
      write_csv(out, report);
      return;
    case OutputFormat::Json:
      out << compare_to_json(report).dump(2) << '\n';
      return;
  }
}

}  // namespace fuselens::analyzer
