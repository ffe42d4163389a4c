#include "roofline/RooflineFormat.h"

#include <fmt/format.h>

#include <ostream>
#include <string>
#include <vector>

namespace fuselens::analyzer {
namespace {

std::string opt_text(const std::optional<double>& v, const char* spec, double scale = 1.0) {
  return v ? fmt::format(fmt::runtime(spec), *v * scale) : std::string("-");
}

std::string ceilings_line(const Ceilings& c) {
  std::string out;
  for (std::size_t p = 0; p < kPrecisions; ++p) {
    if (c.flops_per_s[p]) {
      out += fmt::format("{} {:.1f} TFLOP/s  ", to_string(static_cast<Precision>(p)), *c.flops_per_s[p] / 1e12);
    }
  }
  for (std::size_t l = 0; l < kMemoryLevels; ++l) {
    if (c.bytes_per_s[l]) {
      out += fmt::format("{} {:.0f} GB/s  ", to_string(static_cast<MemoryLevel>(l)), *c.bytes_per_s[l] / 1e9);
    }
  }
  return out;
}

std::string ridge_line(const Ceilings& c) {
  const auto dram = c.bandwidth(MemoryLevel::Dram);
  if (!dram) return "";
  std::string out = "ridge points (FLOP per DRAM byte):";
  for (std::size_t p = 0; p < kPrecisions; ++p) {
    if (c.flops_per_s[p]) {
      out += fmt::format(" {} {:.1f}", to_string(static_cast<Precision>(p)), ridge_point(*c.flops_per_s[p], *dram));
    }
  }
  return out;
}

void write_table_rows(std::ostream& out, const std::vector<RooflineRow>& rows, bool show_projection) {
  out << fmt::format("{:>11} {:>6} {:>3} {:>10} {:>9} {:>8} {:>8} {:>8} {:>9} {:>13} {:>9} {:>6} {:>11} {:>11} {:>7} {:>7}  {}\n",
                     "GPU time", "n", "src", "GFLOP", "DRAM MB", "FLOP/B", "FLOP/B", "TFLOP/s",
                     "DRAM GB/s", "bound", "attain TF", "eff %", "floor",
                     show_projection ? "projected" : "", "dFLOP%", "dDRAM%", "Name");
  out << fmt::format("{:>11} {:>6} {:>3} {:>10} {:>9} {:>8} {:>8} {:>8} {:>9} {:>13} {:>9} {:>6} {:>11} {:>11} {:>7} {:>7}  {}\n",
                     "", "", "", "", "", "dram", "l2", "", "", "", "", "", "", "", "", "", "");
  for (const auto& row : rows) {
    for (const auto* e : {row.counters ? &*row.counters : nullptr, row.annotation ? &*row.annotation : nullptr}) {
      if (!e) continue;
      const RooflineResult& r = e->result;
      const bool second = e->source == WorkSource::Annotation && row.counters;
      auto mb = e->work.bytes_at(MemoryLevel::Dram);
      out << fmt::format(
          "{:>11} {:>6} {:>3} {:>10.4f} {:>9} {:>8} {:>8} {:>8.3f} {:>9} {:>13} {:>9} {:>6} {:>11} {:>11} {:>7} {:>7}  {}\n",
          second ? "" : format_duration(row.gpu_time_ns), second ? std::string() : std::to_string(row.instances),
          e->source == WorkSource::Counters ? "cnt" : "ann", r.flops / 1e9,
          mb ? fmt::format("{:.3f}", *mb / 1e6) : "-",
          opt_text(r.intensity[static_cast<std::size_t>(MemoryLevel::Dram)], "{:.2f}"),
          opt_text(r.intensity[static_cast<std::size_t>(MemoryLevel::L2)], "{:.2f}"),
          r.achieved_flops_per_s / 1e12,
          opt_text(r.achieved_bytes_per_s[static_cast<std::size_t>(MemoryLevel::Dram)], "{:.1f}", 1e-9),
          r.bound + (r.complete ? "" : "*"),
          r.attainable_flops_per_s > 0 ? fmt::format("{:.3f}", r.attainable_flops_per_s / 1e12) : "-",
          r.efficiency > 0 ? fmt::format("{:.1f}", 100 * r.efficiency) : "-",
          r.floor_ns > 0 ? format_duration(r.floor_ns) : "-",
          e->projected_ns ? format_duration(*e->projected_ns) : "",
          second ? opt_text(row.flops_difference, "{:+.1f}", 100.0) : "",
          second ? opt_text(row.dram_bytes_difference, "{:+.1f}", 100.0) : "",
          row.name);
    }
  }
}

void write_table(std::ostream& out, const RooflineReport& report) {
  out << "Roofline: " << report.path << "\n";
  for (const auto& d : report.devices) {
    out << fmt::format("Device {}: {} ({} SMs, compute capability {}.{})\n", d.id, d.name, d.sm_count,
                       d.cc_major, d.cc_minor);
  }
  const Ceilings& c = report.peaks.ceilings;
  out << "Peaks: " << c.label << " -- " << report.peaks.reason << "\n";
  out << "  " << ceilings_line(c) << "\n";
  if (const auto ridge = ridge_line(c); !ridge.empty()) out << "  " << ridge << "\n";
  out << "  source: " << c.source << "\n";
  for (const auto& m : report.measured) {
    out << fmt::format("Measured on device {}: {} = {:.4g} {} ({})\n", m.device_id, m.name,
                       m.name.find("bandwidth") != std::string::npos ? m.value / 1e9 : m.value / 1e12,
                       m.name.find("bandwidth") != std::string::npos ? "GB/s" : "TFLOP/s", m.method);
  }
  for (const auto& s : report.metric_sessions) {
    out << fmt::format("Counters in process {} on device {}: set '{}', {} metrics, {}, "
                       "{} launches, {} unattributed ranges; {}\n",
                       s.pid, s.device_id, s.metric_set, s.metrics.size(), db::describe_replay(s),
                       s.ranges, s.unattributed_ranges, s.status);
  }
  const bool show_projection = report.device_ceilings && report.device_ceilings->id != c.id;
  if (show_projection) {
    out << "Projected: the time at the chosen peaks if the work reached the efficiency it reached "
           "against the device's own ceilings ("
        << report.device_ceilings->label << ")\n";
  }
  out << "\nKernels (hardware counters):\n";
  if (report.kernels.empty()) {
    out << "  (none)\n";
  } else {
    write_table_rows(out, report.kernels, show_projection);
  }
  out << "\nNVTX ranges (GPU time of the kernels launched inside):\n";
  if (report.ranges.empty()) {
    out << "  (none)\n";
  } else {
    write_table_rows(out, report.ranges, show_projection);
  }
  out << "\nsrc: cnt = hardware counters, ann = declared with fuselens/annotate.h; bound*: some work "
         "has no ceiling (floor is a lower bound); dFLOP%/dDRAM%: annotation vs counters\n";
  for (const auto& note : report.notes) out << "note: " << note << "\n";
}

nlohmann::json optional_json(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json ceilings_json(const Ceilings& c) {
  nlohmann::json flops = nlohmann::json::object(), bytes = nlohmann::json::object();
  for (std::size_t p = 0; p < kPrecisions; ++p) flops[to_string(static_cast<Precision>(p))] = optional_json(c.flops_per_s[p]);
  for (std::size_t l = 0; l < kMemoryLevels; ++l) bytes[to_string(static_cast<MemoryLevel>(l))] = optional_json(c.bytes_per_s[l]);
  return {{"id", c.id}, {"label", c.label}, {"source", c.source}, {"flops_per_s", flops}, {"bytes_per_s", bytes}};
}

nlohmann::json entry_json(const RooflineEntry& e) {
  const RooflineResult& r = e.result;
  nlohmann::json flops = nlohmann::json::object(), bytes = nlohmann::json::object(),
                 intensity = nlohmann::json::object(), bw = nlohmann::json::object();
  for (std::size_t p = 0; p < kPrecisions; ++p) flops[to_string(static_cast<Precision>(p))] = e.work.flops[p];
  for (std::size_t l = 0; l < kMemoryLevels; ++l) {
    const char* name = to_string(static_cast<MemoryLevel>(l));
    bytes[name] = optional_json(e.work.bytes[l]);
    intensity[name] = optional_json(r.intensity[l]);
    bw[name] = optional_json(r.achieved_bytes_per_s[l]);
  }
  return {{"source", to_string(e.source)}, {"flops", r.flops}, {"flops_by_precision", flops},
          {"bytes", bytes}, {"time_ns", r.time_ns}, {"achieved_flops_per_s", r.achieved_flops_per_s},
          {"intensity", intensity}, {"achieved_bytes_per_s", bw}, {"bound", r.bound},
          {"floor_ns", r.floor_ns}, {"attainable_flops_per_s", r.attainable_flops_per_s},
          {"efficiency", r.efficiency}, {"complete", r.complete}, {"projected_ns", optional_json(e.projected_ns)}};
}

nlohmann::json rows_json(const std::vector<RooflineRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& row : rows) {
    out.push_back({{"name", row.name}, {"instances", row.instances}, {"kernels", row.kernels},
                   {"kernels_with_counters", row.kernels_with_counters}, {"gpu_time_ns", row.gpu_time_ns},
                   {"counter_time_ns", row.counter_time_ns},
                   {"counters", row.counters ? entry_json(*row.counters) : nlohmann::json(nullptr)},
                   {"annotation", row.annotation ? entry_json(*row.annotation) : nlohmann::json(nullptr)},
                   {"flops_difference", optional_json(row.flops_difference)},
                   {"dram_bytes_difference", optional_json(row.dram_bytes_difference)}});
  }
  return out;
}

std::string csv_number(const std::optional<double>& v) { return v ? fmt::format("{}", *v) : std::string(); }

void write_csv(std::ostream& out, const RooflineReport& report) {
  out << "section,name,source,instances,kernels,kernels_with_counters,gpu_time_ns,counter_time_ns,"
         "flops,flops_fp64,flops_fp32,flops_fp16,flops_tensor,dram_bytes,l2_bytes,l1_bytes,"
         "intensity_dram,intensity_l2,intensity_l1,achieved_flops_per_s,dram_bytes_per_s,"
         "l2_bytes_per_s,bound,floor_ns,attainable_flops_per_s,efficiency,projected_ns,"
         "flops_difference,dram_bytes_difference\n";
  auto rows = [&](const char* section, const std::vector<RooflineRow>& list) {
    for (const auto& row : list) {
      for (const auto* e : {row.counters ? &*row.counters : nullptr, row.annotation ? &*row.annotation : nullptr}) {
        if (!e) continue;
        const RooflineResult& r = e->result;
        std::vector<std::string> f = {section, csv_field(row.name), to_string(e->source),
                                      std::to_string(row.instances), std::to_string(row.kernels),
                                      std::to_string(row.kernels_with_counters),
                                      fmt::format("{}", row.gpu_time_ns), fmt::format("{}", row.counter_time_ns),
                                      fmt::format("{}", r.flops)};
        for (std::size_t p = 0; p < kPrecisions; ++p) f.push_back(fmt::format("{}", e->work.flops[p]));
        for (std::size_t l = 0; l < kMemoryLevels; ++l) f.push_back(csv_number(e->work.bytes[l]));
        for (std::size_t l = 0; l < kMemoryLevels; ++l) f.push_back(csv_number(r.intensity[l]));
        f.push_back(fmt::format("{}", r.achieved_flops_per_s));
        f.push_back(csv_number(r.achieved_bytes_per_s[0]));
        f.push_back(csv_number(r.achieved_bytes_per_s[1]));
        f.push_back(r.bound);
        f.push_back(fmt::format("{}", r.floor_ns));
        f.push_back(fmt::format("{}", r.attainable_flops_per_s));
        f.push_back(fmt::format("{}", r.efficiency));
        f.push_back(csv_number(e->projected_ns));
        const bool both = row.counters && row.annotation;
        f.push_back(both ? csv_number(row.flops_difference) : "");
        f.push_back(both ? csv_number(row.dram_bytes_difference) : "");
        for (std::size_t i = 0; i < f.size(); ++i) out << (i ? "," : "") << f[i];
        out << "\n";
      }
    }
  };
  rows("kernel", report.kernels);
  rows("range", report.ranges);
}

}  // namespace

nlohmann::json roofline_to_json(const RooflineReport& report) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& d : report.devices) devices.push_back({{"id", d.id}, {"name", d.name}, {"sm_count", d.sm_count}});
  nlohmann::json peaks = ceilings_json(report.peaks.ceilings);
  peaks["reason"] = report.peaks.reason;
  nlohmann::json measured = nlohmann::json::array();
  for (const auto& m : report.measured) {
    measured.push_back({{"device_id", m.device_id}, {"device_name", m.device_name}, {"name", m.name},
                        {"value", m.value}, {"method", m.method}, {"measured_utc_ns", m.measured_utc_ns}});
  }
  nlohmann::json sessions = nlohmann::json::array();
  for (const auto& s : report.metric_sessions) {
    sessions.push_back({{"pid", s.pid}, {"device_id", s.device_id}, {"metric_set", s.metric_set},
                        {"metrics", s.metrics}, {"passes", s.passes}, {"replay", s.replay},
                        {"cache_control", s.cache_control}, {"ranges", s.ranges},
                        {"unattributed_ranges", s.unattributed_ranges}, {"status", s.status}});
  }
  nlohmann::json chart = {{"compute", nlohmann::json::array()}, {"memory", nlohmann::json::array()},
                          {"points", nlohmann::json::array()}};
  for (const auto& r : report.chart.compute) chart["compute"].push_back({{"label", r.label}, {"flops_per_s", r.value}});
  for (const auto& r : report.chart.memory) chart["memory"].push_back({{"label", r.label}, {"bytes_per_s", r.value}});
  for (const auto& p : report.chart.points) {
    chart["points"].push_back({{"label", p.label}, {"kind", p.is_range ? "range" : "kernel"},
                               {"source", to_string(p.source)}, {"intensity", p.intensity},
                               {"flops_per_s", p.flops_per_s}, {"efficiency", p.efficiency}});
  }
  return {{"capture", report.path}, {"devices", devices}, {"peaks", peaks},
          {"device_ceilings", report.device_ceilings ? ceilings_json(*report.device_ceilings) : nlohmann::json(nullptr)},
          {"measured_ceilings", measured}, {"metric_sessions", sessions},
          {"kernels", rows_json(report.kernels)}, {"ranges", rows_json(report.ranges)},
          {"chart", chart}, {"notes", report.notes}};
}

void write_roofline(std::ostream& out, const RooflineReport& report, OutputFormat format) {
  switch (format) {
    case OutputFormat::Table: write_table(out, report); break;
    case OutputFormat::Csv: write_csv(out, report); break;
    case OutputFormat::Json: out << roofline_to_json(report).dump(2) << "\n"; break;
  }
}

}  // namespace fuselens::analyzer
