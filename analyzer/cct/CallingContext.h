#pragma once
// Calling-context attribution: GPU time, launches and bytes charged to the code that launched
// them, in the three views of HPCToolkit (and its deep-learning variant, seed 003):
//  - top-down: call paths from the process entry down to each launch site, with the GPU
//    operations as placeholder children of their launch site ("<gpu kernel> NAME",
//    "<gpu copy> Host-to-Device", "<gpu memset>");
//  - bottom-up: each GPU operation (and, below it, each function) with its cost split among the
//    call paths that reach it;
//  - flat: cost by static structure, module > function > call-site line.
// Inclusive cost of a node = the cost of every GPU operation launched under it; exclusive cost =
// the cost attributed to the node itself (in top-down, only GPU operation placeholders carry it;
// in flat, a function's exclusive cost is that of the operations it launched directly).
// Costs: gpu_time_ns (sum of GPU durations, ns), launches (number of GPU operations), bytes
// (memcpy and memset bytes). Frames inside the CUDA stack (libcuda, libcudart, libcupti) and
// FuseLens's own collector are hidden unless show_internal is set. Python frames (frame kind
// python, recorded when the process ran CPython) are labelled like native ones,
// "function [file.py:line]".
//
// Phases (PyTorch, seed 003's forward/backward split; docs/calling-context.md): a GPU operation is
// backward when its launch ran inside PyTorch's autograd engine (a native frame of
// torch::autograd::Engine::thread_main or ::evaluate_function, or an enclosing NVTX range
// "autograd::engine::evaluate_function: OP" of torch.autograd.profiler.emit_nvtx), forward when it
// was launched from Python or libtorch outside the engine (the forward pass, the loss, the
// optimizer step), unknown otherwise (no PyTorch). A backward operation is shown under the forward
// context that created its autograd node when emit_nvtx's ranges carry the link ("OP, seq = N" on
// the backward thread and the forward op range with the same sequence number: the latest such
// range before it, on a thread outside the engine; its first launch gives the context, cut after
// its last Python frame), as "<backward> OP"; otherwise under "<backward thread> NAME" with the op
// name (the NVTX range, or the autograd node's apply() frame).
//
// CUDA graphs (docs/calling-context.md, "CUDA graphs"): a GPU operation replayed from a graph is
// charged to the context of the call that put its node into the graph (the launch under stream
// capture, or cuGraphAdd*Node: the capture site), with a row "<graph replay> SITE" between the
// capture site's frames and the operation that names where the graph was launched (the replay
// site); top-down and bottom-up show that row, flat charges the capture site's frames. An
// operation whose graph node is unknown (captured while nothing was recorded, or a capture before
// schema version 7) stays under its graph launch, as every launch does.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fuselens/db/Reader.h"

namespace fuselens::analyzer {

enum class CctView { TopDown, BottomUp, Flat };
enum class CctMetric { GpuTime, Launches, Bytes };
enum class CctPhase { Unknown = 0, Forward = 1, Backward = 2 };

/// Which frames the views show (docs/calling-context.md, "Frames"; rules in cct/FrameFolding.h):
/// User: the user's own frames, framework runs folded into one frame naming the op
/// ("[torch: aten::linear]") and library runs into their library ("[libcublasLt.so.13]");
/// Python: every Python frame, native framework runs folded; Native: native frames only, as
/// recorded; All: every frame as recorded. Auto: User for a capture with Python frames, else
/// Native (which, without Python frames, is the whole path as recorded).
enum class FramesMode { Auto, User, Python, Native, All };

/// "auto", "user", "python", "native" or "all".
const char* frames_mode_name(FramesMode mode);
/// The mode named by `name` (as frames_mode_name writes it); nullopt for any other text.
std::optional<FramesMode> parse_frames_mode(const std::string& name);

/// "unknown", "forward" or "backward".
const char* phase_name(CctPhase phase);

struct CctCost {
  std::int64_t gpu_time_ns = 0;
  std::int64_t launches = 0;
  std::int64_t bytes = 0;
  std::int64_t get(CctMetric metric) const;
  CctCost& operator+=(const CctCost& other);
};

struct CctRow {
  enum class Kind {
    Root, Process, Frame, GpuOperation, Unattributed, Module, Function, Line,
    BackwardOp,      ///< "<backward> OP": the autograd node that launched what is below
    BackwardThread,  ///< "<backward thread> NAME": backward work with no forward link
    Phase,           ///< "<forward>", "<backward>", "<unknown phase>" (split_phase)
    GraphReplay      ///< "<graph replay> SITE": replayed from a CUDA graph, launched at SITE
  };
  Kind kind = Kind::Frame;
  std::string label;   ///< function (demangled), "<gpu kernel> name", module path, ...
  std::string module;  ///< for frames: the executable or shared object
  std::string file;    ///< source file where debug information exists
  std::uint32_t line = 0;
  CctCost inclusive, exclusive;
  int parent = -1;     ///< index into CctReport::rows; -1 for the root
  int depth = 0;
  std::vector<int> children;  ///< sorted by the report's metric, descending
  unsigned phases = 0;        ///< bit (1 << CctPhase) for each phase among its operations
};

/// The phase of a row's operations: "forward", "backward", "unknown", "mixed", or "" (none).
std::string row_phase(const CctRow& row);

struct CctOptions {
  CctView view = CctView::TopDown;
  CctMetric metric = CctMetric::GpuTime;
  bool show_internal = false;
  std::optional<CctPhase> phase;  ///< only the GPU operations of this phase
  bool split_phase = false;       ///< top-down and bottom-up: a first level per phase
  FramesMode frames = FramesMode::Auto;  ///< which frames the paths show
  /// Kernel name -> a row placed above it in top-down and bottom-up (compiled_kernel_sources:
  /// the user lines and ATen ops a torch.compile kernel fuses); empty: none.
  std::map<std::string, std::string> kernel_sources;
};

struct CctReport {
  bool available = false;
  std::string unavailable_reason;  ///< why there is nothing to show (old capture, no contexts)
  CctView view = CctView::TopDown;
  CctMetric metric = CctMetric::GpuTime;
  FramesMode frames = FramesMode::All;  ///< the mode shown (Auto resolved)
  CctCost total;                   ///< over every GPU operation shown (after the phase filter)
  std::int64_t unattributed_operations = 0;  ///< GPU operations with no recorded context
  bool has_phases = false;         ///< some operation is forward or backward (PyTorch)
  CctCost phase_total[3];          ///< by CctPhase, over every GPU operation (before the filter)
  std::int64_t backward_linked = 0;    ///< backward operations placed under their forward context
  std::int64_t backward_unlinked = 0;  ///< backward operations placed under their thread
  std::int64_t graph_operations = 0;       ///< operations replayed from a CUDA graph
  std::int64_t graph_at_capture_site = 0;  ///< of those, charged to their capture site
  /// Aggregate mode (docs/aggregate.md): the costs are the whole run's, from the per-node
  /// aggregate rows (phases from native frames only: no NVTX or autograd links there).
  bool from_aggregate_mode = false;
  std::vector<CctRow> rows;        ///< rows[0] is the root; children before grandchildren
};

/// Builds the chosen view. Throws db::Error when a query fails; a capture without calling
/// contexts (schema version 1, or recorded without the "context" trace group) gives
/// available = false and the reason.
CctReport calling_context_report(const db::Reader& reader, const CctOptions& options);

/// A printable label for a frame: "function [file:line]", or "module+0xoffset" with no symbol.
std::string frame_label(const std::string& function, const std::string& module,
                        std::uint64_t module_offset, const std::string& file, std::uint32_t line);

/// One frame of a launch site's call path, for reports that name where a GPU operation came from
/// (the flags rules): the function (demangled; "module+0xoffset" without a symbol) and its
/// source location ("file.cu:120", empty without debug information).
struct CallPathFrame {
  std::string function;
  std::string location;
  bool operator==(const CallPathFrame&) const = default;
};

/// The calling context of every traced API call of a capture, as call paths from the process
/// entry down to the launch site, with the CUDA stack's and the collector's frames hidden as in
/// the views above. Empty for a capture without calling contexts.
struct LaunchPaths {
  std::vector<std::vector<CallPathFrame>> paths;  ///< distinct paths, root first
  /// (pid << 32 | correlation_id, index into paths), sorted by key, one per key (16 bytes a call:
  /// ten million calls in 160 MB).
  std::vector<std::pair<std::uint64_t, std::uint32_t>> by_call;
  /// The index into paths of call (pid, correlation_id), or nullopt when it has no context.
  std::optional<std::uint32_t> find(std::uint32_t pid, std::uint32_t correlation_id) const;
};

/// Loads LaunchPaths (one query per table; paths are built once per distinct node), with the
/// frames `frames` selects (a folded frame has its label as function and no location). Throws
/// db::Error when a query fails.
LaunchPaths launch_paths(const db::Reader& reader, FramesMode frames = FramesMode::All);

}  // namespace fuselens::analyzer
