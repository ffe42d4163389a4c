#pragma once
// ContextCapture: what the collector does at the entry of a traced API call to record its
// calling context (docs/calling-context.md, "How the collector captures it").
//
// Native stack, method "cached" (the default): the stack pointer at a fixed point of record()
// keys the thread's StackCache; when every return address the entry remembers is still in its
// stack slot, the cached tree node is the path (a few dozen loads and compares, no unwind). On a
// miss the stack is unwound with libunwind's unw_step (DWARF call-frame information, which walks
// through libcupti, libcuda and libcudart, none of which keeps frame pointers), recording each
// frame's return-address slot, and the checked path is interned and cached. Method "unwind":
// libunwind's unw_backtrace at every call (the collector's first method, kept for comparison).
// Method "none": no native stack (the callback and the bookkeeping alone, for measurements).
//
// Python frames (when the process runs CPython and `python` is on): PythonFrames::walk after the
// native stack; the values are interned under the native node, and a value seen for the first
// time on this thread is described (file, function, line) right away, with the GIL the walk
// found held.
//
// record() never throws and never calls back into CUDA; a re-entrant call on the same thread
// (a finalizer that frees CUDA memory while the Python stack is walked) records nothing.

#include <cstdint>
#include <memory>

#include "CallingContext.h"
#include "PythonFrames.h"
#include "fuselens/collector/Config.h"

namespace fuselens::collector {

class ContextCapture {
 public:
  /// `python` may be null (no interpreter in the process, or Python frames turned off).
  ContextCapture(CallingContextRegistry& registry, ContextMethod method,
                 std::unique_ptr<PythonFrames> python) noexcept;

  /// Records the calling context of the API call `correlation_id` made by this thread.
  void record(std::uint32_t correlation_id) noexcept;

  const PythonFrames* python() const { return python_.get(); }
  ContextMethod method() const { return method_; }

 private:
  std::uint32_t native_node(ThreadTree& tree, std::uintptr_t sp);

  CallingContextRegistry& registry_;
  ContextMethod method_;
  std::unique_ptr<PythonFrames> python_;
};

}  // namespace fuselens::collector
