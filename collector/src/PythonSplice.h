#pragma once
// Where the Python frames of a launch go in its calling context: in place of the interpreter's
// own native frames. A path is recorded as the native stack (root first) followed by the Python
// frames of the same moment (root first, PythonFrames::walk); when the trees are merged each path
// is rewritten by splice_python_frames.
//
// Rule: the native frames from the outermost to the innermost frame inside the interpreter
// (libpython or the python executable: _PyEval_EvalFrameDefault, the vectorcall and slot
// wrappers, Py_RunMain, main) are replaced by the Python frames, outermost first. Native frames
// outside that run stay where they are: the process entry above it (libc's start code when the
// interpreter is a shared library) and the extension code below it (torch's C++ operator down to
// cudaLaunchKernel). Native frames between two runs of interpreter frames (an extension calling
// back into Python, e.g. an autograd hook) cannot be placed among the Python frames with the
// stable C API, so they are dropped. Without interpreter frames in the native stack (the unwind
// stopped early) the Python frames go above the whole native path; without Python frames (a
// thread without the GIL) the native path is kept as it is.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fuselens::collector {

struct SplicedFrame {
  bool python = false;
  std::uint32_t index = 0;  ///< into the native frames, or into the Python frames

  bool operator==(const SplicedFrame&) const = default;
};

/// The spliced path, root first. `native_in_interpreter` has one flag per native frame, root
/// first; `python_count` Python frames follow, root first.
std::vector<SplicedFrame> splice_python_frames(const std::vector<bool>& native_in_interpreter,
                                               std::size_t python_count);

}  // namespace fuselens::collector
