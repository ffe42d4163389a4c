#include "fuselens/db/Merge.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "fuselens/db/Reader.h"
#include "fuselens/db/Records.h"
#include "fuselens/db/Writer.h"

namespace fuselens::db {
namespace {

// How a column's values are carried into the merged capture.
enum class Kind {
  Plain,   // as stored
  String,  // a strings(id): re-interned
  Id,      // the table's own row id: renumbered after the rows already merged
  Ref,     // a row id of table `ref`: renumbered as that table's ids
  Time,    // ns on the process's CUPTI clock: + shift
  Offset,  // process.clock_offset_ns: - shift (UTC = t + offset stays true)
};

struct ColumnRule {
  const char* column;
  Kind kind;
  const char* ref = nullptr;
};

enum class Action {
  Copy,        // every row
  CopyIgnore,  // every row unless one with its key is there (device: by CUDA ordinal)
  Special,     // written by merge_captures itself (strings, run, merge_source)
  Skip,        // derived caches and enumerations (see Merge.h)
};

struct TableRule {
  const char* table;
  Action action;
  std::vector<ColumnRule> columns;  // columns not listed are Plain
};

// Every table of db/schema.sql. A table of the schema without a rule here is an error (a newer
// table that merge does not know how to carry).
const std::vector<TableRule>& table_rules() {
  static const std::vector<TableRule> rules{
      {"strings", Action::Special, {}},
      {"run", Action::Special, {}},
      {"merge_source", Action::Special, {}},
      {"process", Action::Copy, {{"clock_offset_ns", Kind::Offset}}},
      {"thread", Action::Copy, {}},
      {"device", Action::CopyIgnore, {}},
      {"kernel",
       Action::Copy,
       {{"id", Kind::Id},
        {"start_ns", Kind::Time},
        {"end_ns", Kind::Time},
        {"short_name_id", Kind::String},
        {"demangled_name_id", Kind::String},
        {"mangled_name_id", Kind::String}}},
      {"memcpy",
       Action::Copy,
       {{"id", Kind::Id}, {"start_ns", Kind::Time}, {"end_ns", Kind::Time}}},
      {"memset",
       Action::Copy,
       {{"id", Kind::Id}, {"start_ns", Kind::Time}, {"end_ns", Kind::Time}}},
      {"memory_event", Action::Copy, {{"id", Kind::Id}, {"timestamp_ns", Kind::Time}}},
      {"api_call",
       Action::Copy,
       {{"id", Kind::Id},
        {"name_id", Kind::String},
        {"start_ns", Kind::Time},
        {"end_ns", Kind::Time}}},
      {"nvtx_range",
       Action::Copy,
       {{"id", Kind::Id},
        {"domain_id", Kind::String},
        {"text_id", Kind::String},
        {"start_ns", Kind::Time},
        {"end_ns", Kind::Time}}},
      {"nvtx_mark",
       Action::Copy,
       {{"id", Kind::Id},
        {"domain_id", Kind::String},
        {"text_id", Kind::String},
        {"timestamp_ns", Kind::Time}}},
      {"sync_event",
       Action::Copy,
       {{"id", Kind::Id}, {"start_ns", Kind::Time}, {"end_ns", Kind::Time}}},
      {"overhead",
       Action::Copy,
       {{"id", Kind::Id}, {"start_ns", Kind::Time}, {"end_ns", Kind::Time}}},
      {"frame",
       Action::Copy,
       {{"id", Kind::Id},
        {"module_id", Kind::String},
        {"function_id", Kind::String},
        {"file_id", Kind::String}}},
      {"cct_node",
       Action::Copy,
       {{"id", Kind::Id}, {"parent_id", Kind::Ref, "cct_node"}, {"frame_id", Kind::Ref, "frame"}}},
      {"api_context", Action::Copy, {{"cct_node_id", Kind::Ref, "cct_node"}}},
      {"graph_node", Action::Copy, {}},
      {"process_rank", Action::Copy, {}},
      {"ceiling", Action::Copy, {{"id", Kind::Id}}},  // measured_utc_ns is UTC: not shifted
      {"kernel_metric", Action::Copy, {{"metric_id", Kind::String}}},
      {"metric_session", Action::Copy, {}},
      {"metric_replay", Action::Copy, {}},
      {"kernel_arg", Action::Copy, {}},
      {"capture_window",
       Action::Copy,
       {{"id", Kind::Id}, {"start_ns", Kind::Time}, {"end_ns", Kind::Time}}},
      // Version 10, aggregate mode: durations and counts, no times to shift.
      {"aggregate_process", Action::Copy, {}},
      {"aggregate_kernel",
       Action::Copy,
       {{"id", Kind::Id},
        {"cct_node_id", Kind::Ref, "cct_node"},
        {"short_name_id", Kind::String},
        {"demangled_name_id", Kind::String},
        {"mangled_name_id", Kind::String}}},
      {"aggregate_transfer",
       Action::Copy,
       {{"id", Kind::Id}, {"cct_node_id", Kind::Ref, "cct_node"}}},
      {"aggregate_memory", Action::Copy, {}},
      // Version 10, sampled tracing: every step's launch calls.
      {"sampling", Action::Copy, {}},
      {"sample_step", Action::Copy, {{"start_ns", Kind::Time}, {"end_ns", Kind::Time}}},
      {"sample_step_api", Action::Copy, {{"api_id", Kind::String}}},
      // The lean layout's tables (schema version 10): empty in the full-layout captures merge
      // reads (open_input refuses lean ones).
      {"kernel_config", Action::Skip, {}},
      {"kernel_lean", Action::Skip, {}},
      {"api_config", Action::Skip, {}},
      {"api_call_lean", Action::Skip, {}},
      {"summary_source", Action::Skip, {}},
      {"summary_duration", Action::Skip, {}},
      {"summary_nvtx_work", Action::Skip, {}},
      {"summary_nvtx_process", Action::Skip, {}},
      {"step_detection", Action::Skip, {}},
      {"stored_analysis_source", Action::Skip, {}},
      {"stored_analysis", Action::Skip, {}},
      {"step", Action::Skip, {}},
      {"timeline_lod_source", Action::Skip, {}},  // derived: the merged capture has none, and
      {"timeline_lod", Action::Skip, {}},         // prof-gui reads its rows
  };
  return rules;
}

const TableRule* rule_for(std::string_view table) {
  for (const auto& rule : table_rules()) {
    if (table == rule.table) return &rule;
  }
  return nullptr;
}

// A prepared statement on a raw connection (the copy binds sqlite3_value as read, which
// db::Statement does not expose: its text() escapes for display).
class Raw {
 public:
  Raw(sqlite3* db, const std::string& sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK) {
      throw Error("preparing '" + sql.substr(0, 60) + "': " + sqlite3_errmsg(db));
    }
  }
  ~Raw() { sqlite3_finalize(stmt_); }
  Raw(const Raw&) = delete;
  Raw& operator=(const Raw&) = delete;
  sqlite3_stmt* get() const { return stmt_; }
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw Error(std::string(sqlite3_errmsg(db_)));
  }
  void run_and_reset() {
    while (step()) {
    }
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
};

std::string quote_identifier(std::string_view name) {
  std::string out = "\"";
  for (const char c : name) {
    out += c;
    if (c == '"') out += '"';
  }
  return out + "\"";
}

// The oldest capture version merge reads (8: ranks), and the nullable columns added since, which
// an older input lacks and the output gets as NULL (version 9: the autograd sequence numbers).
constexpr int kMergeOldestVersion = 8;
bool added_after_oldest(const std::string& table, const std::string& column) {
  return table == "api_context" && (column == "forward_seq" || column == "backward_seq");
}

std::vector<std::string> table_columns(sqlite3* db, const std::string& table) {
  Raw info(db, "SELECT name FROM pragma_table_info(?1)");
  sqlite3_bind_text(info.get(), 1, table.c_str(), -1, SQLITE_TRANSIENT);
  std::vector<std::string> columns;
  while (info.step()) {
    const auto* p = sqlite3_column_text(info.get(), 0);
    columns.emplace_back(p != nullptr ? reinterpret_cast<const char*>(p) : "");
  }
  return columns;
}

std::string column_string(sqlite3_stmt* stmt, int column) {
  const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt, column));
  const int n = sqlite3_column_bytes(stmt, column);
  return p != nullptr ? std::string(p, static_cast<std::size_t>(n)) : std::string();
}

bool has_table(sqlite3* db, const std::string& table) {
  Raw exists(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1");
  sqlite3_bind_text(exists.get(), 1, table.c_str(), -1, SQLITE_TRANSIENT);
  return exists.step();
}

std::optional<std::int64_t> query_optional_int(sqlite3* db, const std::string& sql) {
  Raw s(db, sql);
  if (!s.step() || sqlite3_column_type(s.get(), 0) == SQLITE_NULL) return std::nullopt;
  return sqlite3_column_int64(s.get(), 0);
}

std::int64_t saturated_difference(std::int64_t a, std::int64_t b) {
  std::int64_t d = 0;
  if (__builtin_sub_overflow(a, b, &d)) return std::numeric_limits<std::int64_t>::max();
  return d;
}

// One input, open and checked.
struct Input {
  std::string path;
  std::unique_ptr<Reader> reader;
  std::string host;  // run.host_name (printable), its clock's host
  std::vector<ProcessInfo> processes;
  std::map<std::uint32_t, std::string> pid_hosts;  // every pid of process and process_rank
  std::int64_t shift_ns = 0;
  sqlite3* handle() const { return reader->connection().handle(); }
};

void refuse_same_files(const std::vector<std::string>& paths) {
  std::vector<std::pair<dev_t, ino_t>> seen;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    struct stat st {};
    if (::stat(paths[i].c_str(), &st) != 0) continue;  // Reader says why it cannot be opened
    for (std::size_t j = 0; j < seen.size(); ++j) {
      if (seen[j] == std::make_pair(st.st_dev, st.st_ino)) {
        throw MergeError("'" + paths[i] + "' is the same file as '" + paths[j] +
                         "': each capture can be merged once");
      }
    }
    seen.emplace_back(st.st_dev, st.st_ino);
  }
}

Input open_input(const std::string& path) {
  Input input;
  input.path = path;
  input.reader = std::make_unique<Reader>(path);
  const int version = input.reader->schema_version();
  if (version < kMergeOldestVersion || version > kSchemaVersion) {
    throw MergeError("'" + path + "' has capture schema version " + std::to_string(version) +
                     "; merge reads versions " + std::to_string(kMergeOldestVersion) + " to " +
                     std::to_string(kSchemaVersion) +
                     " only (captures of FuseLens with ranks): record the run again");
  }
  if (input.reader->lean()) {
    throw MergeError("'" + path +
                     "' is a lean capture (prof-run --layout lean): merge reads full-layout "
                     "captures only; record the runs without --layout lean to merge them");
  }
  if (!has_table(input.handle(), "run") ||
      !query_optional_int(input.handle(), "SELECT COUNT(*) FROM run").value_or(0)) {
    throw MergeError("'" + path + "' has no run row: not a complete capture");
  }
  input.host = input.reader->run().info.host_name;
  input.processes = input.reader->processes();
  for (const auto& p : input.processes) input.pid_hosts[p.pid] = input.host;
  for (const auto& r : input.reader->process_ranks()) input.pid_hosts[r.pid] = r.host_name;
  return input;
}

// Refuses a pid found in two inputs: every table is keyed by pid.
void refuse_repeated_pids(const std::vector<Input>& inputs) {
  std::map<std::uint32_t, std::size_t> owner;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    for (const auto& [pid, host] : inputs[i].pid_hosts) {
      const auto [it, fresh] = owner.emplace(pid, i);
      if (fresh) continue;
      const Input& first = inputs[it->second];
      const std::string& first_host = first.pid_hosts.at(pid);
      if (first_host == host) {
        throw MergeError("pid " + std::to_string(pid) + " is in both '" + first.path + "' and '" +
                         inputs[i].path + "' (host '" + host +
                         "'): the same process captured twice cannot be merged");
      }
      throw MergeError("pid " + std::to_string(pid) + " is in both '" + first.path + "' (host '" +
                       first_host + "') and '" + inputs[i].path + "' (host '" + host +
                       "'): pids key every table, so processes of different hosts with one pid "
                       "cannot be merged into one capture");
    }
  }
}

// Groups the inputs by host and sets each input's shift (see Merge.h).
std::vector<MergeHost> place_hosts(std::vector<Input>& inputs) {
  std::vector<MergeHost> hosts;
  std::map<std::string, std::vector<std::int64_t>> offsets;
  for (const auto& input : inputs) {
    auto it = std::find_if(hosts.begin(), hosts.end(),
                           [&](const MergeHost& h) { return h.host_name == input.host; });
    if (it == hosts.end()) {
      hosts.push_back({});
      it = std::prev(hosts.end());
      it->host_name = input.host;
      it->reference = hosts.size() == 1;
    }
    ++it->inputs;
    it->processes += input.processes.size();
    for (const auto& p : input.processes) {
      if (p.clock_offset_ns != 0) offsets[input.host].push_back(p.clock_offset_ns);
    }
  }
  for (auto& host : hosts) {
    auto& measured = offsets[host.host_name];
    std::sort(measured.begin(), measured.end());
    host.measured = measured.size();
    if (measured.empty()) continue;
    host.offset_ns = measured[(measured.size() - 1) / 2];
    host.offset_spread_ns = saturated_difference(measured.back(), measured.front());
  }
  const MergeHost& reference = hosts.front();
  for (auto& host : hosts) {
    if (host.reference || host.processes == 0) continue;  // nothing to move
    for (const MergeHost* h : {&reference, static_cast<const MergeHost*>(&host)}) {
      if (h->measured == 0) {
        throw MergeError("cannot place the captures of host '" + host.host_name +
                         "' on the clock of host '" + reference.host_name + "': no process of '" +
                         h->host_name + "' measured its clock offset (process.clock_offset_ns)");
      }
    }
    if (__builtin_sub_overflow(host.offset_ns, reference.offset_ns, &host.shift_ns)) {
      throw MergeError("the clock offsets of hosts '" + host.host_name + "' and '" +
                       reference.host_name + "' are implausible (their difference overflows)");
    }
  }
  for (auto& input : inputs) {
    for (const auto& host : hosts) {
      if (host.host_name == input.host) input.shift_ns = host.shift_ns;
    }
  }
  return hosts;
}

// The merged capture's strings: value -> id.
class StringTable {
 public:
  explicit StringTable(sqlite3* out)
      : insert_(out, "INSERT INTO strings(id, value) VALUES(?1, ?2)") {}

  // Maps every string id of `in` to the merged capture's id of its value.
  std::unordered_map<std::int64_t, std::int64_t> intern(sqlite3* in, std::uint64_t& rows) {
    std::unordered_map<std::int64_t, std::int64_t> map;
    if (!has_table(in, "strings")) return map;
    Raw read(in,
             "SELECT id, value FROM strings WHERE typeof(id) = 'integer' AND value IS NOT NULL");
    while (read.step()) {
      std::string value = column_string(read.get(), 1);
      auto [it, fresh] = ids_.emplace(std::move(value), static_cast<std::int64_t>(ids_.size()) + 1);
      if (fresh) {
        sqlite3_bind_int64(insert_.get(), 1, it->second);
        sqlite3_bind_text(insert_.get(), 2, it->first.data(), static_cast<int>(it->first.size()),
                          SQLITE_STATIC);
        insert_.run_and_reset();
        ++rows;
      }
      map[sqlite3_column_int64(read.get(), 0)] = it->second;
    }
    return map;
  }

 private:
  Raw insert_;
  std::unordered_map<std::string, std::int64_t> ids_;
};

// What one input's rows need to land in the merged capture.
struct Mapping {
  const Input* input = nullptr;
  std::unordered_map<std::int64_t, std::int64_t> strings;
  std::map<std::string, std::int64_t> id_offsets;  // table -> added to its ids
};

std::int64_t id_offset(sqlite3* out, const Input& input, const std::string& table) {
  const std::string quoted = quote_identifier(table);
  const auto out_max = query_optional_int(out, "SELECT MAX(id) FROM " + quoted).value_or(0);
  if (!has_table(input.handle(), table)) return 0;
  const auto in_min = query_optional_int(input.handle(), "SELECT MIN(id) FROM " + quoted);
  const auto in_max = query_optional_int(input.handle(), "SELECT MAX(id) FROM " + quoted);
  if (!in_min || !in_max) return 0;
  // New ids run from out_max + 1 to out_max + 1 + (in_max - in_min).
  std::int64_t first = 0, offset = 0, span = 0, last = 0;
  if (__builtin_add_overflow(out_max, 1, &first) ||
      __builtin_sub_overflow(first, *in_min, &offset) ||
      __builtin_sub_overflow(*in_max, *in_min, &span) ||
      __builtin_add_overflow(first, span, &last)) {
    throw MergeError("'" + input.path + "': the ids of table " + table +
                     " are too far apart to renumber");
  }
  return offset;
}

[[noreturn]] void bad_value(const Input& input, const std::string& table, const std::string& column,
                            std::uint64_t row, const std::string& why) {
  throw MergeError("'" + input.path + "': " + table + " row " + std::to_string(row) + " column " +
                   column + " " + why);
}

// Copies one table of one input into the merged capture; returns the rows copied.
std::uint64_t copy_table(sqlite3* out, const TableRule& rule, const Mapping& mapping,
                         std::vector<std::string>& notes) {
  const Input& input = *mapping.input;
  sqlite3* in = input.handle();
  const std::string table = rule.table;
  if (!has_table(in, table)) return 0;  // hostile or partial: a missing table holds no rows
  const auto columns = table_columns(out, table);
  const auto in_columns = table_columns(in, table);
  std::string select = "SELECT ", insert_columns, placeholders;
  std::vector<Kind> kinds;
  std::vector<std::int64_t> offsets;  // for Id and Ref
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const std::string& c = columns[i];
    const bool present = std::find(in_columns.begin(), in_columns.end(), c) != in_columns.end();
    if (!present && !added_after_oldest(table, c)) {
      throw MergeError("'" + input.path + "': table " + table + " lacks column " + c +
                       ": not a schema-" + std::to_string(kSchemaVersion) + " capture");
    }
    select += (i ? ", " : "") + (present ? quote_identifier(c) : std::string("NULL"));
    insert_columns += (i ? ", " : "") + quote_identifier(c);
    placeholders += (i ? ", ?" : "?") + std::to_string(i + 1);
    Kind kind = Kind::Plain;
    std::int64_t offset = 0;
    for (const auto& cr : rule.columns) {
      if (c != cr.column) continue;
      kind = cr.kind;
      if (kind == Kind::Id) offset = mapping.id_offsets.at(table);
      if (kind == Kind::Ref) offset = mapping.id_offsets.at(cr.ref);
    }
    kinds.push_back(kind);
    offsets.push_back(offset);
  }
  select += " FROM " + quote_identifier(table);

  if (rule.action == Action::CopyIgnore && table == "device") {
    // Ordinals are per host: say when two inputs' GPU of one ordinal differ.
    Raw theirs(in, "SELECT id, uuid FROM device");
    Raw ours(out, "SELECT uuid FROM device WHERE id = ?1");
    while (theirs.step()) {
      sqlite3_bind_value(ours.get(), 1, sqlite3_column_value(theirs.get(), 0));
      if (ours.step() && column_string(ours.get(), 0) != column_string(theirs.get(), 1)) {
        notes.push_back("device " + std::to_string(sqlite3_column_int64(theirs.get(), 0)) +
                        " of '" + input.path +
                        "' is another GPU than the device of that ordinal in an earlier input; "
                        "the merged capture keeps the first one's properties");
      }
      sqlite3_reset(ours.get());
    }
  }

  Raw read(in, select);
  Raw write(out, std::string(rule.action == Action::CopyIgnore ? "INSERT OR IGNORE" : "INSERT") +
                     " INTO " + quote_identifier(table) + "(" + insert_columns + ") VALUES(" +
                     placeholders + ")");
  std::uint64_t rows = 0;
  while (read.step()) {
    const std::uint64_t row = rows + 1;  // position in reading order (WITHOUT ROWID tables too)
    for (std::size_t i = 0; i < columns.size(); ++i) {
      sqlite3_value* value = sqlite3_column_value(read.get(), static_cast<int>(i));
      const int index = static_cast<int>(i) + 1;
      const int type = sqlite3_value_type(value);
      if (kinds[i] == Kind::Plain || type == SQLITE_NULL ||
          (kinds[i] == Kind::Time && input.shift_ns == 0) ||
          (kinds[i] == Kind::Offset && input.shift_ns == 0)) {
        sqlite3_bind_value(write.get(), index, value);
        continue;
      }
      if (type != SQLITE_INTEGER) bad_value(input, table, columns[i], row, "is not an integer");
      const std::int64_t v = sqlite3_value_int64(value);
      std::int64_t mapped = 0;
      switch (kinds[i]) {
        case Kind::String: {
          const auto it = mapping.strings.find(v);
          if (it == mapping.strings.end()) {
            bad_value(input, table, columns[i], row,
                      "names string " + std::to_string(v) + ", which table strings lacks");
          }
          mapped = it->second;
          break;
        }
        case Kind::Id:
        case Kind::Ref:
          if (__builtin_add_overflow(v, offsets[i], &mapped)) {
            bad_value(input, table, columns[i], row, "cannot be renumbered");
          }
          break;
        case Kind::Time:
          if (__builtin_add_overflow(v, input.shift_ns, &mapped) || mapped < 0 ||
              mapped >= kMaxTimestampNs) {
            bad_value(input, table, columns[i], row,
                      "leaves [0, 2^62) ns when shifted by " + std::to_string(input.shift_ns) +
                          " ns onto the first input's clock");
          }
          break;
        case Kind::Offset:
          if (__builtin_sub_overflow(v, input.shift_ns, &mapped)) {
            bad_value(input, table, columns[i], row, "overflows when shifted");
          }
          break;
        case Kind::Plain:
          break;
      }
      sqlite3_bind_int64(write.get(), index, mapped);
    }
    try {
      write.run_and_reset();
    } catch (const Error& e) {
      throw MergeError("'" + input.path + "': cannot merge " + table + " row " +
                       std::to_string(row) + ": " + e.what());
    }
    ++rows;
  }
  return rows;
}

// The first input's run row, with cuda_processes and dropped_records summed over the inputs.
void write_run(sqlite3* out, const std::vector<Input>& inputs) {
  std::int64_t processes = 0, dropped = 0;
  for (const auto& input : inputs) {
    Raw s(input.handle(), "SELECT cuda_processes, dropped_records FROM run WHERE id = 1");
    if (!s.step()) continue;
    if (__builtin_add_overflow(processes, sqlite3_column_int64(s.get(), 0), &processes) ||
        __builtin_add_overflow(dropped, sqlite3_column_int64(s.get(), 1), &dropped)) {
      throw MergeError("'" + input.path + "': implausible run totals (their sum overflows)");
    }
  }
  const auto columns = table_columns(out, "run");
  std::string select, names, placeholders;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    select += (i ? ", " : "") + quote_identifier(columns[i]);
    names += (i ? ", " : "") + quote_identifier(columns[i]);
    placeholders += (i ? ", ?" : "?") + std::to_string(i + 1);
  }
  Raw read(inputs.front().handle(), "SELECT " + select + " FROM run WHERE id = 1");
  if (!read.step()) throw MergeError("'" + inputs.front().path + "' has no run row");
  Raw write(out, "INSERT OR REPLACE INTO run(" + names + ") VALUES(" + placeholders + ")");
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const int index = static_cast<int>(i) + 1;
    if (columns[i] == "cuda_processes") {
      sqlite3_bind_int64(write.get(), index, processes);
    } else if (columns[i] == "dropped_records") {
      sqlite3_bind_int64(write.get(), index, dropped);
    } else {
      sqlite3_bind_value(write.get(), index, sqlite3_column_value(read.get(), static_cast<int>(i)));
    }
  }
  write.run_and_reset();
}

}  // namespace

MergeReport merge_captures(const std::vector<std::string>& paths, const std::string& output) {
  if (paths.empty()) throw MergeError("merge needs at least one capture");
  refuse_same_files(paths);
  std::vector<Input> inputs;
  for (const auto& path : paths) inputs.push_back(open_input(path));
  refuse_repeated_pids(inputs);

  MergeReport report;
  report.hosts = place_hosts(inputs);

  // A new file, or an empty one that the caller created for it (a temporary file: SQLite takes
  // an empty file for an empty database); never an existing capture.
  // (SQLite's exclusive create does not refuse an existing file: check here.)
  struct stat st {};
  const bool exists = ::lstat(output.c_str(), &st) == 0;
  if (exists && !(S_ISREG(st.st_mode) && st.st_size == 0)) {
    throw MergeError("cannot write '" + output +
                     "': it exists; merge writes a new file (or an empty one made for it)");
  }
  Connection out(output, exists ? Connection::Mode::ReadWrite : Connection::Mode::Create);
  sqlite3* db = out.handle();
  in_transaction(out, [&] {
    out.exec(schema_sql());
    out.exec("PRAGMA application_id = " + std::to_string(kApplicationId));
    out.exec("PRAGMA user_version = " + std::to_string(kSchemaVersion));
    // Every table of the schema must have a rule.
    Raw tables(db, "SELECT name FROM sqlite_master WHERE type = 'table'");
    std::vector<std::string> names;
    while (tables.step()) {
      names.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(tables.get(), 0)));
    }
    for (const auto& name : names) {
      if (name.rfind("enum_", 0) == 0) continue;
      if (rule_for(name) == nullptr) {
        throw Error("merge: table " + name + " of the schema has no merge rule (db/src/Merge.cpp)");
      }
    }
    StringTable strings(db);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      Mapping mapping;
      mapping.input = &inputs[i];
      mapping.strings = strings.intern(inputs[i].handle(), report.rows);
      for (const auto& rule : table_rules()) {
        for (const auto& c : rule.columns) {
          if (c.kind == Kind::Id)
            mapping.id_offsets[rule.table] = id_offset(db, inputs[i], rule.table);
        }
      }
      for (const auto& rule : table_rules()) {
        if (rule.action == Action::Copy || rule.action == Action::CopyIgnore) {
          report.rows += copy_table(db, rule, mapping, report.notes);
        }
      }
      std::vector<std::uint32_t> pids;
      for (const auto& p : inputs[i].processes) pids.push_back(p.pid);
      std::sort(pids.begin(), pids.end());
      Raw source(db,
                 "INSERT INTO merge_source(pid, input_index, path, host_name, shift_ns) "
                 "VALUES(?1, ?2, ?3, ?4, ?5)");
      for (const auto pid : pids) {
        MergeSource s{i, inputs[i].path, inputs[i].pid_hosts.at(pid), pid, inputs[i].shift_ns};
        sqlite3_bind_int64(source.get(), 1, s.pid);
        sqlite3_bind_int64(source.get(), 2, static_cast<std::int64_t>(s.input_index));
        sqlite3_bind_text(source.get(), 3, s.path.c_str(), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(source.get(), 4, s.host_name.c_str(), -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(source.get(), 5, s.shift_ns);
        source.run_and_reset();
        report.sources.push_back(std::move(s));
      }
    }
  });
  finalize_capture(out, RunEnd{});  // the indexes; the run row is written next
  in_transaction(out, [&] { write_run(db, inputs); });
  return report;
}

}  // namespace fuselens::db
