#include "store/AnalysisStore.h"

#include <algorithm>
#include <limits>
#include <memory>

#include "flags/FlagsTrace.h"
#include "fuselens/db/AnalysisStore.h"
#include "store/FlagsStoreJson.h"
#include "store/StoredJson.h"

namespace fuselens::analyzer {
namespace {

using store::BadStore;
using store::Json;

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

Json cct_to_json(const std::vector<cct::OperationGroup>& groups) {
  Json out = Json::array();
  for (const auto& g : groups) {
    out.push_back({{"label", g.label},
                   {"node", g.node},
                   {"graph", g.graph},
                   {"at_capture_site", g.at_capture_site},
                   {"replay_node", g.replay_node},
                   {"phase", static_cast<int>(g.phase.phase)},
                   {"backward_op", g.phase.backward_op},
                   {"forward_node", g.phase.forward_node},
                   {"thread", g.phase.thread},
                   {"gpu_time_ns", g.cost.gpu_time_ns},
                   {"launches", g.cost.launches},
                   {"bytes", g.cost.bytes}});
  }
  return out;
}

// Checked: every node a group names exists in the tree (or is -1), and the costs summed over all
// groups fit in 64 bits, so that no row of any view can overflow.
std::vector<cct::OperationGroup> cct_from_json(const Json& j, const cct::NodeTable& nodes) {
  if (!j.is_array()) throw BadStore("cct: not an array");
  std::vector<cct::OperationGroup> groups;
  CctCost total;
  const auto node_of = [&](const Json& g, const char* key) {
    const std::int64_t node = store::int_member(g, key, -1, kMax);
    if (node >= 0 && nodes.parent_frame.count(node) == 0) throw BadStore("cct: unknown node");
    return node;
  };
  for (const Json& g : j) {
    cct::OperationGroup out;
    out.label = store::text_member(g, "label");
    out.node = node_of(g, "node");
    out.graph = store::bool_member(g, "graph");
    out.at_capture_site = store::bool_member(g, "at_capture_site");
    out.replay_node = node_of(g, "replay_node");
    out.phase.phase = static_cast<CctPhase>(store::int_member(g, "phase", 0, 2));
    out.phase.backward_op = store::text_member(g, "backward_op");
    out.phase.forward_node = node_of(g, "forward_node");
    out.phase.thread = store::text_member(g, "thread");
    out.cost.gpu_time_ns = store::int_member(g, "gpu_time_ns", 0, kMax);
    out.cost.launches = store::int_member(g, "launches", 1, kMax);
    out.cost.bytes = store::int_member(g, "bytes", 0, kMax);
    if (__builtin_add_overflow(total.gpu_time_ns, out.cost.gpu_time_ns, &total.gpu_time_ns) ||
        __builtin_add_overflow(total.launches, out.cost.launches, &total.launches) ||
        __builtin_add_overflow(total.bytes, out.cost.bytes, &total.bytes)) {
      throw BadStore("cct: costs overflow");
    }
    groups.push_back(std::move(out));
  }
  return groups;
}

// The stored body of `analysis` for `window` when the capture's tables are those it came from
// and the window is the one it describes; nullopt otherwise.
std::optional<Json> fresh_body(const db::Reader& reader, const char* analysis,
                               const Window& window) {
  if (!db::has_stored_analyses(reader)) return std::nullopt;
  const auto row =
      db::read_stored_analysis(reader, analysis, window.spec.text, kMaxStoredBodyBytes);
  if (!row || row->window_key != stored_window_key(window)) return std::nullopt;
  if (!db::stored_analyses_fresh(reader)) return std::nullopt;
  Json body = Json::parse(row->body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) return std::nullopt;
  return body;
}

// The flags row of `window`, applied to `reader` already.
db::StoredAnalysisRow flags_row(const db::Reader& reader, const Window& window) {
  const FlagsReport flags =
      run_flags(reader, FlagsConfig(), NameKind::Short, &window, FramesMode::Auto);
  return {"flags", window.spec.text, stored_window_key(window), store::flags_to_json(flags).dump()};
}

// The capture's extent (db::kExtentAnalysis), read before any window restricts `reader`.
db::StoredAnalysisRow extent_row(const db::Reader& reader) {
  const auto [first, last] = capture_extent(reader);
  return {std::string(db::kExtentAnalysis), "", "", db::extent_body(first, last)};
}

}  // namespace

std::string stored_window_key(const Window& w) {
  Json intervals = Json::array();
  for (const auto& i : w.intervals) intervals.push_back(Json::array({i.start_ns, i.end_ns}));
  const Json key{{"spec", w.spec.text},
                 {"whole", w.whole},
                 {"label", w.label},
                 {"description", w.description},
                 {"first_step", w.first_step},
                 {"last_step", w.last_step},
                 {"steps", w.steps ? static_cast<std::int64_t>(w.steps->steps.size()) : -1},
                 {"capture_start_ns", w.capture_start_ns},
                 {"captured_ns", w.captured_ns},
                 {"inside_ns", w.inside_ns},
                 {"startup_ns", w.startup_ns},
                 {"intervals", std::move(intervals)}};
  return key.dump();
}

void store_analyses(db::Reader& reader) { prepare_analyses(reader.path(), false)(reader); }

bool store_bounded_analyses(db::Reader& reader) {
  reader.check_table_timestamps("kernel");  // a no-op where the finalization checked them
  reader.check_table_timestamps("api_call");
  bool cct = false;
  prepare_analyses(reader.path(), true, &cct)(reader);
  return cct;
}

PreparedStore prepare_analyses(const std::string& path, bool bounded, bool* cct) {
  auto rows = compute_analysis_rows(path, bounded, /*flags=*/!bounded);
  if (cct) {
    *cct = std::any_of(rows.begin(), rows.end(),
                       [](const db::StoredAnalysisRow& r) { return r.analysis == "cct"; });
  }
  return prepared_rows(std::move(rows));
}

std::vector<db::StoredAnalysisRow> compute_analysis_rows(const std::string& path, bool bounded,
                                                         bool flags) {
  db::Reader reader(path, bounded ? db::TimestampCheck::DeferLargeTables : db::TimestampCheck::All);
  return compute_analysis_rows(reader, bounded, flags);
}

std::vector<db::StoredAnalysisRow> compute_analysis_rows(db::Reader& reader, bool bounded,
                                                         bool flags) {
  const WindowSpec spec = default_window(kStoredWindowSpec);
  const Window window = resolve_window(reader, spec);
  const std::string key = stored_window_key(window);
  // Before the window restricts it: the extent and the range projections of the whole capture.
  std::vector<db::StoredAnalysisRow> rows{extent_row(reader), range_projection_row(reader)};
  apply_window(reader, window);
  if (!cct::calling_contexts_missing(reader)) {
    if (!bounded) {
      rows.push_back({"cct", spec.text, key, cct_to_json(cct::operation_groups(reader)).dump()});
    } else if (const auto groups = cct::stream_operation_groups(reader, cct::load_frames(reader),
                                                                cct::load_nodes(reader))) {
      rows.push_back({"cct", spec.text, key, cct_to_json(*groups).dump()});
    }
  }
  if (flags) rows.push_back(flags_row(reader, window));
  return rows;
}

db::StoredAnalysisRow compute_flags_row(const std::string& path) {
  db::Reader reader(path, db::TimestampCheck::DeferLargeTables);
  return compute_flags_row(reader);
}

db::StoredAnalysisRow compute_flags_row(db::Reader& reader) {
  const Window window = resolve_window(reader, default_window(kStoredWindowSpec));
  apply_window(reader, window);
  return flags_row(reader, window);
}

PreparedStore prepared_rows(std::vector<db::StoredAnalysisRow> rows) {
  auto held = std::make_shared<const std::vector<db::StoredAnalysisRow>>(std::move(rows));
  return [held](db::Reader& target) {
    const bool add_tables = db::analysis_tables_to_add(target);
    const db::TableFingerprints sources = db::table_fingerprints(target);
    db::write_stored_analyses(target.connection(), add_tables, sources, *held);
  };
}

bool flags_fit(std::int64_t records, std::optional<std::int64_t> available_bytes,
               std::int64_t bound) {
  if (records <= bound) return true;
  if (!available_bytes || *available_bytes <= 0) return false;
  return records <= *available_bytes / 2 / kFlagsBytesPerRecord;
}

void store_extent(db::Reader& reader) {
  reader.check_table_timestamps("kernel");  // a no-op where the finalization checked them
  reader.check_table_timestamps("api_call");
  prepare_extent(reader)(reader);
}

PreparedStore prepare_extent(const db::Reader& reader) {
  return prepared_rows({extent_row(reader)});
}

void store_analyses(const std::string& path) {
  db::Reader reader(db::Connection(path, db::Connection::Mode::ReadWrite),
                    db::TimestampCheck::DeferLargeTables);
  store_analyses(reader);
}

std::optional<Window> stored_results_window(const db::Reader& reader, const WindowSpec& spec,
                                            const StepOptions& step_options) {
  if (spec.kind != WindowKind::Steady || spec.text != kStoredWindowSpec ||
      step_options.range_glob || step_options.function || step_options.automatic ||
      step_options.pid ||
      step_options.consecutive_kernel_delay_ns != StepOptions{}.consecutive_kernel_delay_ns ||
      !db::has_stored_analyses(reader)) {
    return std::nullopt;
  }
  try {
    // resolve_window searches every launch when no steps are stored: only stored ones here.
    if (!stored_step_report(reader)) return std::nullopt;
    return resolve_window(reader, spec, step_options);
  } catch (const WindowError&) {
  } catch (const StepError&) {
  } catch (const db::Error&) {
  }
  return std::nullopt;
}

std::optional<std::vector<cct::OperationGroup>> load_stored_cct(const db::Reader& reader,
                                                                const Window& window) {
  try {
    const auto body = fresh_body(reader, "cct", window);
    if (!body) return std::nullopt;
    return cct_from_json(*body, cct::load_nodes(reader));
  } catch (const BadStore&) {
  } catch (const Json::exception&) {
  } catch (const db::Error&) {
  }
  return std::nullopt;
}

bool stored_flags_config(const FlagsConfig& config, NameKind names, FramesMode frames) {
  if (names != NameKind::Short || frames != FramesMode::Auto) return false;
  if (config.thresholds() != FlagsConfig().thresholds()) return false;
  for (const auto& r : flag_rules()) {
    if (!config.enabled(r.id)) return false;
  }
  return true;
}

std::optional<FlagsReport> load_stored_flags(const db::Reader& reader, const Window& window) {
  try {
    const auto body = fresh_body(reader, "flags", window);
    if (!body) return std::nullopt;
    const FlagsWindow now = flags_window(reader, &window);
    FlagsReport report = store::flags_from_json(*body, now.steps);
    const FlagsWindow& w = report.window;
    // The window figures the report was made with are those of the window resolved now.
    if (w.label != now.label || w.description != now.description || w.whole != now.whole ||
        w.step_pattern != now.step_pattern || w.startup_end_ns != now.startup_end_ns ||
        w.startup_before != now.startup_before) {
      return std::nullopt;
    }
    const FlagsConfig defaults;
    std::vector<std::string> all;
    for (const auto& r : flag_rules()) all.emplace_back(r.id);
    if (report.thresholds != defaults.thresholds() || report.rules_run != all) return std::nullopt;
    report.path = reader.path();
    return report;
  } catch (const BadStore&) {
  } catch (const Json::exception&) {
  } catch (const db::Error&) {
  }
  return std::nullopt;
}

}  // namespace fuselens::analyzer
