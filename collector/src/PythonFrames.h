#pragma once
// Python calling contexts: when the process runs CPython, the Python frames (file, function,
// line) of the thread that makes a CUDA API call, recorded next to its native stack and spliced
// in place of the interpreter's own native frames when the trees are merged (PythonSplice.h).
//
// CPython's C API is resolved at run time with dlsym(RTLD_DEFAULT, ...) (PythonApi::from_process):
// the collector does not link libpython, and does nothing when the symbols are absent (a C++
// program) or incomplete. Functions used, all exported by CPython 3.9+ (PyFrame_GetLasti: 3.11+;
// without it the line is read on the launch path instead of the bytecode offset):
//   launch path  Py_IsInitialized, _Py_IsFinalizing / Py_IsFinalizing (optional),
//                PyGILState_Check, _PyThreadState_UncheckedGet / PyThreadState_GetUnchecked
//                (optional), PyEval_GetFrame, PyFrame_GetBack, PyFrame_GetCode,
//                PyFrame_GetLasti, Py_IncRef, Py_DecRef;
//   first sight  PyCode_Addr2Line, PyObject_GetAttrString, PyUnicode_AsUTF8, PyErr_Fetch,
//                PyErr_Restore.
//
// Launch path (walk), when the interpreter is initialized and not finalizing: on CPython 3.11 and
// 3.12 the thread's frames are read as memory (PythonLayout.h), with or without the GIL (PyTorch
// releases it before its ops launch kernels); a thread that never ran Python has none. Other
// versions use the C API and only where this thread holds the GIL (PyGILState_Check and a
// current thread state): from the current frame it follows PyFrame_GetBack. Either way it writes
// one 64-bit value per frame, leaf first: kPythonTag | code object address | bytecode offset of
// the frame's current instruction. No string is built, nothing is allocated by the collector (on
// the C API path CPython creates the frame objects of frames that had none).
//
// First sight (describe): when a (code object, offset) value enters a thread's tree for the first
// time, the collector reads co_filename, co_qualname (co_name before 3.11) and the line of the
// offset (PyCode_Addr2Line, which only reads the code object's line table). With the GIL held it
// also takes a reference to the code object (Py_IncRef, never released, so its address names that
// code object until the process ends) and reads the names through the C API, the thread's
// pending exception saved and restored; without the GIL it reads the names as memory and takes no
// reference (a reference count may not be changed without the GIL), so a code object freed and
// its address reused later in the run would be named after the first. This happens at first sight
// rather than at exit because CPython finalizes the interpreter (Py_FinalizeEx) before the C atexit
// handlers run, and the collector's flush is one of those: by then no Python object may be touched.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "PythonLayout.h"

namespace fuselens::collector {

/// The tag that marks a Python frame value in a calling-context path (native return addresses
/// are user-space addresses, below 2^47).
inline constexpr std::uint64_t kPythonTag = std::uint64_t{1} << 63;
/// Low bits of a Python frame value: the bytecode offset in code units (2 bytes), or the line
/// when the interpreter has no PyFrame_GetLasti; larger offsets are clamped.
inline constexpr int kPythonOffsetBits = 20;

inline bool is_python_value(std::uint64_t value) { return (value & kPythonTag) != 0; }

/// The position that marks a module value: a Python-tagged value whose "code object" is an
/// nn.Module instance (the `self` of a torch.nn.Module._call_impl frame), placed right below
/// that frame in a path. Frame positions are clamped below it.
inline constexpr std::uint32_t kModulePosition = (std::uint32_t{1} << kPythonOffsetBits) - 1;
/// True for a value made by encode_module_value.
bool is_module_value(std::uint64_t value) noexcept;
/// Packs an nn.Module instance's address (16-byte aligned, below 2^47); 0 when it cannot.
std::uint64_t encode_module_value(const void* object) noexcept;

/// Packs a code object address (16-byte aligned, below 2^47) and a position; 0 when the address
/// cannot be packed.
std::uint64_t encode_python_frame(const void* code, std::uint32_t position) noexcept;
/// The code object address and position of a value made by encode_python_frame.
std::pair<void*, std::uint32_t> decode_python_frame(std::uint64_t value) noexcept;

/// CPython's C API as function pointers. from_process() fills it from the running process;
/// tests fill it with fakes. Optional entries may stay null.
struct PythonApi {
  int (*is_initialized)() = nullptr;                    // Py_IsInitialized
  int (*is_finalizing)() = nullptr;                     // optional
  int (*gil_check)() = nullptr;                         // PyGILState_Check
  void* (*current_thread_state)() = nullptr;            // optional: this thread's attached state
  void* (*get_frame)() = nullptr;                       // PyEval_GetFrame: borrowed
  void* (*frame_back)(void*) = nullptr;                 // PyFrame_GetBack: new reference
  void* (*frame_code)(void*) = nullptr;                 // PyFrame_GetCode: new reference
  int (*frame_lasti)(void*) = nullptr;                  // PyFrame_GetLasti (bytes); optional
  int (*frame_line)(void*) = nullptr;                   // PyFrame_GetLineNumber
  void (*incref)(void*) = nullptr;                      // Py_IncRef
  void (*decref)(void*) = nullptr;                      // Py_DecRef
  int (*code_line)(void*, int) = nullptr;               // PyCode_Addr2Line(code, byte offset)
  void* (*get_attr)(void*, const char*) = nullptr;      // PyObject_GetAttrString: new reference
  const char* (*as_utf8)(void*) = nullptr;              // PyUnicode_AsUTF8
  void (*err_fetch)(void**, void**, void**) = nullptr;  // PyErr_Fetch
  void (*err_restore)(void*, void*, void*) = nullptr;   // PyErr_Restore
  // For reading frames without the GIL (PythonLayout.h); all optional.
  void* (*this_thread_state)() = nullptr;  // PyGILState_GetThisThreadState
  const unsigned long* version = nullptr;  // Py_Version (3.11+)
  const void* code_type = nullptr;         // &PyCode_Type
  const void* unicode_type = nullptr;      // &PyUnicode_Type
  const void* cell_type = nullptr;         // &PyCell_Type (module frames: a `self` in a cell)

  /// Resolves every entry with dlsym(RTLD_DEFAULT, ...).
  static PythonApi from_process() noexcept;
  /// True when every required entry is present.
  bool usable() const noexcept;
};

/// What a Python frame value names, read at first sight.
struct PythonFrameInfo {
  std::string file;      ///< co_filename
  std::string function;  ///< co_qualname (co_name before 3.11); a module value: its class name
  std::uint32_t line = 0;
  bool module = false;        ///< a module value (is_module_value)
  std::uint64_t address = 0;  ///< a module value: the instance's address
};

class PythonFrames {
 public:
  static constexpr int kMaxDepth = 128;

  explicit PythonFrames(PythonApi api) noexcept;

  /// The process's interpreter, or nothing (returns false from usable()) when it runs none.
  static PythonFrames from_process() noexcept;
  bool usable() const noexcept { return usable_; }

  /// Writes the calling thread's Python frames, leaf first, into `leaf_first` (at most `max`);
  /// returns how many. 0 when the interpreter is not running, when the thread runs no Python,
  /// or, without a memory layout for this CPython, when it does not hold the GIL.
  /// Module view (set_module_frames, frames read as memory only): below every frame of
  /// torch.nn.Module._call_impl (known once describe() has named it) a module value
  /// (encode_module_value) of the instance being called, its `self`, is written too.
  int walk(std::uint64_t* leaf_first, int max) const noexcept;
  /// Turns the module values of walk() on or off (default off).
  void set_module_frames(bool on) noexcept { module_frames_ = on; }
  /// True once describe() has met torch.nn.Module._call_impl (PyTorch's nn is in use).
  bool saw_module_call() const noexcept {
    return __atomic_load_n(&call_impl_, __ATOMIC_RELAXED) != nullptr;
  }

  /// Reads what `value` (from walk, on this thread, with the frames still alive) names; with the
  /// GIL held, also keeps its code object alive for the rest of the process. A module value is
  /// named by its class (tp_name, read as memory).
  PythonFrameInfo describe(std::uint64_t value) const noexcept;

  /// True when the return address lies in the executable segments of the module that holds the
  /// interpreter (libpython, or the python executable itself).
  bool in_interpreter(std::uintptr_t pc) const noexcept;
  /// True when frames are read as memory (a PythonLayout for this CPython).
  bool reads_memory() const noexcept { return reader_.has_value(); }
  const std::vector<std::pair<std::uintptr_t, std::uintptr_t>>& interpreter_text() const {
    return interpreter_text_;
  }
  /// For tests: the interpreter's executable address ranges [begin, end).
  void set_interpreter_text(std::vector<std::pair<std::uintptr_t, std::uintptr_t>> ranges) {
    interpreter_text_ = std::move(ranges);
  }

 private:
  std::string attribute_text(void* object, const char* name) const noexcept;
  void note_call_impl(const void* code, const PythonFrameInfo& info) const noexcept;
  bool holds_gil() const noexcept;

  PythonApi api_;
  std::optional<PythonFrameReader> reader_;
  bool usable_ = false;
  bool positions_are_lines_ = false;  // no PyFrame_GetLasti: values carry the line
  bool module_frames_ = false;
  // The code object of Module._call_impl, set once by describe() on any thread, read by walk()
  // (relaxed atomic loads and stores: a plain pointer keeps PythonFrames movable).
  mutable const void* call_impl_ = nullptr;
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> interpreter_text_;
};

}  // namespace fuselens::collector
