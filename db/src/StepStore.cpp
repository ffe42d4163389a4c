#include "fuselens/db/StepStore.h"

#include "fuselens/db/Sqlite.h"
#include "fuselens/db/Writer.h"

namespace fuselens::db {
namespace {

constexpr const char* kStepColumns =
    "id, pid, tid, start_ns, end_ns, label, gpu_busy_ns, compute_ns, non_compute_ns, span_ns, "
    "idle_ns, host_wait_ns, kernel_wait_ns, other_wait_ns, launches, kernels, copies, memsets, "
    "syncs, allocations, peak_memory_bytes, top_kernel, top_kernel_ns, outlier_reason, "
    "outlier_differs";
constexpr const char* kDetectionColumns =
    "method, pattern, confidence, period, steady_first, median_step, note, captured_ns, "
    "steady_ns, median_ns, p10_ns, p25_ns, p75_ns, p90_ns, max_ns";

bool plausible(std::int64_t t) { return t >= 0 && t < kMaxTimestampNs; }

}  // namespace

void write_steps(Connection& c, const StoredStepDetection& d,
                 const std::vector<StoredStep>& steps) {
  if (c.query_int("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN "
                  "('step', 'step_detection')") != 2) {
    throw Error("'" + c.path() + "' has no step tables (schema version 6 or later stores steps)");
  }
  in_transaction(c, [&] {
    c.exec("DELETE FROM step; DELETE FROM step_detection;");
    auto det = c.prepare(std::string("INSERT INTO step_detection (id, ") + kDetectionColumns +
                         ") VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    det.bind(1, d.method).bind(2, d.pattern).bind(3, d.confidence).bind(4, d.period);
    det.bind(5, d.steady_first).bind(6, d.median_step).bind(7, d.note).bind(8, d.captured_ns);
    det.bind(9, d.steady_ns).bind(10, d.median_ns).bind(11, d.p10_ns).bind(12, d.p25_ns);
    det.bind(13, d.p75_ns).bind(14, d.p90_ns).bind(15, d.max_ns);
    det.run();
    auto insert = c.prepare(std::string("INSERT INTO step (") + kStepColumns +
                            ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                            "?, ?, ?, ?, ?)");
    for (const StoredStep& s : steps) {
      int i = 1;
      for (const std::int64_t v : {s.index, s.pid, s.tid, s.start_ns, s.end_ns})
        insert.bind(i++, v);
      insert.bind(i++, s.label);
      for (const std::int64_t v :
           {s.gpu_busy_ns, s.compute_ns, s.non_compute_ns, s.span_ns, s.idle_ns, s.host_wait_ns,
            s.kernel_wait_ns, s.other_wait_ns, s.launches, s.kernels, s.copies, s.memsets, s.syncs,
            s.allocations, s.peak_memory_bytes})
        insert.bind(i++, v);
      insert.bind(i++, s.top_kernel);
      insert.bind(i++, s.top_kernel_ns);
      for (const auto& text : {s.outlier_reason, s.outlier_differs}) {
        if (text) {
          insert.bind(i++, *text);
        } else {
          insert.bind_null(i++);
        }
      }
      insert.run();
    }
  });
}

std::optional<StoredSteps> read_stored_steps(const Reader& reader) {
  if (!reader.has_table("step") || !reader.has_table("step_detection")) return std::nullopt;
  auto d = reader.prepare(std::string("SELECT ") + kDetectionColumns +
                          " FROM step_detection WHERE id = 1");
  if (!d.step()) return std::nullopt;
  StoredSteps out;
  StoredStepDetection& det = out.detection;
  det.method = d.text(0);
  det.pattern = d.text(1);
  det.confidence = d.real(2);
  det.period = d.int64(3);
  det.steady_first = d.int64(4);
  det.median_step = d.int64(5);
  det.note = d.text(6);
  det.captured_ns = d.int64(7);
  det.steady_ns = d.int64(8);
  det.median_ns = d.real(9);
  det.p10_ns = d.real(10);
  det.p25_ns = d.real(11);
  det.p75_ns = d.real(12);
  det.p90_ns = d.real(13);
  det.max_ns = d.real(14);
  auto s = reader.prepare(std::string("SELECT ") + kStepColumns + " FROM step ORDER BY id");
  const auto bad = [&reader](const std::string& why) {
    return Error("'" + reader.path() + "': stored steps: " + why);
  };
  while (s.step()) {
    StoredStep r;
    int c = 0;
    for (std::int64_t* v : {&r.index, &r.pid, &r.tid, &r.start_ns, &r.end_ns}) *v = s.int64(c++);
    r.label = s.text(c++);
    for (std::int64_t* v :
         {&r.gpu_busy_ns, &r.compute_ns, &r.non_compute_ns, &r.span_ns, &r.idle_ns, &r.host_wait_ns,
          &r.kernel_wait_ns, &r.other_wait_ns, &r.launches, &r.kernels, &r.copies, &r.memsets,
          &r.syncs, &r.allocations, &r.peak_memory_bytes})
      *v = s.int64(c++);
    r.top_kernel = s.text(c++);
    r.top_kernel_ns = s.int64(c++);
    if (!s.is_null(c)) r.outlier_reason = s.text(c);
    ++c;
    if (!s.is_null(c)) r.outlier_differs = s.text(c);
    if (r.index != static_cast<std::int64_t>(out.steps.size()) + 1) {
      throw bad("step ids are not 1, 2, 3, ...");
    }
    if (!plausible(r.start_ns) || !plausible(r.end_ns) || r.end_ns < r.start_ns) {
      throw bad("step " + std::to_string(r.index) + " has implausible times");
    }
    out.steps.push_back(std::move(r));
  }
  const auto n = static_cast<std::int64_t>(out.steps.size());
  if (det.steady_first < 0 || det.steady_first > n || det.median_step < 0 || det.median_step > n ||
      !plausible(det.captured_ns)) {
    throw bad("the detection row does not fit its " + std::to_string(n) + " steps");
  }
  return out;
}

}  // namespace fuselens::db
