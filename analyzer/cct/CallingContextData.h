#pragma once
// What the calling-context views read from a capture (frames, tree nodes, GPU operations), and
// the PyTorch phase of each operation (CallingContextPhase.cpp). Private to the analyzer.

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "cct/CallingContext.h"
#include "fuselens/db/Reader.h"

namespace fuselens::analyzer::cct {

struct Frame {
  std::string label, function, module, file;
  std::uint32_t line = 0;
  bool internal = false;  // CUDA stack or the collector
  bool python = false;    // frame kind python
  // An nn.Module instance (frame kind module, schema 9): hidden like internal frames; `function`
  // is its class, `address` the instance's (the key of the module name marks).
  bool torch_module = false;
  std::uint64_t address = 0;
};
using FrameMap = std::unordered_map<std::int64_t, Frame>;

struct Operation {
  std::string label;  // "<gpu kernel> name"
  CctCost cost;
  std::int64_t pid = 0, correlation = 0;
  std::int64_t node = -1;  // cct_node id, -1 when the call had no recorded context
  std::int64_t tid = -1;   // of the call, from api_context
  // Autograd sequence numbers of the call (api_context, schema 9; -1: none): forward_seq at a
  // forward launch (its op's node + 1), backward_seq the node evaluated at a backward launch.
  std::int64_t forward_seq = -1, backward_seq = -1;
  // CUDA graphs: CUPTI's id of the graph node that ran the operation (0: not launched by a graph
  // launch). at_capture_site: the call that made the node has a recorded context, which `node`
  // is (the capture site), and `replay_node` is the graph launch's (the replay site; -1 when it
  // has none).
  std::int64_t graph_node = 0;
  bool at_capture_site = false;
  std::int64_t replay_node = -1;
};

/// The deepest path the views accept: the collector records at most 128 native frames per call
/// (ThreadTree::kMaxDepth) plus the Python frames, far below this; a deeper walk means parent links
/// that form a cycle or a hostile capture (issue 22: a two-node cycle grew to 16.8 GB).
inline constexpr std::size_t kMaxPathDepth = 4096;

/// The recorded calling contexts: (pid << 32 ^ correlation id) -> (cct node, tid).
using LaunchContextMap = std::unordered_map<std::uint64_t, std::pair<std::int64_t, std::int64_t>>;
/// The key of LaunchContextMap (the same as CallingContext.cpp's op_key, which fills it).
inline std::uint64_t context_key(std::int64_t pid, std::int64_t correlation) {
  return (static_cast<std::uint64_t>(pid) << 32) ^ static_cast<std::uint64_t>(correlation);
}

struct NodeTable {
  std::unordered_map<std::int64_t, std::pair<std::int64_t, std::int64_t>>
      parent_frame;  // id -> parent, frame
  std::unordered_map<std::int64_t, std::int64_t> pid;

  /// Frames from the root to `node`, internal frames dropped unless wanted. Throws db::Error for
  /// a path deeper than kMaxPathDepth.
  std::vector<const Frame*> path(std::int64_t node, const FrameMap& frames,
                                 bool show_internal) const;
};

/// True for a module of the CUDA stack (libcuda, libcudart, libcupti) or of FuseLens's collector,
/// whose frames the views hide unless asked (by the module's file name).
bool is_internal_module(const std::string& module);

FrameMap load_frames(const db::Reader& reader);
NodeTable load_nodes(const db::Reader& reader);
std::vector<Operation> load_operations(const db::Reader& reader);

/// CUDA graphs (CallingContextGraphs.cpp; docs/calling-context.md, "CUDA graphs"): for each
/// operation run by a graph node, follows the node's clone links (graph_node.original_node_id,
/// at most 64 steps) to the node a traced call made, and when that call has a recorded context,
/// moves the operation to it (`node`, the capture site) and keeps its own launch's context in
/// `replay_node`. An operation whose node is unknown (made while nothing was recorded, or by an
/// untraced call) stays under its graph launch. Reads table graph_node (none before schema 7).
void attach_graph_capture_sites(const db::Reader& reader, const LaunchContextMap& contexts,
                                std::vector<Operation>& ops);

/// The row that keeps a replayed operation's replay site, below its capture-site frames:
/// "<graph replay> SITE", SITE being the label of the innermost frame of `replay_path` (the graph
/// launch's path, internal frames hidden) that is a Python frame outside the torch package (the
/// user's line that replayed it), else the innermost Python frame, else the innermost frame.
std::string graph_replay_label(const std::vector<const Frame*>& replay_path);

/// The phase of one GPU operation and, for backward ones, where it is shown.
struct OperationPhase {
  CctPhase phase = CctPhase::Unknown;
  std::string backward_op;         // autograd node name ("AddmmBackward0"), backward only
  std::int64_t forward_node = -1;  // cct node of the forward launch of the same sequence number
  std::string thread;              // "pt_autograd_0" or "tid 1234", backward only
};

/// One OperationPhase per operation (same order). Reads NVTX ranges, API call times and thread
/// names when the capture has them.
std::vector<OperationPhase> operation_phases(const db::Reader& reader,
                                             const std::vector<Operation>& ops,
                                             const NodeTable& nodes, const FrameMap& frames);

/// The phase operation_phases gives an operation launched at the node whose frames (internal ones
/// included) are `path` when nothing links launches (no autograd NVTX ranges, module ranges,
/// sequence numbers or graph nodes): backward inside the autograd engine (backward_op the
/// innermost node's name), forward from Python or libtorch, else unknown. `thread` is left empty:
/// a backward operation's launching thread is the caller's to name.
OperationPhase unlinked_phase(const std::vector<const Frame*>& path);

/// The frames of a forward context that a backward operation is attached under: up to and with
/// the last Python frame, or, without Python frames, the frames before the first libtorch/libc10
/// frame (the whole path when that leaves nothing).
std::vector<const Frame*> forward_context(const std::vector<const Frame*>& path);

/// GPU operations that every view, metric, phase filter and frames mode treats alike (same
/// launch context, label, graph placement and phase), with their costs summed: what the views
/// need of the operations, and the stored form of cct (analyzer/store/AnalysisStore.h). Groups
/// are in the order of their first operation, so that rows are created, and ties sorted, as from
/// the operations one by one. cost.launches is the number of operations.
struct OperationGroup {
  std::string label;
  std::int64_t node = -1;
  bool graph = false;  // replayed from a CUDA graph (Operation::graph_node != 0)
  bool at_capture_site = false;
  std::int64_t replay_node = -1;
  OperationPhase phase;
  CctCost cost;
};

/// Groups `ops` (with their `phases`, same order) as OperationGroup says.
std::vector<OperationGroup> group_operations(const std::vector<Operation>& ops,
                                             const std::vector<OperationPhase>& phases);
/// The groups of the capture open in `reader` (its window) from its kernels, copies and memsets
/// read once in (pid, correlation id) order beside their launch contexts, holding only the groups
/// (CctStream.cpp; a lean capture's views have no index in that order: SQLite's sorter orders
/// them, in bounded memory): equal to group_operations' (the same groups, costs and order).
/// nullopt, having read at most a part, when the phases need links between launches (autograd
/// NVTX ranges, module ranges or frames, sequence numbers, CUDA graph nodes), for an aggregate
/// capture, or one without api_context or enum_memcpy_kind. Throws db::Error when a query fails or
/// a path is deeper than kMaxPathDepth.
std::optional<std::vector<OperationGroup>> stream_operation_groups(const db::Reader& reader,
                                                                   const FrameMap& frames,
                                                                   const NodeTable& nodes);
/// Loads the operations of the capture open in `reader` (its window) and groups them: streamed
/// when stream_operation_groups can, else every kernel, copy and memset in memory (about 150
/// bytes each). Throws db::Error when a query fails.
std::vector<OperationGroup> operation_groups(const db::Reader& reader);
/// Why the capture has no calling contexts to show (calling_context_report's unavailable
/// reason), or nullopt when it has some.
std::optional<std::string> calling_contexts_missing(const db::Reader& reader);
/// The report of `options` over `groups` (reads frames and tree nodes of `reader`, not the
/// operations). Throws db::Error for a path deeper than kMaxPathDepth, std::out_of_range for a
/// group whose node the tree lacks when the capture has several processes.
CctReport report_from_groups(const db::Reader& reader, const std::vector<OperationGroup>& groups,
                             const CctOptions& options);

}  // namespace fuselens::analyzer::cct
