#pragma once
// FlagsFusionEvidence: what the fusion_chain rule (FlagsFusion.cpp, docs/rules.md) says about a
// chain beyond its launches, from the evidence FlagsTrace loads.
//
// Output feeds next (an approximation): kernel B consumes kernel A when B receives a pointer into
// a buffer that A also received. A buffer is the device allocation (memory_event) holding the
// 8-byte argument at the launch call's start; an argument in no recorded allocation counts only
// when it equals another kernel's argument exactly and looks like a device pointer (>= 4 GiB,
// 256-byte aligned), with no size. Read/write direction is unknown: two kernels that only read
// one input "share" it too, and one allocation holding many tensors (a caching allocator's
// segment) makes every kernel using it look related.
// Intermediate bytes: for each consecutive pair, the sizes of the allocations it shares, each
// written once and read once (2 x bytes), summed over pairs and occurrences. An upper bound:
// inputs read by both kernels count, and small intermediates may stay in L2.
// Memory-bound: the chain's work (the hardware counters of its own launches, summed over its
// occurrences; else the work annotation of its NVTX range) has, at some memory level, an
// arithmetic intensity (FLOPs over that level's bytes) below the level's ridge point (peak FLOP/s
// of the dominant precision / the level's bandwidth) of the device's own ceilings
// (DeviceCeilings: measured, else datasheet). The level furthest below (or least above) its ridge
// decides and is reported. A chain without FLOPs is memory-bound.
//
// Units: bytes, ns, FLOP/byte, bytes/s. No I/O; no exceptions of its own.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "flags/Flags.h"
#include "flags/FlagsTrace.h"

namespace fuselens::analyzer {

/// The call path a chain's launches share (the longest common prefix of their call paths by
/// function, with the last frame's location when all agree), formatted as format_context; ""
/// when any kernel's context is unknown.
std::string chain_context(const FlagsTrace& trace, const std::vector<const TraceOp*>& chain);

/// Buffer sharing of one occurrence of a chain.
struct Sharing {
  int pairs = 0;                         ///< consecutive kernel pairs
  int pairs_sharing = 0;                 ///< pairs that share a buffer
  int pairs_unknown = 0;                 ///< pairs with a kernel without recorded arguments
  std::uint64_t intermediate_bytes = 0;  ///< 2 x sizes of the allocations shared, over pairs
  int unsized_buffers = 0;  ///< shared buffers outside any recorded allocation (not counted)
};

/// The sharing of one occurrence (kernels in launch order). Every pair is unknown when the
/// capture has no kernel arguments.
Sharing share_buffers(const FlagsTrace& trace, const std::vector<const TraceOp*>& chain);

/// Adds an occurrence's sharing to the hit's metrics: occurrences_feeding (every pair shares),
/// occurrences_independent (some pair shares nothing), occurrences_unknown, intermediate_bytes,
/// unsized_shared_buffers.
void add_sharing(Hit& hit, const Sharing& sharing);

enum class Feeds { Yes, Partly, No, Unknown };
/// From the occurrence counts: Yes when occurrences with arguments all feed, No when none does,
/// Partly when some do, Unknown without any occurrence with arguments.
Feeds feeds_of(const Hit& hit);
double feeds_metric(Feeds feeds);  ///< output_feeds_next: 1 yes, 0.5 partly, 0 no, -1 unknown
/// "yes (...)" etc. for the detail; says why when unknown (`args_captured` of the trace).
std::string feeds_text(const Hit& hit, Feeds feeds, bool args_captured);

enum class Bound { Memory, Compute, Unknown };
double bound_metric(Bound bound);  ///< memory_bound: 1 memory, 0 compute, -1 unknown

struct Boundness {
  Bound verdict = Bound::Unknown;
  std::optional<double> intensity;  ///< FLOP per DRAM byte
  std::optional<double> ridge;      ///< FLOP per byte
  std::string text;                 ///< "yes (arithmetic intensity ...)" for the detail
};

/// The memory-bound test of the chain `hit` names (its range and device): from `counted`, the
/// counters of the chain's own launches summed (nullopt unless every launch of every occurrence
/// has counters), else the work annotation of its range. Sets the metrics arithmetic_intensity
/// and ridge_point when known.
Boundness chain_boundness(const FlagsTrace& trace, Hit& hit, const std::optional<Work>& counted);

struct ByteSaving {
  std::int64_t saving_ns = 0;  ///< intermediate_bytes / DRAM bandwidth, when it applies
  std::string clause;          ///< ", plus ... of intermediate traffic (...)" or ""
  std::string note;            ///< a sentence on why bytes were not counted, or ""
};

/// The byte term of the saving: counted when the output feeds the next (yes or partly), the
/// chain is not compute-bound and the device's DRAM bandwidth is known. Sets the metrics
/// byte_saving_ns and dram_bytes_per_s when counted.
ByteSaving byte_saving(const FlagsTrace& trace, Hit& hit, Feeds feeds, const Boundness& bound);

}  // namespace fuselens::analyzer
