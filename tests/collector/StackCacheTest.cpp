// The checked stack cache without a GPU: hits only while every remembered return address is still
// in its slot (on a synthetic stack), and on real stacks of this test binary the cached capture
// gives the same paths as unwinding, telling apart two call sites at the same stack depth.
#include <gtest/gtest.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <cstring>
#include <string>

#include "CallingContext.h"
#include "ContextCapture.h"
#include "StackCache.h"
#include "Symbolizer.h"

using fuselens::collector::CallingContextRegistry;
using fuselens::collector::ContextCapture;
using fuselens::collector::ContextMethod;
using fuselens::collector::StackCache;
using fuselens::collector::ThreadTree;

TEST(StackCache, HitsOnlyWhileEverySlotHoldsItsReturnAddress) {
  alignas(16) std::uintptr_t stack[64] = {};
  const auto sp = reinterpret_cast<std::uintptr_t>(&stack[0]);
  const std::uintptr_t pcs[] = {0x1111, 0x2222, 0x3333};
  const std::uintptr_t slots[] = {sp + 8 * 3, sp + 8 * 10, sp + 8 * 40};
  stack[3] = 0x1111;
  stack[10] = 0x2222;
  stack[40] = 0x3333;
  StackCache cache;
  cache.set_stack_bounds(sp, sp + sizeof stack);
  EXPECT_EQ(cache.lookup(sp), StackCache::kMiss);
  cache.insert(sp, pcs, slots, 3, 42);
  EXPECT_EQ(cache.lookup(sp), 42u);
  EXPECT_EQ(cache.lookup(sp + 16), StackCache::kMiss);  // another stack pointer
  stack[10] = 0x2223;                                   // another caller at the same depth
  EXPECT_EQ(cache.lookup(sp), StackCache::kMiss);
  stack[10] = 0x2222;
  EXPECT_EQ(cache.lookup(sp), 42u);
  EXPECT_EQ(cache.hits(), 2u);
  EXPECT_EQ(cache.misses(), 3u);
}

TEST(StackCache, CachesNothingOutsideTheThreadsStack) {
  alignas(16) std::uintptr_t stack[16] = {};
  const auto sp = reinterpret_cast<std::uintptr_t>(&stack[0]);
  const std::uintptr_t pcs[] = {7};
  const std::uintptr_t slots[] = {sp + 8};
  stack[1] = 7;
  StackCache unknown;  // no bounds: another stack (a coroutine's), or none could be read
  unknown.insert(sp, pcs, slots, 1, 5);
  EXPECT_EQ(unknown.lookup(sp), StackCache::kMiss);
  StackCache short_stack;  // a slot above the top of the stack is never remembered
  short_stack.set_stack_bounds(sp, sp + 8);
  short_stack.insert(sp, pcs, slots, 1, 5);
  EXPECT_EQ(short_stack.lookup(sp), StackCache::kMiss);
  StackCache thread;
  EXPECT_TRUE(thread.set_stack_bounds_of_this_thread());
}

TEST(StackCache, KeepsSeveralPathsPerStackPointer) {
  alignas(16) std::uintptr_t stack[16] = {};
  const auto sp = reinterpret_cast<std::uintptr_t>(&stack[0]);
  const std::uintptr_t slots[] = {sp + 8};
  StackCache cache;
  cache.set_stack_bounds(sp, sp + sizeof stack);
  for (std::uintptr_t caller = 1; caller <= StackCache::kWays; ++caller) {
    const std::uintptr_t pcs[] = {caller};
    cache.insert(sp, pcs, slots, 1, static_cast<std::uint32_t>(caller * 10));
  }
  for (std::uintptr_t caller = 1; caller <= StackCache::kWays; ++caller) {
    stack[1] = caller;
    EXPECT_EQ(cache.lookup(sp), caller * 10);
  }
  const std::uintptr_t pcs[] = {99};  // a fifth path replaces one of the four
  cache.insert(sp, pcs, slots, 1, 990);
  stack[1] = 99;
  EXPECT_EQ(cache.lookup(sp), 990u);
}

namespace {

ContextCapture* g_capture = nullptr;

__attribute__((noinline)) void launch_site(std::uint32_t correlation) {
  g_capture->record(correlation);
  asm volatile("" ::: "memory");
}

// b and c differ (so the compiler cannot fold them into one) but have the same frame size.
__attribute__((noinline)) void from_b(std::uint32_t correlation) {
  volatile std::uint32_t offset = 0;
  launch_site(correlation + offset);
  asm volatile("" ::: "memory");
}

__attribute__((noinline)) void from_c(std::uint32_t correlation) {
  volatile std::uint32_t offset = 0;
  launch_site(correlation + 2 * offset);
  asm volatile("" ::: "memory");
}

__attribute__((noinline)) void twice(std::uint32_t correlation) {
  from_b(correlation);  // b and c run at the same stack depth: same key, other return address
  from_c(correlation + 1);
  asm volatile("" ::: "memory");
}

// The function names on a context's path in a merged tree, leaf first.
std::string functions_of(const fuselens::db::CallingContextTree& t, std::uint32_t node) {
  std::string out;
  for (; node != 0; node = t.nodes[node].parent)
    out += t.frames[t.nodes[node].frame].function + "|";
  return out;
}

}  // namespace

TEST(ContextCapture, CachedPathsMatchUnwoundOnesAndTellCallSitesApart) {
  for (const auto method : {ContextMethod::Cached, ContextMethod::Unwind}) {
    CallingContextRegistry registry;
    ContextCapture capture(registry, method, nullptr);
    g_capture = &capture;
    volatile std::uint32_t rounds =
        5;  // not a constant: the loop must not be unrolled into 5 call sites
    for (std::uint32_t round = 0; round < rounds; ++round) twice(100 + 2 * round);
    auto& tree = registry.this_thread();
    ASSERT_EQ(tree.calls().size(), 10u);
    // Same site, same node; b and c, different nodes.
    for (std::size_t i = 2; i < 10; ++i)
      EXPECT_EQ(tree.calls()[i].node, tree.calls()[i - 2].node);
    EXPECT_NE(tree.calls()[0].node, tree.calls()[1].node);
    if (method == ContextMethod::Cached) {
      EXPECT_EQ(tree.stack_cache().hits(), 8u);  // two misses, then every call from the cache
    }
    const auto merged = registry.merge_and_symbolize(1);
    const auto b = functions_of(merged, merged.contexts[0].node);
    const auto c = functions_of(merged, merged.contexts[1].node);
    EXPECT_NE(b.find("from_b"), std::string::npos) << b;
    EXPECT_EQ(b.find("from_c"), std::string::npos) << b;
    EXPECT_NE(c.find("from_c"), std::string::npos) << c;
    EXPECT_NE(b.find("twice"), std::string::npos) << b;
    EXPECT_NE(b.find("main"), std::string::npos) << b;
  }
}

TEST(ContextCapture, TimedCaptureSplitsFirstSightFromSteadyState) {
  CallingContextRegistry registry;
  ContextCapture untimed(registry, ContextMethod::Cached, nullptr);
  g_capture = &untimed;
  twice(1);
  EXPECT_EQ(untimed.timing().steady.calls + untimed.timing().first_sight.calls, 0u);

  CallingContextRegistry timed_registry;
  ContextCapture timed(timed_registry, ContextMethod::Cached, nullptr, true);
  g_capture = &timed;
  volatile std::uint32_t rounds = 4;
  for (std::uint32_t round = 0; round < rounds; ++round) twice(10 + 2 * round);
  const auto t = timed.timing();
  // Two call sites: their first calls unwind (first sight), the six after them hit the cache.
  EXPECT_EQ(t.first_sight.calls, 2u);
  EXPECT_EQ(t.steady.calls, 6u);
  EXPECT_GT(t.first_sight.native_ns, 0u);
  EXPECT_EQ(t.steady.calls, timed_registry.this_thread().stack_cache().hits());
}

TEST(ContextCapture, MethodNoneRecordsTheCallWithoutAStack) {
  CallingContextRegistry registry;
  ContextCapture capture(registry, ContextMethod::None, nullptr);
  capture.record(7);
  ASSERT_EQ(registry.this_thread().calls().size(), 1u);
  EXPECT_EQ(registry.this_thread().calls()[0].node, 0u);
}

TEST(StackCache, UnwindFindsEachReturnAddressInItsSlot) {
  std::uintptr_t pcs[ThreadTree::kMaxDepth], slots[ThreadTree::kMaxDepth];
  bool checked = false;
  const int n = fuselens::collector::unwind_with_slots(0, UINTPTR_MAX, pcs, slots,
                                                       ThreadTree::kMaxDepth, &checked);
  ASSERT_GT(n, 3);
  EXPECT_TRUE(checked);
  // Slot 0 (this function's call of unwind_with_slots) is reused by the calls made since.
  for (int i = 1; i < n; ++i) {
    std::uintptr_t value = 0;
    std::memcpy(&value, reinterpret_cast<const void*>(slots[i]), sizeof value);
    EXPECT_EQ(value, pcs[i]) << i;
    if (i > 0) {
      EXPECT_GT(slots[i], slots[i - 1]);
    }
  }
  // The callers of this test body: the same return addresses as libunwind's own backtrace.
  void* trace[ThreadTree::kMaxDepth];
  const int m = unw_backtrace(trace, ThreadTree::kMaxDepth);
  ASSERT_GE(m, n);
  for (int i = 1; i < n; ++i)
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(trace[m - i]), pcs[n - i]) << i;
}
