#pragma once
// StepLaunchCounts: the launch calls of every step of a sampled run (prof-run --sample 1/N;
// docs/capture-control.md, "Sampled tracing"), counted from CUPTI's API callbacks whether the
// step is traced or not, so that a sampled capture still knows how many launches each step made.
//
// The launch path (count) is one relaxed atomic add on a counter shared by every thread of the
// process, indexed through a per-callback-id slot table: no allocation, no lock, no CUPTI call,
// no clock read. The first call of an API function claims its slot with one compare-and-swap.
// Step boundaries (step_begins / step_ends) are called by the one thread whose NVTX step ranges
// count (CaptureControl): they snapshot the counters into a step log allocated once at start
// (kMaxSteps entries of plain memory, touched only as steps arrive). A step's count is the
// launch calls of every thread made between its range's push and pop, as `prof-analyze steps`
// projects work onto steps (docs/steps.md).
//
// No CUPTI here: CaptureControl feeds it callback ids, and tests feed it synthetic ones.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "fuselens/db/Records.h"

namespace fuselens::collector {

class StepLaunchCounts {
 public:
  /// Distinct API functions counted apart per process; the rest share the last slot, named
  /// "other" (a PyTorch step calls 2-4: cuLaunchKernel, cuMemcpyAsync, cuMemsetD32Async ...).
  static constexpr std::size_t kSlots = 16;
  /// Callback ids counted apart are below this (CUPTI's driver ids are below 1,000 in CUDA 13);
  /// larger ids count as "other".
  static constexpr std::size_t kMaxIds = 2048;
  /// Steps stored; later steps are counted in steps_lost() only.
  static constexpr std::size_t kMaxSteps = std::size_t{1} << 18;

  /// Allocates the step log (max_steps entries; tests pass fewer). Throws std::bad_alloc.
  explicit StepLaunchCounts(std::size_t max_steps = kMaxSteps);

  /// A launch call with callback id `id` entered (any thread). Never blocks or allocates.
  void count(std::uint32_t id) noexcept {
    const std::size_t slot = id < kMaxIds ? slot_of_[id].load(std::memory_order_relaxed) : 0;
    totals_[slot == 0 ? claim(id) : slot - 1].fetch_add(1, std::memory_order_relaxed);
  }

  /// The step thread: step `step` (0-based) begins at `now_ns` (CUPTI ns).
  void step_begins(std::uint64_t step, std::uint64_t now_ns) noexcept;
  /// The step thread: the step begun last ends at `now_ns`; `traced`: activity was on in it.
  /// Without an open step, nothing happens.
  void step_ends(std::uint64_t now_ns, bool traced) noexcept;

  /// Steps begun so far, and those not stored (beyond max_steps).
  std::uint64_t steps_seen() const noexcept { return seen_.load(std::memory_order_acquire); }
  std::uint64_t steps_lost() const noexcept;

  /// The rows to store at exit (call when no step boundary runs any more; a step still open is
  /// stored with end 0 and its calls so far, traced as `open_traced`). `name(id)` names an API
  /// function by its callback id.
  db::SamplingRecord record(std::uint32_t pid, std::uint32_t every, bool open_traced,
                            const std::function<std::string(std::uint32_t)>& name) const;

 private:
  struct Entry {  // plain: written by the step thread before `stored_` publishes it
    std::uint64_t step, start_ns, end_ns;
    bool traced;
    std::array<std::uint64_t, kSlots> calls;
  };
  std::size_t claim(std::uint32_t id) noexcept;
  std::array<std::uint64_t, kSlots> snapshot() const noexcept;

  std::array<std::atomic<std::uint8_t>, kMaxIds> slot_of_{};  // slot + 1; 0: not yet claimed
  std::array<std::atomic<std::uint32_t>, kSlots> slot_id_{};  // the id each slot counts
  std::atomic<std::uint32_t> next_slot_{0};
  std::array<std::atomic<std::uint64_t>, kSlots> totals_{};

  std::unique_ptr<Entry[]> log_;
  std::size_t capacity_;
  std::atomic<std::size_t> stored_{0};  // entries [0, stored_) complete
  std::atomic<std::uint64_t> seen_{0};
  // The open step (step thread; published by open_)
  std::atomic<bool> open_{false};
  std::uint64_t open_step_ = 0, open_start_ns_ = 0;
  std::array<std::uint64_t, kSlots> open_begin_{};
};

}  // namespace fuselens::collector
