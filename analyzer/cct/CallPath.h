#pragma once
// The calling context of one traced API call, looked up by (pid, correlation id): the frames of
// its calling-context-tree path from the outermost frame (the process entry, or a thread's start)
// down to the launch site, for a view that shows where one selected kernel, copy, memset or API
// call came from (prof-gui's Timeline page). A GPU operation has the context of its launching
// call: same pid and correlation id (db/schema.sql, table api_context).
//
// Frames are described as the calling-context views describe them (CallingContext.h): the label
// is frame_label()'s "function [file:line]", or "module+0xoffset" without a symbol; Python frames
// (frame kind python, when the collector recorded them) come in place of the interpreter's, as
// "function [file.py:line]". Frames of the CUDA stack (libcuda, libcudart, libcupti) and of
// FuseLens's collector are left out unless show_internal is set; how many were left out is
// counted.
//
// Cost: one indexed query walking the path up from the call's node (a recursive CTE over
// cct_node's primary key), O(depth); nothing else of the tree is read. When it finds nothing, a
// second query tells "no context recorded for this call" from "the capture has none".
// Errors: db::Error when a query fails (a corrupt capture).

#include <cstdint>
#include <string>
#include <vector>

#include "fuselens/db/Reader.h"

namespace fuselens::analyzer {

/// One frame of a call path.
struct CallPathEntry {
  std::string label;       ///< frame_label(): "b() [cct_paths.cu:31]", "libfoo.so+0x1a2b"
  std::string function;    ///< demangled; empty when no symbol covers the address
  std::string module;      ///< executable or shared object path; a Python frame's file
  std::string file;        ///< source file, empty without debug information
  std::uint32_t line = 0;  ///< source line, 0 without debug information
  bool python = false;     ///< a Python frame
  bool internal = false;   ///< CUDA stack or collector (only with show_internal)
};

struct CallPath {
  enum class Status {
    Found,        ///< frames holds the path (may be empty: every frame was internal)
    NoContexts,   ///< the capture has no calling contexts at all
    NotRecorded,  ///< the capture has some, but none for this call
  };
  Status status = Status::NotRecorded;
  std::string reason;                 ///< for NoContexts and NotRecorded: why, in one line
  std::uint32_t tid = 0;              ///< thread of the call (Found)
  std::vector<CallPathEntry> frames;  ///< outermost first; the launch site last
  std::uint32_t hidden_frames = 0;    ///< internal frames left out
};

/// The calling context of the API call (pid, correlation_id) of the capture, or of the GPU
/// operation it launched. Throws db::Error when a query fails.
CallPath call_path(const db::Reader& reader, std::uint32_t pid, std::uint32_t correlation_id,
                   bool show_internal = false);

}  // namespace fuselens::analyzer
