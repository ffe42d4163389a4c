#pragma once
// GraphNodes: which traced call made each CUDA graph node, so that a GPU operation replayed from a
// graph is charged to the calling context of the call that put it into the graph, not only to the
// graph launch (docs/calling-context.md, "CUDA graphs"; db/schema.sql, table graph_node).
//
// CUPTI reports (resource callbacks, on the thread that makes the node; cupti_callbacks.h,
// CUpti_GraphData):
//  - CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED: a node was added to a graph. A launch, copy or memset
//    under stream capture adds it inside its own API call (cuLaunchKernel, cuMemcpyAsync, ...),
//    cuGraphAdd{Kernel,Memcpy,Memset}Node and cuGraphAddNode inside theirs. The collector records
//    the calling context of those calls at their entry (ContextCapture.h) and tells this class
//    (enter/exit), so the node is recorded with the correlation id of the traced call in flight
//    on this thread, whose context api_context holds. A node made with no traced call in flight
//    (cuGraphInstantiate's own) is not recorded.
//  - CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED: a node was cloned from another. cuGraphInstantiate
//    clones every node of the graph into the executable graph, and the kernel, memcpy and memset
//    records of a graph launch carry the clone's id (CUPTI's cuda_graphs_trace sample maps them
//    back the same way); cuGraphClone and child-graph nodes clone too. Recorded with the original
//    node's id.
// Only kernel, memcpy and memset nodes are recorded: the node types whose work CUPTI reports as
// GPU operation records.
//
// Capture control (CaptureControl.h) switches the API callbacks off between windows, and so the
// entries that say which call is in flight: the session calls record_created(false) then, and a
// node made between windows is not recorded (its operations stay under their graph launch), so
// that no node is charged to a call that was in flight when a window closed. Clones are always
// recorded: a graph captured in a window may be instantiated outside it.
//
// Cost: enter() and exit() are a thread-local load and store on every traced call; on_resource()
// runs when a graph node is made (capture or construction time, not per replay): two or three
// CUPTI id lookups and an append to this thread's tree (CallingContext.h); no lock once the
// thread's tree exists, no CUDA call. Never throws.

#include <cupti.h>

#include <atomic>
#include <cstdint>

#include "CallingContext.h"

namespace fuselens::collector {

class GraphNodes {
 public:
  /// CUPTI's id lookups (cupti_activity.h: cuptiGetGraphNodeId, cuptiGetGraphId).
  using NodeIdLookup = CUptiResult (*)(CUgraphNode, std::uint64_t*);
  using GraphIdLookup = CUptiResult (*)(CUgraph, std::uint32_t*);
  /// The resource callbacks on_resource() acts on, to enable in the subscription.
  static constexpr CUpti_CallbackId kResourceCallbacks[] = {CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED,
                                                            CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED};

  /// Records into `registry`'s thread trees, with CUPTI's lookups.
  explicit GraphNodes(CallingContextRegistry& registry) noexcept
      : GraphNodes(registry, &cuptiGetGraphNodeId, &cuptiGetGraphId) {}
  /// With the lookups given (tests).
  GraphNodes(CallingContextRegistry& registry, NodeIdLookup node_id,
             GraphIdLookup graph_id) noexcept
      : registry_(registry), node_id_(node_id), graph_id_(graph_id) {}

  /// The traced API call `correlation_id` enters on this thread; `saved` (CUPTI's per-call
  /// correlationData, may be null) keeps the call it interrupts, for exit().
  static void enter(std::uint32_t correlation_id, std::uint64_t* saved) noexcept;
  /// The traced call whose entry stored `saved` returns on this thread.
  static void exit(const std::uint64_t* saved) noexcept;
  /// The traced call in flight on this thread (0: none).
  static std::uint32_t call_in_flight() noexcept;

  /// One CUPTI resource callback; ids other than kResourceCallbacks, null data and node types
  /// other than kernel, memcpy and memset are ignored.
  void on_resource(CUpti_CallbackId id, const CUpti_ResourceData* data) noexcept;

  /// Whether created nodes are recorded (capture control: off between windows; on at start).
  void record_created(bool on) noexcept { created_on_.store(on, std::memory_order_relaxed); }

 private:
  CallingContextRegistry& registry_;
  NodeIdLookup node_id_;
  GraphIdLookup graph_id_;
  std::atomic<bool> created_on_{true};
};

}  // namespace fuselens::collector
