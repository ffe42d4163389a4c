// stream_operation_groups (CallingContextData.h): the calling-context groups of a capture from its
// GPU operations streamed in correlation order beside their launch contexts, holding only the
// groups (issue 21: `cct` on ten million launches in bounded memory).

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cct/CallingContextData.h"
#include "fuselens/db/AggregateStore.h"
#include "fuselens/db/Strings.h"
#include "fuselens/db/TraceCursors.h"

namespace fuselens::analyzer::cct {
namespace {

// What group_operations keys a group by, for an operation whose phase needs no other launch:
// its node, its label and, for backward work, its launching thread.
struct Key {
  std::int64_t node, label, thread;
  bool operator==(const Key&) const = default;
};
struct KeyHash {
  std::size_t operator()(const Key& k) const {
    std::size_t h = std::hash<std::int64_t>()(k.node);
    h = h * 1000003u ^ std::hash<std::int64_t>()(k.label);
    return h * 1000003u ^ std::hash<std::int64_t>()(k.thread);
  }
};

// Whether anything in the capture links a launch's phase to other launches (operation_phases):
// autograd NVTX ranges, stored or derived module ranges, or CUDA graph nodes.
bool has_links(const db::Reader& reader, const FrameMap& frames) {
  if (reader.has_table("nvtx_range")) {
    if (db::autograd_nvtx_ranges(reader).next()) return true;
    if (db::module_nvtx_ranges(reader).next()) return true;
  }
  for (const auto& [id, frame] : frames) {
    if (frame.torch_module) return true;  // module ranges derived from module frames
  }
  return db::graph_nodes(reader).next().has_value();
}

}  // namespace

std::optional<std::vector<OperationGroup>> stream_operation_groups(const db::Reader& reader,
                                                                   const FrameMap& frames,
                                                                   const NodeTable& nodes) {
  if (db::has_aggregates(reader) || !reader.has_table("api_context") ||
      !reader.has_table("enum_memcpy_kind") || has_links(reader, frames)) {
    return std::nullopt;
  }
  const auto copy_labels = db::copy_operation_labels(reader);
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> thread_names;
  if (reader.has_table("thread")) {
    auto rows = db::threads(reader, /*ordered=*/false);
    while (auto s = rows.next()) thread_names[{s->pid, s->tid}] = s->name.value_or(std::string());
  }

  // Labels and thread names interned: a group key is three integers.
  std::vector<std::string> labels;
  std::unordered_map<std::string, std::int64_t> label_ids;
  auto intern = [&](std::vector<std::string>& pool,
                    std::unordered_map<std::string, std::int64_t>& ids, const std::string& text) {
    const auto [it, added] = ids.emplace(text, static_cast<std::int64_t>(pool.size()));
    if (added) pool.push_back(text);
    return it->second;
  };
  std::unordered_map<std::int64_t, std::int64_t> kernel_label;  // name id -> label (-1: no string)
  db::StringLookup strings(reader);
  auto label_of = [&](const db::GpuOperationCode& op) -> std::int64_t {
    switch (op.table) {
      case db::GpuTable::Kernel: {
        const auto known = kernel_label.find(op.code);
        if (known != kernel_label.end()) return known->second;
        std::int64_t id =
            -1;  // gpu_operations joins the strings: a kernel without its name is left out
        strings.with(op.code, [&](std::string value) {
          id = intern(labels, label_ids, "<gpu kernel> " + value);
        });
        return kernel_label.emplace(op.code, id).first->second;
      }
      case db::GpuTable::Memcpy: {
        const auto it = copy_labels.find(op.code);
        return intern(labels, label_ids,
                      it != copy_labels.end() ? it->second : std::string("<gpu copy> Unknown"));
      }
      case db::GpuTable::Memset:
        return intern(labels, label_ids, "<gpu memset>");
    }
    return -1;
  };
  std::vector<std::string> threads;
  std::unordered_map<std::string, std::int64_t> thread_ids;
  std::unordered_map<std::int64_t, OperationPhase> node_phases;  // without the thread

  struct Group {
    OperationGroup group;
    std::pair<int, std::int64_t> first;  // (table, id) of its first operation as scanned
  };
  std::vector<Group> groups;
  std::unordered_map<Key, std::size_t, KeyHash> index;

  auto contexts = db::launch_contexts_by_correlation(reader);
  std::optional<db::LaunchContextRow> context = contexts.next();
  auto rows = db::gpu_operations_by_correlation(reader);
  while (const auto op = rows.next()) {
    if (op->graph_node_id != 0) return std::nullopt;  // graph nodes: operation_phases' work
    while (context && std::make_pair(context->pid, context->correlation_id) <
                          std::make_pair(op->pid, op->correlation_id)) {
      context = contexts.next();
    }
    std::int64_t node = -1, tid = -1;
    if (context && context->pid == op->pid && context->correlation_id == op->correlation_id) {
      if (context->forward_seq >= 0 || context->backward_seq >= 0) return std::nullopt;
      node = context->node_id;
      tid = context->tid;
    }
    const std::int64_t label = label_of(*op);
    if (label < 0) continue;
    OperationPhase phase;
    if (node >= 0) {
      auto it = node_phases.find(node);
      if (it == node_phases.end())
        it = node_phases.emplace(node, unlinked_phase(nodes.path(node, frames, true))).first;
      phase = it->second;
    }
    std::int64_t thread = -1;
    if (phase.phase == CctPhase::Backward) {
      const auto name = thread_names.find({op->pid, tid});
      thread = intern(threads, thread_ids,
                      name != thread_names.end() && !name->second.empty()
                          ? name->second
                          : "tid " + std::to_string(tid));
    }
    const std::pair<int, std::int64_t> at{static_cast<int>(op->table), op->id};
    const auto [it, added] = index.emplace(Key{node, label, thread}, groups.size());
    if (added) {
      Group g;
      g.group.label = labels[static_cast<std::size_t>(label)];
      g.group.node = node;
      g.group.phase = std::move(phase);
      if (thread >= 0) g.group.phase.thread = threads[static_cast<std::size_t>(thread)];
      g.first = at;
      groups.push_back(std::move(g));
    }
    Group& g = groups[it->second];
    g.group.cost += CctCost{op->duration_ns, 1, op->bytes};
    g.first = std::min(g.first, at);
  }
  // In the order of each group's first operation as gpu_operations scans them (kernels, then
  // copies, then memsets, each by row id), as group_operations creates them.
  std::sort(groups.begin(), groups.end(),
            [](const Group& a, const Group& b) { return a.first < b.first; });
  std::vector<OperationGroup> out;
  out.reserve(groups.size());
  for (auto& g : groups) out.push_back(std::move(g.group));
  return out;
}

}  // namespace fuselens::analyzer::cct
