#pragma once
// PythonLayout: reading a CPython thread's frames without the GIL.
//
// PyTorch (and most C extensions) release the GIL around the C++ work of an op, so the thread
// that reaches cuLaunchKernel holds no GIL and CPython's frame API may not be called there.
// The frames of the calling thread cannot change while that thread is inside the CUDA call,
// though: they are read as memory, the way out-of-process samplers (py-spy, austin) read them,
// with struct offsets per CPython minor version:
//   this thread's PyThreadState   PyGILState_GetThisThreadState() (a thread-specific key: no GIL)
//   its current frame             tstate->cframe->current_frame (3.11, 3.12)
//   per _PyInterpreterFrame       f_code (PyCodeObject*), previous, prev_instr (the code unit
//                                 before the next instruction), owner (3.12's C-stack shim
//                                 frames are skipped)
//   per PyCodeObject              co_filename, co_qualname (str), the bytecode start at
//                                 PyCode_Type.tp_basicsize (offsetof co_code_adaptive)
//   per str                       compact ASCII data after PyASCIIObject, else the cached UTF-8
// The offsets come from CPython's headers (Include/cpython/pystate.h, Include/internal/
// pycore_frame.h, Include/cpython/code.h, Include/cpython/unicodeobject.h of 3.11 and 3.12) and
// were checked on 3.11.7 and 3.12.3 with collector/bench/python_layout_probe.py, which finds
// each one in a live interpreter. Other versions get no layout (PythonFrames then reads frames
// through the C API, only where the thread holds the GIL). Every code object read is checked
// against &PyCode_Type and every string against &PyUnicode_Type before use; a walk stops at the
// first frame that fails a check.
//
// Nothing here allocates or takes a lock; reads are plain loads of memory that the calling
// thread's own interpreter frames keep alive.
#include <cstdint>
#include <optional>
#include <string>

namespace fuselens::collector {

struct PythonLayout {
  int minor = 0;                 ///< CPython 3.<minor>
  int thread_cframe = 0;         ///< PyThreadState::cframe
  int cframe_current_frame = 0;  ///< _PyCFrame::current_frame
  int frame_code = 0;            ///< _PyInterpreterFrame::f_code
  int frame_previous = 0;        ///< _PyInterpreterFrame::previous
  int frame_instr = 0;           ///< _PyInterpreterFrame::prev_instr
  int frame_owner = 0;           ///< _PyInterpreterFrame::owner (char)
  int frame_localsplus = 0;      ///< _PyInterpreterFrame::localsplus (the first argument)
  int owner_cstack = -1;         ///< owner value of C-stack shim frames, -1 when none
  int code_filename = 0;         ///< PyCodeObject::co_filename
  int code_qualname = 0;         ///< PyCodeObject::co_qualname
  int unicode_ascii_data = 0;    ///< sizeof(PyASCIIObject): where compact ASCII text starts
  int unicode_utf8 = 0;          ///< PyCompactUnicodeObject::utf8 (char*, may be null)

  /// The layout of CPython 3.<minor> for the Py_Version value (0x030C03F0 = 3.12.3); nullopt
  /// for versions without one.
  static std::optional<PythonLayout> for_version(unsigned long py_version) noexcept;
};

/// Reads one thread's frames through a PythonLayout. The type addresses come from the process
/// (dlsym of PyCode_Type, PyUnicode_Type) or, in tests, from fakes.
class PythonFrameReader {
 public:
  PythonFrameReader(PythonLayout layout, const void* code_type, const void* unicode_type,
                    const void* cell_type = nullptr) noexcept;

  /// The current _PyInterpreterFrame of thread state `tstate`, or null.
  const void* current_frame(const void* tstate) const noexcept;
  /// Walks from `frame` (leaf) towards the outermost frame; for each frame owned by Python code
  /// calls out(frame, code, code_units) with the frame, its code object and the offset of its
  /// current instruction in 2-byte code units; at most `max` frames; returns how many it reported.
  template <typename Out>
  int walk(const void* frame, int max, Out&& out) const noexcept {
    int n = 0;
    for (int guard = 0; frame != nullptr && n < max && guard < 4 * max; ++guard) {
      const auto* f = static_cast<const char*>(frame);
      const void* code = load<const void*>(f, layout_.frame_code);
      const int owner = static_cast<unsigned char>(load<char>(f, layout_.frame_owner));
      if (!is_code(code)) break;
      if (owner != layout_.owner_cstack) {
        out(frame, code, code_units(code, load<const std::uint16_t*>(f, layout_.frame_instr)));
        ++n;
      }
      frame = load<const void*>(f, layout_.frame_previous);
    }
    return n;
  }
  /// co_filename, co_qualname of a code object reported by walk ("" when a check fails).
  std::string filename(const void* code) const noexcept;
  std::string qualname(const void* code) const noexcept;
  /// True when `object` is a code object (its ob_type is PyCode_Type).
  bool is_code(const void* object) const noexcept;
  /// The first local of `frame` (localsplus[0]: `self` of a method; when the function's closures
  /// capture it, CPython keeps it in a cell there, and the cell's content is returned), or null
  /// when it is not an 8-byte aligned user-space address. Only for frames reported by walk,
  /// while they run.
  const void* first_local(const void* frame) const noexcept;
  /// The class name (ob_type->tp_name, at most 256 bytes) of a live object; "" when unreadable.
  std::string type_name(const void* object) const noexcept;

 private:
  template <typename T>
  static T load(const void* base, int offset) noexcept {
    T value;
    __builtin_memcpy(&value, static_cast<const char*>(base) + offset, sizeof(T));
    return value;
  }
  std::uint32_t code_units(const void* code, const std::uint16_t* instr) const noexcept;
  std::string text(const void* str) const noexcept;

  PythonLayout layout_;
  const void* code_type_;
  const void* unicode_type_;
  const void* cell_type_;
  std::int64_t code_start_ = 0;  ///< PyCode_Type.tp_basicsize
};

}  // namespace fuselens::collector
