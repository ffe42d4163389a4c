#pragma once
// CallbackHandlers: the handlers the collector's CUPTI callback walks (CallbackHandler.h), in a
// fixed array filled once at start. add() publishes each slot before the count that covers it,
// so on_callback() on any thread sees only complete slots; it takes no lock and allocates
// nothing: one acquire load and a virtual call per registered handler. Handlers are owned here
// and never removed.

#include <cupti.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <memory>

#include "CallbackHandler.h"

namespace fuselens::collector {

class CallbackHandlers {
 public:
  /// The most handlers registered (RangeProfiler, KernelArgs, and room to spare).
  static constexpr std::size_t kMaxHandlers = 4;

  CallbackHandlers() = default;
  CallbackHandlers(const CallbackHandlers&) = delete;
  CallbackHandlers& operator=(const CallbackHandlers&) = delete;

  /// Appends a started handler to the walk. Call from one thread, at start. Returns false (and
  /// logs) when kMaxHandlers are registered already; the handler is then dropped.
  bool add(std::unique_ptr<CallbackHandler> handler) noexcept;
  /// Handlers registered so far.
  std::size_t size() const noexcept { return count_.load(std::memory_order_acquire); }

  /// Passes one CUPTI callback to every handler, in registration order.
  void on_callback(CUpti_CallbackDomain domain, CUpti_CallbackId id,
                   const void* data) const noexcept {
    const std::size_t n = count_.load(std::memory_order_acquire);
    for (std::size_t i = 0; i < n; ++i) handlers_[i]->on_callback(domain, id, data);
  }
  /// CallbackHandler::finish() on every handler, in registration order.
  void finish() const noexcept;
  /// CallbackHandler::write_final(sink) on every handler, in registration order.
  void write_final(CaptureSink& sink) const noexcept;

 private:
  std::array<std::unique_ptr<CallbackHandler>, kMaxHandlers> handlers_;
  std::atomic<std::size_t> count_{0};  // handlers_[0, count_) are set and never change
};

}  // namespace fuselens::collector
