// libfuselens_cupti_floor.so: the measurement floor for launch overhead, i.e. what CUPTI's kernel
// activity alone costs, with no other collection. Loaded by the CUDA driver as an injection
// library:
//
//   CUDA_INJECTION64_PATH=/path/libfuselens_cupti_floor.so ./launch_overhead
//
// InitializeInjection (the only exported symbol) registers activity-buffer callbacks that hand out
// 8 MiB buffers, enables ONLY CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, and registers an atexit
// handler that forces a flush (cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)) and prints
//   [cupti-floor] kernel records: N
// to stderr (plus "[cupti-floor] dropped records: D" when CUPTI dropped any).
//
// FUSELENS_FLOOR_EXTRA (a comma-separated list of memcpy, memset, synchronization) also enables
// those activity kinds: the floor of FuseLens's `--trace cuda` group, to tell CUPTI's own cost of
// those kinds from the collector's (docs/BENCHMARKS.md, launch overhead). FUSELENS_FLOOR_ATTRS (a
// comma-separated list of pinned, zeroed, devbuf32m) sets CUPTI activity attributes before
// anything is enabled, to measure whether they lower the floor: pinned =
// CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED 1 (CUPTI's per-context profiling buffers in
// page-locked host memory instead of device memory), zeroed =
// CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER 1 with calloc'd buffers (CUPTI then does not zero
// each buffer in the launching thread), devbuf32m = CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE 32 MiB
// (fewer device-buffer switches). FUSELENS_FLOOR_PROFILER_API=1 records kernels only between
// cudaProfilerStart and cudaProfilerStop (cuProfilerStart/Stop callbacks switch the kernel kind on
// and off, where prof-run --capture-range cudaProfilerApi switches the collector), so that one
// process can alternate blocks with and without the floor (mlp_train.py --ab-block). Completed
// buffers are walked with cuptiActivityGetNextRecord, kernel records counted, the buffer freed.
// CUPTI errors are logged and collection degrades; the host program is never aborted.

#include <cupti.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

constexpr std::size_t kBufferBytes = std::size_t{8} << 20;  // 8 MiB per activity buffer
constexpr std::size_t kRecordAlignment = ACTIVITY_RECORD_ALIGNMENT;

static_assert(kBufferBytes % kRecordAlignment == 0,
              "aligned_alloc needs a multiple of the alignment");

std::atomic<std::uint64_t> g_kernel_records{0};
std::atomic<std::uint64_t> g_dropped_records{0};
std::atomic<bool> g_initialized{false};

bool cupti_ok(CUptiResult result, const char* call_text) {
  if (result == CUPTI_SUCCESS) {
    return true;
  }
  const char* message = nullptr;
  if (cuptiGetResultString(result, &message) != CUPTI_SUCCESS || message == nullptr) {
    message = "unknown CUPTI error";
  }
  std::fprintf(stderr, "[cupti-floor] CUPTI error: %s in %s\n", message, call_text);
  return false;
}

#define FLOOR_CUPTI_OK(call) cupti_ok((call), #call)

std::atomic<bool> g_zeroed_buffers{false};  // FUSELENS_FLOOR_ATTRS=zeroed

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(kRecordAlignment, kBufferBytes));
  if (*buffer != nullptr && g_zeroed_buffers.load(std::memory_order_relaxed)) {
    std::memset(*buffer, 0, kBufferBytes);
  }
  *size = *buffer != nullptr ? kBufferBytes : 0;  // size 0: CUPTI drops records, counted below
  *max_records = 0;                               // fill the buffer
}

void CUPTIAPI buffer_completed(CUcontext context, std::uint32_t stream_id, std::uint8_t* buffer,
                               std::size_t /*size*/, std::size_t valid_size) {
  std::uint64_t kernels = 0;
  CUpti_Activity* record = nullptr;
  CUptiResult status = CUPTI_SUCCESS;
  while ((status = cuptiActivityGetNextRecord(buffer, valid_size, &record)) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      ++kernels;
    }
  }
  if (status != CUPTI_ERROR_MAX_LIMIT_REACHED) {
    cupti_ok(status, "cuptiActivityGetNextRecord");
  }
  g_kernel_records.fetch_add(kernels, std::memory_order_relaxed);

  std::size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS) {
    g_dropped_records.fetch_add(dropped, std::memory_order_relaxed);
  }
  std::free(buffer);
}

void flush_and_report() {
  FLOOR_CUPTI_OK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  std::fprintf(stderr, "[cupti-floor] kernel records: %llu\n",
               static_cast<unsigned long long>(g_kernel_records.load()));
  if (const std::uint64_t dropped = g_dropped_records.load(); dropped > 0) {
    std::fprintf(stderr, "[cupti-floor] dropped records: %llu\n",
                 static_cast<unsigned long long>(dropped));
  }
}

// FUSELENS_FLOOR_ATTRS: the CUPTI activity attributes named in `attrs` (see the file comment).
void set_attributes(const char* attrs) {
  if (std::strstr(attrs, "pinned") != nullptr) {
    std::uint8_t on = 1;
    std::size_t bytes = sizeof on;
    if (FLOOR_CUPTI_OK(cuptiActivitySetAttribute(
            CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED, &bytes, &on))) {
      std::fprintf(stderr, "[cupti-floor] attribute: pinned\n");
    }
  }
  if (std::strstr(attrs, "zeroed") != nullptr) {
    std::uint8_t on = 1;
    std::size_t bytes = sizeof on;
    if (FLOOR_CUPTI_OK(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER,
                                                 &bytes, &on))) {
      g_zeroed_buffers.store(true);
      std::fprintf(stderr, "[cupti-floor] attribute: zeroed\n");
    }
  }
  if (std::strstr(attrs, "devbuf32m") != nullptr) {
    std::size_t value = std::size_t{32} << 20;
    std::size_t bytes = sizeof value;
    if (FLOOR_CUPTI_OK(
            cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &bytes, &value))) {
      std::fprintf(stderr, "[cupti-floor] attribute: devbuf32m\n");
    }
  }
}

// FUSELENS_FLOOR_PROFILER_API=1: the kernel kind on from cuProfilerStart's exit to
// cuProfilerStop's entry, as CaptureControl opens and closes a cudaProfilerApi window.
void CUPTIAPI on_profiler_api(void* /*userdata*/, CUpti_CallbackDomain domain,
                              CUpti_CallbackId cbid, const void* data) {
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API || data == nullptr) return;
  const auto& call = *static_cast<const CUpti_CallbackData*>(data);
  if (cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart && call.callbackSite == CUPTI_API_EXIT) {
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  } else if (cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop &&
             call.callbackSite == CUPTI_API_ENTER) {
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  }
}

bool enable_profiler_api_switch() {
  CUpti_SubscriberHandle subscriber = nullptr;
  return FLOOR_CUPTI_OK(cuptiSubscribe(&subscriber, on_profiler_api, nullptr)) &&
         FLOOR_CUPTI_OK(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                                            CUPTI_DRIVER_TRACE_CBID_cuProfilerStart)) &&
         FLOOR_CUPTI_OK(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                                            CUPTI_DRIVER_TRACE_CBID_cuProfilerStop));
}

}  // namespace

/// Called by the CUDA driver at cuInit when this library is named by CUDA_INJECTION64_PATH.
/// Returns 1 (also on repeated calls); on a CUPTI failure logs it and returns 0 (no collection).
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  if (g_initialized.exchange(true)) {
    return 1;
  }
  if (const char* attrs = std::getenv("FUSELENS_FLOOR_ATTRS"); attrs != nullptr) {
    set_attributes(attrs);
  }
  if (!FLOOR_CUPTI_OK(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed))) {
    return 0;
  }
  const char* profiler_api = std::getenv("FUSELENS_FLOOR_PROFILER_API");
  if (profiler_api != nullptr && std::strcmp(profiler_api, "1") == 0) {
    if (!enable_profiler_api_switch()) return 0;
    std::fprintf(stderr, "[cupti-floor] kernels between cudaProfilerStart and Stop only\n");
  } else if (!FLOOR_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL))) {
    return 0;
  }
  if (const char* extra = std::getenv("FUSELENS_FLOOR_EXTRA"); extra != nullptr) {
    const struct {
      const char* name;
      CUpti_ActivityKind kind;
    } kinds[] = {{"memcpy", CUPTI_ACTIVITY_KIND_MEMCPY},
                 {"memset", CUPTI_ACTIVITY_KIND_MEMSET},
                 {"synchronization", CUPTI_ACTIVITY_KIND_SYNCHRONIZATION}};
    for (const auto& k : kinds) {
      if (std::strstr(extra, k.name) != nullptr && FLOOR_CUPTI_OK(cuptiActivityEnable(k.kind))) {
        std::fprintf(stderr, "[cupti-floor] also enabled: %s\n", k.name);
      }
    }
  }
  if (std::atexit(flush_and_report) != 0) {
    std::fprintf(stderr, "[cupti-floor] atexit registration failed; no report at exit\n");
  }
  return 1;
}
