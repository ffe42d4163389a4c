#include "BufferPool.h"

#include <cstdlib>

namespace fuselens::collector {
namespace {

std::uint8_t* allocate(std::size_t bytes) noexcept {
  void* p = nullptr;
  if (::posix_memalign(&p, BufferPool::kAlignment, bytes) != 0) return nullptr;
  return static_cast<std::uint8_t*>(p);
}

}  // namespace

BufferPool::BufferPool(std::size_t buffer_bytes, std::size_t max_buffers, std::size_t preallocate,
                       std::size_t overflow)
    : buffer_bytes_(buffer_bytes), max_buffers_(max_buffers) {
  overflow_all_.reserve(overflow);
  overflow_free_.reserve(overflow);
  for (std::size_t i = 0; i < overflow; ++i) {
    if (auto* b = allocate(buffer_bytes)) {
      overflow_all_.push_back(b);
      overflow_free_.push_back(b);
    }
  }
  free_.reserve(max_buffers);
  all_.reserve(max_buffers);
  for (std::size_t i = 0; i < preallocate && i < max_buffers; ++i) {
    if (auto* b = allocate(buffer_bytes)) {
      all_.push_back(b);
      free_.push_back(b);
    }
  }
}

BufferPool::~BufferPool() {
  for (auto* b : all_) std::free(b);
  for (auto* b : overflow_all_) std::free(b);
}

bool BufferPool::is_overflow(const std::uint8_t* buffer) const noexcept {
  for (const auto* b : overflow_all_) {
    if (b == buffer) return true;
  }
  return false;
}

std::uint8_t* BufferPool::acquire() noexcept {
  std::lock_guard lock(mutex_);
  if (!free_.empty()) {
    auto* b = free_.back();
    free_.pop_back();
    ++acquisitions_;
    return b;
  }
  if (all_.size() < max_buffers_) {
    if (auto* b = allocate(buffer_bytes_)) {
      all_.push_back(b);  // capacity reserved up front: no reallocation here
      ++acquisitions_;
      return b;
    }
  }
  ++refusals_;
  if (!overflow_free_.empty()) {
    auto* b = overflow_free_.back();
    overflow_free_.pop_back();
    return b;
  }
  return nullptr;
}

void BufferPool::release(std::uint8_t* buffer) noexcept {
  if (buffer == nullptr) return;
  const bool overflow = is_overflow(buffer);
  std::lock_guard lock(mutex_);
  (overflow ? overflow_free_ : free_).push_back(buffer);  // never exceeds the reserved capacity
}

std::uint64_t BufferPool::allocated() const {
  std::lock_guard lock(mutex_);
  return all_.size();
}

std::uint64_t BufferPool::refusals() const {
  std::lock_guard lock(mutex_);
  return refusals_;
}

std::uint64_t BufferPool::acquisitions() const {
  std::lock_guard lock(mutex_);
  return acquisitions_;
}

}  // namespace fuselens::collector
