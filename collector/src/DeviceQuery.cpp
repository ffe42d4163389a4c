#include "DeviceQuery.h"
#include "DriverSymbols.h"

#include <cuda.h>
#include <dlfcn.h>
#include <link.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace fuselens::collector {
namespace {

// The driver entry points, found in the libcuda.so.1 that already loaded this library (the
// collector is injected by the driver), so the collector itself never links libcuda and
// prof-run can load it on a machine without a driver.
struct Driver {
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*get_name)(char*, int, CUdevice) = nullptr;
  CUresult (*get_uuid)(CUuuid*, CUdevice) = nullptr;
  CUresult (*total_mem)(std::size_t*, CUdevice) = nullptr;
  CUresult (*get_attribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*driver_version)(int*) = nullptr;

  Driver() {
    void* h = injected_libcuda();
    if (!h) return;
    load_driver_symbol(h, device_get, "cuDeviceGet");
    load_driver_symbol(h, get_name, "cuDeviceGetName");
    load_driver_symbol(h, get_uuid, "cuDeviceGetUuid_v2");
    load_driver_symbol(h, total_mem, "cuDeviceTotalMem_v2");
    load_driver_symbol(h, get_attribute, "cuDeviceGetAttribute");
    load_driver_symbol(h, driver_version, "cuDriverGetVersion");
  }
  bool ok() const {
    return device_get && get_name && get_uuid && total_mem && get_attribute && driver_version;
  }
};

const Driver& driver() {
  static const Driver d;
  return d;
}

int attribute(CUdevice device, CUdevice_attribute which) {
  int value = 0;
  return driver().get_attribute(&value, which, device) == CUDA_SUCCESS ? value : 0;
}

std::string uuid_string(const CUuuid& uuid) {
  char text[64];
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  std::snprintf(text, sizeof text,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return text;
}

int find_cudart(dl_phdr_info* info, std::size_t, void* data) {
  if (info->dlpi_name && std::strstr(info->dlpi_name, "libcudart.so")) {
    *static_cast<std::string*>(data) = info->dlpi_name;
    return 1;
  }
  return 0;
}

}  // namespace

db::DeviceInfo query_device(int ordinal) noexcept {
  db::DeviceInfo d;
  d.id = static_cast<std::uint32_t>(ordinal);
  const Driver& drv = driver();
  CUdevice device = 0;
  if (!drv.ok() || drv.device_get(&device, ordinal) != CUDA_SUCCESS) return d;
  char name[256] = {};
  if (drv.get_name(name, sizeof name, device) == CUDA_SUCCESS) d.name = name;
  CUuuid uuid{};
  if (drv.get_uuid(&uuid, device) == CUDA_SUCCESS) d.uuid = uuid_string(uuid);
  std::size_t bytes = 0;
  if (drv.total_mem(&bytes, device) == CUDA_SUCCESS) d.global_memory_bytes = bytes;
  d.cc_major = attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  d.cc_minor = attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  d.sm_count = attribute(device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  d.core_clock_khz = attribute(device, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  d.memory_clock_khz = attribute(device, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  d.memory_bus_width_bits = attribute(device, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  d.l2_cache_bytes = attribute(device, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  d.max_threads_per_sm = attribute(device, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  d.shared_memory_per_sm_bytes =
      attribute(device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  d.registers_per_sm = attribute(device, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  return d;
}

int driver_version() noexcept {
  int version = 0;
  return driver().ok() && driver().driver_version(&version) == CUDA_SUCCESS ? version : 0;
}

int runtime_version() noexcept {
  std::string path;
  dl_iterate_phdr(find_cudart, &path);
  if (path.empty()) return 0;
  void* handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (!handle) return 0;
  int version = 0;
  using Fn = int (*)(int*);
  if (auto fn = reinterpret_cast<Fn>(dlsym(handle, "cudaRuntimeGetVersion"))) {
    if (fn(&version) != 0) version = 0;
  }
  dlclose(handle);
  return version;
}

}  // namespace fuselens::collector
