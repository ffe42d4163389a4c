#include "fuselens/db/Sampling.h"

#include <limits>
#include <optional>

#include "fuselens/db/Cursor.h"
#include "fuselens/db/Saturating.h"

namespace fuselens::db {
namespace {

constexpr std::int64_t kMaxEvery = 1'000'000;

bool has_sampling(const Reader& reader) {
  return reader.has_table("sampling") && reader.has_table("sample_step") &&
         reader.has_table("sample_step_api");
}

bool time_ok(std::int64_t t) { return t >= 0 && t < kMaxTimestampNs; }

}  // namespace

std::vector<SamplingRow> sampling_rows(const Reader& reader) {
  std::vector<SamplingRow> out;
  if (!has_sampling(reader)) return out;
  auto s = reader.prepare(
      "SELECT pid, every, steps, steps_lost FROM sampling WHERE typeof(pid) = 'integer' AND "
      "typeof(every) = 'integer' AND typeof(steps) = 'integer' AND typeof(steps_lost) = "
      "'integer' ORDER BY pid");
  while (s.step()) {
    SamplingRow r{s.int64(0), s.int64(1), s.int64(2), s.int64(3)};
    if (r.pid < 0 || r.every < 1 || r.every > kMaxEvery || r.steps < 0 || r.steps_lost < 0 ||
        r.steps_lost > r.steps) {
      continue;
    }
    out.push_back(r);
  }
  return out;
}

void for_each_sample_step(const Reader& reader,
                          const std::function<void(const SampleStepRow&)>& visit) {
  if (!has_sampling(reader)) return;
  // The sum in SQL could overflow (an error in SQLite): summed here, saturating.
  auto s = reader.prepare(
      "SELECT t.pid, t.step, t.start_ns, t.end_ns, t.traced, a.calls FROM sample_step t "
      "LEFT JOIN sample_step_api a ON a.pid = t.pid AND a.step = t.step "
      "WHERE typeof(t.pid) = 'integer' AND typeof(t.step) = 'integer' AND typeof(t.start_ns) = "
      "'integer' AND (t.end_ns IS NULL OR typeof(t.end_ns) = 'integer') "
      "ORDER BY t.pid, t.step");
  std::optional<SampleStepRow> current;
  while (s.step()) {
    const std::int64_t pid = s.int64(0), step = s.int64(1), start = s.int64(2);
    const std::int64_t end = s.is_null(3) ? -1 : s.int64(3);
    if (pid < 0 || step < 0 || !time_ok(start) || (end != -1 && (!time_ok(end) || end < start))) {
      continue;
    }
    const std::int64_t calls = s.is_null(5) ? 0 : s.int64(5);  // a text count reads as 0
    if (!current || current->pid != pid || current->step != step) {
      if (current) visit(*current);
      current = SampleStepRow{pid, step, start, end, !s.is_null(4) && s.int64(4) != 0, 0};
    }
    if (calls > 0) current->calls = saturating_add(current->calls, calls);
  }
  if (current) visit(*current);
}

std::vector<SampleStepRow> sample_step_rows(const Reader& reader) {
  std::vector<SampleStepRow> out;
  for_each_sample_step(reader, [&out](const SampleStepRow& r) { out.push_back(r); });
  return out;
}

std::vector<SampleStepApiRow> sample_step_api_rows(const Reader& reader) {
  std::vector<SampleStepApiRow> out;
  if (!has_sampling(reader)) return out;
  auto s = reader.prepare(
      "SELECT a.pid, a.step, n.value, a.calls FROM sample_step_api a "
      "LEFT JOIN strings n ON n.id = a.api_id "
      "WHERE typeof(a.pid) = 'integer' AND typeof(a.step) = 'integer' AND typeof(a.calls) = "
      "'integer' "
      "ORDER BY a.pid, a.step, n.value");
  while (s.step()) {
    SampleStepApiRow r{s.int64(0), s.int64(1), s.is_null(2) ? std::string() : s.text(2),
                       s.int64(3)};
    if (r.pid < 0 || r.step < 0 || r.calls < 0) continue;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace fuselens::db
