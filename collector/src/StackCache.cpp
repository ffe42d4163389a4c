#include "StackCache.h"

#include <pthread.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

namespace fuselens::collector {

std::size_t StackCache::bucket_of(std::uintptr_t sp) noexcept {
  return static_cast<std::size_t>(((sp >> 4) * 0x9E3779B97F4A7C15ull) >> 56) % kBuckets;
}

bool StackCache::set_stack_bounds_of_this_thread() noexcept {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return false;
  void* low = nullptr;
  std::size_t size = 0;
  const bool ok = pthread_attr_getstack(&attr, &low, &size) == 0 && low && size > 0;
  pthread_attr_destroy(&attr);
  if (!ok) return false;
  set_stack_bounds(reinterpret_cast<std::uintptr_t>(low),
                   reinterpret_cast<std::uintptr_t>(low) + size);
  return true;
}

std::uint32_t StackCache::lookup(std::uintptr_t sp) noexcept {
  if (!entries_ || sp < stack_low_ || sp >= stack_high_) {
    ++misses_;
    return kMiss;
  }
  Entry* bucket = &entries_[bucket_of(sp) * kWays];
  for (int w = 0; w < kWays; ++w) {
    const Entry& e = bucket[w];
    if (e.sp != sp || e.slots.empty()) continue;
    bool same = true;
    for (const Slot& s : e.slots) {
      if (*reinterpret_cast<const volatile std::uintptr_t*>(sp + s.offset) != s.pc) {
        same = false;
        break;
      }
    }
    if (same) {
      ++hits_;
      return e.node;
    }
  }
  ++misses_;
  return kMiss;
}

void StackCache::insert(std::uintptr_t sp, const std::uintptr_t* pcs, const std::uintptr_t* slots,
                        int depth, std::uint32_t node) {
  if (depth <= 0 || sp < stack_low_ || sp >= stack_high_) return;
  for (int i = 0; i < depth; ++i) {
    if (slots[i] < sp || slots[i] + sizeof(std::uintptr_t) > stack_high_) return;
  }
  if (!entries_) {
    entries_ = std::make_unique<Entry[]>(static_cast<std::size_t>(kBuckets) * kWays);
    next_way_ = std::make_unique<std::uint8_t[]>(kBuckets);
  }
  const std::size_t bucket = bucket_of(sp);
  Entry* ways = &entries_[bucket * kWays];
  int way = -1;
  for (int w = 0; w < kWays && way < 0; ++w) {
    if (ways[w].slots.empty()) way = w;
  }
  if (way < 0) way = next_way_[bucket]++ % kWays;
  Entry& e = ways[way];
  e.slots.clear();
  e.slots.reserve(static_cast<std::size_t>(depth));
  for (int i = 0; i < depth; ++i) e.slots.push_back({pcs[i], slots[i] - sp});
  e.sp = sp;
  e.node = node;
}

__attribute__((noinline)) int unwind_with_slots(std::uintptr_t min_slot, std::uintptr_t max_slot,
                                                std::uintptr_t* pcs, std::uintptr_t* slots, int max,
                                                bool* checked) noexcept {
  *checked = true;
  unw_context_t context;
  unw_cursor_t cursor;
  if (unw_getcontext(&context) != 0 || unw_init_local(&cursor, &context) != 0) return 0;
  int n = 0;
  while (n < max && unw_step(&cursor) > 0) {
    unw_word_t ip = 0, sp = 0;
    if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || ip == 0) break;
    if (unw_get_reg(&cursor, UNW_REG_SP, &sp) != 0) break;
    const std::uintptr_t slot = static_cast<std::uintptr_t>(sp) - sizeof(std::uintptr_t);
    if (slot < min_slot) continue;  // the collector's own frames below the key
    // Read only inside the thread's stack: a frame the unwinder got wrong is not cached.
    if (slot + sizeof(std::uintptr_t) > max_slot ||
        *reinterpret_cast<const std::uintptr_t*>(slot) != ip) {
      *checked = false;
    }
    pcs[n] = static_cast<std::uintptr_t>(ip);
    slots[n] = slot;
    ++n;
  }
  return n;
}

}  // namespace fuselens::collector
