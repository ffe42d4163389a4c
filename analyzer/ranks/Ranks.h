#pragma once
// Ranks: the processes of a distributed run (one per rank) step by step, communication against
// computation, and who holds the others up at each collective (issue 25, docs/multi-gpu.md).
//
// Definitions (Holistic Trace Analysis, ../shared/ANCHORS.md "Holistic Trace Analysis", unless
// said otherwise); every time is ns on the capture's clock (CUPTI's; the processes of one host
// share it, merged captures are shifted onto one clock before this reads them):
// - Rank of a process: its process_rank row (db::Reader::process_ranks, schema 8, written from
//   the launcher's environment). Processes without a row that ran GPU work get ranks after the
//   highest known, in pid order, marked "no launcher rank"; a second process claiming a rank
//   already taken is treated the same way. A rank's devices: the device ids of its GPU work.
// - Classes of GPU work: communication = kernels whose short (or demangled, after a leading
//   "void ") name starts with "nccl" (ncclKernel_*, ncclDevKernel_*; case-sensitive) and copies
//   of kind peer-to-peer (db::MemcpyKind::PeerToPeer; the capture stores no source and
//   destination device of a device-to-device copy, so those stay memory); memory = the other
//   copies and the memsets; computation = every other kernel.
// - Steps: each process's own steps (analyze_steps with StepOptions::pid, so step k is the k-th
//   step of that process), matched across ranks by number. A step is in the window when the
//   window contains the start of that step of at least one rank; every rank's step of that
//   number is then described. GPU work belongs to a step of its process when its launch call
//   started inside the step (its own start without one), as Nsight Systems projects NVTX
//   ranges. Without steps in any process, each rank has one step, number 0: the window.
// - Temporal breakdown of a rank in a step, over the step's span (the step widened to its GPU
//   work): compute = |union of computation|; communication = |union of communication| minus
//   what overlaps computation; memory = |union of memory| minus what overlaps computation or
//   communication (HTA counts communication or memory that overlaps compute as compute);
//   idle = span - |union of all|. Shares are of the span.
// - Communication/computation overlap: |union(communication) ∩ union(computation)| /
//   |union(communication)|; over the window: the sums of both over the steps.
// - Collectives: within a step, the i-th communication kernel of each rank in launch order
//   (launch call start, then correlation id; NCCL's communicator stream is not known) is one
//   collective, valid when every rank ran a kernel of the same short name. A step whose ranks ran
//   different numbers of communication kernels has no collectives ("collectives differ across
//   ranks in step k: rank 0 has 12, rank 1 has 11"); a collective whose names differ is
//   reported and skipped. Arrival of a rank = its kernel's start. The last arrival is the
//   straggler of the collective; its lateness = last arrival - second-last arrival (how long it
//   held the others). Time blocked in collectives of a rank = the sum over collectives of
//   (last arrival - its arrival). Straggler of a step = the rank last in the most collectives
//   (ties: the larger total lateness, then the lower rank), with its total lateness.
//
// Errors: db::Error on a corrupt capture. Sums of durations saturate at db::kMaxTimestampNs
// (every time in a capture lies in [0, 2^62), Reader's check).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fuselens/db/Reader.h"
#include "steps/Steps.h"
#include "window/Window.h"

namespace fuselens::analyzer {

/// The class of one GPU operation (see above).
enum class WorkClass { Computation, Communication, Memory };

/// True when a kernel of short name `short_name` and demangled name `demangled` is NCCL
/// communication: either starts with "nccl" (the demangled one after a leading "void ").
bool is_communication_kernel(const std::string& short_name, const std::string& demangled);

/// One process of the run.
struct RankInfo {
  int rank = 0;
  std::int64_t pid = 0;
  bool launcher_rank = true;  ///< false: no (or a duplicate) process_rank row
  std::string note;           ///< "no launcher rank", "rank 1 also claimed by pid 42"
  std::optional<int> local_rank, world_size;
  std::string launcher, host_name;
  std::vector<std::int64_t> devices;  ///< device ids of its GPU work in the window, ascending
  std::string step_note;              ///< how its steps were found, or why none
};

/// One rank in one step.
struct RankStep {
  int step = 0;  ///< the step's number in the process (1-based); 0: the window, without steps
  int rank = 0;
  bool present = true;  ///< false: this rank has no step of this number (the fields are 0)
  std::int64_t start_ns = 0, end_ns = 0;  ///< the step's CPU-side window
  std::int64_t span_ns = 0;               ///< widened to its GPU work: the denominator
  std::int64_t kernels = 0, nccl_kernels = 0, copies = 0, memsets = 0;
  std::int64_t busy_ns = 0;  ///< |union of all its GPU work|
  std::int64_t compute_ns = 0, communication_ns = 0, memory_ns = 0, idle_ns = 0;
  std::int64_t communication_union_ns = 0;  ///< |union(communication)|
  std::int64_t overlap_ns = 0;              ///< |union(communication) ∩ union(computation)|
  std::int64_t blocked_ns = 0;              ///< time blocked in the step's collectives
  int last_in = 0;                          ///< collectives it arrived last at
  std::int64_t lateness_ns = 0;             ///< summed lateness of those
  bool straggler = false;                   ///< the step's straggler

  double share(std::int64_t ns) const {
    return span_ns > 0 ? static_cast<double>(ns) / static_cast<double>(span_ns) : 0;
  }
  /// overlap / communication in [0, 1]; nullopt without communication.
  std::optional<double> overlap_share() const;
};

/// The collectives of one step across ranks.
struct StepCollectives {
  int step = 0;
  int collectives = 0;           ///< matched and valid
  int mismatched = 0;            ///< skipped: names differ across ranks
  std::optional<int> straggler;  ///< rank; nullopt without valid collectives or with one rank
  int straggler_last_in = 0;
  std::int64_t straggler_lateness_ns = 0;
  std::string note;  ///< "collectives differ across ranks in step 3: rank 0 has 12, rank 1 has 11"
};

/// One rank over the window: the sums of its steps.
struct RankSummary {
  int rank = 0;
  int steps = 0;
  std::int64_t span_ns = 0, kernels = 0, nccl_kernels = 0, busy_ns = 0;
  std::int64_t compute_ns = 0, communication_ns = 0, memory_ns = 0, idle_ns = 0;
  std::int64_t communication_union_ns = 0, overlap_ns = 0, blocked_ns = 0;
  int straggler_steps = 0;  ///< steps it was the straggler of
  double share(std::int64_t ns) const {
    return span_ns > 0 ? static_cast<double>(ns) / static_cast<double>(span_ns) : 0;
  }
  std::optional<double> overlap_share() const;
};

/// Everything `prof-analyze ranks` prints.
struct RanksReport {
  std::string window;  ///< the window's description ("" when none was given)
  std::string window_label;
  std::vector<RankInfo> ranks;         ///< by rank
  std::vector<RankStep> rows;          ///< by (step, rank)
  std::vector<StepCollectives> steps;  ///< by step
  std::vector<RankSummary> summary;    ///< by rank
  std::vector<std::string> notes;      ///< one rank, no kernels, collective name mismatches, ...
  /// True when the HTML report shows the ranks: more than one process with GPU work or any
  /// process_rank row.
  bool distributed = false;
};

/// The ranks analysis of `reader`'s capture read unrestricted (the steps of each process are
/// numbered over the whole capture), described over `window` (resolve_window on the same
/// reader; nullptr: the whole capture). `step_options` chooses how steps are found (its pid is
/// set per process). Throws db::Error on a corrupt capture.
RanksReport analyze_ranks(const db::Reader& reader, const Window* window = nullptr,
                          const StepOptions& step_options = {});

}  // namespace fuselens::analyzer
