#pragma once
// Text, CSV and JSON output of a calling-context view (CallingContext.h).
//
// Text: an indented tree, one row per node, with inclusive share of the chosen metric,
// inclusive and exclusive GPU time, launches and bytes; a "Frames:" line when frames are folded
// (user, python); for a PyTorch capture (some operation forward or backward) a "Phases:" line
// and a Phase column, for a capture with GPU operations replayed from CUDA graphs a "CUDA
// graphs:" line (how many, how many under their capture site, how many under their graph
// launch). CSV columns (stable): id, parent, depth, kind, label, module, file, line,
// incl_percent, incl_gpu_time_ns, excl_gpu_time_ns, incl_launches, excl_launches, incl_bytes,
// excl_bytes, phase (forward, backward, unknown, mixed). JSON: {"view", "metric", "frames"
// (user, python, native, all), "total", "unattributed_operations", "phases":
// {forward_gpu_time_ns, backward_gpu_time_ns, unknown_gpu_time_ns, backward_linked,
// backward_unlinked}, "graphs": {replayed_operations, at_capture_site, at_replay_site} (only
// with graph replays), "rows": [...same keys..., "children": [ids]]}. Row kinds: root, process,
// frame, gpu_operation, unattributed, module, function, line, backward_op, backward_thread,
// phase, graph_replay.

#include <cstddef>
#include <optional>
#include <ostream>

#include "cct/CallingContext.h"
#include "cct/RegexFilter.h"
#include "summary/SummaryFormat.h"

namespace fuselens::analyzer {

struct CctDisplay {
  std::optional<int> max_depth;            ///< hide rows deeper than this (root = 0)
  double min_percent = 0;                  ///< hide rows under this share of the total metric
  std::optional<RegexFilter> filter;       ///< keep rows whose label matches, their ancestors
                                           ///< and their descendants
  std::size_t max_rows = 0;                ///< at most this many rows, in depth-first order (0: all)
};

/// Writes the rows `display` keeps. Returns how many rows max_rows left out (0 when none); the
/// table says so in a last line, JSON in "rows_left_out", CSV not at all (the caller tells).
std::size_t write_cct(std::ostream& out, const CctReport& report, OutputFormat format,
                      const CctDisplay& display);

}  // namespace fuselens::analyzer
