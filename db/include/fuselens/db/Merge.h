#pragma once
// Merge: several captures (typically `prof-run --per-process`, one per rank) into one new
// capture, with every process on one clock (docs/multi-gpu.md, "Merging per-rank captures").
//
// What the merged capture holds:
//  - every row of every input's tables, strings re-interned (one `strings` row per distinct
//    value), row ids of the id-keyed tables renumbered after the rows already merged (and the
//    references to them: cct_node.parent_id, cct_node.frame_id, api_context.cct_node_id);
//  - the run row of the first input, with cuda_processes and dropped_records summed over inputs;
//  - device rows by CUDA ordinal, the first input's row kept when several inputs have one
//    (MergeReport::notes says when their GPUs differ: ordinals are per host);
//  - merge_source (db/schema.sql): how each process was placed;
//  - not the derived tables (summary_source, summary_duration, summary_nvtx_work,
//    summary_nvtx_process,
//    step_detection, step): caches of one capture's analyses, recomputed from the merged rows.
//    The enum_* tables come with the schema.
//
// Clocks: times (*_ns) are on each process's CUPTI clock, which the processes of one host share.
// The inputs of the first input's host (run.host_name) keep their times (shift 0); an input of
// another host has shift = offset(its host) - offset(first input's host) added to every time
// column of its rows and subtracted from its process.clock_offset_ns, where offset(host) is the
// median (the lower middle for an even count) of the measured process.clock_offset_ns (UTC -
// CUPTI ns; 0 counts as not measured) of that host's processes over every input: UTC = t + offset
// holds before and after. Residual error: 0 within a host (one clock; the spread of its measured
// offsets, MergeHost::offset_spread_ns, is the offset measurement's own jitter); across hosts,
// bounded by how well the hosts' UTC clocks agree (NTP, PTP), which a capture does not record and
// FuseLens cannot measure.
//
// Errors (db::Error; MergeError for the refusals specific to merging), each one line naming the
// file: an input that cannot be read as a capture (Reader's checks: missing, not a capture,
// corrupt, implausible times, newer schema), an input whose schema version is outside 8 to
// kSchemaVersion (refused, not upgraded; a version-8 capture merges, with NULL autograd sequence
// numbers), the same file given twice, a pid in
// two inputs (pids key every table: one process captured twice, or processes of different hosts
// with one pid), a host whose clock offset was never measured while inputs of several hosts are
// merged, a shift that would move a time outside [0, kMaxTimestampNs), and an output that exists
// and is not an empty regular file (the caller makes an empty temporary file, merges into it and
// renames it: `prof-analyze merge` does so with analyzer::ExportFile).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuselens/db/Sqlite.h"

namespace fuselens::db {

/// A capture cannot be merged with the others (see Merge.h).
class MergeError : public Error {
 public:
  using Error::Error;
};

/// One process of one input: a row of merge_source.
struct MergeSource {
  std::size_t input_index = 0;  ///< position in the inputs, from 0
  std::string path;             ///< the input as given
  std::string host_name;        ///< process_rank.host_name, else the input's run.host_name
  std::uint32_t pid = 0;
  std::int64_t shift_ns = 0;  ///< added to the process's times
};

/// One host (the run.host_name of one or more inputs): its clock and how it was placed.
struct MergeHost {
  std::string host_name;
  bool reference = false;             ///< the first input's host: times unchanged
  std::size_t inputs = 0;             ///< inputs recorded on it
  std::size_t processes = 0;          ///< their processes
  std::size_t measured = 0;           ///< processes with a measured clock offset (non-zero)
  std::int64_t offset_ns = 0;         ///< median measured clock_offset_ns (UTC - CUPTI)
  std::int64_t offset_spread_ns = 0;  ///< largest - smallest measured offset (saturated)
  std::int64_t shift_ns = 0;          ///< added to the times of its inputs' rows
};

struct MergeReport {
  std::vector<MergeSource> sources;  ///< as stored in merge_source, by input then pid
  std::vector<MergeHost> hosts;      ///< the reference host first, then by first appearance
  std::uint64_t rows = 0;            ///< rows copied, all tables
  std::vector<std::string> notes;    ///< things the caller should tell the user, one line each
};

/// Merges `inputs` (at least one) into a new capture at `output`, which must not exist or be an
/// empty regular file; see the file comment. On an error the partial output is left for the
/// caller to remove.
MergeReport merge_captures(const std::vector<std::string>& inputs, const std::string& output);

}  // namespace fuselens::db
