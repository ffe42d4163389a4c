#include <gtest/gtest.h>

#include <cstdint>
#include <set>

#include "BufferPool.h"

using fuselens::collector::BufferPool;

TEST(BufferPool, HandsOutAlignedBuffersUpToTheCapThenRefuses) {
  BufferPool pool(64 * 1024, 3, 1, 0);
  std::set<std::uint8_t*> seen;
  for (int i = 0; i < 3; ++i) {
    auto* b = pool.acquire();
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b) % BufferPool::kAlignment, 0u);
    seen.insert(b);
  }
  EXPECT_EQ(seen.size(), 3u);
  EXPECT_EQ(pool.acquire(), nullptr);
  EXPECT_EQ(pool.acquire(), nullptr);
  EXPECT_EQ(pool.refusals(), 2u);
  EXPECT_EQ(pool.allocated(), 3u);
}

TEST(BufferPool, ReusesReleasedBuffersWithoutAllocatingMore) {
  BufferPool pool(64 * 1024, 2, 0);
  auto* a = pool.acquire();
  auto* b = pool.acquire();
  pool.release(a);
  EXPECT_EQ(pool.acquire(), a);
  pool.release(b);
  pool.release(a);
  EXPECT_EQ(pool.allocated(), 2u);
  EXPECT_EQ(pool.acquisitions(), 3u);
  EXPECT_EQ(pool.refusals(), 0u);
}

// Past the cap the pool hands out its overflow buffers (records to count as dropped, not store),
// then nothing; a released overflow buffer goes back to the overflow list, not the pool.
TEST(BufferPool, PastTheCapHandsOutOverflowBuffersToCountDrops) {
  BufferPool pool(64 * 1024, 2, 0, 2);
  auto* a = pool.acquire();
  auto* b = pool.acquire();
  EXPECT_FALSE(pool.is_overflow(a));
  EXPECT_FALSE(pool.is_overflow(b));
  auto* o1 = pool.acquire();
  auto* o2 = pool.acquire();
  ASSERT_NE(o1, nullptr);
  ASSERT_NE(o2, nullptr);
  EXPECT_NE(o1, o2);
  EXPECT_TRUE(pool.is_overflow(o1));
  EXPECT_TRUE(pool.is_overflow(o2));
  EXPECT_EQ(pool.acquire(), nullptr);  // overflow buffers all in flight
  EXPECT_EQ(pool.refusals(), 3u);
  pool.release(o1);
  EXPECT_EQ(pool.acquire(), o1);  // still full: the overflow buffer again
  pool.release(a);
  EXPECT_EQ(pool.acquire(), a);  // a pool buffer is free: it comes first
  EXPECT_EQ(pool.allocated(), 2u);
  EXPECT_FALSE(pool.is_overflow(nullptr));
}
