#include "GraphNodes.h"

namespace fuselens::collector {
namespace {

thread_local std::uint32_t t_call_in_flight = 0;

bool recorded_type(CUgraphNodeType type) {
  return type == CU_GRAPH_NODE_TYPE_KERNEL || type == CU_GRAPH_NODE_TYPE_MEMCPY ||
         type == CU_GRAPH_NODE_TYPE_MEMSET;
}

}  // namespace

void GraphNodes::enter(std::uint32_t correlation_id, std::uint64_t* saved) noexcept {
  if (saved) *saved = t_call_in_flight;
  t_call_in_flight = correlation_id;
}

void GraphNodes::exit(const std::uint64_t* saved) noexcept {
  t_call_in_flight = saved ? static_cast<std::uint32_t>(*saved) : 0;
}

std::uint32_t GraphNodes::call_in_flight() noexcept { return t_call_in_flight; }

void GraphNodes::on_resource(CUpti_CallbackId id, const CUpti_ResourceData* data) noexcept {
  const bool created = id == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED;
  if (!data || (!created && id != CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED)) return;
  const auto* graph = static_cast<const CUpti_GraphData*>(data->resourceDescriptor);
  if (!graph || !graph->node || !recorded_type(graph->nodeType)) return;
  db::CallingContextTree::GraphNode node;
  if (created) {
    if (!created_on_.load(std::memory_order_relaxed)) return;  // between capture windows
    node.correlation_id = t_call_in_flight;
    if (node.correlation_id == 0) return;  // made by an untraced call (cuGraphInstantiate)
  } else {
    if (!graph->originalNode ||
        node_id_(graph->originalNode, &node.original_node_id) != CUPTI_SUCCESS) {
      return;
    }
  }
  if (node_id_(graph->node, &node.node_id) != CUPTI_SUCCESS) return;
  if (graph->graph && graph_id_(graph->graph, &node.graph_id) != CUPTI_SUCCESS) {
    node.graph_id = 0;  // unknown
  }
  try {
    registry_.this_thread().add_graph_node(node);
  } catch (...) {  // out of memory: this node's operations stay under their graph launch
  }
}

}  // namespace fuselens::collector
