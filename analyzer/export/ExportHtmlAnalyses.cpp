// The analysis sections of the HTML report (peaks, flags, unfused/fused comparison, calling
// contexts, roofline, heatmap): load_export_analyses runs the analyses of one capture, each
// guarded so that a failure or a lack of data becomes one sentence instead of a failed export;
// add_analysis_sections turns their results into report sections.
#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "export/ExportHtml.h"
#include "export/ExportHtmlFlame.h"
#include "export/ExportHtmlRanks.h"
#include "export/ExportHtmlWidgets.h"
#include "summary/SummaryFormat.h"

namespace fuselens::analyzer {
namespace {

constexpr std::size_t kContextRows = 15;
constexpr std::size_t kFlagRows = 30;
constexpr std::size_t kRooflineTableRows = 15;

/// Runs `load` into `value`; any exception becomes `note` (prefixed by `what`).
template <typename T>
void guarded(std::optional<T>& value, std::string& note, const char* what,
             const std::function<T()>& load) {
  try {
    value = load();
  } catch (const std::exception& e) {
    value.reset();
    note = fmt::format("The {} could not be computed: {}", what, e.what());
  } catch (...) {
    value.reset();
    note = fmt::format("The {} could not be computed.", what);
  }
}

std::string ns_text(double ns) { return format_duration(ns); }

std::string paragraph(const std::string& text, const char* css = "empty") {
  return fmt::format("<p class=\"{}\">{}</p>\n", css, html_escape(text));
}

std::string optional_text(const std::optional<double>& v,
                          const std::function<std::string(double)>& f) {
  return v ? f(*v) : "—";
}
std::string tflops(double v) { return fmt::format("{:.1f} TFLOP/s", v / 1e12); }
std::string gbps(double v) { return fmt::format("{:.0f} GB/s", v / 1e9); }

struct Context {
  const ExportRun& run;
  std::size_t runs;
  std::string suffix;  // "" or "-A"
  std::string title(const std::string& text) const {
    return runs > 1 ? text + " — " + run.label : text;
  }
};

HtmlSection rank_lanes_section(const Context& c, const ExportAnalyses& a) {
  std::string body;
  if (!a.rank_lanes) {
    body = paragraph(a.rank_lanes_note);
  } else {
    const RankLaneStrip& strip = *a.rank_lanes;
    body = paragraph(
        "Kernels of each rank on each device over the window: computation in the upper half of a "
        "lane, communication (NCCL kernels, peer-to-peer copies) in the lower half; above each "
        "rank, its outermost NVTX ranges (its steps). A rank whose steps start late is a "
        "straggler; the others' collectives then last longer, waiting for it.",
        "lead");
    body += svg_rank_lanes(strip);
    HtmlTable table;
    table.id = "rank-lanes" + c.suffix;
    table.columns = {{"Lane"},
                     {"Kernels", true},
                     {"Communication kernels", true},
                     {"Kernel time", true},
                     {"Communication time", true}};
    for (const auto& lane : strip.lanes) {
      table.rows.push_back({lane.title, std::to_string(lane.kernels),
                            std::to_string(lane.communication_kernels),
                            format_duration(static_cast<double>(lane.busy_ns)),
                            format_duration(static_cast<double>(lane.communication_ns))});
    }
    body += table.to_html();
  }
  return {HtmlSlot::Overview, "rank-lanes" + c.suffix, c.title("Ranks and devices"),
          std::move(body)};
}

HtmlSection peaks_section(const Context& c, const ExportAnalyses& a) {
  std::string body;
  if (!a.peaks) {
    body = paragraph(a.peaks_note.empty() ? "No peak profile matches this capture's device."
                                          : a.peaks_note);
  } else {
    const Ceilings& k = a.peaks->ceilings;
    std::vector<std::pair<std::string, std::string>> rows{
        {"Profile", k.label.empty() ? k.id : k.label},
        {"Chosen because", a.peaks->reason},
    };
    const auto flops = [&](Precision p) { return k.flops(p); };
    const auto dram = k.bandwidth(MemoryLevel::Dram);
    rows.emplace_back("FP64", optional_text(flops(Precision::Fp64), tflops));
    rows.emplace_back("FP32", optional_text(flops(Precision::Fp32), tflops));
    rows.emplace_back("FP16 (non-tensor)", optional_text(flops(Precision::Fp16), tflops));
    rows.emplace_back("Tensor (dense)", optional_text(flops(Precision::Tensor), tflops));
    rows.emplace_back("DRAM bandwidth", optional_text(dram, gbps));
    rows.emplace_back("L2 bandwidth", optional_text(k.bandwidth(MemoryLevel::L2), gbps));
    for (const Precision p : {Precision::Fp32, Precision::Tensor}) {
      if (flops(p) && dram && *dram > 0) {
        rows.emplace_back(fmt::format("Ridge point {} / DRAM", to_string(p)),
                          fmt::format("{:.1f} FLOP/byte", ridge_point(*flops(p), *dram)));
      }
    }
    if (!k.source.empty()) rows.emplace_back("Source", k.source);
    body = html_key_value_table(rows, "peaks-table" + c.suffix);
  }
  return {HtmlSlot::Peaks, "peaks" + c.suffix, c.title("Peaks"), std::move(body)};
}

/// The verdict that opens the flags section (FlagsVerdict.h): its headline, the start-up line
/// and the top causes.
std::string verdict_html(const FlagsReport& r, const std::string& suffix) {
  const FlagsVerdict& v = r.verdict;
  std::string out = "<p class=\"verdict\" id=\"flags-verdict" + html_escape(suffix) +
                    "\"><strong>Verdict:</strong> " + html_escape(v.headline) + "</p>\n";
  if (!v.causes.empty()) {
    out += "<ol class=\"causes\">";
    for (const auto& cause : v.causes) out += "<li>" + html_escape(cause) + "</li>";
    out += "</ol>\n";
  }
  if (!v.startup.empty()) out += paragraph(v.startup, "note");
  return out;
}

HtmlSection flags_section(const Context& c, const ExportAnalyses& a) {
  std::string body;
  if (!a.flags) {
    body = paragraph(a.flags_note);
  } else {
    // The report's order: ranked across rules by time at stake per step (FlagsVerdict.h).
    const auto& hits = a.flags->hits;
    const bool steps = !a.flags->window.steps.empty();
    HtmlTable t;
    t.id = "flags-table" + c.suffix;
    t.columns = {{"Rule", false, true},
                 {"Kernel / subject"},
                 {"Range"},
                 {"Count", true},
                 {"Time at stake", true},
                 {steps ? "Per step (share of the step)" : "Share of the window", true},
                 {"Advice"}};
    t.empty_message = "No rule found anything to flag in this capture.";
    std::vector<std::string> advised;  // rules whose advice is already in the table
    for (std::size_t i = 0; i < hits.size() && i < kFlagRows; ++i) {
      const Hit& h = hits[i];
      const bool repeated = std::find(advised.begin(), advised.end(), h.rule) != advised.end();
      if (!repeated) advised.push_back(h.rule);
      // Hits about a time span (gpu_gaps, gpu_utilization) have no subject: show what was
      // measured instead.
      const std::string& subject = h.subject.empty() ? h.detail : h.subject;
      const std::string share =
          h.metric("per_step_ns") > 0
              ? fmt::format("{} ({:.1f} %)", ns_text(h.metric("per_step_ns")),
                            h.metric("step_percent"))
              : fmt::format("{:.1f} % of the window", h.metric("window_percent"));
      t.rows.push_back({h.rule, subject.empty() ? "—" : subject, h.range.empty() ? "—" : h.range,
                        std::to_string(h.count), ns_text(static_cast<double>(h.time_ns)), share,
                        repeated ? "(as for the " + h.rule + " row above)" : h.advice});
    }
    if (hits.size() > kFlagRows) {
      t.note = fmt::format("{} more hits not shown; `prof-analyze flags` lists all of them.",
                           hits.size() - kFlagRows);
    }
    body = verdict_html(*a.flags, c.suffix) +
           paragraph(fmt::format("{} hits from {} rules (default thresholds, docs/rules.md), "
                                 "ranked across rules by time at stake{}.",
                                 hits.size(), a.flags->rules_run.size(),
                                 steps ? " per step" : " in the window"),
                     "note") +
           t.to_html();
  }
  return {HtmlSlot::Flags, "flags" + c.suffix, c.title("Flags"), std::move(body)};
}

std::string median_text(const std::optional<RangeStats>& s) {
  return s ? ns_text(s->median_gpu_ns_per_iter) : "—";
}

HtmlSection variants_section(const Context& c, const CompareReport& r) {
  HtmlTable t;
  t.id = "variant-comparison-table" + c.suffix;
  t.columns = {
      {"Op", false, true},
      {"Shape", false, true},
      {r.entries.empty() ? "Baseline" : r.entries.front().baseline_variant + " / iter", true},
      {r.entries.empty() ? "Candidate" : r.entries.front().candidate_variant + " / iter", true},
      {"Speedup", true}};
  for (const auto& e : r.entries) {
    t.rows.push_back({e.op, e.shape, median_text(e.baseline), median_text(e.candidate),
                      e.speedup ? fmt::format("{:.2f}×", *e.speedup) : "—"});
  }
  std::string body = paragraph(fmt::format("NVTX ranges '{}' (baseline) vs '{}' (candidate): "
                                           "median GPU time per iteration; speedup = baseline "
                                           "/ candidate.",
                                           r.baseline_pattern, r.candidate_pattern),
                               "note") +
                     t.to_html();
  const bool auto_detected =
      r.baseline_pattern == "*/unfused/*" && r.candidate_pattern == "*/fused/*";
  return {HtmlSlot::Comparison, "variant-comparison" + c.suffix,
          c.title(auto_detected ? "Unfused vs fused" : "Baseline vs candidate"), std::move(body)};
}

HtmlSection heatmap_section(const Context& c, const ExportAnalyses& a) {
  std::string body;
  if (!a.variants || a.variants->entries.empty()) {
    body = paragraph(
        "No heatmap: the capture has no NVTX ranges named op/unfused/shape and "
        "op/fused/shape to compare.");
  } else {
    const CompareReport& r = *a.variants;
    Heatmap h;
    h.title = "Median GPU time per iteration (op · shape × variant)";
    const auto value = [](const RangeStats* s) -> std::optional<double> {
      if (s == nullptr) return std::nullopt;
      return s->median_gpu_ns_per_iter;
    };
    std::int64_t left_out = 0;
    if (!a.variant_ranges.empty()) {
      // Every variant of the capture's op/variant/shape ranges, unfused and fused first.
      const VariantMatrix m = variant_matrix(a.variant_ranges);
      h.rows = m.rows;
      h.columns = m.columns;
      for (const auto& row : m.cells) {
        auto& values = h.values.emplace_back();
        for (const RangeStats* cell : row) {
          values.push_back(value(cell));
          if (cell) left_out += cell->left_out_kernels;
        }
      }
    } else {
      h.columns = {r.entries.front().baseline_variant, r.entries.front().candidate_variant};
      for (const auto& e : r.entries) {
        h.rows.push_back(e.op + " · " + e.shape);
        h.values.push_back({value(e.baseline ? &*e.baseline : nullptr),
                            value(e.candidate ? &*e.candidate : nullptr)});
        for (const auto* side : {&e.baseline, &e.candidate}) {
          if (*side) left_out += (*side)->left_out_kernels;
        }
      }
    }
    h.format_value = [](double ns) { return format_duration(ns); };
    h.scale_label = "median GPU time / iteration";
    body = paragraph(fmt::format("GPU projection of the ranges: {} ({} kernels left out).",
                                 to_string(r.projection), left_out),
                     "note") +
           svg_heatmap(h);
  }
  return {HtmlSlot::Heatmaps, "heatmap" + c.suffix, c.title("Heatmap"), std::move(body)};
}

HtmlSection contexts_section(const Context& c, const ExportAnalyses& a) {
  std::string body;
  if (!a.calling_contexts) {
    body = paragraph(a.calling_contexts_note);
  } else if (!a.calling_contexts->available || a.calling_contexts->rows.empty()) {
    body = paragraph("No calling contexts: " + (a.calling_contexts->unavailable_reason.empty()
                                                    ? std::string("the capture has none.")
                                                    : a.calling_contexts->unavailable_reason));
  } else {
    const CctReport& r = *a.calling_contexts;
    // The kContextRows rows of largest inclusive time (a parent before its children on ties, so
    // the chosen rows form the top of the tree), shown in depth-first order.
    std::vector<int> order(r.rows.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) {
      const auto& rx = r.rows[static_cast<std::size_t>(x)];
      const auto& ry = r.rows[static_cast<std::size_t>(y)];
      if (rx.inclusive.gpu_time_ns != ry.inclusive.gpu_time_ns) {
        return rx.inclusive.gpu_time_ns > ry.inclusive.gpu_time_ns;
      }
      return rx.depth < ry.depth;
    });
    std::vector<bool> chosen(r.rows.size(), false);
    for (std::size_t i = 0; i < order.size() && i < kContextRows; ++i) {
      chosen[static_cast<std::size_t>(order[i])] = true;
    }
    HtmlTable t;
    t.id = "calling-contexts-table" + c.suffix;
    t.columns = {{"Calling context (top-down)"},
                 {"Inclusive", true},
                 {"Incl. %", true},
                 {"Exclusive", true},
                 {"Launches", true}};
    const double total = static_cast<double>(r.total.gpu_time_ns);
    std::vector<int> stack{0};
    while (!stack.empty()) {
      const int id = stack.back();
      stack.pop_back();
      const CctRow& row = r.rows[static_cast<std::size_t>(id)];
      if (!chosen[static_cast<std::size_t>(id)]) continue;
      std::string indent;
      for (int d = 0; d < row.depth; ++d) indent += "\u00a0\u00a0";
      t.rows.push_back(
          {indent + truncate_text(row.label, 160),
           ns_text(static_cast<double>(row.inclusive.gpu_time_ns)),
           total > 0 ? fmt::format("{:.1f}",
                                   100.0 * static_cast<double>(row.inclusive.gpu_time_ns) / total)
                     : "—",
           ns_text(static_cast<double>(row.exclusive.gpu_time_ns)),
           std::to_string(row.inclusive.launches)});
      for (auto child = row.children.rbegin(); child != row.children.rend(); ++child) {
        stack.push_back(*child);
      }
    }
    body = paragraph(fmt::format("The {} calling contexts with the most inclusive GPU time of "
                                 "{} rows; `prof-analyze cct` shows the whole tree.",
                                 t.rows.size(), r.rows.size()),
                     "note") +
           t.to_html();
    if (r.unattributed_operations > 0) {
      body += paragraph(fmt::format("{} GPU operations have no recorded calling context.",
                                    r.unattributed_operations),
                        "note");
    }
  }
  return {HtmlSlot::CallingContexts, "calling-contexts" + c.suffix, c.title("Top calling contexts"),
          std::move(body)};
}

// The flame graph of the same top-down view; absent without calling contexts (the section above
// says why).
std::optional<HtmlSection> flame_section(const Context& c, const ExportAnalyses& a) {
  if (!a.calling_contexts || !a.calling_contexts->available) return std::nullopt;
  std::string body = svg_flame_graph(
      *a.calling_contexts, "Calling contexts by GPU time (frames: " +
                               std::string(frames_mode_name(a.calling_contexts->frames)) + ")");
  if (body.empty()) return std::nullopt;
  return HtmlSection{HtmlSlot::CallingContexts, "flame-graph" + c.suffix, c.title("Flame graph"),
                     std::move(body)};
}

HtmlSection roofline_section(const Context& c, const ExportAnalyses& a) {
  std::string body;
  if (!a.roofline) {
    body = paragraph(a.roofline_note);
  } else if (!a.roofline->has_counters && !a.roofline->has_annotations) {
    body = paragraph(
        "No roofline: the capture has neither hardware counters (prof-run --metrics "
        "roofline) nor work annotations (fuselens/annotate.h).");
  } else if (a.roofline->chart.points.empty()) {
    body = paragraph("No roofline points: no kernel or range has both FLOPs and DRAM bytes.");
  } else {
    const RooflineReport& r = *a.roofline;
    RooflinePlot plot;
    plot.title = "Roofline against " +
                 (r.peaks.ceilings.label.empty() ? r.peaks.ceilings.id : r.peaks.ceilings.label);
    for (const auto& roof : r.chart.compute) plot.compute.push_back({roof.label, roof.value});
    for (const auto& roof : r.chart.memory) plot.memory.push_back({roof.label, roof.value});
    // One series per kind of point present: kernels (counters), ranges (counters), ranges
    // (annotations).
    std::vector<std::string> kinds;
    std::vector<const RooflineChart::Point*> points;
    for (const auto& p : r.chart.points) {
      const std::string kind =
          std::string(p.is_range ? "ranges" : "kernels") + " (" + to_string(p.source) + ")";
      auto at = std::find(kinds.begin(), kinds.end(), kind);
      if (at == kinds.end()) at = kinds.insert(kinds.end(), kind);
      plot.points.push_back({p.label + " (" + to_string(p.source) + ")", p.intensity, p.flops_per_s,
                             static_cast<std::size_t>(at - kinds.begin())});
      points.push_back(&p);
    }
    plot.series = kinds;
    body = svg_roofline_chart(plot);
    std::stable_sort(points.begin(), points.end(),
                     [](const auto* x, const auto* y) { return x->flops_per_s > y->flops_per_s; });
    HtmlTable t;
    t.id = "roofline-table" + c.suffix;
    t.columns = {
        {"Name"},           {"Kind", false, true}, {"Source", false, true}, {"FLOP/byte", true},
        {"Achieved", true}, {"Efficiency", true}};
    for (std::size_t i = 0; i < points.size() && i < kRooflineTableRows; ++i) {
      const auto& p = *points[i];
      t.rows.push_back({p.label, p.is_range ? "range" : "kernel", to_string(p.source),
                        fmt::format("{:.3g}", p.intensity), tflops(p.flops_per_s),
                        fmt::format("{:.1f} %", 100 * p.efficiency)});
    }
    if (points.size() > kRooflineTableRows) {
      t.note = fmt::format("{} more points; `prof-analyze roofline` lists every row.",
                           points.size() - kRooflineTableRows);
    }
    body += t.to_html();
    for (const auto& note : r.notes) body += paragraph(note, "note");
  }
  return {HtmlSlot::Roofline, "roofline" + c.suffix, c.title("Roofline"), std::move(body)};
}

}  // namespace

ExportAnalyses load_export_analyses(const db::Reader& reader, const CompareReport* comparison,
                                    const Window* window, FramesMode frames,
                                    const StoredAnalyses* stored) {
  ExportAnalyses a;
  guarded<PeaksChoice>(a.peaks, a.peaks_note, "peak profile",
                       [&] { return choose_peaks("auto", reader, builtin_peaks()); });
  guarded<CctReport>(a.calling_contexts, a.calling_contexts_note, "calling-context view", [&] {
    CctOptions options;
    options.frames = frames;
    if (stored && stored->cct_groups)
      return cct::report_from_groups(reader, *stored->cct_groups, options);
    return calling_context_report(reader, options);
  });
  guarded<FlagsReport>(a.flags, a.flags_note, "flags analysis", [&] {
    if (stored && stored->flags && frames == FramesMode::Auto) return *stored->flags;
    return run_flags(reader, FlagsConfig(), NameKind::Short, window, frames);
  });
  try {
    if (comparison) {
      a.variants = *comparison;
    } else {
      a.variants = compare_ranges(reader, "*/unfused/*", "*/fused/*");
      a.variant_ranges = range_stats(reader, a.variants->projection);
    }
  } catch (const CompareError& e) {
    a.variants_note = fmt::format("No unfused/fused NVTX ranges to compare ({}).", e.what());
  } catch (const std::exception& e) {
    a.variants_note =
        fmt::format("The unfused/fused comparison could not be computed: {}", e.what());
  } catch (...) {
    a.variants_note = "The unfused/fused comparison could not be computed.";
  }
  guarded<RooflineReport>(a.roofline, a.roofline_note, "roofline",
                          [&] { return analyze_roofline(reader); });
  if (!reader.restricted() && may_be_distributed(reader)) {
    guarded<RanksReport>(a.ranks, a.ranks_note, "ranks analysis",
                         [&] { return analyze_ranks(reader, window); });
  }
  try {
    a.rank_lanes = load_rank_lane_strip(reader);
  } catch (const std::exception& e) {
    a.rank_lanes_note = fmt::format("The lanes per rank could not be read: {}", e.what());
  }
  return a;
}

void add_analysis_sections(HtmlReport& report, const std::vector<ExportRun>& runs) {
  for (const ExportRun& run : runs) {
    const Context c{run, runs.size(), runs.size() > 1 ? "-" + run.label : std::string()};
    if (!run.analyses) continue;
    const ExportAnalyses& a = *run.analyses;
    report.add(peaks_section(c, a));
    if (a.ranks && a.ranks->distributed) {
      report.add(ranks_section(*a.ranks, c.suffix, runs.size() > 1 ? " — " + run.label : ""));
    }
    if (a.rank_lanes || !a.rank_lanes_note.empty()) report.add(rank_lanes_section(c, a));
    report.add(flags_section(c, a));
    if (runs.size() == 1 && a.variants && !a.variants->entries.empty()) {
      report.add(variants_section(c, *a.variants));
    }
    report.add(contexts_section(c, a));
    if (auto flame = flame_section(c, a)) report.add(std::move(*flame));
    report.add(roofline_section(c, a));
    if (runs.size() == 1) report.add(heatmap_section(c, a));
  }
}

}  // namespace fuselens::analyzer
