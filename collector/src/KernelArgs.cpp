#include "KernelArgs.h"

#include <dlfcn.h>

// cupti.h (via KernelArgs.h) brings generated_cuda_meta.h: the cuLaunchKernel*_params structs.

#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "CaptureSink.h"
#include "Log.h"

namespace fuselens::collector {
namespace {

struct Row {
  std::uint32_t correlation;
  std::uint32_t index;
  std::uint64_t value;
};

constexpr int kCacheSlots = 64;  // direct-mapped, per thread

/// One thread's rows and layout cache; written only by its thread.
struct ThreadArgs {
  struct Slot {
    void* function = nullptr;
    ParamLayout layout;
  };
  Slot cache[kCacheSlots];
  std::vector<Row> rows;
  std::uint64_t dropped = 0;
  std::uint64_t launches = 0, without_layout = 0;  // launches read; those with no parameter info
  std::uint32_t last_correlation = 0;
  bool recorded_any = false;
};

using FuncParamInfo = CUresult (*)(CUfunction, std::size_t, std::size_t*, std::size_t*);
using KernelParamInfo = CUresult (*)(CUkernel, std::size_t, std::size_t*, std::size_t*);

}  // namespace

/// What a KernelArgs keeps; made by start().
struct KernelArgsState {
  FuncParamInfo func_info = nullptr;
  KernelParamInfo kernel_info = nullptr;
  std::mutex mutex;  // guards threads (taken once per thread, and by write_final)
  std::vector<std::unique_ptr<ThreadArgs>> threads;
};

namespace {

using State = KernelArgsState;

ThreadArgs& this_thread(State& state) {
  thread_local ThreadArgs* mine = nullptr;  // one KernelArgs records per process (KernelArgs.h)
  if (!mine) {
    auto created = std::make_unique<ThreadArgs>();
    created->rows.reserve(4096);
    std::lock_guard lock(state.mutex);
    state.threads.push_back(std::move(created));
    mine = state.threads.back().get();
  }
  return *mine;
}

int slot_of(const void* function) {
  const auto bits = reinterpret_cast<std::uintptr_t>(function) >> 4;
  return static_cast<int>((static_cast<std::uint64_t>(bits) * 0x9E3779B97F4A7C15ull) >> 58);
}

const ParamLayout& layout_of(ThreadArgs& t, const State& s, void* function) {
  ThreadArgs::Slot& slot = t.cache[slot_of(function)];
  if (slot.function != function) {
    ParamLayout layout;
    if (s.func_info) {
      layout = probe_layout([&](std::size_t i, std::size_t* offset, std::size_t* size) {
        return s.func_info(static_cast<CUfunction>(function), i, offset, size) == CUDA_SUCCESS;
      });
    }
    // The runtime may launch a CUkernel handle through cuLaunchKernel: cuFuncGetParamInfo
    // refuses it (or the kernel has no parameters).
    if (layout.params == 0 && s.kernel_info) {
      layout = probe_layout([&](std::size_t i, std::size_t* offset, std::size_t* size) {
        return s.kernel_info(static_cast<CUkernel>(function), i, offset, size) == CUDA_SUCCESS;
      });
    }
    slot.function = function;
    slot.layout = layout;
  }
  return slot.layout;
}

struct Launch {
  void* function = nullptr;
  void* const* params = nullptr;
  void* const* extra = nullptr;
};

template <typename Params>
Launch launch_of(const void* params) {
  const auto* p = static_cast<const Params*>(params);
  return {static_cast<void*>(p->f), p->kernelParams, p->extra};
}

bool decode(CUpti_CallbackId id, const void* params, Launch& out) {
  switch (id) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
      out = launch_of<cuLaunchKernel_params>(params);
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
      out = launch_of<cuLaunchKernel_ptsz_params>(params);
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
      out = launch_of<cuLaunchKernelEx_params>(params);
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
      out = launch_of<cuLaunchKernelEx_ptsz_params>(params);
      return true;
    default:
      return false;
  }
}

constexpr CUpti_CallbackId kLaunchCallbacks[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz};

}  // namespace

int read_args(const ParamLayout& layout, void* const* kernel_params, void* const* extra,
              std::uint64_t* values, std::uint8_t* indexes) noexcept {
  const char* buffer = nullptr;
  std::size_t buffer_size = 0;
  if (!kernel_params && extra) {
    for (int i = 0; i < 8 && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
      if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
        buffer = static_cast<const char*>(extra[i + 1]);
      } else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1]) {
        buffer_size = *static_cast<const std::size_t*>(extra[i + 1]);
      }
    }
  }
  int n = 0;
  for (int k = 0; k < layout.count; ++k) {
    std::uint64_t value = 0;
    if (kernel_params) {
      const void* p = kernel_params[layout.index[k]];
      if (!p) continue;
      std::memcpy(&value, p, sizeof value);
    } else if (buffer && std::size_t{layout.offset[k]} + sizeof value <= buffer_size) {
      std::memcpy(&value, buffer + layout.offset[k], sizeof value);
    } else {
      continue;
    }
    if (value < kMinPointer) continue;
    values[n] = value;
    indexes[n] = layout.index[k];
    ++n;
  }
  return n;
}

KernelArgs::KernelArgs(std::uint32_t pid) : pid_(pid) {}

KernelArgs::~KernelArgs() = default;

bool KernelArgs::start(CUpti_SubscriberHandle subscriber) noexcept {
  try {
    if (state_) return true;
    if (!subscriber) {
      log("no CUPTI callback subscription: kernel arguments will not be recorded");
      return false;
    }
    auto state = std::make_unique<State>();
    if (void* cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD)) {
      state->func_info = reinterpret_cast<FuncParamInfo>(dlsym(cuda, "cuFuncGetParamInfo"));
      state->kernel_info = reinterpret_cast<KernelParamInfo>(dlsym(cuda, "cuKernelGetParamInfo"));
    }
    if (!state->func_info && !state->kernel_info) {
      log("the CUDA driver has no cuFuncGetParamInfo (CUDA 12.4+): kernel arguments will not be "
          "recorded");
      return false;
    }
    int enabled = 0;
    for (const CUpti_CallbackId id : kLaunchCallbacks) {
      if (cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id) == CUPTI_SUCCESS) {
        ++enabled;
      }
    }
    if (enabled == 0) {
      log("cannot subscribe to kernel launches: kernel arguments will not be recorded");
      return false;
    }
    state_ = std::move(state);
    recording_.store(true);
    return true;
  } catch (...) {
    log("kernel arguments: start failed; not recorded");
    return false;
  }
}

void KernelArgs::on_callback(CUpti_CallbackDomain domain, CUpti_CallbackId id,
                             const void* data) noexcept {
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API || !recording_.load(std::memory_order_relaxed)) return;
  const auto& cb = *static_cast<const CUpti_CallbackData*>(data);
  Launch launch;
  if (cb.callbackSite != CUPTI_API_ENTER || !cb.functionParams ||
      !decode(id, cb.functionParams, launch) || !launch.function) {
    return;
  }
  try {
    State& state = *state_;
    ThreadArgs& t = this_thread(state);
    // One launch call seen twice (a launch entry point forwarding to another): keep the first.
    if (t.recorded_any && t.last_correlation == cb.correlationId) return;
    t.recorded_any = true;
    t.last_correlation = cb.correlationId;
    const ParamLayout& layout = layout_of(t, state, launch.function);
    ++t.launches;
    if (layout.params == 0) ++t.without_layout;
    if (layout.count == 0) return;
    std::uint64_t values[kMaxKernelParams];
    std::uint8_t indexes[kMaxKernelParams];
    const int n = read_args(layout, launch.params, launch.extra, values, indexes);
    if (t.rows.size() + static_cast<std::size_t>(n) > kMaxRowsPerThread) {
      t.dropped += static_cast<std::uint64_t>(n);
      return;
    }
    for (int i = 0; i < n; ++i) t.rows.push_back({cb.correlationId, indexes[i], values[i]});
  } catch (...) {
  }
}

void KernelArgs::finish() noexcept { recording_.store(false); }

void KernelArgs::write_final(CaptureSink& sink) noexcept {
  State* state = state_.get();
  if (!state) return;
  try {
    std::lock_guard lock(state->mutex);
    std::uint64_t dropped = 0, written = 0, launches = 0, without_layout = 0;
    std::vector<db::KernelArgRecord> chunk;
    constexpr std::size_t kChunk = 1 << 16;
    chunk.reserve(kChunk);
    for (const auto& t : state->threads) {
      dropped += t->dropped;
      launches += t->launches;
      without_layout += t->without_layout;
      for (const Row& r : t->rows) {
        chunk.push_back({pid_, r.correlation, r.index, r.value});
        if (chunk.size() == kChunk) {
          sink.handle_kernel_args(chunk);
          written += chunk.size();
          chunk.clear();
        }
      }
    }
    sink.handle_kernel_args(chunk);
    written += chunk.size();
    if (without_layout > 0) {
      log("kernel arguments: {} of {} launches had no parameters, or none that "
          "cuFuncGetParamInfo / cuKernelGetParamInfo would describe",
          without_layout, launches);
    }
    if (dropped > 0) {
      log("kernel arguments: {} values kept, {} dropped (more than {} per thread)", written,
          dropped, kMaxRowsPerThread);
    }
  } catch (const std::exception& e) {
    log("cannot record kernel arguments: {}", e.what());
  } catch (...) {
  }
}

}  // namespace fuselens::collector
