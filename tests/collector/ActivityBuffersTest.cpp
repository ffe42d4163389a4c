// ActivityBuffers (collector/src/ActivityBuffers.h): the members behind CUPTI's buffer callbacks,
// driven directly as CUPTI would call them: buffers from the capped pool, completed ones to the
// sink or back to the pool, drop counts. No GPU and no CUPTI call on these paths.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>

#include "ActivityBuffers.h"
#include "FakeCaptureSink.h"

using fuselens::collector::ActivityBuffers;

namespace {

using RecordingSink = fuselens::collector::test::FakeCaptureSink;

struct Requested {
  std::uint8_t* buffer = nullptr;
  std::size_t size = 1, max_records = 1;
};

Requested request(ActivityBuffers& buffers) {
  Requested r;
  buffers.on_buffer_requested(&r.buffer, &r.size, &r.max_records);
  return r;
}

}  // namespace

TEST(ActivityBuffers, HandsOutPoolBuffersUpToTheCapThenOverflowBuffersThenNone) {
  ActivityBuffers buffers(4096, 2);
  for (int i = 0; i < 2; ++i) {
    const Requested r = request(buffers);
    ASSERT_NE(r.buffer, nullptr);
    EXPECT_EQ(r.size, 4096u);
    EXPECT_EQ(r.max_records, 0u);  // as many records as fit
  }
  EXPECT_EQ(buffers.buffers_used(), 2u);
  // The pool is full: the overflow buffers (BufferPool::kOverflowBuffers), not counted as used.
  for (std::size_t i = 0; i < fuselens::collector::BufferPool::kOverflowBuffers; ++i) {
    const Requested r = request(buffers);
    ASSERT_NE(r.buffer, nullptr);
    EXPECT_EQ(r.size, 4096u);
  }
  EXPECT_EQ(buffers.buffers_used(), 2u);
  const Requested none = request(buffers);
  EXPECT_EQ(none.buffer, nullptr);
  EXPECT_EQ(none.size, 0u);
  EXPECT_EQ(none.max_records, 0u);
}

TEST(ActivityBuffers, SendsBuffersWithRecordsToTheSinkAndTakesEmptyOnesBack) {
  ActivityBuffers buffers(4096, 2);
  RecordingSink sink;
  buffers.attach(sink);
  std::uint8_t* full = request(buffers).buffer;
  std::uint8_t* empty = request(buffers).buffer;
  buffers.on_buffer_completed(full, 128, 0);
  buffers.on_buffer_completed(empty, 0, 0);
  ASSERT_EQ(sink.buffers.size(), 1u);
  EXPECT_EQ(sink.buffers[0].first, full);
  EXPECT_EQ(sink.buffers[0].second, 128u);
  // The empty buffer is free again; the one with records stays with the sink until released.
  EXPECT_EQ(request(buffers).buffer, empty);
  buffers.release(full);
  EXPECT_EQ(request(buffers).buffer, full);
  EXPECT_EQ(buffers.dropped_records(), 0u);
}

TEST(ActivityBuffers, CountsTheDropsCuptiReportsWithOrWithoutABuffer) {
  ActivityBuffers buffers(4096, 1);
  RecordingSink sink;
  buffers.attach(sink);
  buffers.on_buffer_completed(nullptr, 0,
                              5);  // CUPTI reports drops of a queue it had no buffer for
  std::uint8_t* b = request(buffers).buffer;
  buffers.on_buffer_completed(b, 64, 2);
  EXPECT_EQ(buffers.dropped_records(), 7u);
  EXPECT_EQ(sink.buffers.size(), 1u);
}

TEST(ActivityBuffers, NeverSendsAnOverflowBufferToTheSink) {
  ActivityBuffers buffers(4096, 1);
  RecordingSink sink;
  buffers.attach(sink);
  std::uint8_t* pooled = request(buffers).buffer;
  std::uint8_t* overflow = request(buffers).buffer;  // the pool is full
  ASSERT_NE(overflow, nullptr);
  ASSERT_NE(overflow, pooled);
  buffers.on_buffer_completed(overflow, 0, 0);
  EXPECT_TRUE(sink.buffers.empty());
  EXPECT_EQ(request(buffers).buffer, overflow);  // back on the overflow list
  EXPECT_EQ(buffers.dropped_records(), 0u);
}
