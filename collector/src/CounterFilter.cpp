#include "CounterFilter.h"

// cupti.h (via CounterFilter.h) brings generated_cuda_meta.h: the cuLaunch*_params structs.
#include <generated_nvtx_meta.h>
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include <algorithm>

#include "Log.h"
#include "NvtxEvent.h"
#include "fuselens/db/Writer.h"  // demangle, short_kernel_name

namespace fuselens::collector {
namespace {

// The launching thread's NVTX push/pop state (one LaunchFilter per process).
thread_local NvtxThreadState t_nvtx;

/// The CUfunction a launch call passes, or null for calls without one.
const void* function_of_call(CUpti_CallbackId id, const void* params) {
  if (!params) return nullptr;
  switch (id) {
#define FUSELENS_F(name)               \
  case CUPTI_DRIVER_TRACE_CBID_##name: \
    return static_cast<const name##_params*>(params)->f;
    FUSELENS_F(cuLaunchKernel)
    FUSELENS_F(cuLaunchKernel_ptsz)
    FUSELENS_F(cuLaunchKernelEx)
    FUSELENS_F(cuLaunchKernelEx_ptsz)
    FUSELENS_F(cuLaunchCooperativeKernel)
    FUSELENS_F(cuLaunchCooperativeKernel_ptsz)
    FUSELENS_F(cuLaunch)
    FUSELENS_F(cuLaunchGrid)
    FUSELENS_F(cuLaunchGridAsync)
#undef FUSELENS_F
    default:
      return nullptr;
  }
}

}  // namespace

CounterFilter::CounterFilter(const CollectorConfig& config) {
  if (config.filter.any()) {
    filter_ = std::make_unique<LaunchFilter>(config.filter);
    gated_ = true;
  }
  progress_ = config.progress.value_or(::isatty(STDERR_FILENO) == 1);
}

CounterFilter::~CounterFilter() = default;

bool CounterFilter::start(CUpti_SubscriberHandle subscriber) noexcept {
  if (!filter_ || !filter_->needs_nvtx()) return true;
  if (!subscriber || cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_NVTX) != CUPTI_SUCCESS) {
    log("counters: cannot observe NVTX ranges; no launch passes --nvtx-include");
    return false;
  }
  return true;
}

const CounterFilter::Function* CounterFilter::function_of(CUpti_CallbackId id,
                                                          const CUpti_CallbackData& cb) {
  const char* mangled = cb.symbolName ? cb.symbolName : "";
  auto make = [&](Function& f) {
    const std::string name = filter_ ? filter_->name_of(mangled) : std::string(mangled);
    f.name_ok = !filter_ || filter_->name_matches(name);
    if (progress_) {
      f.shown = progress_name(filter_ && filter_->spec().name_base == KernelNameBase::Function
                                  ? name
                                  : db::short_kernel_name(db::demangle(mangled)));
    }
  };
  const void* function = function_of_call(id, cb.functionParams);
  if (!function) {  // not cached: matched at every launch
    make(uncached_);
    return &uncached_;
  }
  auto [it, inserted] = functions_.try_emplace(function);
  if (inserted) make(it->second);
  return &it->second;
}

bool CounterFilter::decide(CUpti_CallbackId id, const CUpti_CallbackData& cb) noexcept {
  ++launches_;
  last_ = nullptr;
  if (!filter_ && !progress_) {
    ++profiled_;
    return true;
  }
  try {
    const Function* f = function_of(id, cb);
    if (filter_) {
      if (filter_->skipped_before_match() || !f->name_ok || !filter_->nvtx_matches(t_nvtx) ||
          !filter_->admit()) {
        return false;
      }
    }
    last_ = f;
    ++profiled_;
    return true;
  } catch (...) {  // bad_alloc caching a name: the launch runs unprofiled
    return false;
  }
}

void CounterFilter::print_progress(std::int64_t passes, bool application,
                                   std::uint32_t group) noexcept {
  if (!progress_ || !last_) return;
  char line[kProgressLine];
  const std::size_t n =
      format_progress_line(line, last_->shown, profiled_ - 1, passes, application, group);
  const ssize_t written = ::write(STDERR_FILENO, line, n);
  (void)written;
}

void CounterFilter::on_nvtx(CUpti_CallbackId id, const void* data) noexcept {
  if (!filter_ || !filter_->needs_nvtx()) return;
  const NvtxEvent e = decode_nvtx(id, data);
  LaunchFilter& f = *filter_;
  switch (e.kind) {
    case NvtxEvent::Kind::kPush:
      f.push(t_nvtx, e.domain, e.text);
      break;
    case NvtxEvent::Kind::kPop:
      f.pop(t_nvtx, e.domain);
      break;
    case NvtxEvent::Kind::kStart:
      f.range_start(e.domain, e.text, e.range_id);
      break;
    case NvtxEvent::Kind::kEnd:
      f.range_end(e.range_id);
      break;
    case NvtxEvent::Kind::kDomainCreate:
      f.domain_created(e.created, e.text);
      break;
    case NvtxEvent::Kind::kNone:
      break;
  }
}

void CounterFilter::log_summary() const noexcept {
  if (!filter_) return;
  log("counters: {} of {} kernel launches profiled ({} matched --kernel-name and the NVTX "
      "filters; --launch-skip {}, --launch-count {}){}",
      profiled_, launches_, filter_->matching(), filter_->spec().launch_skip,
      filter_->spec().launch_count == 0 ? std::string("unlimited")
                                        : std::to_string(filter_->spec().launch_count),
      filter_->nvtx_ranges_dropped() > 0 ? "; " + std::to_string(filter_->nvtx_ranges_dropped()) +
                                               " NVTX start/end ranges not followed (too many open)"
                                         : std::string());
}

}  // namespace fuselens::collector
