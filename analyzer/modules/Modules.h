#pragma once
// The module view of a PyTorch capture: GPU time, launches, bytes and peak device memory per
// nn.Module instance path (model.encoder.layers.3.attn), forward and backward, inclusive and
// exclusive, from the module ranges (ModuleRanges.h: the NVTX ranges of prof-run's hooks mode,
// "fuselens:module:fwd:PATH" around each module call and "fuselens:module:bwd:PATH" around each
// autograd node the module's forward created, or the same derived from the module frames and
// autograd sequence numbers the collector records by default; docs/calling-context.md, "Modules").
// A module's `calls` are its forward ranges: with derived ranges, its uninterrupted runs of
// launches (ModuleRanges.h).
//
// Placement: a GPU operation (kernel, copy, memset) belongs to the innermost module range open on
// its launching thread at its launch call (the earliest API call of its pid and correlation id,
// start inside [range start, range end]), the projection of the NVTX summary
// (compare/CompareProjection.h). Its phase is backward when that range is a bwd range, or when the
// calling-context phase logic says so (cct: a launch inside torch::autograd::Engine or an
// emit_nvtx evaluate_function range), or when it was launched on a thread named pt_autograd_*;
// forward otherwise.
// Tree: one node per path prefix split at '.', so model.layers.3 has parents model.layers and
// model even when model.layers (a ModuleList) is never called. Exclusive cost = the operations
// placed in the node's own ranges; inclusive = exclusive plus every descendant's.
// Peak device memory: the largest number of bytes of device memory the process held (sum of
// live allocations of CUPTI's memory events: with PyTorch, its caching allocator's segments, not
// its tensors) at the start of or during any range of the node or of its descendants (forward
// and backward apart), counted over the whole capture's allocation history even when the reader
// is restricted to a window; -1 without memory events.
//
// Units: ns, bytes. Errors: db::Error when a query fails.

#include <cstdint>
#include <string>
#include <vector>

#include "fuselens/db/Reader.h"

namespace fuselens::analyzer {

/// GPU work of one phase.
struct ModuleCost {
  std::int64_t gpu_ns = 0;    ///< sum of GPU durations
  std::int64_t launches = 0;  ///< GPU operations (kernels, copies, memsets)
  std::int64_t bytes = 0;     ///< bytes copied or set
  ModuleCost& operator+=(const ModuleCost& other);
};

struct ModuleRow {
  std::string path;        ///< the full instance path, "model.encoder.layers.3"
  std::string name;        ///< its last segment, "3"
  int depth = 0;           ///< 0 for a root module
  int parent = -1;         ///< index into ModulesReport::rows; -1 for roots
  std::int64_t calls = 0;  ///< forward ranges of exactly this path
  ModuleCost forward_inclusive, forward_exclusive, backward_inclusive, backward_exclusive;
  std::int64_t peak_forward_bytes = -1;   ///< peak device memory during forward ranges
  std::int64_t peak_backward_bytes = -1;  ///< peak device memory during backward ranges
};

struct ModulesReport {
  bool available = false;       ///< the capture has module ranges
  bool derived = false;         ///< derived from module frames (ModuleRanges.h), not stored
  std::vector<ModuleRow> rows;  ///< depth-first, children by inclusive GPU time, descending
  ModuleCost forward_outside;   ///< forward work outside every module range (loss, optimizer)
  ModuleCost backward_outside;  ///< backward work outside every bwd range
  ModuleCost backward_total;    ///< all backward work
  /// backward GPU time placed in a module (in a bwd range, or in a fwd range while in backward,
  /// such as recomputation) / all backward GPU time; 0 when there is no backward work.
  double backward_attributed_share() const;
};

/// The module view of the capture (or of the window the reader is restricted to: operations and
/// ranges inside it; the memory history is the whole capture's). available = false when the
/// capture holds no module range.
ModulesReport module_report(const db::Reader& reader);

}  // namespace fuselens::analyzer
