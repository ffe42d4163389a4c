#include "fuselens/db/StepStore.h"

#include "fuselens/db/Sqlite.h"
#include "fuselens/db/Writer.h"

namespace fuselens::db {

void write_steps(Connection& c, const StoredStepDetection& d,
                 const std::vector<StoredStep>& steps) {
  if (c.query_int("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN "
                  "('step', 'step_detection')") != 2) {
    throw Error("'" + c.path() + "' has no step tables (schema version 6 or later stores steps)");
  }
  in_transaction(c, [&] {
    c.exec("DELETE FROM step; DELETE FROM step_detection;");
    auto detection = c.prepare(
        "INSERT INTO step_detection (id, method, pattern, confidence, period, steady_first, note)"
        " VALUES (1, ?, ?, ?, ?, ?, ?)");
    detection.bind(1, d.method).bind(2, d.pattern).bind(3, d.confidence).bind(4, d.period);
    detection.bind(5, d.steady_first).bind(6, d.note);
    detection.run();
    auto insert = c.prepare(
        "INSERT INTO step (id, pid, tid, start_ns, end_ns, label, gpu_busy_ns, compute_ns, "
        "idle_ns, launches, kernels, copies, syncs, peak_memory_bytes, steady, outlier) VALUES "
        "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const StoredStep& s : steps) {
      insert.bind(1, s.index).bind(2, s.pid).bind(3, s.tid).bind(4, s.start_ns).bind(5, s.end_ns);
      insert.bind(6, s.label).bind(7, s.gpu_busy_ns).bind(8, s.compute_ns).bind(9, s.idle_ns);
      insert.bind(10, s.launches).bind(11, s.kernels).bind(12, s.copies).bind(13, s.syncs);
      insert.bind(14, s.peak_memory_bytes);
      insert.bind(15, std::int64_t{s.steady ? 1 : 0}).bind(16, std::int64_t{s.outlier ? 1 : 0});
      insert.run();
    }
  });
}

std::optional<StoredSteps> read_stored_steps(const Reader& reader) {
  if (!reader.has_table("step") || !reader.has_table("step_detection")) return std::nullopt;
  auto d = reader.prepare(
      "SELECT method, pattern, confidence, period, steady_first, note FROM step_detection "
      "WHERE id = 1");
  if (!d.step()) return std::nullopt;
  StoredSteps out;
  out.detection = {d.text(0), d.text(1), d.text(5), d.real(2), d.int64(3), d.int64(4)};
  auto s = reader.prepare(
      "SELECT id, pid, tid, start_ns, end_ns, label, gpu_busy_ns, compute_ns, idle_ns, launches, "
      "kernels, copies, syncs, peak_memory_bytes, steady, outlier FROM step ORDER BY id");
  while (s.step()) {
    StoredStep r;
    r.index = s.int64(0);
    r.pid = s.int64(1);
    r.tid = s.int64(2);
    r.start_ns = s.int64(3);
    r.end_ns = s.int64(4);
    r.label = s.text(5);
    r.gpu_busy_ns = s.int64(6);
    r.compute_ns = s.int64(7);
    r.idle_ns = s.int64(8);
    r.launches = s.int64(9);
    r.kernels = s.int64(10);
    r.copies = s.int64(11);
    r.syncs = s.int64(12);
    r.peak_memory_bytes = s.int64(13);
    r.steady = s.int64(14) != 0;
    r.outlier = s.int64(15) != 0;
    out.steps.push_back(std::move(r));
  }
  return out;
}

}  // namespace fuselens::db
