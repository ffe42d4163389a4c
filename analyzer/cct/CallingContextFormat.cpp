#include "cct/CallingContextFormat.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace fuselens::analyzer {
namespace {

const char* view_name(CctView v) {
  switch (v) {
    case CctView::BottomUp: return "bottom-up";
    case CctView::Flat: return "flat";
    case CctView::TopDown: break;
  }
  return "top-down";
}

const char* metric_name(CctMetric m) {
  switch (m) {
    case CctMetric::Launches: return "launches";
    case CctMetric::Bytes: return "bytes";
    case CctMetric::GpuTime: break;
  }
  return "gpu_time";
}

const char* kind_name(CctRow::Kind k) {
  switch (k) {
    case CctRow::Kind::Root: return "root";
    case CctRow::Kind::Process: return "process";
    case CctRow::Kind::Frame: return "frame";
    case CctRow::Kind::GpuOperation: return "gpu_operation";
    case CctRow::Kind::Unattributed: return "unattributed";
    case CctRow::Kind::Module: return "module";
    case CctRow::Kind::Function: return "function";
    case CctRow::Kind::Line: return "line";
    case CctRow::Kind::BackwardOp: return "backward_op";
    case CctRow::Kind::BackwardThread: return "backward_thread";
    case CctRow::Kind::Phase: return "phase";
    case CctRow::Kind::GraphReplay: return "graph_replay";
  }
  return "frame";
}

double percent(const CctReport& r, const CctRow& row) {
  const auto total = r.total.get(r.metric);
  return total > 0 ? 100.0 * static_cast<double>(row.inclusive.get(r.metric)) / static_cast<double>(total) : 0.0;
}

// Rows to show, in depth-first order.
std::vector<int> visible_rows(const CctReport& r, const CctDisplay& d) {
  std::vector<char> matched(r.rows.size(), d.filter ? 0 : 1);
  if (d.filter) {
    // A match keeps its ancestors and its subtree.
    for (std::size_t i = 0; i < r.rows.size(); ++i) {
      if (!d.filter->search(r.rows[i].label)) continue;
      for (int a = static_cast<int>(i); a >= 0; a = r.rows[static_cast<std::size_t>(a)].parent) matched[static_cast<std::size_t>(a)] = 1;
      std::vector<int> stack{static_cast<int>(i)};
      while (!stack.empty()) {
        const int n = stack.back();
        stack.pop_back();
        matched[static_cast<std::size_t>(n)] = 1;
        for (const int c : r.rows[static_cast<std::size_t>(n)].children) stack.push_back(c);
      }
    }
  }
  std::vector<int> out;
  std::vector<int> stack{0};
  while (!stack.empty()) {
    const int n = stack.back();
    stack.pop_back();
    const auto& row = r.rows[static_cast<std::size_t>(n)];
    if (!matched[static_cast<std::size_t>(n)]) continue;
    if (d.max_depth && row.depth > *d.max_depth) continue;
    if (n != 0 && percent(r, row) < d.min_percent) continue;
    out.push_back(n);
    for (auto it = row.children.rbegin(); it != row.children.rend(); ++it) stack.push_back(*it);
  }
  return out;
}

nlohmann::json row_json(const CctReport& r, int id) {
  const auto& row = r.rows[static_cast<std::size_t>(id)];
  return {{"id", id},
          {"parent", row.parent},
          {"depth", row.depth},
          {"kind", kind_name(row.kind)},
          {"label", row.label},
          {"module", row.module},
          {"file", row.file},
          {"line", row.line},
          {"incl_percent", percent(r, row)},
          {"incl_gpu_time_ns", row.inclusive.gpu_time_ns},
          {"excl_gpu_time_ns", row.exclusive.gpu_time_ns},
          {"incl_launches", row.inclusive.launches},
          {"excl_launches", row.exclusive.launches},
          {"incl_bytes", row.inclusive.bytes},
          {"excl_bytes", row.exclusive.bytes},
          {"phase", row_phase(row)}};
}

}  // namespace

std::size_t write_cct(std::ostream& out, const CctReport& r, OutputFormat format,
                      const CctDisplay& d) {
  auto rows = visible_rows(r, d);
  std::size_t left_out = 0;  // issue 22: a capture's tree must not make the output unbounded
  if (d.max_rows > 0 && rows.size() > d.max_rows) {
    left_out = rows.size() - d.max_rows;
    rows.resize(d.max_rows);
  }
  if (format == OutputFormat::Json) {
    nlohmann::json j = {{"view", view_name(r.view)},
                        {"metric", metric_name(r.metric)},
                        {"frames", frames_mode_name(r.frames)},
                        {"total", {{"gpu_time_ns", r.total.gpu_time_ns},
                                   {"launches", r.total.launches},
                                   {"bytes", r.total.bytes}}},
                        {"unattributed_operations", r.unattributed_operations},
                        {"phases", {{"forward_gpu_time_ns", r.phase_total[1].gpu_time_ns},
                                    {"backward_gpu_time_ns", r.phase_total[2].gpu_time_ns},
                                    {"unknown_gpu_time_ns", r.phase_total[0].gpu_time_ns},
                                    {"backward_linked", r.backward_linked},
                                    {"backward_unlinked", r.backward_unlinked}}},
                        {"rows", nlohmann::json::array()}};
    if (r.graph_operations > 0) {
      j["graphs"] = {{"replayed_operations", r.graph_operations},
                     {"at_capture_site", r.graph_at_capture_site},
                     {"at_replay_site", r.graph_operations - r.graph_at_capture_site}};
    }
    for (const int id : rows) {
      auto row = row_json(r, id);
      row["children"] = r.rows[static_cast<std::size_t>(id)].children;
      j["rows"].push_back(std::move(row));
    }
    if (left_out > 0) j["rows_left_out"] = left_out;
    out << j.dump(2) << '\n';
    return left_out;
  }
  if (format == OutputFormat::Csv) {
    out << "id,parent,depth,kind,label,module,file,line,incl_percent,incl_gpu_time_ns,"
           "excl_gpu_time_ns,incl_launches,excl_launches,incl_bytes,excl_bytes,phase\n";
    for (const int id : rows) {
      const auto& row = r.rows[static_cast<std::size_t>(id)];
      out << id << ',' << row.parent << ',' << row.depth << ',' << kind_name(row.kind) << ','
          << csv_field(row.label) << ',' << csv_field(row.module) << ',' << csv_field(row.file)
          << ',' << row.line << ',' << fmt::format("{:.4f}", percent(r, row)) << ','
          << row.inclusive.gpu_time_ns << ',' << row.exclusive.gpu_time_ns << ','
          << row.inclusive.launches << ',' << row.exclusive.launches << ',' << row.inclusive.bytes
          << ',' << row.exclusive.bytes << ',' << row_phase(row) << '\n';
    }
    return left_out;
  }
  out << fmt::format("Calling context ({} view), share of {}: {} GPU time in {} GPU operations",
                     view_name(r.view), metric_name(r.metric),
                     format_duration(static_cast<double>(r.total.gpu_time_ns)), r.total.launches);
  if (r.unattributed_operations > 0) {
    out << fmt::format(" ({} without a recorded calling context)", r.unattributed_operations);
  }
  out << '\n';
  if (r.frames == FramesMode::User || r.frames == FramesMode::Python) {
    out << fmt::format("Frames: {} (framework frames folded into one frame per op or library; "
                       "--frames all shows every frame)\n",
                       frames_mode_name(r.frames));
  }
  if (r.has_phases) {
    // PyTorch: the GPU time of the forward and backward passes, and how backward work is placed.
    out << fmt::format("Phases: forward {}, backward {}, unknown {}; backward operations under their "
                       "forward context: {}, under their thread: {}\n",
                       format_duration(static_cast<double>(r.phase_total[1].gpu_time_ns)),
                       format_duration(static_cast<double>(r.phase_total[2].gpu_time_ns)),
                       format_duration(static_cast<double>(r.phase_total[0].gpu_time_ns)),
                       r.backward_linked, r.backward_unlinked);
  }
  if (r.graph_operations > 0) {
    out << fmt::format(
        "CUDA graphs: {} replayed GPU operations, {} under the context that captured "
        "them, {} under their graph launch (capture site not recorded)\n",
        r.graph_operations, r.graph_at_capture_site, r.graph_operations - r.graph_at_capture_site);
  }
  out << '\n';
  const bool phases = r.has_phases;
  out << fmt::format(" {:>7}  {:>11}  {:>11}  {:>8}  {:>11}  {}{}\n", "Incl %", "Incl time",
                     "Excl time", "Launches", "Bytes", phases ? "Phase     " : "", "Context");
  out << fmt::format(" {:>7}  {:>11}  {:>11}  {:>8}  {:>11}  {}{}\n", "------", "---------",
                     "---------", "--------", "-----", phases ? "-----     " : "", "-------");
  for (const int id : rows) {
    const auto& row = r.rows[static_cast<std::size_t>(id)];
    out << fmt::format(" {:>7.1f}  {:>11}  {:>11}  {:>8}  {:>11}  {}{}{}\n", percent(r, row),
                       format_duration(static_cast<double>(row.inclusive.gpu_time_ns)),
                       format_duration(static_cast<double>(row.exclusive.gpu_time_ns)),
                       row.inclusive.launches, format_bytes(static_cast<double>(row.inclusive.bytes)),
                       phases ? fmt::format("{:<10}", row_phase(row)) : std::string(),
                       std::string(static_cast<std::size_t>(row.depth) * 2, ' '), row.label);
  }
  if (left_out > 0) out << fmt::format("({} more rows not shown: --limit 0 shows all)\n", left_out);
  return left_out;
}

}  // namespace fuselens::analyzer
