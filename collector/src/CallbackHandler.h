#pragma once
// CallbackHandler: a part of the collector that acts on CUPTI callbacks (API entry and exit,
// resource events), such as the range profiler (RangeProfiler.h) and the kernel-argument capture
// (KernelArgs.h). The session (Collector.h) subscribes to CUPTI once, starts the handlers the
// configuration asks for and registers those that started in a small fixed array; its callback
// trampoline walks that array on every callback, in registration order. Registration happens
// once at start, so the walk takes no lock and allocates nothing.
//
// At the end of the process the session calls, in this order: finish() on every handler (before
// the final CUPTI flush, on the thread that shuts down), then write_final() on every handler on
// the capture's writer thread, after the last activity record was stored (CaptureSink.h).

#include <cupti.h>

namespace fuselens::collector {

class CaptureSink;

class CallbackHandler {
 public:
  virtual ~CallbackHandler();

  /// One CUPTI callback, as the subscriber received it (`data` is never null: a
  /// CUpti_CallbackData for API domains, a CUpti_ResourceData for the resource domain). Runs on
  /// the program's threads, on the launch path: must not block, throw or log per call.
  virtual void on_callback(CUpti_CallbackDomain domain, CUpti_CallbackId id,
                           const void* data) noexcept = 0;
  /// Stops acting on callbacks and stores what the handler writes itself. Called once, before
  /// the collector's final flush of the activity buffers.
  virtual void finish() noexcept = 0;
  /// Hands the handler's end-of-process records to `sink` (whose writer thread calls this, after
  /// every activity record, only while the sink still stores). Nothing by default.
  virtual void write_final(CaptureSink& sink) noexcept;

 protected:
  CallbackHandler() = default;
  CallbackHandler(const CallbackHandler&) = delete;
  CallbackHandler& operator=(const CallbackHandler&) = delete;
};

}  // namespace fuselens::collector
