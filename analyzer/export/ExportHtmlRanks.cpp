// The "Ranks" section of the HTML report (ExportHtmlRanks.h).

#include "export/ExportHtmlRanks.h"

#include <fmt/format.h>

#include "export/ExportHtmlWidgets.h"
#include "ranks/RanksFormat.h"
#include "summary/SummaryFormat.h"

namespace fuselens::analyzer {
namespace {

std::string pct(double share) { return fmt::format("{:.1f} %", 100.0 * share); }
std::string pct(const std::optional<double>& share) { return share ? pct(*share) : "—"; }
std::string duration(std::int64_t ns) { return format_duration(static_cast<double>(ns)); }

}  // namespace

HtmlSection ranks_section(const RanksReport& r, const std::string& suffix,
                          const std::string& title_suffix, std::size_t max_rows) {
  std::string body;
  body += fmt::format(
      "<p>{}</p>\n",
      html_escape("Per rank (one process each) and step: Holistic Trace Analysis's temporal "
                  "breakdown of the step's span (communication or memory that overlaps "
                  "computation counts as computation), communication/computation overlap, time "
                  "blocked waiting for the last rank at each collective, and the straggler "
                  "(the rank last at the most collectives). docs/multi-gpu.md."));
  if (!r.window.empty()) body += fmt::format("<p>{}</p>\n", html_escape("Window: " + r.window));
  for (const auto& note : r.notes)
    body += fmt::format("<p class=\"empty\">{}</p>\n", html_escape(note));

  HtmlTable ranks;
  ranks.id = "ranks-summary" + suffix;
  ranks.columns = {
      {"Rank", true},    {"PID", true},           {"Device", false, true}, {"Host", false},
      {"Steps", true},   {"Kernels", true},       {"NCCL kernels", true},  {"GPU busy", true},
      {"Compute", true}, {"Communication", true}, {"Memory", true},        {"Idle", true},
      {"Overlap", true}, {"Blocked", true},       {"Straggler of", true},  {"Note", false}};
  for (std::size_t i = 0; i < r.summary.size() && i < r.ranks.size(); ++i) {
    const RankSummary& s = r.summary[i];
    const RankInfo& info = r.ranks[i];
    ranks.rows.push_back(
        {std::to_string(s.rank), std::to_string(info.pid), devices_text(info), info.host_name,
         std::to_string(s.steps), std::to_string(s.kernels), std::to_string(s.nccl_kernels),
         duration(s.busy_ns), pct(s.share(s.compute_ns)), pct(s.share(s.communication_ns)),
         pct(s.share(s.memory_ns)), pct(s.share(s.idle_ns)), pct(s.overlap_share()),
         duration(s.blocked_ns), fmt::format("{} steps", s.straggler_steps), info.note});
    if (ranks.rows.size() >= max_rows) break;
  }
  body += "<h3>Per rank over the window</h3>\n" + ranks.to_html();

  HtmlTable steps;
  steps.id = "ranks-steps" + suffix;
  steps.columns = {{"Step", true},    {"Collectives", true}, {"Straggler", true},
                   {"Last at", true}, {"Late by", true},     {"Note", false}};
  for (const StepCollectives& s : r.steps) {
    if (steps.rows.size() >= max_rows) {
      steps.note = fmt::format("{} more steps in `prof-analyze ranks`", r.steps.size() - max_rows);
      break;
    }
    steps.rows.push_back({s.step == 0 ? "window" : std::to_string(s.step),
                          std::to_string(s.collectives),
                          s.straggler ? "rank " + std::to_string(*s.straggler) : "—",
                          s.straggler ? std::to_string(s.straggler_last_in) : "—",
                          s.straggler ? duration(s.straggler_lateness_ns) : "—", s.note});
  }
  body += "<h3>Stragglers per step</h3>\n" + steps.to_html();

  HtmlTable rows;
  rows.id = "ranks-rows" + suffix;
  rows.columns = {{"Step", true},          {"Rank", true},     {"Kernels", true},
                  {"NCCL", true},          {"GPU busy", true}, {"Compute", true},
                  {"Communication", true}, {"Memory", true},   {"Idle", true},
                  {"Overlap", true},       {"Blocked", true},  {"Straggler", false}};
  for (const RankStep& s : r.rows) {
    if (rows.rows.size() >= max_rows) {
      rows.note = fmt::format("{} more rows in `prof-analyze ranks --format csv`",
                              r.rows.size() - max_rows);
      break;
    }
    if (!s.present) continue;
    rows.rows.push_back({s.step == 0 ? "window" : std::to_string(s.step), std::to_string(s.rank),
                         std::to_string(s.kernels), std::to_string(s.nccl_kernels),
                         duration(s.busy_ns), pct(s.share(s.compute_ns)),
                         pct(s.share(s.communication_ns)), pct(s.share(s.memory_ns)),
                         pct(s.share(s.idle_ns)), pct(s.overlap_share()), duration(s.blocked_ns),
                         s.straggler ? "straggler" : ""});
  }
  body += "<h3>Per rank and step</h3>\n" + rows.to_html();
  return {HtmlSlot::Overview, "ranks" + suffix, "Ranks" + title_suffix, std::move(body)};
}

}  // namespace fuselens::analyzer
