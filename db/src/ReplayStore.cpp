#include "fuselens/db/ReplayStore.h"

#include <map>

namespace fuselens::db {

std::vector<ProfiledProcess> read_profiled_launches(const Reader& reader) {
  std::vector<ProfiledProcess> out;
  std::map<std::uint32_t, std::size_t> index;
  auto order = reader.prepare("SELECT pid FROM kernel GROUP BY pid ORDER BY min(start_ns), pid");
  while (order.step()) {
    const auto pid = static_cast<std::uint32_t>(order.int64(0));
    index[pid] = out.size();
    out.push_back({pid, {}});
  }
  auto rows = reader.prepare(
      "SELECT k.pid, k.correlation_id, s.value FROM kernel k"
      " JOIN strings s ON s.id = k.mangled_name_id"
      " WHERE EXISTS (SELECT 1 FROM kernel_metric m"
      "               WHERE m.pid = k.pid AND m.correlation_id = k.correlation_id)"
      " ORDER BY k.pid, k.correlation_id");
  while (rows.step()) {
    const auto pid = static_cast<std::uint32_t>(rows.int64(0));
    out[index.at(pid)].launches.push_back(
        {static_cast<std::uint32_t>(rows.int64(1)), rows.text(2)});
  }
  return out;
}

LaunchCounters::LaunchCounters(const Reader& reader)
    : query_(reader.prepare(
          "SELECT s.value, m.value FROM kernel_metric m JOIN strings s ON s.id = m.metric_id"
          " WHERE m.pid = ? AND m.correlation_id = ?")) {}

std::vector<std::pair<std::string, double>> LaunchCounters::of(std::uint32_t pid,
                                                               std::uint32_t correlation_id) {
  query_.reset();
  query_.bind(1, static_cast<std::int64_t>(pid));
  query_.bind(2, static_cast<std::int64_t>(correlation_id));
  std::vector<std::pair<std::string, double>> out;
  while (query_.step()) out.emplace_back(query_.text(0), query_.real(1));
  return out;
}

}  // namespace fuselens::db
