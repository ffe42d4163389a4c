#pragma once
// The module view's ranges, one list for every analysis that reads them (module_report, the
// calling-context tree's link from backward work to its forward module, and compare --by module
// of torch.compile captures); docs/calling-context.md, "Modules".
//
// Two sources, by how the capture was recorded (prof-run --torch-modules):
//  - hooks: the NVTX ranges "fuselens:module:fwd:PATH" (around each module call, on its thread)
//    and "fuselens:module:bwd:PATH" (around each autograd node the module's forward created, on
//    the thread that ran the node), as stored;
//  - frames (the default from schema 9): derived from each traced call's calling context, whose
//    module frames (db::FrameKind::Module, outermost first) are the nn.Module instances being
//    called, and from its autograd sequence numbers (api_context.forward_seq/backward_seq):
//      forward: on each thread, in call order, a module's range runs from the start of the first
//      call under it to the end of the last call of the same uninterrupted run (a call whose
//      path leaves the instance, or a backward call on that thread, ends it). A module called
//      twice in a row with no call outside it between is one range; a call that launched
//      nothing is not seen.
//      backward: a call made while autograd evaluated node S belongs to the forward op whose
//      launch carried forward_seq = S + 1 (the node's op; the first later forward launch of the
//      process when that op launched nothing: a view's or an expand's node), the latest such
//      launch before the call; its innermost module is the call's. Consecutive calls of one
//      node with one module make one range.
//    Paths: each instance is named by the latest "fuselens:module:name:ADDRESS:CLASS:PATH" mark
//    of its process at or before the call whose class matches; an unnamed instance is
//    "PARENT.CLASS" (CLASS for an outermost one).
// Stored ranges win when a capture has both.
//
// Units: ns. Errors: db::Error when a query fails or the tree is damaged (a cycle).

#include <cstdint>
#include <string>
#include <vector>

#include "fuselens/db/Reader.h"

namespace fuselens::analyzer {

struct ModuleRangeRow {
  std::int64_t pid = 0, tid = 0, start = 0, end = 0;  ///< end: INT64_MAX when never ended
  std::string path;                                   ///< "model.encoder.layers.3"
  bool backward = false;
  int depth = 0;  ///< derived ranges: nesting level of the instance (0 outermost); stored: 0
};

struct ModuleRanges {
  /// By pid, tid, start; at an equal start the longer first, then the outer (smaller depth).
  std::vector<ModuleRangeRow> rows;
  bool derived = false;  ///< from module frames (frames mode), not stored ranges
};

/// The capture's module ranges (empty when it has neither source).
ModuleRanges module_ranges(const db::Reader& reader);

}  // namespace fuselens::analyzer
