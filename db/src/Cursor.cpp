#include "fuselens/db/Cursor.h"

#include <utility>

namespace fuselens::db {

namespace {
thread_local RowProgressScope* t_progress = nullptr;  // the innermost scope of this thread
}  // namespace

RowProgressScope::RowProgressScope(Hook hook, std::uint32_t batch)
    : hook_(std::move(hook)), batch_(batch == 0 ? 1 : batch), outer_(t_progress) {
  t_progress = this;
}

RowProgressScope::~RowProgressScope() { t_progress = outer_; }

}  // namespace fuselens::db

namespace fuselens::db::detail {

std::uint32_t row_progress_batch() { return t_progress != nullptr ? t_progress->batch_ : 0; }

void report_still_working() noexcept {
  RowProgressScope* scope = t_progress;
  if (scope == nullptr || !scope->hook_) return;
  try {
    scope->hook_(scope->rows_);
  } catch (...) {  // progress is best effort; the statement goes on
  }
}

void report_rows_read(std::uint32_t rows) {
  RowProgressScope* scope = t_progress;
  if (scope == nullptr) return;  // a cursor that outlived its scope
  scope->rows_ += rows;
  if (scope->hook_) scope->hook_(scope->rows_);
}

void throw_implausible_time(const Statement& s, const char* field, std::int64_t value) {
  throw Error("'" + s.database_path() +
              "' is damaged: its tables and their indexes disagree (a row read has " + field + " " +
              std::to_string(value) + "; times must lie in [0, 2^62) ns)");
}

std::string filtered_sql(const std::string& select_from, const std::string& extra_where,
                         const ActivityFilter& filter, const FilterColumns& columns,
                         const std::string& order_by, std::vector<std::int64_t>& binds) {
  std::string where = extra_where;
  auto add = [&](const std::optional<std::int64_t>& value, const std::string& condition) {
    if (!value) return;
    if (!where.empty()) where += " AND ";
    where += condition;
    binds.push_back(*value);
  };
  const std::string time = columns.time;
  add(filter.pid, "pid = ?");
  if (columns.device) add(filter.device_id, "device_id = ?");
  if (columns.stream) add(filter.stream_id, "stream_id = ?");
  if (columns.thread) add(filter.tid, "tid = ?");
  add(filter.t0_ns, time + " >= ?");
  add(filter.t1_ns, time + " < ?");
  if (*columns.name != '\0') add(filter.name_id, std::string(columns.name) + " = ?");
  std::string sql = select_from;
  if (!where.empty()) sql += " WHERE " + where;
  if (!order_by.empty()) sql += " " + order_by;
  return sql;
}

}  // namespace fuselens::db::detail
