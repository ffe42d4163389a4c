#pragma once
// The capture's indexes (db/schema.sql names their tables): built by finalize when the run ends
// (Writer::finalize), or kept while the run writes ("live indexes", issue 21) so that finalize
// has none left to build.
//
// A full-layout trace of ten million launches spends most of its finalize building them: each
// build reads its whole table and sorts it (about 47 s of the 74-82 s finalize of
// `launch_overhead --launches 10000000` on the H100 host, docs/BENCHMARKS.md). Kept while the
// run writes, the same b-tree work is done by the writer thread, beside the workload, one row at
// a time; the rows of each index arrive in nearly the index's order (per stream, per thread, per
// name: times and correlation ids grow), so each insert lands at the end of a run of its prefix.
//
// A lean capture's kernel and api_call are views: their indexes do not apply (Layout.h).
// Errors: db::Error when a statement fails.

#include <cstddef>
#include <string_view>

namespace fuselens::db {

class Connection;

/// When a new capture's indexes are built (Writer::create).
enum class IndexBuild {
  /// By finalize, each in one sorted pass over its table: the least CPU and the densest pages;
  /// for writers that fill a capture in one go (convert, merge, synthetic captures, tests).
  AtFinalize,
  /// Created empty with the capture and kept by every insert, so that finalize has none to build:
  /// the writer thread pays about the same CPU while the workload runs, and the file grows by the
  /// pages that inserts leave part-filled (+8 % on ten million launches; docs/BENCHMARKS.md).
  /// prof-run's captures. A lean layout's kernel and api_call (views) have none either way.
  WhileWriting,
};

/// One index of the capture.
struct IndexDefinition {
  const char* name;
  const char* table;
  const char* sql;  ///< CREATE INDEX IF NOT EXISTS ...
};

/// Every index of the capture, in the order finalize builds them.
std::size_t capture_index_count();
const IndexDefinition& capture_index(std::size_t i);

/// Creates index `index` on `db` when its table is a table (not a lean layout's view); a no-op
/// when it exists. Returns whether the index exists afterwards.
bool create_capture_index(Connection& db, const IndexDefinition& index);

/// Drops every index of the capture that exists (finalize builds them again), in one
/// transaction; returns how many it dropped.
int drop_capture_indexes(Connection& db);

}  // namespace fuselens::db
