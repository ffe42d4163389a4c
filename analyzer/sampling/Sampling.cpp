#include "sampling/Sampling.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "fuselens/db/Sampling.h"
#include "fuselens/db/Saturating.h"

namespace fuselens::analyzer {
namespace {

using db::saturating_add;

// 5400 -> "5,400"
std::string grouped(std::int64_t v) {
  std::string digits = std::to_string(v), out;
  const std::size_t n = digits.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0 && digits[i - 1] != '-') out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

std::optional<SamplingSummary> summarize_sampling(const db::Reader& reader) {
  const auto heads = db::sampling_rows(reader);
  if (heads.empty()) return std::nullopt;
  SamplingSummary s;
  s.every = heads.front().every;
  s.processes = static_cast<std::int64_t>(heads.size());
  for (const auto& h : heads) {
    if (h.every != s.every) s.mixed = true;
    s.steps_lost = saturating_add(s.steps_lost, h.steps_lost);
  }
  db::for_each_sample_step(reader, [&](const db::SampleStepRow& r) {
    // Steps of a process without a sampling row are not counted (heads are in pid order).
    const auto h =
        std::lower_bound(heads.begin(), heads.end(), r.pid,
                         [](const db::SamplingRow& a, std::int64_t pid) { return a.pid < pid; });
    if (h == heads.end() || h->pid != r.pid) return;
    ++s.steps;
    s.calls = saturating_add(s.calls, r.calls);
    if (!r.traced) return;
    ++s.traced_steps;
    s.traced_calls = saturating_add(s.traced_calls, r.calls);
    if (r.pid == heads.front().pid && s.first_traced.size() < 3 &&
        r.step < std::numeric_limits<std::int64_t>::max()) {
      s.first_traced.push_back(r.step + 1);
    }
  });
  if (s.traced_calls > 0) {
    s.scale = static_cast<double>(s.calls) / static_cast<double>(s.traced_calls);
  }
  return s;
}

std::string sampling_line(const SamplingSummary& s) {
  std::string out =
      s.mixed ? fmt::format("sampled: 1 step in {} or other N per process traced", s.every)
              : fmt::format("sampled: 1 step in {} traced", s.every);
  if (s.traced_steps == 0) {
    out += " (no step traced";
  } else {
    out += " (steps ";
    for (std::size_t i = 0; i < s.first_traced.size(); ++i) {
      out += (i ? ", " : "") + std::to_string(s.first_traced[i]);
    }
    if (s.traced_steps > static_cast<std::int64_t>(s.first_traced.size())) out += " …";
    out += fmt::format(": {} of {}", grouped(s.traced_steps), grouped(s.steps));
  }
  out += fmt::format("); launch counts of all {} steps from callbacks ({} launch calls",
                     grouped(s.steps), grouped(s.calls));
  if (s.scale > 0) {
    out +=
        fmt::format(", {} in the traced steps: counts × {:.2f})", grouped(s.traced_calls), s.scale);
  } else {
    out += ")";
  }
  if (s.steps_lost > 0) out += fmt::format("; {} steps not stored", grouped(s.steps_lost));
  if (s.processes > 1) out += fmt::format("; {} processes", s.processes);
  return out;
}

}  // namespace fuselens::analyzer
