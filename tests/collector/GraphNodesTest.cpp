// GraphNodes without a GPU: synthetic CUPTI resource callbacks (CUpti_GraphData with made-up
// handles) and lookups that name each handle's id; which call made each node, clones linked to
// their original, and the nodes a capture must not hold.
#include <gtest/gtest.h>

#include <cstdint>
#include <thread>

#include "CallingContext.h"
#include "GraphNodes.h"

using namespace fuselens;
using collector::CallingContextRegistry;
using collector::GraphNodes;
using GraphNode = db::CallingContextTree::GraphNode;

namespace {

// Handles are fake pointers whose value is the id CUPTI would give them.
CUgraphNode node_handle(std::uintptr_t id) { return reinterpret_cast<CUgraphNode>(id); }
CUgraph graph_handle(std::uintptr_t id) { return reinterpret_cast<CUgraph>(id); }

CUptiResult node_id_of(CUgraphNode node, std::uint64_t* id) {
  *id = reinterpret_cast<std::uintptr_t>(node);
  return CUPTI_SUCCESS;
}
CUptiResult graph_id_of(CUgraph graph, std::uint32_t* id) {
  *id = static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(graph));
  return CUPTI_SUCCESS;
}
CUptiResult failing_node_id(CUgraphNode, std::uint64_t*) { return CUPTI_ERROR_INVALID_PARAMETER; }

class GraphNodesTest : public ::testing::Test {
 protected:
  // One resource callback for node `node` of graph `graph`, cloned from `original` (0: created).
  void resource(CUpti_CallbackId id, std::uintptr_t node, std::uintptr_t graph,
                std::uintptr_t original = 0, CUgraphNodeType type = CU_GRAPH_NODE_TYPE_KERNEL) {
    CUpti_GraphData g{};
    g.graph = graph_handle(graph);
    g.node = node_handle(node);
    g.originalNode = node_handle(original);
    g.nodeType = type;
    CUpti_ResourceData data{};
    data.resourceDescriptor = &g;
    nodes.on_resource(id, &data);
  }
  std::vector<GraphNode> recorded() { return registry.merge_and_symbolize(1).graph_nodes; }

  CallingContextRegistry registry;
  GraphNodes nodes{registry, &node_id_of, &graph_id_of};
};

}  // namespace

TEST_F(GraphNodesTest, ANodeMadeInsideATracedCallIsChargedToThatCall) {
  std::uint64_t saved = 0;
  GraphNodes::enter(41, &saved);  // cuLaunchKernel under stream capture
  resource(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, 100, 7);
  GraphNodes::exit(&saved);
  GraphNodes::enter(42, &saved);  // cuGraphAddMemsetNode
  resource(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, 101, 7, 0, CU_GRAPH_NODE_TYPE_MEMSET);
  GraphNodes::exit(&saved);
  EXPECT_EQ(GraphNodes::call_in_flight(), 0u);
  const std::vector<GraphNode> expected = {{100, 0, 7, 41}, {101, 0, 7, 42}};
  EXPECT_EQ(recorded(), expected);
}

TEST_F(GraphNodesTest, ANodeMadeOutsideEveryTracedCallIsNotRecorded) {
  // cuGraphInstantiate is not traced: the executable graph's nodes it creates have no call.
  resource(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, 200, 8);
  EXPECT_TRUE(recorded().empty());
}

TEST_F(GraphNodesTest, AClonedNodeNamesItsOriginal) {
  resource(CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, 300, 9, 100);
  const std::vector<GraphNode> expected = {{300, 100, 9, 0}};
  EXPECT_EQ(recorded(), expected);
}

TEST_F(GraphNodesTest, OtherNodeTypesAndCallbacksAreIgnored) {
  std::uint64_t saved = 0;
  GraphNodes::enter(5, &saved);
  resource(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, 400, 1, 0, CU_GRAPH_NODE_TYPE_HOST);
  resource(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, 401, 1, 0, CU_GRAPH_NODE_TYPE_EMPTY);
  resource(CUPTI_CBID_RESOURCE_GRAPHNODE_DESTROY_STARTING, 402, 1);
  resource(CUPTI_CBID_RESOURCE_GRAPH_CREATED, 403, 1);
  nodes.on_resource(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, nullptr);
  CUpti_ResourceData empty{};  // no CUpti_GraphData
  nodes.on_resource(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, &empty);
  GraphNodes::exit(&saved);
  EXPECT_TRUE(recorded().empty());
}

TEST_F(GraphNodesTest, ANestedTracedCallGivesBackTheCallItInterrupted) {
  std::uint64_t outer = 0, inner = 0;
  GraphNodes::enter(10, &outer);
  GraphNodes::enter(11, &inner);
  EXPECT_EQ(GraphNodes::call_in_flight(), 11u);
  GraphNodes::exit(&inner);
  EXPECT_EQ(GraphNodes::call_in_flight(), 10u);
  resource(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, 500, 2);
  GraphNodes::exit(&outer);
  EXPECT_EQ(GraphNodes::call_in_flight(), 0u);
  const std::vector<GraphNode> expected = {{500, 0, 2, 10}};
  EXPECT_EQ(recorded(), expected);
}

TEST_F(GraphNodesTest, TheCallInFlightIsPerThread) {
  std::uint64_t saved = 0;
  GraphNodes::enter(20, &saved);
  std::thread other([&] {
    EXPECT_EQ(GraphNodes::call_in_flight(), 0u);
    resource(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, 600, 3);  // no call on this thread
    std::uint64_t s = 0;
    GraphNodes::enter(21, &s);
    resource(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, 601, 3);
    GraphNodes::exit(&s);
  });
  other.join();
  GraphNodes::exit(&saved);
  const std::vector<GraphNode> expected = {{601, 0, 3, 21}};
  EXPECT_EQ(recorded(), expected);
}

TEST(GraphNodes, ANodeWhoseIdCannotBeReadIsNotRecorded) {
  CallingContextRegistry registry;
  GraphNodes nodes(registry, &failing_node_id, &graph_id_of);
  CUpti_GraphData g{};
  g.node = node_handle(1);
  g.originalNode = node_handle(2);
  g.nodeType = CU_GRAPH_NODE_TYPE_KERNEL;
  CUpti_ResourceData data{};
  data.resourceDescriptor = &g;
  std::uint64_t saved = 0;
  GraphNodes::enter(3, &saved);
  nodes.on_resource(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, &data);
  nodes.on_resource(CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, &data);
  GraphNodes::exit(&saved);
  EXPECT_TRUE(registry.merge_and_symbolize(1).graph_nodes.empty());
}

TEST_F(GraphNodesTest, BetweenCaptureWindowsOnlyClonesAreRecorded) {
  nodes.record_created(false);  // capture control: API callbacks off, no call known in flight
  std::uint64_t saved = 0;
  GraphNodes::enter(30, &saved);  // a call still in flight when the window closed
  resource(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, 700, 5);
  resource(CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, 701, 5, 100);
  nodes.record_created(true);
  resource(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, 702, 5);
  GraphNodes::exit(&saved);
  const std::vector<GraphNode> expected = {{701, 100, 5, 0}, {702, 0, 5, 30}};
  EXPECT_EQ(recorded(), expected);
}
