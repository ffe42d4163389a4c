// libfuselens_cupti_floor.so: the measurement floor for launch overhead, i.e. what CUPTI's kernel
// activity alone costs, with no other collection. Loaded by the CUDA driver as an injection library:
//
//   CUDA_INJECTION64_PATH=/path/libfuselens_cupti_floor.so ./launch_overhead
//
// InitializeInjection (the only exported symbol) registers activity-buffer callbacks that hand out
// 8 MiB buffers, enables ONLY CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, and registers an atexit handler that
// forces a flush (cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)) and prints
//   [cupti-floor] kernel records: N
// to stderr (plus "[cupti-floor] dropped records: D" when CUPTI dropped any).
//
// FUSELENS_FLOOR_EXTRA (a comma-separated list of memcpy, memset, synchronization) also enables
// those activity kinds: the floor of FuseLens's `--trace cuda` group, to tell CUPTI's own cost of
// those kinds from the collector's (docs/BENCHMARKS.md, launch overhead). Completed buffers are
// walked with cuptiActivityGetNextRecord, kernel records counted, the buffer freed. CUPTI errors are
// logged and collection degrades; the host program is never aborted.

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

static_assert(kBufferBytes % kRecordAlignment == 0, "aligned_alloc needs a multiple of the alignment");

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

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
    *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(kRecordAlignment, kBufferBytes));
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

}  // namespace

/// Called by the CUDA driver at cuInit when this library is named by CUDA_INJECTION64_PATH.
/// Returns 1 (also on repeated calls); on a CUPTI failure logs it and returns 0 (no collection).
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
    if (g_initialized.exchange(true)) {
        return 1;
    }
    if (!FLOOR_CUPTI_OK(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed))) {
        return 0;
    }
    if (!FLOOR_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL))) {
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
            if (std::strstr(extra, k.name) != nullptr &&
                FLOOR_CUPTI_OK(cuptiActivityEnable(k.kind))) {
                std::fprintf(stderr, "[cupti-floor] also enabled: %s\n", k.name);
            }
        }
    }
    if (std::atexit(flush_and_report) != 0) {
        std::fprintf(stderr, "[cupti-floor] atexit registration failed; no report at exit\n");
    }
    return 1;
}
