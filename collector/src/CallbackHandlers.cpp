#include "CallbackHandlers.h"

#include "Log.h"

namespace fuselens::collector {

bool CallbackHandlers::add(std::unique_ptr<CallbackHandler> handler) noexcept {
  const std::size_t n = count_.load(std::memory_order_relaxed);
  if (n == kMaxHandlers) {
    log("too many callback handlers: one is left out");
    return false;
  }
  handlers_[n] = std::move(handler);
  count_.store(n + 1, std::memory_order_release);  // publishes handlers_[n]
  return true;
}

void CallbackHandlers::finish() const noexcept {
  const std::size_t n = size();
  for (std::size_t i = 0; i < n; ++i) handlers_[i]->finish();
}

void CallbackHandlers::write_final(CaptureSink& sink) const noexcept {
  const std::size_t n = size();
  for (std::size_t i = 0; i < n; ++i) handlers_[i]->write_final(sink);
}

}  // namespace fuselens::collector
