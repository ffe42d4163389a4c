// call_path (CallPath.h): the calling context of one API call, one query up the tree.
#include "fuselens/analyzer/CallPath.h"

#include <utility>

#include "CallingContextData.h"
#include "fuselens/analyzer/CallingContext.h"

namespace fuselens::analyzer {
namespace {

// Deeper than any stack the collector records (ThreadTree::kMaxDepth): stops a walk on a
// corrupt tree whose parent links form a cycle.
constexpr int kMaxWalk = 100000;

}  // namespace

CallPath call_path(const db::Reader& reader, std::uint32_t pid, std::uint32_t correlation_id,
                   bool show_internal) {
  CallPath out;
  if (!reader.has_table("api_context")) {
    out.status = CallPath::Status::NoContexts;
    out.reason = "the capture has no calling contexts (written by FuseLens schema version " +
                 std::to_string(reader.schema_version()) +
                 ", before calling contexts were recorded)";
    return out;
  }
  // From the call's node up to the root, with each node's frame; the root (no frame) and an
  // unknown node come back with a NULL frame.
  auto s = reader.prepare(
      "WITH RECURSIVE up(node, depth, tid) AS ("
      "  SELECT cct_node_id, 0, tid FROM api_context WHERE pid = ?1 AND correlation_id = ?2"
      "  UNION ALL"
      "  SELECT n.parent_id, up.depth + 1, up.tid FROM up JOIN cct_node n ON n.id = up.node"
      "  WHERE n.parent_id IS NOT NULL AND up.depth < ?3)"
      " SELECT up.tid, f.id IS NULL, COALESCE(f.kind, 0), COALESCE(fn.value, ''),"
      " COALESCE(m.value, ''), COALESCE(f.module_offset, 0), COALESCE(fl.value, ''),"
      " COALESCE(f.line, 0)"
      " FROM up LEFT JOIN cct_node n ON n.id = up.node LEFT JOIN frame f ON f.id = n.frame_id"
      " LEFT JOIN strings fn ON fn.id = f.function_id LEFT JOIN strings m ON m.id = f.module_id"
      " LEFT JOIN strings fl ON fl.id = f.file_id"
      " ORDER BY up.depth DESC");
  s.bind(1, static_cast<std::int64_t>(pid));
  s.bind(2, static_cast<std::int64_t>(correlation_id));
  s.bind(3, static_cast<std::int64_t>(kMaxWalk));
  bool found = false;
  while (s.step()) {
    found = true;
    out.tid = static_cast<std::uint32_t>(s.int64(0));
    if (s.int64(1) != 0) continue;  // the root, or a node the tree lacks
    CallPathEntry e;
    e.python = s.int64(2) == static_cast<std::int64_t>(db::FrameKind::Python);
    e.function = s.text(3);
    e.module = s.text(4);
    e.file = s.text(6);
    e.line = static_cast<std::uint32_t>(s.int64(7));
    e.internal = !e.python && cct::is_internal_module(e.module);
    if (e.internal && !show_internal) {
      ++out.hidden_frames;
      continue;
    }
    e.label =
        frame_label(e.function, e.module, static_cast<std::uint64_t>(s.int64(5)), e.file, e.line);
    out.frames.push_back(std::move(e));
  }
  if (found && (!out.frames.empty() || out.hidden_frames > 0)) {
    out.status = CallPath::Status::Found;
    return out;
  }
  out.tid = 0;
  if (reader.query_int("SELECT EXISTS (SELECT 1 FROM api_context)") == 0) {
    out.status = CallPath::Status::NoContexts;
    out.reason =
        "the capture has no calling contexts (recorded without the 'context' trace group, or no "
        "launch was made)";
  } else {
    out.status = CallPath::Status::NotRecorded;
    out.reason = found ? "the call's recorded calling context is empty (no frame could be unwound)"
                       : "no calling context was recorded for this call (contexts are recorded "
                         "for launches, copies, memsets, allocations and synchronization calls)";
  }
  return out;
}

}  // namespace fuselens::analyzer
