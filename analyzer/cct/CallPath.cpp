// call_path (CallPath.h): the calling context of one API call, one query up the tree.
#include "cct/CallPath.h"

#include <utility>

#include "cct/CallingContextData.h"
#include "cct/CallingContext.h"
#include "fuselens/db/TraceCursors.h"

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
  auto rows = db::call_path_frames(reader, static_cast<std::int64_t>(pid),
                                   static_cast<std::int64_t>(correlation_id), static_cast<std::int64_t>(kMaxWalk));
  bool found = false;
  while (auto s = rows.next()) {
    found = true;
    out.tid = static_cast<std::uint32_t>(s->tid);
    if (s->missing) continue;  // the root, or a node the tree lacks
    CallPathEntry e;
    e.python = s->kind == static_cast<std::int64_t>(db::FrameKind::Python);
    e.function = std::move(s->function);
    e.module = std::move(s->module);
    e.file = std::move(s->file);
    e.line = static_cast<std::uint32_t>(s->line);
    e.internal = !e.python && cct::is_internal_module(e.module);
    if (e.internal && !show_internal) {
      ++out.hidden_frames;
      continue;
    }
    e.label =
        frame_label(e.function, e.module, static_cast<std::uint64_t>(s->module_offset), e.file, e.line);
    out.frames.push_back(std::move(e));
  }
  if (found && (!out.frames.empty() || out.hidden_frames > 0)) {
    out.status = CallPath::Status::Found;
    return out;
  }
  out.tid = 0;
  if (!db::has_launch_contexts(reader)) {
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
