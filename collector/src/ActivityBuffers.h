#pragma once
// ActivityBuffers: the CUPTI activity buffers of the process (after libkineto's
// CuptiActivityApi). CUPTI asks for an empty buffer (buffer-requested) and hands it back full
// (buffer-completed) through two C callbacks; those are thin static trampolines into the member
// functions on_buffer_requested() and on_buffer_completed() of the one instance that called
// start(), so tests drive the members directly, with no GPU.
//
// Buffers come from a capped BufferPool (BufferPool.h): buffer_bytes each, at most max_buffers
// alive, plus BufferPool::kOverflowBuffers handed out when the pool is full. A completed buffer
// with records goes to the CaptureSink, which gives it back with release() once its records are
// stored; an empty one goes straight back. Records that cannot be kept are counted, never stored:
// those CUPTI reports dropped (cuptiActivityGetNumDroppedRecords for the buffer's context and
// stream; a null context names CUPTI's global queue, where the kernel records go) and those CUPTI
// wrote into an overflow buffer (counted by kind: kernels, API calls, the rest). Collection never
// stops the program: with every buffer in flight CUPTI is given none and drops what it must.
//
// Threads: the callbacks run on CUPTI's threads and on whichever thread calls flush(); the pool
// takes its lock only around its free lists, and no lock of ours is held across a CUPTI call.

#include <cupti.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "BufferPool.h"

namespace fuselens::collector {

class CaptureSink;

class ActivityBuffers {
 public:
  /// Preallocates two buffers of `buffer_bytes` (and the overflow buffers); at most
  /// `max_buffers` are ever allocated.
  ActivityBuffers(std::size_t buffer_bytes, std::size_t max_buffers);
  ActivityBuffers(const ActivityBuffers&) = delete;
  ActivityBuffers& operator=(const ActivityBuffers&) = delete;

  /// Sends completed buffers with records to `sink` from now on (which must outlive this).
  /// Call before start(), or before driving the callbacks directly.
  void attach(CaptureSink& sink) noexcept { sink_ = &sink; }
  /// Registers the buffer callbacks with CUPTI (cuptiActivityRegisterCallbacks); attach() first.
  /// Returns false (and logs CUPTI's error) when CUPTI refuses. One instance per process
  /// registers; it must outlive CUPTI's use of the callbacks (the collector never destroys it).
  bool start() noexcept;
  /// Asks CUPTI for every completed buffer (cuptiActivityFlushAll); `forced` also takes the
  /// buffers still being filled. CUPTI calls on_buffer_completed() from inside: never call this
  /// holding a lock that the sink's handle_buffer() takes.
  static void flush(bool forced) noexcept;

  /// buffer-requested: a pool buffer and its size in bytes, or null and 0 when every buffer is
  /// in flight; `max_records` 0 (as many as fit).
  void on_buffer_requested(std::uint8_t** buffer, std::size_t* size,
                           std::size_t* max_records) noexcept;
  /// buffer-completed: counts `cupti_dropped` (CUPTI's drop count for the buffer's context and
  /// stream), then hands `buffer`'s `valid_size` bytes of records to the sink, or counts them by
  /// kind when it is an overflow buffer, or takes back an empty one. `buffer` may be null.
  void on_buffer_completed(std::uint8_t* buffer, std::size_t valid_size,
                           std::size_t cupti_dropped) noexcept;
  /// Takes back a buffer handed to the sink.
  void release(std::uint8_t* buffer) noexcept { pool_.release(buffer); }

  /// Records not kept: CUPTI's drop counts plus every record of the overflow buffers.
  std::uint64_t dropped_records() const noexcept;
  /// Buffers handed to CUPTI from the pool (BufferPool::acquisitions).
  std::uint64_t buffers_used() const { return pool_.acquisitions(); }
  /// Logs the pool's refusals and the records dropped by kind, when the pool was ever full.
  void log_overflow() const;

 private:
  static void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size,
                                        std::size_t* max_records);
  static void CUPTIAPI buffer_completed(CUcontext context, std::uint32_t stream_id,
                                        std::uint8_t* buffer, std::size_t size,
                                        std::size_t valid_size);

  BufferPool pool_;
  const std::size_t max_buffers_;
  CaptureSink* sink_ = nullptr;  // set by attach(), before CUPTI can call back
  std::atomic<std::uint64_t> cupti_dropped_{0};
  // Records CUPTI wrote into the pool's overflow buffers (pool full): counted, not stored.
  std::atomic<std::uint64_t> overflow_kernels_{0}, overflow_api_{0}, overflow_other_{0};
};

}  // namespace fuselens::collector
