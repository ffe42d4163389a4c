#include "cct/CallingContext.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "cct/CallingContextData.h"
#include "cct/FrameFolding.h"
#include "fuselens/db/AggregateStore.h"
#include "fuselens/db/TraceCursors.h"

namespace fuselens::analyzer {
namespace cct {
namespace {

std::string base_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::uint64_t op_key(std::int64_t pid, std::int64_t correlation) {
  return (static_cast<std::uint64_t>(pid) << 32) ^ static_cast<std::uint64_t>(correlation);
}

}  // namespace

// Modules of the CUDA stack and of FuseLens's collector: their frames sit between the user's
// launch site and the CUPTI callback and say nothing about the user's code.
bool is_internal_module(const std::string& module) {
  static constexpr const char* kInternal[] = {"libcuda.so", "libcudart.so", "libcupti.so",
                                              "libfuselens_collector.so", "libunwind.so"};
  const std::string base = base_name(module);
  for (const char* name : kInternal) {
    if (base.rfind(name, 0) == 0) return true;
  }
  return false;
}

FrameMap load_frames(const db::Reader& reader) {
  auto rows = db::frames(reader);
  FrameMap frames;
  while (auto s = rows.next()) {
    Frame f;
    f.function = std::move(s->function);
    f.module = std::move(s->module);
    f.file = std::move(s->file);
    f.line = static_cast<std::uint32_t>(s->line);
    f.python = s->kind == static_cast<std::int64_t>(db::FrameKind::Python);
    f.label = frame_label(f.function, f.module, static_cast<std::uint64_t>(s->module_offset),
                          f.file, f.line);
    f.internal = !f.python && is_internal_module(f.module);
    if (s->kind == static_cast<std::int64_t>(db::FrameKind::Module)) {
      f.torch_module = f.internal = true;  // shown only with internal frames
      f.address = static_cast<std::uint64_t>(s->module_offset);
      f.label = "<nn.Module> " + f.function;
    }
    frames.emplace(s->id, std::move(f));
  }
  return frames;
}

// Aggregate mode (docs/aggregate.md): one operation per aggregate row, its cost the row's totals
// (GPU time, launches, bytes) at the row's node: the whole run, not the windows' trace.
std::vector<Operation> aggregate_operations(const db::Reader& reader) {
  const auto set = db::read_aggregates(reader);
  std::vector<Operation> ops;
  ops.reserve(set.kernels.size() + set.transfers.size());
  for (const auto& k : set.kernels) {
    Operation op;
    op.pid = k.pid;
    op.label = "<gpu kernel> " + k.demangled_name;
    op.cost.gpu_time_ns = k.gpu.total;
    op.cost.launches = k.gpu.count;
    op.node = k.node;
    ops.push_back(std::move(op));
  }
  for (const auto& t : set.transfers) {
    Operation op;
    op.pid = t.pid;
    op.label = t.operation == db::TransferOperation::Memset
                   ? std::string("<gpu memset>")
                   : std::string("<gpu copy> ") + db::to_string(t.copy_kind);
    op.cost.gpu_time_ns = t.total_ns;
    op.cost.launches = t.count;
    op.cost.bytes = t.bytes;
    op.node = t.node;
    ops.push_back(std::move(op));
  }
  return ops;
}

std::vector<Operation> load_operations(const db::Reader& reader) {
  if (db::has_aggregates(reader)) return aggregate_operations(reader);
  LaunchContextMap context;                                                       // node, tid
  std::unordered_map<std::uint64_t, std::pair<std::int64_t, std::int64_t>> seqs;  // fwd, bwd
  {
    auto rows = db::launch_contexts(reader);
    while (auto s = rows.next()) {
      context.emplace(op_key(s->pid, s->correlation_id), std::make_pair(s->node_id, s->tid));
      if (s->forward_seq >= 0 || s->backward_seq >= 0)
        seqs.emplace(op_key(s->pid, s->correlation_id),
                     std::make_pair(s->forward_seq, s->backward_seq));
    }
  }
  std::vector<Operation> ops;
  auto add = [&](db::GpuTable table) {
    auto rows = db::gpu_operations(reader, table);
    while (auto s = rows.next()) {
      Operation op;
      op.pid = s->pid;
      op.correlation = s->correlation_id;
      op.label = std::move(s->label);
      op.cost.gpu_time_ns = s->duration_ns;
      op.cost.launches = 1;
      op.cost.bytes = s->bytes;
      op.graph_node = s->graph_node_id;
      const auto it = context.find(op_key(op.pid, op.correlation));
      if (it != context.end()) {
        op.node = it->second.first;
        op.tid = it->second.second;
      }
      if (const auto seq = seqs.find(op_key(op.pid, op.correlation)); seq != seqs.end()) {
        op.forward_seq = seq->second.first;
        op.backward_seq = seq->second.second;
      }
      ops.push_back(std::move(op));
    }
  };
  add(db::GpuTable::Kernel);
  add(db::GpuTable::Memcpy);
  add(db::GpuTable::Memset);
  attach_graph_capture_sites(reader, context, ops);
  return ops;
}

std::vector<const Frame*> NodeTable::path(std::int64_t node, const FrameMap& frames,
                                          bool show_internal) const {
  std::vector<const Frame*> out;
  std::size_t steps = 0;
  for (auto it = parent_frame.find(node); it != parent_frame.end() && it->second.second != 0;
       it = parent_frame.find(it->second.first)) {
    if (++steps > kMaxPathDepth) {
      throw db::Error("the calling-context tree holds a path deeper than " +
                      std::to_string(kMaxPathDepth) + " frames from node " + std::to_string(node) +
                      " (a cycle in cct_node's parent links, or a damaged capture)");
    }
    const auto f = frames.find(it->second.second);
    if (f != frames.end() && (show_internal || !f->second.internal)) out.push_back(&f->second);
  }
  std::reverse(out.begin(), out.end());
  return out;
}

NodeTable load_nodes(const db::Reader& reader) {
  NodeTable t;
  auto rows = db::cct_nodes(reader);
  while (auto s = rows.next()) {
    t.parent_frame.emplace(s->id, std::make_pair(s->parent_id, s->frame_id));
    t.pid.emplace(s->id, s->pid);
  }
  return t;
}

}  // namespace cct

namespace {

using cct::Frame;
using cct::Operation;

std::string source_location(const std::string& file, std::uint32_t line) {
  const auto slash = file.rfind('/');
  return (slash == std::string::npos ? file : file.substr(slash + 1)) + ":" + std::to_string(line);
}

// One level of a path as shown: a frame, or a row the analysis adds ("<backward> OP").
struct Step {
  CctRow::Kind kind = CctRow::Kind::Frame;
  std::string label;
  const Frame* frame = nullptr;
};

// Builds a tree of rows keyed by (parent, kind, label) and accumulates costs along paths.
class RowTree {
 public:
  explicit RowTree(CctReport& report) : report_(report) {
    report_.rows.clear();
    CctRow root;
    root.kind = CctRow::Kind::Root;
    root.label = "<all>";
    report_.rows.push_back(root);
  }
  int child(int parent, CctRow::Kind kind, const std::string& label, const Frame* frame = nullptr) {
    const std::string key =
        std::to_string(parent) + '\x1f' + std::to_string(static_cast<int>(kind)) + '\x1f' + label;
    if (auto it = index_.find(key); it != index_.end()) return it->second;
    CctRow row;
    row.kind = kind;
    row.label = label;
    if (frame) {
      row.module = frame->module;
      row.file = frame->file;
      row.line = frame->line;
    }
    row.parent = parent;
    row.depth = report_.rows[static_cast<std::size_t>(parent)].depth + 1;
    const int id = static_cast<int>(report_.rows.size());
    report_.rows.push_back(std::move(row));
    report_.rows[static_cast<std::size_t>(parent)].children.push_back(id);
    index_.emplace(key, id);
    return id;
  }
  void add_inclusive(int row, const CctCost& cost, CctPhase phase) {
    auto& r = report_.rows[static_cast<std::size_t>(row)];
    r.inclusive += cost;
    r.phases |= 1u << static_cast<unsigned>(phase);
  }
  void add_exclusive(int row, const CctCost& cost) {
    report_.rows[static_cast<std::size_t>(row)].exclusive += cost;
  }

 private:
  CctReport& report_;
  std::unordered_map<std::string, int> index_;
};

void sort_children(CctReport& report) {
  for (auto& row : report.rows) {
    std::stable_sort(row.children.begin(), row.children.end(), [&](int a, int b) {
      return report.rows[static_cast<std::size_t>(a)].inclusive.get(report.metric) >
             report.rows[static_cast<std::size_t>(b)].inclusive.get(report.metric);
    });
  }
}

/// The torch.compile source row of a "<gpu kernel> NAME" operation, or nullptr.
const std::string* kernel_source(const CctOptions& options, const std::string& label) {
  constexpr std::string_view kKernel = "<gpu kernel> ";
  if (options.kernel_sources.empty() || label.compare(0, kKernel.size(), kKernel) != 0)
    return nullptr;
  const auto it = options.kernel_sources.find(label.substr(kKernel.size()));
  return it == options.kernel_sources.end() ? nullptr : &it->second;
}

const char* phase_row_label(CctPhase phase) {
  switch (phase) {
    case CctPhase::Forward:
      return "<forward>";
    case CctPhase::Backward:
      return "<backward>";
    case CctPhase::Unknown:
      break;
  }
  return "<unknown phase>";
}

// The path of an operation as shown: its own frames, or for a backward operation the forward
// context it belongs to (or its thread), the autograd node, then its own Python frames.
std::vector<Step> steps_of(std::int64_t node, const cct::OperationPhase& phase,
                           const cct::NodeTable& nodes, const cct::FrameMap& frames,
                           bool show_internal) {
  std::vector<Step> steps;
  const auto own = node < 0 ? std::vector<const Frame*>{} : nodes.path(node, frames, show_internal);
  if (phase.phase != CctPhase::Backward) {
    for (const Frame* f : own) steps.push_back({CctRow::Kind::Frame, f->label, f});
    return steps;
  }
  if (phase.forward_node >= 0) {
    for (const Frame* f :
         cct::forward_context(nodes.path(phase.forward_node, frames, show_internal))) {
      steps.push_back({CctRow::Kind::Frame, f->label, f});
    }
  } else {
    steps.push_back({CctRow::Kind::BackwardThread, "<backward thread> " + phase.thread, nullptr});
  }
  steps.push_back({CctRow::Kind::BackwardOp,
                   "<backward> " + (phase.backward_op.empty() ? std::string("autograd node")
                                                              : phase.backward_op),
                   nullptr});
  for (const Frame* f : own) {
    if (f->python) steps.push_back({CctRow::Kind::Frame, f->label, f});
  }
  return steps;
}

// The steps with their frames folded for the chosen mode (cct/FrameFolding.h): each run of
// consecutive frame steps is folded as one path; the rows the analysis adds stay.
std::vector<Step> fold_steps(const std::vector<Step>& steps, cct::FrameFolder& folder) {
  if (folder.mode() == FramesMode::All) return steps;
  std::vector<Step> out;
  std::vector<const Frame*> run;
  auto flush = [&](bool before_backward) {
    for (const Frame* f : folder.fold(run, before_backward))
      out.push_back({CctRow::Kind::Frame, f->label, f});
    run.clear();
  };
  for (const auto& s : steps) {
    if (s.kind == CctRow::Kind::Frame && s.frame != nullptr) {
      run.push_back(s.frame);
      continue;
    }
    flush(s.kind == CctRow::Kind::BackwardOp);
    out.push_back(s);
  }
  flush(false);
  return out;
}

}  // namespace

std::int64_t CctCost::get(CctMetric metric) const {
  switch (metric) {
    case CctMetric::Launches:
      return launches;
    case CctMetric::Bytes:
      return bytes;
    case CctMetric::GpuTime:
      break;
  }
  return gpu_time_ns;
}

CctCost& CctCost::operator+=(const CctCost& other) {
  gpu_time_ns += other.gpu_time_ns;
  launches += other.launches;
  bytes += other.bytes;
  return *this;
}

const char* phase_name(CctPhase phase) {
  switch (phase) {
    case CctPhase::Forward:
      return "forward";
    case CctPhase::Backward:
      return "backward";
    case CctPhase::Unknown:
      break;
  }
  return "unknown";
}

std::string row_phase(const CctRow& row) {
  switch (row.phases) {
    case 0:
      return "";
    case 1u << static_cast<unsigned>(CctPhase::Unknown):
      return "unknown";
    case 1u << static_cast<unsigned>(CctPhase::Forward):
      return "forward";
    case 1u << static_cast<unsigned>(CctPhase::Backward):
      return "backward";
    default:
      return "mixed";
  }
}

std::string frame_label(const std::string& function, const std::string& module,
                        std::uint64_t module_offset, const std::string& file, std::uint32_t line) {
  std::string label;
  if (!function.empty()) {
    label = function;
  } else {
    char offset[32];
    std::snprintf(offset, sizeof offset, "+0x%" PRIx64, module_offset);
    label = (module.empty() ? std::string("<unknown>") : cct::base_name(module)) + offset;
  }
  if (!file.empty() && line > 0) label += " [" + source_location(file, line) + "]";
  return label;
}

namespace cct {

std::vector<OperationGroup> group_operations(const std::vector<Operation>& ops,
                                             const std::vector<OperationPhase>& phases) {
  std::vector<OperationGroup> groups;
  std::unordered_map<std::string, std::size_t> index;
  std::string key;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Operation& op = ops[i];
    const OperationPhase& phase = phases[i];
    key.clear();
    for (const std::int64_t v : {op.node, static_cast<std::int64_t>(op.graph_node != 0),
                                 static_cast<std::int64_t>(op.at_capture_site), op.replay_node,
                                 static_cast<std::int64_t>(phase.phase), phase.forward_node}) {
      key.append(reinterpret_cast<const char*>(&v), sizeof v);
    }
    for (const std::string* text : {&op.label, &phase.backward_op, &phase.thread}) {
      const std::uint64_t size = text->size();
      key.append(reinterpret_cast<const char*>(&size), sizeof size).append(*text);
    }
    const auto [it, added] = index.emplace(key, groups.size());
    if (added) {
      OperationGroup g;
      g.label = op.label;
      g.node = op.node;
      g.graph = op.graph_node != 0;
      g.at_capture_site = op.at_capture_site;
      g.replay_node = op.replay_node;
      g.phase = phase;
      groups.push_back(std::move(g));
    }
    groups[it->second].cost += op.cost;
  }
  return groups;
}

std::vector<OperationGroup> operation_groups(const db::Reader& reader) {
  const auto frames = load_frames(reader);
  const auto nodes = load_nodes(reader);
  if (auto streamed = stream_operation_groups(reader, frames, nodes)) return std::move(*streamed);
  const auto ops = load_operations(reader);
  return group_operations(ops, operation_phases(reader, ops, nodes, frames));
}

std::optional<std::string> calling_contexts_missing(const db::Reader& reader) {
  if (!reader.has_table("api_context")) {
    return "the capture has no calling contexts (written by FuseLens schema version " +
           std::to_string(reader.schema_version()) + ", before calling contexts were recorded)";
  }
  // Aggregate mode (docs/aggregate.md): the tree's nodes hold the whole run's costs.
  const bool none = db::has_aggregates(reader)
                        ? !db::has_cct_nodes(reader)
                        : !db::has_launch_contexts(reader);  // EXISTS: not a count of every call
  if (none) {
    return std::string(
        "the capture has no calling contexts (recorded without the 'context' trace group, or no "
        "launch was made)");
  }
  return std::nullopt;
}

CctReport report_from_groups(const db::Reader& reader, const std::vector<OperationGroup>& groups,
                             const CctOptions& options) {
  CctReport report;
  report.view = options.view;
  report.metric = options.metric;
  report.from_aggregate_mode = db::has_aggregates(reader);
  report.available = true;
  const auto frames = load_frames(reader);
  const auto nodes = load_nodes(reader);
  report.frames = resolve_frames_mode(options.frames, frames);
  FrameFolder folder(report.frames);
  const bool several_processes = db::cct_process_count(reader) > 1;
  RowTree tree(report);

  for (const OperationGroup& op : groups) {
    const CctPhase phase = op.phase.phase;
    const std::int64_t count = op.cost.launches;
    report.phase_total[static_cast<int>(phase)] += op.cost;
    report.has_phases = report.has_phases || phase != CctPhase::Unknown;
    if (options.phase && *options.phase != phase) continue;
    report.total += op.cost;
    if (op.node < 0) report.unattributed_operations += count;
    if (phase == CctPhase::Backward)
      (op.phase.forward_node >= 0 ? report.backward_linked : report.backward_unlinked) += count;
    auto steps =
        fold_steps(steps_of(op.node, op.phase, nodes, frames, options.show_internal), folder);
    if (op.graph) report.graph_operations += count;
    if (op.at_capture_site) {  // CUDA graphs: under the capture site, the replay site kept
      report.graph_at_capture_site += count;
      const auto replay = op.replay_node < 0 ? std::vector<const Frame*>{}
                                             : nodes.path(op.replay_node, frames, false);
      steps.push_back({CctRow::Kind::GraphReplay, cct::graph_replay_label(replay), nullptr});
    }
    std::vector<int> rows{0};
    auto step = [&](CctRow::Kind kind, const std::string& label, const Frame* frame = nullptr) {
      rows.push_back(tree.child(rows.back(), kind, label, frame));
    };
    if (options.view == CctView::TopDown) {
      if (options.split_phase) step(CctRow::Kind::Phase, phase_row_label(phase));
      if (op.node < 0) {
        step(CctRow::Kind::Unattributed, "<no calling context>");
      } else {
        if (several_processes)
          step(CctRow::Kind::Process, "process " + std::to_string(nodes.pid.at(op.node)));
        for (const auto& s : steps) step(s.kind, s.label, s.frame);
      }
      if (const auto* source = kernel_source(options, op.label)) step(CctRow::Kind::Frame, *source);
      step(CctRow::Kind::GpuOperation, op.label);
      for (const int r : rows) tree.add_inclusive(r, op.cost, phase);
      tree.add_exclusive(rows.back(), op.cost);
    } else if (options.view == CctView::BottomUp) {
      if (options.split_phase) step(CctRow::Kind::Phase, phase_row_label(phase));
      step(CctRow::Kind::GpuOperation, op.label);
      const int op_row = rows.back();
      if (const auto* source = kernel_source(options, op.label)) step(CctRow::Kind::Frame, *source);
      if (op.node < 0) step(CctRow::Kind::Unattributed, "<no calling context>");
      for (auto it = steps.rbegin(); it != steps.rend(); ++it) step(it->kind, it->label, it->frame);
      for (const int r : rows) tree.add_inclusive(r, op.cost, phase);
      tree.add_exclusive(op_row, op.cost);
    } else {
      tree.add_inclusive(0, op.cost, phase);
      // Frames only: a backward operation is charged to its forward context's frames (or its
      // own native frames when it has no forward link).
      std::vector<const Frame*> path;
      for (const auto& s : steps) {
        if (s.frame) path.push_back(s.frame);
      }
      if (path.empty() && op.node >= 0)
        path = folder.fold(nodes.path(op.node, frames, options.show_internal));
      if (path.empty()) {
        const int r = tree.child(0, CctRow::Kind::Unattributed, "<no calling context>");
        tree.add_inclusive(r, op.cost, phase);
        tree.add_exclusive(r, op.cost);
        continue;
      }
      // Each function on the path once (recursion counts once); the launching frame's line.
      std::unordered_set<int> seen;
      for (const Frame* f : path) {
        const int module =
            tree.child(0, CctRow::Kind::Module, f->module.empty() ? "<unknown module>" : f->module);
        const std::string name = f->function.empty() ? f->label : f->function;
        const int function = tree.child(module, CctRow::Kind::Function, name, f);
        if (seen.insert(module).second) tree.add_inclusive(module, op.cost, phase);
        if (seen.insert(function).second) tree.add_inclusive(function, op.cost, phase);
      }
      const Frame* leaf = path.back();
      const int module = tree.child(0, CctRow::Kind::Module,
                                    leaf->module.empty() ? "<unknown module>" : leaf->module);
      const int function = tree.child(module, CctRow::Kind::Function,
                                      leaf->function.empty() ? leaf->label : leaf->function, leaf);
      const std::string line_label =
          leaf->file.empty() ? "<no line information>" : source_location(leaf->file, leaf->line);
      const int line = tree.child(function, CctRow::Kind::Line, line_label, leaf);
      tree.add_exclusive(module, op.cost);
      tree.add_exclusive(function, op.cost);
      tree.add_inclusive(line, op.cost, phase);
      tree.add_exclusive(line, op.cost);
    }
  }
  sort_children(report);
  return report;
}

}  // namespace cct

CctReport calling_context_report(const db::Reader& reader, const CctOptions& options) {
  if (auto missing = cct::calling_contexts_missing(reader)) {
    CctReport report;
    report.view = options.view;
    report.metric = options.metric;
    report.unavailable_reason = std::move(*missing);
    return report;
  }
  return cct::report_from_groups(reader, cct::operation_groups(reader), options);
}

}  // namespace fuselens::analyzer
