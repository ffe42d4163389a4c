#include "ActivityBuffers.h"

#include "CaptureSink.h"
#include "CuptiCheck.h"
#include "Log.h"

namespace fuselens::collector {
namespace {

// The instance whose buffers CUPTI uses: CUPTI's buffer callbacks carry no user data. Set once by
// start(); never destroyed (CUPTI may call back while static destructors run).
std::atomic<ActivityBuffers*> g_buffers{nullptr};

}  // namespace

ActivityBuffers::ActivityBuffers(std::size_t buffer_bytes, std::size_t max_buffers)
    : pool_(buffer_bytes, max_buffers, 2), max_buffers_(max_buffers) {}

bool ActivityBuffers::start() noexcept {
  g_buffers.store(this);
  return FUSELENS_CUPTI_OK(cuptiActivityRegisterCallbacks(&buffer_requested, &buffer_completed));
}

void ActivityBuffers::flush(bool forced) noexcept {
  cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

void CUPTIAPI ActivityBuffers::buffer_requested(std::uint8_t** buffer, std::size_t* size,
                                                std::size_t* max_records) {
  if (ActivityBuffers* self = g_buffers.load()) {
    self->on_buffer_requested(buffer, size, max_records);
  } else {
    *buffer = nullptr;
    *size = 0;
    *max_records = 0;
  }
}

void CUPTIAPI ActivityBuffers::buffer_completed(CUcontext context, std::uint32_t stream_id,
                                                std::uint8_t* buffer, std::size_t,
                                                std::size_t valid_size) {
  ActivityBuffers* self = g_buffers.load();
  if (!self) return;
  // A null context names CUPTI's global queue, where the kernel records of current CUPTI
  // versions go: skipping it (as this did) missed every drop of a full pool (H100, 1M launches).
  std::size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) != CUPTI_SUCCESS) {
    dropped = 0;
  }
  self->on_buffer_completed(buffer, valid_size, dropped);
}

void ActivityBuffers::on_buffer_requested(std::uint8_t** buffer, std::size_t* size,
                                          std::size_t* max_records) noexcept {
  *buffer = pool_.acquire();
  *size = *buffer ? pool_.buffer_bytes() : 0;
  *max_records = 0;
}

void ActivityBuffers::on_buffer_completed(std::uint8_t* buffer, std::size_t valid_size,
                                          std::size_t cupti_dropped) noexcept {
  cupti_dropped_ += cupti_dropped;
  if (!buffer) return;
  if (pool_.is_overflow(buffer)) {
    // The pool was full when CUPTI asked for this buffer: count its records as dropped.
    CUpti_Activity* record = nullptr;
    std::uint64_t kernels = 0, api = 0, other = 0;
    while (valid_size > 0 &&
           cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
      switch (record->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
          ++kernels;
          break;
        case CUPTI_ACTIVITY_KIND_RUNTIME:
        case CUPTI_ACTIVITY_KIND_DRIVER:
          ++api;
          break;
        default:
          ++other;
      }
    }
    overflow_kernels_ += kernels;
    overflow_api_ += api;
    overflow_other_ += other;
    pool_.release(buffer);
    return;
  }
  if (valid_size == 0 || !sink_) {
    pool_.release(buffer);
    return;
  }
  sink_->handle_buffer(buffer, valid_size);
}

std::uint64_t ActivityBuffers::dropped_records() const noexcept {
  return cupti_dropped_.load() + overflow_kernels_.load() + overflow_api_.load() +
         overflow_other_.load();
}

void ActivityBuffers::log_overflow() const {
  if (pool_.refusals() > 0) {
    log("the activity buffer pool ({} x {} KiB) was full {} times; records dropped: {} kernel, "
        "{} API, {} other (counted in the overflow buffers), {} more reported by CUPTI",
        max_buffers_, pool_.buffer_bytes() / 1024, pool_.refusals(), overflow_kernels_.load(),
        overflow_api_.load(), overflow_other_.load(), cupti_dropped_.load());
  }
}

}  // namespace fuselens::collector
