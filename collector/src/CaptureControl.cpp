#include "CaptureControl.h"

#include <generated_nvtx_meta.h>
#include <nvtx3/nvToolsExt.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <string_view>
#include <vector>

#include "CaptureSink.h"
#include "ExitGuard.h"
#include "Log.h"
#include "NvtxEvent.h"
#include "fuselens/db/Instrumentation.h"

namespace fuselens::collector {
namespace {

// Per thread: the NVTX push depth (all domains) and, per depth up to 64, whether that push
// opened the capture-range window / began a step (and whether the step was active).
struct ThreadRanges {
  std::uint32_t depth = 0;
  std::uint64_t opened = 0;       // bit d: the push at depth d opened the window
  std::uint64_t step = 0;         // bit d: the push at depth d began a step
  std::uint64_t step_active = 0;  // bit d: ... an active one
  std::uint64_t step_position = 0;
  std::uint32_t steps_open = 0;  // step ranges open on this thread
};
thread_local ThreadRanges t_ranges;

std::uint64_t this_thread_id() { return static_cast<std::uint64_t>(::syscall(SYS_gettid)); }

std::uint64_t cupti_now() {
  std::uint64_t t = 0;
  cuptiGetTimestamp(&t);
  return t;
}

std::uint64_t utc_now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

constexpr std::string_view kDefaultStepPatterns[] = {"ProfilerStep#*", "*step*", "*iteration*"};

}  // namespace

CaptureControl::CaptureControl(const CollectorConfig& config, Switch& target, std::uint32_t pid)
    : config_(config), target_(target), pid_(pid) {
  switch (config_.capture_range.kind) {
    case CaptureRange::Kind::Nvtx:
      reason_ = "nvtx:" + config_.capture_range.name;
      if (!config_.capture_range.domain.empty()) reason_ += "@" + config_.capture_range.domain;
      break;
    case CaptureRange::Kind::ProfilerApi:
      reason_ = "cudaProfilerApi";
      break;
    case CaptureRange::Kind::None:
      reason_ = config_.steps ? "steps" : "time";
      break;
  }
  if (config_.sample_every > 0) {
    // One step in N: the steps schedule N-1:0:1, repeated to the end (step k traced when
    // k % N == N - 1, 0-based), and every step's launch calls counted.
    config_.steps = StepSchedule{config_.sample_every - 1, 0, 1, 0};
    reason_ = "sample 1/" + std::to_string(config_.sample_every);
    counts_ = std::make_unique<StepLaunchCounts>();
  }
}

CaptureControl::~CaptureControl() { finish(); }

bool CaptureControl::records_at_start() const noexcept {
  return !config_.steps && config_.capture_range.kind == CaptureRange::Kind::None &&
         config_.delay_ms == 0;
}

bool CaptureControl::start(CUpti_SubscriberHandle subscriber) noexcept {
  const bool nvtx = config_.steps || config_.capture_range.kind == CaptureRange::Kind::Nvtx;
  if (nvtx &&
      (!subscriber || cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_NVTX) != CUPTI_SUCCESS)) {
    log("capture control: cannot observe NVTX ranges; nothing will be recorded");
    return false;
  }
  if (config_.capture_range.kind == CaptureRange::Kind::ProfilerApi) {
    if (!subscriber ||
        cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                            CUPTI_DRIVER_TRACE_CBID_cuProfilerStart) != CUPTI_SUCCESS ||
        cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                            CUPTI_DRIVER_TRACE_CBID_cuProfilerStop) != CUPTI_SUCCESS) {
      log("capture control: cannot observe cudaProfilerStart/Stop; nothing will be recorded");
      return false;
    }
  }
  if (counts_) {
    // The launch calls, counted on every step traced or not (their callbacks stay on while
    // recording is off: counts_callback). The same prefixes as the calling contexts' selection.
    constexpr std::string_view kCounted[] = {"cuLaunch", "cuGraphLaunch", "cuMemcpy", "cuMemset"};
    int enabled = 0;
    for (CUpti_CallbackId id = 1; id < CUPTI_DRIVER_TRACE_CBID_SIZE && id < counted_.size(); ++id) {
      const char* name = nullptr;
      if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, id, &name) != CUPTI_SUCCESS || !name) {
        continue;
      }
      const std::string_view n(name);
      bool wanted = false;
      for (const auto prefix : kCounted) wanted = wanted || n.substr(0, prefix.size()) == prefix;
      if (wanted && subscriber &&
          cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id) == CUPTI_SUCCESS) {
        counted_[id] = true;
        ++enabled;
      }
    }
    if (enabled == 0) log("sampling: cannot count launch calls; the steps' counts will be 0");
  }
  if (records_at_start()) {
    open();
  } else if (config_.delay_ms > 0) {
    try {
      timer_ = std::thread([this] { timer_loop(); });
    } catch (...) {
      log("capture control: cannot start the timer; nothing will be recorded");
      return false;
    }
  }
  if (config_.duration_ms > 0 && records_at_start()) {
    try {
      timer_ = std::thread([this] { timer_loop(); });
    } catch (...) {
      log("capture control: cannot start the timer; recording to the end");
    }
  }
  return true;
}

void CaptureControl::timer_loop() noexcept {
  ExitGuard::add_own_thread(::pthread_self());  // a fatal signal here must not wait on a flush
  ::pthread_setname_np(::pthread_self(), "fuselens-timer");
  const std::uint64_t t0 = config_.start_utc_ns != 0 ? config_.start_utc_ns : utc_now_ns();
  auto wait_until = [&](std::uint64_t utc_ns) {  // false: stopped
    std::unique_lock lock(timer_mutex_);
    const std::uint64_t now = utc_now_ns();
    const auto left = std::chrono::nanoseconds(utc_ns > now ? utc_ns - now : 0);
    return !timer_wake_.wait_for(lock, left, [&] { return timer_stop_; });
  };
  const std::uint64_t open_at = t0 + config_.delay_ms * 1'000'000ull;
  if (config_.delay_ms > 0) {
    if (!wait_until(open_at)) return;
    open();
  }
  if (config_.duration_ms > 0) {
    const std::uint64_t from = config_.delay_ms > 0 ? open_at : t0;
    if (!wait_until(from + config_.duration_ms * 1'000'000ull)) return;
    close();
  }
}

void CaptureControl::open() noexcept {
  if (finished_.load()) return;
  const std::uint32_t limit = config_.capture_range_windows;
  if (config_.capture_range.kind != CaptureRange::Kind::None && limit != 0 &&
      windows_opened_.load() >= limit) {
    return;
  }
  int off = 0;
  if (!state_.compare_exchange_strong(off, 2)) return;  // on, or another thread switching
  windows_opened_.fetch_add(1);
  const std::size_t i = window_count_.load();
  if (i < kMaxWindows) {
    windows_[i].start_ns.store(cupti_now());
    windows_[i].end_ns.store(0);
    window_count_.store(i + 1, std::memory_order_release);
  } else {
    windows_lost_.fetch_add(1);
  }
  target_.set_recording(true);
  state_.store(1);
}

void CaptureControl::close() noexcept {
  int on = 1;
  if (!state_.compare_exchange_strong(on, 2)) return;
  target_.set_recording(false);
  const std::size_t n = window_count_.load();
  if (n > 0 && windows_[n - 1].end_ns.load() == 0) windows_[n - 1].end_ns.store(cupti_now());
  state_.store(0);
}

bool CaptureControl::capture_range_matches(const void* domain, bool named_domain,
                                           const char* message) const noexcept {
  if (config_.capture_range.kind != CaptureRange::Kind::Nvtx || !message) return false;
  const std::string& want = config_.capture_range.domain;
  if (want.empty()) {
    if (named_domain && domain) return false;  // the default domain only
  } else if (want != "*") {
    if (!named_domain || !domain) return false;
    bool found = false;
    const std::size_t n = domain_count_.load(std::memory_order_acquire);
    for (std::size_t i = 0; i < n && !found; ++i) {
      found =
          domain_handles_[i].load(std::memory_order_relaxed) == domain && domain_names_[i] == want;
    }
    if (!found) return false;
  }
  return config_.capture_range.name == message;
}

bool CaptureControl::step_matches(const char* message) noexcept {
  if (!config_.steps || !message) return false;
  const std::string_view text(message);
  // FuseLens's own module ranges ("fuselens:module:fwd:model.step_fn") are never steps.
  if (fuselens::db::is_fuselens_instrumentation(text)) return false;
  if (!config_.step_range.empty()) return glob_match_nocase(config_.step_range, text);
  // The default patterns: the first range matching one of them locks the pattern it matches
  // first, as `prof-analyze steps` uses the first pattern that matches anything.
  int locked = step_pattern_.load(std::memory_order_relaxed);
  if (locked >= 0) return glob_match_nocase(kDefaultStepPatterns[locked], text);
  for (int i = 0; i < 3; ++i) {
    if (glob_match_nocase(kDefaultStepPatterns[i], text)) {
      int none = -1;
      step_pattern_.compare_exchange_strong(none, i);
      return step_pattern_.load() == i;
    }
  }
  return false;
}

bool CaptureControl::step_begins() noexcept {
  const StepSchedule& s = *config_.steps;
  const std::uint64_t cycle = std::uint64_t{s.wait} + s.warmup + s.active;
  const std::uint64_t k = steps_seen_.fetch_add(1);
  t_ranges.step_position = k;
  if (counts_) counts_->step_begins(k, cupti_now());
  if (s.repeat != 0 && k / cycle >= s.repeat) return false;
  const bool active = k % cycle >= std::uint64_t{s.wait} + s.warmup;
  if (active) open();
  return active;
}

void CaptureControl::step_ends(bool active, std::uint64_t position) noexcept {
  const StepSchedule& s = *config_.steps;
  const std::uint64_t cycle = std::uint64_t{s.wait} + s.warmup + s.active;
  if (counts_) counts_->step_ends(cupti_now(), active);
  if (active && position % cycle == cycle - 1) close();  // the cycle's last active step
}

void CaptureControl::on_push(const void* domain, bool named_domain, const char* message) noexcept {
  ThreadRanges& t = t_ranges;
  const std::uint32_t d = t.depth++;
  if (d >= 64) return;
  const std::uint64_t bit = 1ull << d;
  t.opened &= ~bit;
  t.step &= ~bit;
  t.step_active &= ~bit;
  if (capture_range_matches(domain, named_domain, message) && state_.load() == 0) {
    open();
    if (state_.load() == 1) t.opened |= bit;
  }
  if (t.steps_open == 0 && step_matches(message)) {
    std::uint64_t owner = 0;
    const std::uint64_t me = this_thread_id();
    if (step_thread_.compare_exchange_strong(owner, me) || owner == me) {
      t.step |= bit;
      ++t.steps_open;
      if (step_begins()) t.step_active |= bit;
    }
  }
}

void CaptureControl::on_pop() noexcept {
  ThreadRanges& t = t_ranges;
  if (t.depth == 0) return;  // a pop without a push we saw
  const std::uint32_t d = --t.depth;
  if (d >= 64) return;
  const std::uint64_t bit = 1ull << d;
  if (t.opened & bit) {
    t.opened &= ~bit;
    close();
  }
  if (t.step & bit) {
    t.step &= ~bit;
    --t.steps_open;
    step_ends((t.step_active & bit) != 0, t.step_position);
    t.step_active &= ~bit;
  }
}

void CaptureControl::on_start(const void* domain, bool named_domain, const char* message,
                              std::uint64_t range_id) noexcept {
  if (range_id == 0 || !capture_range_matches(domain, named_domain, message)) return;
  if (state_.load() != 0) return;
  open();
  if (state_.load() == 1) open_range_id_.store(range_id);
}

void CaptureControl::on_end(std::uint64_t range_id) noexcept {
  std::uint64_t expected = range_id;
  if (range_id != 0 && open_range_id_.compare_exchange_strong(expected, 0)) close();
}

void CaptureControl::on_nvtx(CUpti_CallbackId id, const void* data) noexcept {
  const NvtxEvent e = decode_nvtx(id, data);
  switch (e.kind) {
    case NvtxEvent::Kind::kPush:
      on_push(e.domain, e.named_domain, e.text);
      break;
    case NvtxEvent::Kind::kPop:
      on_pop();
      break;
    case NvtxEvent::Kind::kStart:
      on_start(e.domain, e.named_domain, e.text, e.range_id);
      break;
    case NvtxEvent::Kind::kEnd:
      on_end(e.range_id);
      break;
    case NvtxEvent::Kind::kDomainCreate: {
      const std::size_t i = domain_count_.load();
      if (i >= kMaxDomains) break;  // more domains than we track: their ranges never match
      try {
        domain_names_[i] = e.text;  // domain creation is rare and off the launch path
      } catch (...) {
        break;
      }
      domain_handles_[i].store(e.created, std::memory_order_relaxed);
      domain_count_.store(i + 1, std::memory_order_release);
      break;
    }
    case NvtxEvent::Kind::kNone:
      break;
  }
}

void CaptureControl::on_callback(CUpti_CallbackDomain domain, CUpti_CallbackId id,
                                 const void* data) noexcept {
  if (finished_.load(std::memory_order_relaxed)) return;
  if (domain == CUPTI_CB_DOMAIN_NVTX) {
    on_nvtx(id, data);
    return;
  }
  if (counts_ && domain == CUPTI_CB_DOMAIN_DRIVER_API && id < counted_.size() && counted_[id]) {
    // --sample: the launch path between traced steps; one relaxed atomic add.
    if (static_cast<const CUpti_CallbackData*>(data)->callbackSite == CUPTI_API_ENTER) {
      counts_->count(id);
    }
    return;
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API &&
      config_.capture_range.kind == CaptureRange::Kind::ProfilerApi) {
    const auto& call = *static_cast<const CUpti_CallbackData*>(data);
    // Open before cuProfilerStart's work, close after cuProfilerStop's.
    if (id == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart && call.callbackSite == CUPTI_API_EXIT) {
      open();
    } else if (id == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop &&
               call.callbackSite == CUPTI_API_ENTER) {
      close();
    }
  }
}

bool CaptureControl::counts_callback(CUpti_CallbackDomain domain,
                                     CUpti_CallbackId id) const noexcept {
  return counts_ && domain == CUPTI_CB_DOMAIN_DRIVER_API && id < counted_.size() && counted_[id];
}

bool CaptureControl::keeps(std::uint64_t start_ns) const noexcept {
  const std::size_t n = std::min(window_count_.load(std::memory_order_acquire), kMaxWindows);
  for (std::size_t i = n; i-- > 0;) {  // the latest windows first: records arrive in time order
    const std::uint64_t start = windows_[i].start_ns.load(std::memory_order_relaxed);
    const std::uint64_t end = windows_[i].end_ns.load(std::memory_order_relaxed);
    if (start_ns >= start && (end == 0 || start_ns < end)) return true;
    if (start_ns >= start) return false;  // after this window's end, before the next one
  }
  return windows_lost_.load() > 0;  // beyond the log: keep rather than lose
}

void CaptureControl::finish() noexcept {
  if (finished_.exchange(true)) return;
  {
    std::lock_guard lock(timer_mutex_);
    timer_stop_ = true;
  }
  timer_wake_.notify_all();
  if (timer_.joinable() && !::pthread_equal(timer_.native_handle(), ::pthread_self())) {
    timer_.join();
  }
}

void CaptureControl::write_final(CaptureSink& sink) noexcept {
  try {
    std::vector<db::CaptureWindowRecord> rows;
    const std::size_t n = window_count_.load();
    rows.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      rows.push_back({pid_, windows_[i].start_ns.load(), windows_[i].end_ns.load(), reason_});
    }
    sink.handle_capture_windows(rows);
    if (windows_lost_.load() > 0) {
      log("capture control: {} windows beyond the first {} were recorded but not listed",
          windows_lost_.load(), kMaxWindows);
    }
    if (n == 0) log("capture control: no window opened; nothing was recorded");
    if (counts_) {
      const auto name = [](std::uint32_t id) {
        const char* text = nullptr;
        if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, id, &text) != CUPTI_SUCCESS || !text) {
          return "callback " + std::to_string(id);
        }
        return std::string(text);
      };
      const auto sampling = counts_->record(pid_, config_.sample_every, state_.load() == 1, name);
      sink.handle_sampling(sampling);
      if (sampling.steps_lost > 0) {
        log("sampling: {} steps beyond the first {} were counted but not stored",
            sampling.steps_lost, StepLaunchCounts::kMaxSteps);
      }
    }
  } catch (const std::exception& e) {
    log("capture control: cannot store the windows: {}", e.what());
  }
}

}  // namespace fuselens::collector
