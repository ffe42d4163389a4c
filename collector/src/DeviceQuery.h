#pragma once
// Device and version facts the collector records once per process: device properties through
// the CUDA driver API (cuDeviceGetAttribute), and the CUDA runtime version of whichever
// libcudart the process loaded (found with dl_iterate_phdr; 0 when none is loaded, e.g. a
// program linking the runtime statically).

#include "fuselens/db/Records.h"

namespace fuselens::collector {

/// Properties of CUDA device `ordinal`; empty name when the driver could not be queried.
db::DeviceInfo query_device(int ordinal) noexcept;
/// cuDriverGetVersion(), 0 on failure.
int driver_version() noexcept;
/// cudaRuntimeGetVersion() of the loaded libcudart, 0 when none is loaded.
int runtime_version() noexcept;

}  // namespace fuselens::collector
