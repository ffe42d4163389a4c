#pragma once
// Writer: stores plain records (Records.h) into a FuseLens capture (schema in db/schema.sql).
//
// `prof-run` creates the file (create) before the workload starts; the collector in each CUDA
// process opens it (open) and appends batches, each in one transaction with prepared statements,
// while the file is in WAL mode so several writers and readers can share it; `prof-run` finalizes
// it at the end (indexes, totals, checkpoint, back to a single self-contained file).
// Every failure throws db::Error.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fuselens/db/Aggregate.h"
#include "fuselens/db/CaptureIndexes.h"
#include "fuselens/db/Layout.h"
#include "fuselens/db/Records.h"

namespace fuselens::db {

class Connection;

/// Where finalize() is, for a progress display: the step it starts now ("checkpoint", "run end",
/// "index kernel_by_name", ... "journal"), its number from 1 and the number of steps. `step` is
/// valid only during the call.
struct FinalizeProgress {
  std::string_view step;
  int number = 0;
  int steps = 0;
};
/// Called by finalize() at the start of each step, on the finalizing thread; it must not throw.
using FinalizeProgressCallback = std::function<void(const FinalizeProgress&)>;

class Writer {
 public:
  /// Creates a new capture at `path` (db::Error if the file exists or cannot be created), writes
  /// the schema, PRAGMA application_id / user_version and the run row, and leaves it in WAL mode.
  /// `layout` Lean (prof-run --layout lean, issue 21): kernels and API calls go to the lean
  /// tables (Layout.h), read back through views named kernel and api_call with the same values.
  /// `indexes` WhileWriting: the capture's indexes (CaptureIndexes.h) are created now and kept by
  /// every write; finalize then builds only those missing (drop_indexes()).
  static Writer create(const std::string& path, const RunInfo& run,
                       TraceLayout layout = TraceLayout::Full,
                       IndexBuild indexes = IndexBuild::AtFinalize);
  /// Opens a capture made by create() to append records (db::Error if it is not one), in the
  /// layout it was created with.
  static Writer open(const std::string& path);
  /// The layout records are written in.
  TraceLayout layout() const;

  Writer(Writer&&) noexcept;
  Writer& operator=(Writer&&) noexcept;
  ~Writer();

  /// Appends every record of `batch` in one transaction. Strings are interned in `strings`;
  /// kernel names are demangled and shortened once per distinct mangled name.
  void write(const RecordBatch& batch);
  /// Inserts or replaces the process row (the collector updates it at exit with its totals).
  void write_process(const ProcessInfo& process);
  /// Inserts or replaces the rank row of a process (table process_rank).
  void write_process_rank(const ProcessRank& rank);
  void write_threads(const std::vector<ThreadInfo>& threads);
  /// Stores a process's calling context tree, the context of each traced API call and its CUDA
  /// graph nodes (table graph_node), in one transaction; node and frame indices are renumbered
  /// into table ids. Returns the cct_node id of each tree node (same order).
  std::vector<std::int64_t> write_calling_contexts(const CallingContextTree& tree);
  /// Stores aggregate mode's rows (schema version 10, Aggregate.h) in one transaction. A row's
  /// node is an index into `node_ids` (what write_calling_contexts returned for its process),
  /// stored as that cct_node id; a node of -1 or outside `node_ids` is stored as NULL.
  void write_aggregates(const AggregateSet& set, const std::vector<std::int64_t>& node_ids);
  /// Stores kernel arguments (schema version 3, table kernel_arg) in one transaction; a row of
  /// the same (pid, correlation id, index) is replaced.
  void write_kernel_args(const std::vector<KernelArgRecord>& args);
  /// Stores the windows a process recorded under capture control (one transaction).
  void write_capture_windows(const std::vector<CaptureWindowRecord>& windows);
  /// Stores a process's sampled tracing (schema 10: sampling, sample_step, sample_step_api; one
  /// transaction, the process's earlier rows replaced). Throws db::Error on a capture older than
  /// version 10 (no tables to store into).
  void write_sampling(const SamplingRecord& sampling);
  /// Inserts the device unless a row with its ordinal exists.
  void write_device(const DeviceInfo& device);
  /// Records how the run ended, sums dropped records over processes, builds the indexes the
  /// analyzer joins and sorts by, checkpoints the WAL and switches to a rollback journal so the
  /// capture is one self-contained file. The switch comes first, before the indexes, when no
  /// other connection holds the capture (their pages are then written once); otherwise last, as it
  /// waits for the others (10 s busy timeout, then db::Error). Killed midway, it leaves the
  /// capture as last committed (every record written before it; no index, run not finalized).
  /// `progress`, when set, is called at the start of each step.
  void finalize(const RunEnd& end, const FinalizeProgressCallback& progress = {});

  /// Drops the capture's indexes that exist (those of IndexBuild::WhileWriting), in one
  /// transaction, so that later writes cost less; finalize builds them. Returns how many it
  /// dropped. For a writer that falls behind what it is given (CaptureWriter). Throws db::Error.
  int drop_indexes();

  /// Records appended through this writer so far.
  std::uint64_t records_written() const;

 private:
  struct Impl;
  explicit Writer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// What Writer::open(connection.path()).finalize(end) does, through `connection`, open ReadWrite
/// on a capture made by Writer::create (prof-run goes on using it for the rest of the capture's
/// finalization). Throws db::Error as they do.
void finalize_capture(Connection& connection, const RunEnd& end,
                      const FinalizeProgressCallback& progress = {});

/// The same finalization in parts, so that other connections read the capture while its indexes
/// are built (prof-run, tools/prof-run/FinalizeCapture.cpp: the stored results are computed
/// meanwhile). begin_finalize checks the capture as Writer::open does and keeps it in WAL mode,
/// where readers and one writer go on at once (the index pages are then written twice: into the
/// WAL, and into the file at the checkpoint); the caller builds each index of CaptureIndexes.h
/// (create_capture_index), each its own transaction; end_finalize records how the run ended, then
/// checkpoints the WAL and switches to a rollback journal (it waits for other connections: 10 s
/// busy timeout, then db::Error). The run's end comes last, so a finalization killed midway
/// leaves every record, the indexes built so far and the run not finalized. Throws db::Error.
void begin_finalize(Connection& connection);
void end_finalize(Connection& connection, const RunEnd& end);

/// The schema text (db/schema.sql), embedded at build time.
const char* schema_sql();

/// Demangles an Itanium C++ ABI name; returns the input unchanged when it is not one.
std::string demangle(const std::string& mangled);
/// The bare function name of a demangled kernel signature, without return type, namespaces,
/// template arguments or parameters ("void ns::gemm<64>(float*, int)" -> "gemm"), as Nsight
/// Systems' shortName.
std::string short_kernel_name(const std::string& demangled);

}  // namespace fuselens::db
