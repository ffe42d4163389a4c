#pragma once
// Aggregate mode (prof-run --mode aggregate; docs/aggregate.md): the statistics of a whole run
// kept per distinct context instead of one row per record, so that a capture grows with the
// number of distinct (process, calling-context node, kernel, launch configuration) and not with
// the run's length.
//
// Aggregator runs on the collector's writer thread (CaptureWriter), over the plain records the
// ActivityConverter made from each completed CUPTI buffer: never on the launch path. It keeps
//  - per (node, device, kernel mangled name, grid, block, static and dynamic shared memory): the
//    count, total, min and max of the GPU time (end_ns - start_ns, ns; 0 when end < start) and
//    its DDSketch; the same of the launch latency, kernel start_ns - start_ns of the API call of
//    the same correlation id (the earliest such call; clipped at 0), for the kernels whose call
//    was seen (latency_count <= count);
//  - per (node, device, operation, copy kind and memory kinds): copies and memsets, their count,
//    bytes and GPU time;
//  - per (device, context): device-memory allocations and releases and the peak of the running
//    sum of allocated bytes (+bytes per allocation, -bytes per release, in the order the
//    records arrive, the sum clipped at 0 for releases of allocations made before recording);
//  - per process: the records aggregated.
// Nodes: the calling context of each record is known only when the process ends (the collector
// merges its threads' trees then), so with contexts the records wait as 24-byte entries and are
// attributed by finish(); without, they are added to node -1 at once.
//
// Units: *_ns nanoseconds, bytes bytes. Errors: none thrown by add(); finish() throws
// std::bad_alloc only.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fuselens/db/DDSketch.h"
#include "fuselens/db/Records.h"

namespace fuselens::db {

/// Count, total, min and max of a set of values (ns) and their sketch.
struct AggregateStats {
  std::int64_t count = 0;
  std::int64_t total = 0;  ///< saturates at INT64_MAX
  std::int64_t min = 0, max = 0;
  DDSketch sketch;
  void add(std::int64_t value);
};

struct AggregateKernelRow {
  std::uint32_t pid = 0, device_id = 0;
  /// Calling-context node: written, an index into the process's CallingContextTree::nodes
  /// (Writer::write_aggregates maps it to the cct_node id); read, the cct_node id. -1: none.
  std::int64_t node = -1;
  std::string mangled_name;    ///< as the driver reported it
  std::string demangled_name;  ///< filled when read (strings of the row's name ids)
  std::string short_name;      ///< filled when read
  std::int32_t grid_x = 0, grid_y = 0, grid_z = 0, block_x = 0, block_y = 0, block_z = 0;
  std::int32_t static_shared_bytes = 0, dynamic_shared_bytes = 0;
  AggregateStats gpu;      ///< GPU time of each launch
  AggregateStats latency;  ///< launch latency of the launches whose API call was seen
};

enum class TransferOperation : int { Memcpy = 1, Memset = 2 };

struct AggregateTransferRow {
  std::uint32_t pid = 0, device_id = 0;
  std::int64_t node = -1;  ///< as AggregateKernelRow::node
  TransferOperation operation = TransferOperation::Memcpy;
  MemcpyKind copy_kind = MemcpyKind::Unknown;  ///< memcpy; Unknown for memsets
  MemoryKind src_kind = MemoryKind::Unknown;   ///< memcpy source; the memset's memory kind
  MemoryKind dst_kind = MemoryKind::Unknown;   ///< memcpy destination; Unknown for memsets
  std::int64_t count = 0, bytes = 0;           ///< bytes saturate at INT64_MAX
  std::int64_t total_ns = 0, min_ns = 0, max_ns = 0;
};

struct AggregateMemoryRow {
  std::uint32_t pid = 0, device_id = 0, context_id = 0;
  std::int64_t allocations = 0, releases = 0;
  std::int64_t allocated_bytes = 0;  ///< sum over allocations
  std::int64_t peak_bytes = 0;       ///< highest running sum
  std::int64_t final_bytes = 0;      ///< running sum after the last event
};

struct AggregateProcessRow {
  std::uint32_t pid = 0;
  std::int64_t kernels = 0, copies = 0, memsets = 0, memory_events = 0;
  std::int64_t traced = 0;           ///< records also stored as trace rows (in windows)
  std::int64_t without_context = 0;  ///< kernels, copies and memsets with no node
  double sketch_alpha = DDSketch::kDefaultAlpha;
};

struct AggregateSet {
  std::vector<AggregateProcessRow> processes;
  std::vector<AggregateKernelRow> kernels;
  std::vector<AggregateTransferRow> transfers;
  std::vector<AggregateMemoryRow> memory;
  bool empty() const {
    return processes.empty() && kernels.empty() && transfers.empty() && memory.empty();
  }
};

class Aggregator {
 public:
  /// `pid`: the process; `with_contexts`: the records wait for finish() to learn their node.
  explicit Aggregator(std::uint32_t pid, bool with_contexts);
  ~Aggregator();
  Aggregator(const Aggregator&) = delete;
  Aggregator& operator=(const Aggregator&) = delete;

  /// Adds the kernels, copies, memsets and memory events of `batch` (its API calls give launch
  /// times). A kernel whose API call has not arrived waits for the next kGenerations batches.
  void add(const RecordBatch& batch);
  /// Counts records also stored as trace rows (AggregateProcessRow::traced).
  void add_traced(std::uint64_t records) { traced_ += records; }
  /// The aggregates; node_of(correlation_id) gives a record's node (-1: none) when the
  /// Aggregator was made with_contexts (ignored otherwise; may be empty then). Call once.
  AggregateSet finish(const std::function<std::int64_t(std::uint32_t)>& node_of);

  /// Batches a kernel waits for its API call, and an API call's start is kept for.
  static constexpr std::uint32_t kGenerations = 8;

 private:
  struct State;
  std::unique_ptr<State> state_;
  std::uint64_t traced_ = 0;
};

}  // namespace fuselens::db
