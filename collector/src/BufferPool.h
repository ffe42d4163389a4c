#pragma once
// BufferPool: fixed-size activity buffers handed to CUPTI, at most `max_buffers` alive at once.
//
// acquire() returns a free buffer, allocating a new one only while fewer than the cap exist;
// when all are in use it counts a refusal and hands out one of `overflow` buffers allocated up
// front, whose records the collector counts and discards (is_overflow): CUPTI given no buffer
// drops records without counting them all (on the H100, 1M launches into a 2 x 64 KiB pool kept
// 6,190 kernels and cuptiActivityGetNumDroppedRecords reported 0), so the drops are counted on
// the collector's side, exactly, as long as an overflow buffer is free when CUPTI asks; only when
// those are in flight too does acquire() return nullptr. release() puts a buffer back. The lock is
// held only around the free lists, never across a CUPTI call.
// Memory bound: (max_buffers + overflow) * buffer_bytes.

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace fuselens::collector {

class BufferPool {
 public:
  static constexpr std::size_t kAlignment = 8;  // CUPTI's required activity buffer alignment

  static constexpr std::size_t kOverflowBuffers = 2;

  BufferPool(std::size_t buffer_bytes, std::size_t max_buffers, std::size_t preallocate,
             std::size_t overflow = kOverflowBuffers);
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  std::uint8_t* acquire() noexcept;
  void release(std::uint8_t* buffer) noexcept;

  /// True for the overflow buffers: their records are to be counted as dropped, not stored.
  bool is_overflow(const std::uint8_t* buffer) const noexcept;
  std::size_t buffer_bytes() const { return buffer_bytes_; }
  std::uint64_t allocated() const;
  std::uint64_t refusals() const;  ///< times the pool was full (an overflow buffer or none given)
  std::uint64_t acquisitions() const;

 private:
  const std::size_t buffer_bytes_;
  const std::size_t max_buffers_;
  mutable std::mutex mutex_;
  std::vector<std::uint8_t*> free_;
  std::vector<std::uint8_t*> all_;
  std::vector<std::uint8_t*> overflow_all_;  // fixed after construction: read without the lock
  std::vector<std::uint8_t*> overflow_free_;
  std::uint64_t refusals_ = 0;
  std::uint64_t acquisitions_ = 0;
};

}  // namespace fuselens::collector
