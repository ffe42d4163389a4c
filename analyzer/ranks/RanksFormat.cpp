// prof-analyze ranks: table, CSV and JSON writers of a RanksReport.

#include "ranks/RanksFormat.h"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

namespace fuselens::analyzer {
namespace {

double ms(std::int64_t ns) { return static_cast<double>(ns) / 1e6; }

std::string percent(double share) { return fmt::format("{:.1f}", 100.0 * share); }
std::string percent(const std::optional<double>& share) {
  return share ? percent(*share) : std::string("-");
}

std::string step_name(int step) { return step == 0 ? "window" : std::to_string(step); }

std::map<int, const RankInfo*> by_rank(const RanksReport& r) {
  std::map<int, const RankInfo*> map;
  for (const auto& info : r.ranks) map[info.rank] = &info;
  return map;
}

std::string straggler_line(const StepCollectives& s) {
  std::string line = "step " + step_name(s.step) + ": ";
  if (s.straggler) {
    line +=
        fmt::format("straggler rank {}, last at {} of {} collectives, late by {:.3f} ms",
                    *s.straggler, s.straggler_last_in, s.collectives, ms(s.straggler_lateness_ns));
  } else if (s.collectives > 0) {
    line += fmt::format("{} collectives, no straggler (arrivals tied)", s.collectives);
  } else {
    line += "no collectives matched";
  }
  if (!s.note.empty()) line += "; " + s.note;
  return line;
}

void write_table(std::ostream& out, const RanksReport& r) {
  const auto ranks = by_rank(r);
  out << "Ranks: " << r.ranks.size() << "\n";
  for (const RankInfo& info : r.ranks) {
    out << fmt::format("  rank {} pid {} device {}{}{}{}; steps: {}\n", info.rank, info.pid,
                       devices_text(info), info.host_name.empty() ? "" : " host " + info.host_name,
                       info.launcher.empty() ? "" : " launcher " + info.launcher,
                       info.note.empty() ? "" : " (" + info.note + ")", info.step_note);
  }
  for (const auto& note : r.notes) out << "Note: " << note << "\n";
  out << "\n";
  if (r.rows.empty()) return;
  out << fmt::format(
      "{:>6} {:>5} {:>7} {:>8} {:>6} {:>10} {:>9} {:>7} {:>7} {:>7} {:>6} {:>9} {:>11}  {}\n",
      "step", "rank", "device", "kernels", "nccl", "busy_ms", "compute%", "comm%", "memory%",
      "idle%", "ovlp%", "span_ms", "blocked_ms", "straggler");
  for (const RankStep& row : r.rows) {
    const auto info = ranks.find(row.rank);
    const std::string device = info == ranks.end() ? "-" : devices_text(*info->second);
    if (!row.present) {
      out << fmt::format("{:>6} {:>5} {:>7}  (no step {})\n", step_name(row.step), row.rank, device,
                         step_name(row.step));
      continue;
    }
    std::string line = fmt::format(
        "{:>6} {:>5} {:>7} {:>8} {:>6} {:>10.3f} {:>9} {:>7} {:>7} {:>7} {:>6} {:>9.3f} "
        "{:>11.3f}  {}",
        step_name(row.step), row.rank, device, row.kernels, row.nccl_kernels, ms(row.busy_ns),
        percent(row.share(row.compute_ns)), percent(row.share(row.communication_ns)),
        percent(row.share(row.memory_ns)), percent(row.share(row.idle_ns)),
        percent(row.overlap_share()), ms(row.span_ns), ms(row.blocked_ns),
        row.straggler ? fmt::format("* last at {}, +{:.3f} ms", row.last_in, ms(row.lateness_ns))
                      : std::string());
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
  out << "(compute/comm/memory/idle%: HTA's temporal breakdown of the step's span, its window "
         "widened to its GPU work; ovlp%: communication overlapped by computation; blocked: "
         "waiting for the last rank at each collective; *: the step's straggler)\n\n";
  out << "Per rank over the window:\n";
  out << fmt::format(
      "{:>5} {:>7} {:>6} {:>8} {:>6} {:>10} {:>9} {:>7} {:>7} {:>7} {:>6} {:>11} "
      "{:>10}\n",
      "rank", "device", "steps", "kernels", "nccl", "busy_ms", "compute%", "comm%", "memory%",
      "idle%", "ovlp%", "blocked_ms", "straggler");
  for (const RankSummary& s : r.summary) {
    const auto info = ranks.find(s.rank);
    out << fmt::format(
        "{:>5} {:>7} {:>6} {:>8} {:>6} {:>10.3f} {:>9} {:>7} {:>7} {:>7} {:>6} {:>11.3f} {:>10}\n",
        s.rank, info == ranks.end() ? "-" : devices_text(*info->second), s.steps, s.kernels,
        s.nccl_kernels, ms(s.busy_ns), percent(s.share(s.compute_ns)),
        percent(s.share(s.communication_ns)), percent(s.share(s.memory_ns)),
        percent(s.share(s.idle_ns)), percent(s.overlap_share()), ms(s.blocked_ns),
        fmt::format("{} step{}", s.straggler_steps, s.straggler_steps == 1 ? "" : "s"));
  }
  out << "\nStragglers:\n";
  for (const StepCollectives& s : r.steps) out << "  " << straggler_line(s) << "\n";
}

void write_csv(std::ostream& out, const RanksReport& r) {
  const auto ranks = by_rank(r);
  const auto device = [&](int rank) {
    const auto it = ranks.find(rank);
    return it == ranks.end() ? std::string() : devices_text(*it->second);
  };
  const auto opt = [](const std::optional<double>& v) {
    return v ? fmt::format("{:.4f}", 100.0 * *v) : std::string();
  };
  out << "step,rank,pid,device,present,kernels,nccl_kernels,copies,memsets,span_ns,busy_ns,"
         "compute_ns,communication_ns,memory_ns,idle_ns,compute_pct,communication_pct,"
         "memory_pct,idle_pct,communication_union_ns,overlap_ns,overlap_pct,blocked_ns,last_in,"
         "lateness_ns,straggler\n";
  for (const RankStep& row : r.rows) {
    const auto info = ranks.find(row.rank);
    out << fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.4f},{:.4f},{:.4f},{:.4f},{},{},{},{},{},"
        "{},{}\n",
        row.step, row.rank, info == ranks.end() ? 0 : info->second->pid,
        csv_field(device(row.rank)), row.present ? 1 : 0, row.kernels, row.nccl_kernels, row.copies,
        row.memsets, row.span_ns, row.busy_ns, row.compute_ns, row.communication_ns, row.memory_ns,
        row.idle_ns, 100.0 * row.share(row.compute_ns), 100.0 * row.share(row.communication_ns),
        100.0 * row.share(row.memory_ns), 100.0 * row.share(row.idle_ns),
        row.communication_union_ns, row.overlap_ns, opt(row.overlap_share()), row.blocked_ns,
        row.last_in, row.lateness_ns, row.straggler ? 1 : 0);
  }
  out << "\nrank,pid,device,launcher_rank,note,steps,kernels,nccl_kernels,span_ns,busy_ns,"
         "compute_ns,communication_ns,memory_ns,idle_ns,communication_union_ns,overlap_ns,"
         "overlap_pct,blocked_ns,straggler_steps\n";
  for (const RankSummary& s : r.summary) {
    const auto info = ranks.find(s.rank);
    out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", s.rank,
                       info == ranks.end() ? 0 : info->second->pid, csv_field(device(s.rank)),
                       info != ranks.end() && info->second->launcher_rank ? 1 : 0,
                       csv_field(info == ranks.end() ? "" : info->second->note), s.steps, s.kernels,
                       s.nccl_kernels, s.span_ns, s.busy_ns, s.compute_ns, s.communication_ns,
                       s.memory_ns, s.idle_ns, s.communication_union_ns, s.overlap_ns,
                       opt(s.overlap_share()), s.blocked_ns, s.straggler_steps);
  }
  out << "\nstep,collectives,mismatched,straggler_rank,straggler_last_in,"
         "straggler_lateness_ns,note\n";
  for (const StepCollectives& s : r.steps) {
    out << fmt::format("{},{},{},{},{},{},{}\n", s.step, s.collectives, s.mismatched,
                       s.straggler ? std::to_string(*s.straggler) : std::string(),
                       s.straggler_last_in, s.straggler_lateness_ns, csv_field(s.note));
  }
}

nlohmann::json share_json(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

void write_json(std::ostream& out, const RanksReport& r) {
  nlohmann::json doc;
  doc["distributed"] = r.distributed;
  doc["ranks"] = nlohmann::json::array();
  for (const RankInfo& i : r.ranks) {
    doc["ranks"].push_back({{"rank", i.rank},
                            {"pid", i.pid},
                            {"launcher_rank", i.launcher_rank},
                            {"note", i.note},
                            {"local_rank", i.local_rank ? nlohmann::json(*i.local_rank) : nullptr},
                            {"world_size", i.world_size ? nlohmann::json(*i.world_size) : nullptr},
                            {"launcher", i.launcher},
                            {"host_name", i.host_name},
                            {"devices", i.devices},
                            {"step_note", i.step_note}});
  }
  doc["rows"] = nlohmann::json::array();
  for (const RankStep& s : r.rows) {
    doc["rows"].push_back({{"step", s.step},
                           {"rank", s.rank},
                           {"present", s.present},
                           {"start_ns", s.start_ns},
                           {"end_ns", s.end_ns},
                           {"span_ns", s.span_ns},
                           {"kernels", s.kernels},
                           {"nccl_kernels", s.nccl_kernels},
                           {"copies", s.copies},
                           {"memsets", s.memsets},
                           {"busy_ns", s.busy_ns},
                           {"compute_ns", s.compute_ns},
                           {"communication_ns", s.communication_ns},
                           {"memory_ns", s.memory_ns},
                           {"idle_ns", s.idle_ns},
                           {"compute_share", s.share(s.compute_ns)},
                           {"communication_share", s.share(s.communication_ns)},
                           {"memory_share", s.share(s.memory_ns)},
                           {"idle_share", s.share(s.idle_ns)},
                           {"communication_union_ns", s.communication_union_ns},
                           {"overlap_ns", s.overlap_ns},
                           {"overlap_share", share_json(s.overlap_share())},
                           {"blocked_ns", s.blocked_ns},
                           {"last_in", s.last_in},
                           {"lateness_ns", s.lateness_ns},
                           {"straggler", s.straggler}});
  }
  doc["summary"] = nlohmann::json::array();
  for (const RankSummary& s : r.summary) {
    doc["summary"].push_back({{"rank", s.rank},
                              {"steps", s.steps},
                              {"span_ns", s.span_ns},
                              {"kernels", s.kernels},
                              {"nccl_kernels", s.nccl_kernels},
                              {"busy_ns", s.busy_ns},
                              {"compute_ns", s.compute_ns},
                              {"communication_ns", s.communication_ns},
                              {"memory_ns", s.memory_ns},
                              {"idle_ns", s.idle_ns},
                              {"communication_union_ns", s.communication_union_ns},
                              {"overlap_ns", s.overlap_ns},
                              {"overlap_share", share_json(s.overlap_share())},
                              {"blocked_ns", s.blocked_ns},
                              {"straggler_steps", s.straggler_steps}});
  }
  doc["steps"] = nlohmann::json::array();
  for (const StepCollectives& s : r.steps) {
    doc["steps"].push_back(
        {{"step", s.step},
         {"collectives", s.collectives},
         {"mismatched", s.mismatched},
         {"straggler", s.straggler ? nlohmann::json(*s.straggler) : nlohmann::json(nullptr)},
         {"straggler_last_in", s.straggler_last_in},
         {"straggler_lateness_ns", s.straggler_lateness_ns},
         {"note", s.note}});
  }
  doc["notes"] = r.notes;
  out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

}  // namespace

std::string devices_text(const RankInfo& rank) {
  if (rank.devices.empty()) return "-";
  std::string text;
  for (std::size_t i = 0; i < rank.devices.size(); ++i)
    text += (i ? "," : "") + std::to_string(rank.devices[i]);
  return text;
}

void write_ranks(std::ostream& out, const RanksReport& report, OutputFormat format) {
  switch (format) {
    case OutputFormat::Table:
      write_table(out, report);
      return;
    case OutputFormat::Csv:
      write_csv(out, report);
      return;
    case OutputFormat::Json:
      write_json(out, report);
      return;
  }
}

}  // namespace fuselens::analyzer
