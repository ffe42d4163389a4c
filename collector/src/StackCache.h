#pragma once
// StackCache: one thread's cache of verified native call paths, so that a launch from a call
// site already seen costs a few dozen memory compares instead of an unwind.
//
// Key: the stack pointer at a fixed point of the collector's capture function (the callback runs
// under libcupti, libcuda and libcudart, so the same user call site at the same stack depth
// reaches that point with the same stack pointer). Entry: the node of the thread's calling
// context tree for the path, and for each frame of the path its return address and the offset,
// from the key, of the stack slot that held it (for x86-64, the slot is the caller's stack
// pointer - 8, i.e. the callee's canonical frame address - 8). Check: an entry is used only if
// every slot still holds its return address. Starting from the same stack pointer and the same
// return addresses, DWARF unwinding computes the same frames unless a frame allocates a
// variable amount of stack (alloca) and stale slots happen to hold the old return addresses;
// such a frame is the one case the check cannot see (docs/calling-context.md).
//
// Slots lie between the key and the top of the thread's stack, which this thread owns for as long
// as it runs, so the reads are always within mapped memory. To keep it so, the cache is used only
// while the key lies inside the thread's own stack (set_stack_bounds, from pthread_getattr_np) and
// only for paths whose slots all lie below its top: a call made on another stack (a coroutine's,
// a signal stack) is unwound every time, never checked against memory that may be gone.
// Entries: 256 buckets of 4 ways by key; a full bucket replaces its ways in turn. Allocation
// happens only when an entry is created or replaced by a longer path, never on a hit.

#include <cstdint>
#include <memory>
#include <vector>

namespace fuselens::collector {

class StackCache {
 public:
  static constexpr std::uint32_t kMiss = UINT32_MAX;
  static constexpr int kBuckets = 256;
  static constexpr int kWays = 4;

  /// The node remembered for key `sp` whose return addresses are all still in their slots;
  /// kMiss otherwise.
  std::uint32_t lookup(std::uintptr_t sp) noexcept;
  /// The thread's stack, [low, high). Until it is set (or when it is empty) nothing is cached.
  void set_stack_bounds(std::uintptr_t low, std::uintptr_t high) noexcept {
    stack_low_ = low;
    stack_high_ = high;
  }
  /// Sets the bounds of the calling thread's stack; false (and nothing cached) when unknown.
  bool set_stack_bounds_of_this_thread() noexcept;
  std::uintptr_t stack_high() const { return stack_high_; }
  /// Remembers that, with key `sp`, slot `slots[i]` (an address >= sp) held `pcs[i]` for every
  /// i < depth and the path interned to `node`. Allocates; may throw std::bad_alloc.
  void insert(std::uintptr_t sp, const std::uintptr_t* pcs, const std::uintptr_t* slots, int depth,
              std::uint32_t node);

  std::uint64_t hits() const { return hits_; }
  std::uint64_t misses() const { return misses_; }

 private:
  struct Slot {
    std::uintptr_t pc;
    std::uintptr_t offset;  // from the key
  };
  struct Entry {
    std::uintptr_t sp = 0;
    std::uint32_t node = 0;
    std::vector<Slot> slots;
  };
  static std::size_t bucket_of(std::uintptr_t sp) noexcept;

  std::unique_ptr<Entry[]> entries_;  // kBuckets * kWays, created on the first insert
  std::unique_ptr<std::uint8_t[]> next_way_;
  std::uint64_t hits_ = 0, misses_ = 0;
  std::uintptr_t stack_low_ = 0, stack_high_ = 0;
};

/// Unwinds the calling thread (libunwind unw_step over DWARF call-frame information) and writes,
/// leaf first, the return address of each caller frame whose return-address slot lies at or
/// above `min_slot`, and the address of that slot. Sets `*checked` to false when a return address
/// was not found in its slot (a signal frame, say) or a slot lies at or above `max_slot` (the top
/// of the thread's stack; such slots are not read): such a path must not be cached. Returns the
/// number of frames written (at most `max`).
int unwind_with_slots(std::uintptr_t min_slot, std::uintptr_t max_slot, std::uintptr_t* pcs,
                      std::uintptr_t* slots, int max, bool* checked) noexcept;

/// The stack pointer where this is inlined (x86-64); 0 elsewhere, which disables the cache.
#if defined(__x86_64__)
#define FUSELENS_STACK_POINTER(out) asm volatile("mov %%rsp, %0" : "=r"(out))
#else
#define FUSELENS_STACK_POINTER(out) ((out) = 0)
#endif

}  // namespace fuselens::collector
