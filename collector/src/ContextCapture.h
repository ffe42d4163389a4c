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

#include <atomic>
#include <cstdint>
#include <memory>

#include "CallingContext.h"
#include "PythonFrames.h"
#include "TorchAutograd.h"
#include "fuselens/collector/Config.h"

namespace fuselens::collector {

class ContextCapture {
 public:
  /// `python` may be null (no interpreter in the process, or Python frames turned off). With
  /// `timed` (FUSELENS_CONTEXT_STATS=1), record() also reads the monotonic clock three times per
  /// call and adds up where its time goes (timing(); three relaxed atomic adds per call, on
  /// counters shared by all threads).
  ///
  /// With `module_view` (FUSELENS_TORCH_MODULES, Config::torch_module_frames) and frames read as
  /// memory: the module values of PythonFrames::walk, and each call's autograd sequence value
  /// (TorchAutograd.h) once PyTorch's nn is in use.
  ContextCapture(CallingContextRegistry& registry, ContextMethod method,
                 std::unique_ptr<PythonFrames> python, bool timed = false,
                 bool module_view = false) noexcept;

  /// Records the calling context of the API call `correlation_id` made by this thread.
  void record(std::uint32_t correlation_id) noexcept;

  /// With `timed`: the calls timed and the ns they spent on the native stack and on the Python
  /// frames (including interning), summed over threads, apart for the steady state (a stack-cache
  /// hit and no new tree node: what a repeating program pays per call) and for the rest (first
  /// sight of a path: an unwind, new nodes, Python frames described); all zero otherwise.
  struct Phase {
    std::uint64_t calls = 0, native_ns = 0, python_ns = 0;
  };
  struct Timing {
    Phase steady, first_sight;
  };
  Timing timing() const noexcept;

  const PythonFrames* python() const { return python_.get(); }
  ContextMethod method() const { return method_; }

 private:
  std::uint32_t native_node(ThreadTree& tree, std::uintptr_t sp, bool* hit);
  void add_timing(bool steady, std::uint64_t native_ns, std::uint64_t python_ns) noexcept;

  CallingContextRegistry& registry_;
  ContextMethod method_;
  std::unique_ptr<PythonFrames> python_;
  std::unique_ptr<TorchAutograd> torch_;  // module view only
  bool timed_;
  struct AtomicPhase {
    std::atomic<std::uint64_t> calls{0}, native_ns{0}, python_ns{0};
  };
  AtomicPhase steady_, first_sight_;
};

}  // namespace fuselens::collector
