#pragma once
// Reader: opens a FuseLens capture read-only and validates it before anything else reads it.
//
// Refused with one clear db::Error message: a missing file, a file that is not an SQLite
// database, an SQLite database of another program (wrong PRAGMA application_id or missing
// tables), and a capture written with a newer schema than kSchemaVersion. The file is never
// modified: it is opened with SQLITE_OPEN_READONLY, extensions off, defensive mode on.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuselens/db/Records.h"
#include "fuselens/db/Sqlite.h"

namespace fuselens::db {

/// The run row plus how it ended.
struct RunSummary {
  RunInfo info;
  RunEnd end;
  std::uint64_t dropped_records = 0;
  int cuda_processes = 0;
};

class Reader {
 public:
  explicit Reader(const std::string& path);

  const std::string& path() const { return connection_.path(); }
  int schema_version() const { return schema_version_; }
  Statement prepare(std::string_view sql) const { return connection_.prepare(sql); }
  std::int64_t query_int(std::string_view sql) const { return connection_.query_int(sql); }

  /// True when the capture has table `name` (version-1 captures lack the version-2 tables).
  bool has_table(std::string_view name) const;

  RunSummary run() const;
  std::vector<ProcessInfo> processes() const;
  std::vector<DeviceInfo> devices() const;
  /// Number of GPU activity records (kernels, copies, memsets, memory events).
  std::int64_t gpu_record_count() const;

 private:
  Connection connection_;
  int schema_version_ = 0;
};

}  // namespace fuselens::db
