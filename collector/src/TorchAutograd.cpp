#include "TorchAutograd.h"

#include <dlfcn.h>

namespace fuselens::collector {
namespace {

constexpr const char* kPeek = "_ZN2at15sequence_number4peekEv";  // at::sequence_number::peek()
constexpr const char* kCurrentNode =
    "_ZN5torch8autograd16get_current_nodeEv";  // get_current_node()
constexpr int kNodeSequenceNr = 24;  // vptr, enable_shared_from_this's weak_ptr, sequence_nr_
constexpr int kUseCount = 8;         // _Sp_counted_base: vptr, then int _M_use_count
// Sequence numbers at or above this are not a forward op's: AccumulateGrad's is UINT64_MAX.
constexpr std::uint64_t kMaxSequence = std::uint64_t{1} << 48;

void* symbol(void* library, const char* name) {
  void* found = library ? dlsym(library, name) : nullptr;
  return found ? found : dlsym(RTLD_DEFAULT, name);
}

}  // namespace

void TorchAutograd::resolve() noexcept {
  if (tried_.exchange(true)) return;
  void* library = dlopen("libtorch_cpu.so", RTLD_LAZY | RTLD_NOLOAD);
  auto* peek = reinterpret_cast<Peek>(symbol(library, kPeek));
  auto* current = reinterpret_cast<CurrentNode>(symbol(library, kCurrentNode));
  if (library) dlclose(library);  // RTLD_NOLOAD took a reference; the library stays loaded
  if (!peek) return;
#if defined(__x86_64__)
  current_node_.store(current, std::memory_order_relaxed);
#endif
  peek_.store(peek, std::memory_order_release);
}

std::int64_t TorchAutograd::read(bool forward) const noexcept {
  const Peek peek = peek_.load(std::memory_order_acquire);
  if (!peek) return kNone;
  if (const CurrentNode current = current_node_.load(std::memory_order_relaxed)) {
    struct {
      char* node;
      char* control;
    } shared{nullptr, nullptr};  // std::shared_ptr<Node>: the object, then its control block
    current(&shared);
    if (shared.node) {
      std::uint64_t sequence = 0;
      __builtin_memcpy(&sequence, shared.node + kNodeSequenceNr, sizeof sequence);
      if (shared.control) {
        __atomic_fetch_sub(reinterpret_cast<int*>(shared.control + kUseCount), 1, __ATOMIC_ACQ_REL);
      }
      return sequence < kMaxSequence ? (kBackwardBit | static_cast<std::int64_t>(sequence)) : kNone;
    }
  }
  if (!forward) return kNone;
  const std::uint64_t next = peek();
  return next < kMaxSequence ? static_cast<std::int64_t>(next) : kNone;
}

}  // namespace fuselens::collector
