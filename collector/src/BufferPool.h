#pragma once
// BufferPool: fixed-size activity buffers handed to CUPTI, at most `max_buffers` alive at once.
//
// acquire() returns a free buffer, allocating a new one only while fewer than the cap exist;
// when all are in use it returns nullptr and counts a refusal (CUPTI then drops the records it
// could not store and reports them through cuptiActivityGetNumDroppedRecords). release() puts a
// buffer back. The lock is held only around the free list, never across a CUPTI call.
// Memory bound: max_buffers * buffer_bytes.

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace fuselens::collector {

class BufferPool {
 public:
  static constexpr std::size_t kAlignment = 8;  // CUPTI's required activity buffer alignment

  BufferPool(std::size_t buffer_bytes, std::size_t max_buffers, std::size_t preallocate);
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  std::uint8_t* acquire() noexcept;
  void release(std::uint8_t* buffer) noexcept;

  std::size_t buffer_bytes() const { return buffer_bytes_; }
  std::uint64_t allocated() const;
  std::uint64_t refusals() const;
  std::uint64_t acquisitions() const;

 private:
  const std::size_t buffer_bytes_;
  const std::size_t max_buffers_;
  mutable std::mutex mutex_;
  std::vector<std::uint8_t*> free_;
  std::vector<std::uint8_t*> all_;
  std::uint64_t refusals_ = 0;
  std::uint64_t acquisitions_ = 0;
};

}  // namespace fuselens::collector
