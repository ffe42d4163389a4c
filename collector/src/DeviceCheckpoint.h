#pragma once
// DeviceCheckpoint: a context's device memory saved and put back between the passes of the
// collector's kernel replay (LaunchReplay.h), with CUPTI's checkpoint API (cupti_checkpoint.h:
// cuptiCheckpointSave saves the context's device and pinned memory, cuptiCheckpointRestore puts it
// back, cuptiCheckpointFree releases the copy). The copy goes to device memory while more than
// kReserveMB would stay free, else to host memory (slower), as the API's reserve fields say. One
// copy per profiled launch: saved at its entry, freed once its counters were read, so nothing is
// held between launches. The calls run inside an InternalCalls (their driver callbacks are the
// collector's, not the program's). The API is CUPTI's libcheckpoint.so (beside libcupti.so),
// loaded with dlopen on first use; without it save() fails with CUPTI_ERROR_NOT_SUPPORTED.

#include <cuda.h>
#include <cupti_checkpoint.h>

#include <cstddef>

namespace fuselens::collector {

class DeviceCheckpoint {
 public:
  /// Device (and host) memory the copy leaves free, in MiB.
  static constexpr std::size_t kReserveMB = 1024;

  DeviceCheckpoint() = default;
  ~DeviceCheckpoint() { release(); }
  DeviceCheckpoint(const DeviceCheckpoint&) = delete;
  DeviceCheckpoint& operator=(const DeviceCheckpoint&) = delete;

  /// True when CUPTI's libcheckpoint.so and the injecting libcuda's cuCtxSynchronize were found
  /// (loads them on the first call).
  static bool available() noexcept;
  /// Waits for the calling thread's current context (cuCtxSynchronize; `context` must be it) and
  /// saves `context`'s memory (a copy saved before is released first). CUPTI's result
  /// (CUPTI_ERROR_UNKNOWN when the synchronization fails); on failure nothing is held.
  CUptiResult save(CUcontext context) noexcept;
  /// Puts the saved memory back. CUPTI_ERROR_NOT_INITIALIZED when nothing is saved.
  CUptiResult restore() noexcept;
  /// Frees the copy (nothing when none is held).
  void release() noexcept;
  bool saved() const noexcept { return saved_; }

 private:
  NV::Cupti::Checkpoint::CUpti_Checkpoint handle_{};
  bool saved_ = false;
};

}  // namespace fuselens::collector
