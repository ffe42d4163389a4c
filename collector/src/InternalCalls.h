#pragma once
// InternalCalls: marks the driver calls the collector makes itself on a program's thread (the L2
// flush of application replay, RangeProfiler.h), so that the CUPTI callback they trigger is
// ignored: no calling context, kernel arguments or counters for the collector's own work.

namespace fuselens::collector {

class InternalCalls {
 public:
  /// Marks this thread's driver calls as the collector's own until destruction.
  InternalCalls() noexcept;
  ~InternalCalls();
  InternalCalls(const InternalCalls&) = delete;
  InternalCalls& operator=(const InternalCalls&) = delete;

  /// True on a thread while an InternalCalls lives on it.
  static bool active() noexcept;
};

}  // namespace fuselens::collector
