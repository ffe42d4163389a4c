#include <gtest/gtest.h>

#include <cstdint>
#include <set>

#include "BufferPool.h"

using fuselens::collector::BufferPool;

TEST(BufferPool, HandsOutAlignedBuffersUpToTheCapThenRefuses) {
  BufferPool pool(64 * 1024, 3, 1);
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
