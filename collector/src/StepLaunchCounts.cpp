#include "StepLaunchCounts.h"

namespace fuselens::collector {

StepLaunchCounts::StepLaunchCounts(std::size_t max_steps)
    // Default-initialised (not zeroed): a large log costs address space, not memory, until used.
    : log_(new Entry[max_steps == 0 ? 1 : max_steps]), capacity_(max_steps) {}

std::size_t StepLaunchCounts::claim(std::uint32_t id) noexcept {
  constexpr std::size_t kOther = kSlots - 1;
  if (id >= kMaxIds) return kOther;
  std::uint32_t mine = next_slot_.fetch_add(1, std::memory_order_relaxed);
  if (mine >= kOther) {
    mine = kOther;  // slots exhausted: "other" (its id stays 0)
  } else {
    slot_id_[mine].store(id, std::memory_order_relaxed);
  }
  std::uint8_t expected = 0;
  const auto wanted = static_cast<std::uint8_t>(mine + 1);
  // Another thread claimed this id first: use its slot (ours stays unused, its id unnamed).
  if (!slot_of_[id].compare_exchange_strong(expected, wanted, std::memory_order_acq_rel)) {
    if (mine != kOther) slot_id_[mine].store(kMaxIds, std::memory_order_relaxed);
    return static_cast<std::size_t>(expected - 1);
  }
  return mine;
}

std::array<std::uint64_t, StepLaunchCounts::kSlots> StepLaunchCounts::snapshot() const noexcept {
  std::array<std::uint64_t, kSlots> out{};
  for (std::size_t i = 0; i < kSlots; ++i) out[i] = totals_[i].load(std::memory_order_relaxed);
  return out;
}

void StepLaunchCounts::step_begins(std::uint64_t step, std::uint64_t now_ns) noexcept {
  seen_.fetch_add(1, std::memory_order_acq_rel);
  open_begin_ = snapshot();
  open_step_ = step;
  open_start_ns_ = now_ns;
  open_.store(true, std::memory_order_release);
}

void StepLaunchCounts::step_ends(std::uint64_t now_ns, bool traced) noexcept {
  if (!open_.load(std::memory_order_acquire)) return;
  const auto now = snapshot();
  const std::size_t i = stored_.load(std::memory_order_relaxed);
  if (i < capacity_) {
    Entry& e = log_[i];
    e.step = open_step_;
    e.start_ns = open_start_ns_;
    e.end_ns = now_ns;
    e.traced = traced;
    for (std::size_t s = 0; s < kSlots; ++s) e.calls[s] = now[s] - open_begin_[s];
    stored_.store(i + 1, std::memory_order_release);
  }
  open_.store(false, std::memory_order_release);
}

std::uint64_t StepLaunchCounts::steps_lost() const noexcept {
  const std::uint64_t seen = seen_.load(std::memory_order_acquire);
  const std::size_t stored = stored_.load(std::memory_order_acquire);
  const std::uint64_t kept =
      stored + (open_.load(std::memory_order_acquire) && stored < capacity_ ? 1 : 0);
  return seen > kept ? seen - kept : 0;
}

db::SamplingRecord StepLaunchCounts::record(
    std::uint32_t pid, std::uint32_t every, bool open_traced,
    const std::function<std::string(std::uint32_t)>& name) const {
  db::SamplingRecord out;
  out.pid = pid;
  out.every = every;
  out.steps = steps_seen();
  out.steps_lost = steps_lost();
  std::array<std::string, kSlots> names;
  for (std::size_t s = 0; s < kSlots; ++s) {
    const std::uint32_t id = slot_id_[s].load(std::memory_order_relaxed);
    names[s] = s == kSlots - 1 || id >= kMaxIds ? "other" : name(id);
  }
  auto add = [&](std::uint64_t step, std::uint64_t start, std::uint64_t end, bool traced,
                 const std::array<std::uint64_t, kSlots>& calls) {
    db::SampleStepRecord r{step, start, end, traced, {}};
    for (std::size_t s = 0; s < kSlots; ++s) {
      if (calls[s] == 0) continue;
      bool merged = false;  // two slots of one name ("other"): one row
      for (auto& [n, c] : r.calls) {
        if (n == names[s]) {
          c += calls[s];
          merged = true;
        }
      }
      if (!merged) r.calls.emplace_back(names[s], calls[s]);
    }
    out.step_rows.push_back(std::move(r));
  };
  const std::size_t n = stored_.load(std::memory_order_acquire);
  out.step_rows.reserve(n + 1);
  for (std::size_t i = 0; i < n; ++i) {
    add(log_[i].step, log_[i].start_ns, log_[i].end_ns, log_[i].traced, log_[i].calls);
  }
  if (open_.load(std::memory_order_acquire) && n < capacity_) {
    const auto now = snapshot();
    std::array<std::uint64_t, kSlots> calls{};
    for (std::size_t s = 0; s < kSlots; ++s) calls[s] = now[s] - open_begin_[s];
    add(open_step_, open_start_ns_, 0, open_traced, calls);
  }
  return out;
}

}  // namespace fuselens::collector
