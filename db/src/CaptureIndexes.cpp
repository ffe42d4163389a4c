// The capture's indexes (CaptureIndexes.h).

#include "fuselens/db/CaptureIndexes.h"

#include <iterator>
#include <string>

#include "fuselens/db/Sqlite.h"

namespace fuselens::db {
namespace {

// The indexes finalize builds, in the order it builds them. The start and end columns make
// kernel_by_correlation, kernel_by_name, api_by_correlation and api_by_name covering indexes for
// the summary's scans (ordered by name, and by correlation id to join launches with their calls):
// reading the narrow index instead of the table is several times faster on ten million kernels
// (docs/BENCHMARKS.md, "Ten million kernels"). The first three are those the summary's aggregates
// read (without api_by_correlation they join each kernel's call by a scan: 226 s instead of 8 s
// on a million kernels), so that prof-run computes those while it builds the others.
constexpr IndexDefinition kIndexes[] = {
    {"api_by_correlation", "api_call",
     "CREATE INDEX IF NOT EXISTS api_by_correlation ON api_call(pid, correlation_id, tid, "
     "start_ns)"},
    {"kernel_by_name", "kernel",
     "CREATE INDEX IF NOT EXISTS kernel_by_name ON kernel(demangled_name_id, start_ns, end_ns)"},
    {"api_by_name", "api_call",
     "CREATE INDEX IF NOT EXISTS api_by_name ON api_call(name_id, start_ns, end_ns)"},
    {"kernel_by_correlation", "kernel",
     "CREATE INDEX IF NOT EXISTS kernel_by_correlation ON kernel(pid, correlation_id, start_ns, "
     "end_ns)"},
    {"kernel_by_start", "kernel",
     "CREATE INDEX IF NOT EXISTS kernel_by_start ON kernel(device_id, stream_id, start_ns)"},
    {"api_by_thread", "api_call",
     "CREATE INDEX IF NOT EXISTS api_by_thread ON api_call(pid, tid, start_ns)"},
    {"nvtx_by_thread", "nvtx_range",
     "CREATE INDEX IF NOT EXISTS nvtx_by_thread ON nvtx_range(pid, tid, start_ns)"},
    {"memcpy_by_correlation", "memcpy",
     "CREATE INDEX IF NOT EXISTS memcpy_by_correlation ON memcpy(pid, correlation_id)"},
    {"memset_by_correlation", "memset",
     "CREATE INDEX IF NOT EXISTS memset_by_correlation ON memset(pid, correlation_id)"},
    {"memory_by_time", "memory_event",
     "CREATE INDEX IF NOT EXISTS memory_by_time ON memory_event(device_id, timestamp_ns)"},
};

bool is_table(Connection& db, const char* name) {
  auto query = db.prepare("SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = ?");
  query.bind(1, std::string_view(name));
  return query.step();
}

bool index_exists(Connection& db, const char* name) {
  auto query = db.prepare("SELECT 1 FROM main.sqlite_master WHERE type = 'index' AND name = ?");
  query.bind(1, std::string_view(name));
  return query.step();
}

}  // namespace

std::size_t capture_index_count() { return std::size(kIndexes); }

const IndexDefinition& capture_index(std::size_t i) { return kIndexes[i]; }

bool create_capture_index(Connection& db, const IndexDefinition& index) {
  // A lean capture's kernel and api_call are views (no index: analyses sort).
  if (!is_table(db, index.table)) return false;
  db.exec(index.sql);
  return true;
}

int drop_capture_indexes(Connection& db) {
  int dropped = 0;
  in_transaction(db, [&] {
    for (const auto& index : kIndexes) {
      if (!index_exists(db, index.name)) continue;
      db.exec(std::string("DROP INDEX main.\"") + index.name + '"');
      ++dropped;
    }
  });
  return dropped;
}

}  // namespace fuselens::db
