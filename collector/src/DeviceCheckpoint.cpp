#include "DeviceCheckpoint.h"

#include <cupti.h>
#include <dlfcn.h>

#include <string>

#include "DriverSymbols.h"
#include "InternalCalls.h"

namespace fuselens::collector {
namespace {

using NV::Cupti::Checkpoint::CUpti_Checkpoint;  // CUpti_Checkpoint_STRUCT_SIZE names it unqualified

// The checkpoint API lives in CUPTI's libcheckpoint.so, not in libcupti.so: loaded on first use,
// from the library search path (the collector's RPATH, LD_LIBRARY_PATH) or else from the folder
// of the libcupti.so the collector uses (the toolkit's lib64).
struct Api {
  using Fn = CUptiResult (*)(CUpti_Checkpoint*);
  Fn save = nullptr, restore = nullptr, free = nullptr;
  CUresult (*synchronize)() = nullptr;  // the injecting libcuda's cuCtxSynchronize

  Api() {
    if (void* cuda = injected_libcuda()) load_driver_symbol(cuda, synchronize, "cuCtxSynchronize");
    void* h = dlopen("libcheckpoint.so", RTLD_NOW | RTLD_LOCAL);
    Dl_info info{};
    if (!h && dladdr(reinterpret_cast<void*>(&cuptiGetTimestamp), &info) && info.dli_fname) {
      std::string dir(info.dli_fname);
      dir.erase(dir.find_last_of('/') == std::string::npos ? 0 : dir.find_last_of('/') + 1);
      h = dlopen((dir + "libcheckpoint.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    }
    if (!h) return;
    save = reinterpret_cast<Fn>(dlsym(h, "cuptiCheckpointSave"));
    restore = reinterpret_cast<Fn>(dlsym(h, "cuptiCheckpointRestore"));
    free = reinterpret_cast<Fn>(dlsym(h, "cuptiCheckpointFree"));
    if (!save || !restore || !free || !synchronize) save = restore = free = nullptr;
  }
};

const Api& api() {
  static const Api a;
  return a;
}

}  // namespace

bool DeviceCheckpoint::available() noexcept { return api().save != nullptr; }

CUptiResult DeviceCheckpoint::save(CUcontext context) noexcept {
  release();
  if (!available()) return CUPTI_ERROR_NOT_SUPPORTED;
  handle_ = {};
  handle_.structSize = CUpti_Checkpoint_STRUCT_SIZE;
  handle_.ctx = context;
  handle_.reserveDeviceMB = kReserveMB;
  handle_.reserveHostMB = kReserveMB;
  const InternalCalls internal;
  // The program's work queued before the launch must have finished: its results are what is saved.
  if (api().synchronize() != CUDA_SUCCESS) return CUPTI_ERROR_UNKNOWN;
  const CUptiResult result = api().save(&handle_);
  if (result == CUPTI_SUCCESS) {
    saved_ = true;
  } else {
    api().free(&handle_);  // whatever the failed save set up
  }
  return result;
}

CUptiResult DeviceCheckpoint::restore() noexcept {
  if (!saved_) return CUPTI_ERROR_NOT_INITIALIZED;
  const InternalCalls internal;
  return api().restore(&handle_);
}

void DeviceCheckpoint::release() noexcept {
  if (!saved_) return;
  saved_ = false;
  const InternalCalls internal;
  api().free(&handle_);
}

}  // namespace fuselens::collector
