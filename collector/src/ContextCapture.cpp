#include "ContextCapture.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <time.h>

namespace fuselens::collector {
namespace {

std::uint64_t monotonic_ns() noexcept {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::uint64_t>(t.tv_sec) * 1000000000ull +
         static_cast<std::uint64_t>(t.tv_nsec);
}

// Describes the Python frame values of this thread's new tree nodes (first sight).
void describe_new(ThreadTree& tree, const PythonFrames& python, const std::uint64_t* values,
                  int n) {
  for (int i = 0; i < n; ++i) {
    if (tree.knows_python_frame(values[i])) continue;
    const PythonFrameInfo info = python.describe(values[i]);
    db::FrameInfo frame;
    if (info.module) {  // an nn.Module instance (PythonFrames::walk's module values)
      frame.kind = db::FrameKind::Module;
      frame.function = info.function;  // its class
      frame.module_offset = info.address;
    } else {
      frame.kind = db::FrameKind::Python;
      frame.module = info.file;  // a Python module is its file
      frame.function = info.function;
      frame.file = info.file;
      frame.line = info.line;
    }
    tree.set_python_frame(values[i], std::move(frame));
  }
}

}  // namespace

ContextCapture::ContextCapture(CallingContextRegistry& registry, ContextMethod method,
                               std::unique_ptr<PythonFrames> python, bool timed,
                               bool module_view) noexcept
    : registry_(registry), method_(method), python_(std::move(python)), timed_(timed) {
  if (python_ && !python_->usable()) python_.reset();
  if (python_ && module_view && python_->reads_memory()) {
    try {
      torch_ = std::make_unique<TorchAutograd>();
      python_->set_module_frames(true);
    } catch (...) {  // out of memory: no module view
    }
  }
}

std::uint32_t ContextCapture::native_node(ThreadTree& tree, std::uintptr_t sp, bool* hit) {
  *hit = false;
  switch (method_) {
    case ContextMethod::None:
      return 0;
    case ContextMethod::Unwind: {
      std::uintptr_t pcs[ThreadTree::kMaxDepth];
      const int n = unw_backtrace(reinterpret_cast<void**>(pcs), ThreadTree::kMaxDepth);
      return n > 0 ? tree.intern_native(pcs, n) : 0;
    }
    case ContextMethod::Cached:
      break;
  }
  StackCache& cache = tree.stack_cache();
  const std::uint32_t cached = cache.lookup(sp);
  if (cached != StackCache::kMiss) {
    *hit = true;
    return cached;
  }
  std::uintptr_t pcs[ThreadTree::kMaxDepth];
  std::uintptr_t slots[ThreadTree::kMaxDepth];
  bool checked = false;
  const int n =
      unwind_with_slots(sp, cache.stack_high(), pcs, slots, ThreadTree::kMaxDepth, &checked);
  if (n <= 0) return 0;
  const std::uint32_t node = tree.intern_native(pcs, n);
  if (checked) cache.insert(sp, pcs, slots, n, node);
  return node;
}

__attribute__((noinline)) void ContextCapture::record(std::uint32_t correlation_id) noexcept {
  thread_local bool busy = false;
  if (busy) return;
  busy = true;
  try {
    // The cache key: this frame's stack pointer, the same for every call from the same stack.
    std::uintptr_t sp = 0;
    FUSELENS_STACK_POINTER(sp);
    const std::uint64_t t0 = timed_ ? monotonic_ns() : 0;
    ThreadTree& tree = registry_.this_thread();
    bool hit = false, created = false;
    std::uint32_t node = native_node(tree, sp, &hit);
    const std::uint64_t t1 = timed_ ? monotonic_ns() : 0;
    std::int64_t seq = TorchAutograd::kNone;
    if (python_) {
      std::uint64_t values[PythonFrames::kMaxDepth];
      const int n = python_->walk(values, PythonFrames::kMaxDepth);
      if (n > 0) {
        node = tree.intern_suffix(node, values, n, &created);
        if (created) describe_new(tree, *python_, values, n);
      }
      // The module view's sequence numbers, once PyTorch's nn is in use (TorchAutograd.h).
      if (torch_) {
        if (torch_->resolved()) {
          seq = torch_->read(n > 0);
        } else if (python_->saw_module_call()) {
          torch_->resolve();
        }
      }
    }
    tree.add_call(correlation_id, node, seq);
    if (timed_) add_timing(hit && !created, t1 - t0, monotonic_ns() - t1);
  } catch (...) {
  }
  busy = false;
}

void ContextCapture::add_timing(bool steady, std::uint64_t native_ns,
                                std::uint64_t python_ns) noexcept {
  AtomicPhase& phase = steady ? steady_ : first_sight_;
  phase.calls.fetch_add(1, std::memory_order_relaxed);
  phase.native_ns.fetch_add(native_ns, std::memory_order_relaxed);
  phase.python_ns.fetch_add(python_ns, std::memory_order_relaxed);
}

ContextCapture::Timing ContextCapture::timing() const noexcept {
  auto load = [](const AtomicPhase& p) {
    return Phase{p.calls.load(std::memory_order_relaxed),
                 p.native_ns.load(std::memory_order_relaxed),
                 p.python_ns.load(std::memory_order_relaxed)};
  };
  return {load(steady_), load(first_sight_)};
}

}  // namespace fuselens::collector
