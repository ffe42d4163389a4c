#pragma once
// TorchAutograd: PyTorch's autograd sequence numbers, read at each traced call once PyTorch's nn
// is in use, so that a backward kernel can be charged to the forward op, module and line whose
// autograd node launched it without any Python hook (docs/calling-context.md, "Modules").
//
// PyTorch numbers every autograd node it creates with its thread's sequence counter
// (at::sequence_number::get_and_increment() in Node's constructor; ATen/SequenceNumber.h) before
// the op's kernels run, and the engine keeps the node it evaluates in a thread-local
// (torch::autograd::NodeGuard; get_current_node() in torch/csrc/autograd/function.cpp). So:
//  - at a forward launch, at::sequence_number::peek() is one more than the sequence number of the
//    node the running op created (ops that create none leave it unchanged);
//  - at a backward launch, get_current_node() is the node being evaluated, whose sequence_nr_
//    (Node's first member after its vtable and enable_shared_from_this: offset 24 on x86-64 with
//    libstdc++, unchanged since PyTorch 1.x) is the forward op's.
// Both functions are exported by libtorch_cpu.so; they are looked up (dlopen with RTLD_NOLOAD,
// then dlsym) once, after the first nn.Module call is seen, and never when the process has no
// libtorch. get_current_node() returns a std::shared_ptr by value: called with the Itanium
// ABI's hidden return pointer (x86-64 only; elsewhere nothing is read), its reference released
// with the atomic decrement libstdc++'s _Sp_counted_base uses (the engine's own reference keeps
// the node alive; the last reference is never ours, and if it were, the node would leak, never
// be freed twice). Nothing allocates, locks or touches Python.
#include <atomic>
#include <cstdint>

namespace fuselens::collector {

class TorchAutograd {
 public:
  /// Encoding of ThreadTree's per-call sequence value: -1 none; a forward value as is; a
  /// backward value with kBackwardBit set.
  static constexpr std::int64_t kBackwardBit = std::int64_t{1} << 62;
  static constexpr std::int64_t kNone = -1;

  /// Looks the two functions up in the loaded libtorch_cpu.so (once; later calls do nothing).
  void resolve() noexcept;
  bool resolved() const noexcept { return peek_.load(std::memory_order_acquire) != nullptr; }

  /// The calling thread's value: kBackwardBit | the evaluated node's sequence number while the
  /// autograd engine evaluates a node on this thread; else, when `forward` (the thread runs
  /// Python), the thread's next sequence number; else kNone.
  std::int64_t read(bool forward) const noexcept;

 private:
  using Peek = std::uint64_t (*)();
  using CurrentNode = void* (*)(void* result);
  std::atomic<bool> tried_{false};
  std::atomic<Peek> peek_{nullptr};
  std::atomic<CurrentNode> current_node_{nullptr};
};

}  // namespace fuselens::collector
