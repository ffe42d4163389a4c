#pragma once
// Driver API entry points for the collector's own CUDA calls (DeviceQuery, L2Flush), looked up in
// the libcuda.so.1 that injected the collector: the collector never links libcuda, so prof-run
// can load it (check_collector_loads) on a machine without a driver.

#include <dlfcn.h>

namespace fuselens::collector {

/// The already-loaded libcuda.so.1 (dlopen with RTLD_NOLOAD), or nullptr when none is loaded.
inline void* injected_libcuda() noexcept { return dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD); }

/// Sets `fn` to the symbol `name` of `handle` (nullptr when absent).
template <typename Fn>
void load_driver_symbol(void* handle, Fn& fn, const char* name) noexcept {
  fn = reinterpret_cast<Fn>(dlsym(handle, name));
}

}  // namespace fuselens::collector
