#include "fuselens/db/RooflineStore.h"

#include <unordered_map>

#include "fuselens/db/Records.h"
#include "fuselens/db/Sqlite.h"

namespace fuselens::db {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ',';
    out += item;
  }
  return out;
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::size_t end = comma == std::string::npos ? text.size() : comma;
    if (end > start) out.push_back(text.substr(start, end - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

MetricSet roofline_metric_set() {
  using namespace metric;
  return {"roofline",
          {kFadd, kFmul, kFfma, kDadd, kDmul, kDfma, kHadd, kHmul, kHfma, kDramRead, kDramWrite,
           kL2Bytes, kL1Bytes, kDuration},
          {kTensorFp16, kTensorBf16, kTensorTf32, kTensorFp8, kTensorFp64}};
}

struct RooflineWriter::Impl {
  Connection db;
  std::unordered_map<std::string, std::int64_t> strings;

  explicit Impl(const std::string& path) : db(path, Connection::Mode::ReadWrite) {
    if (db.query_int("PRAGMA application_id") != kApplicationId) {
      throw Error("'" + path + "' is not a FuseLens capture");
    }
    const auto version = db.query_int("PRAGMA user_version");
    if (version < 2) {
      throw Error("'" + path + "' has capture schema version " + std::to_string(version) +
                  ", which has no roofline tables; record a new capture");
    }
    if (version > kSchemaVersion) {
      throw Error("'" + path + "' has schema version " + std::to_string(version) +
                  ", newer than this FuseLens supports (" + std::to_string(kSchemaVersion) + ")");
    }
  }

  std::int64_t intern(const std::string& value) {
    if (auto it = strings.find(value); it != strings.end()) return it->second;
    auto insert = db.prepare("INSERT INTO strings(value) VALUES(?) ON CONFLICT(value) DO NOTHING");
    insert.bind(1, std::string_view(value));
    insert.run();
    auto select = db.prepare("SELECT id FROM strings WHERE value = ?");
    select.bind(1, std::string_view(value));
    if (!select.step()) throw Error("interning a string failed");
    const std::int64_t id = select.int64(0);
    strings.emplace(value, id);
    return id;
  }
};

RooflineWriter::RooflineWriter(const std::string& path) : impl_(std::make_unique<Impl>(path)) {}
RooflineWriter::~RooflineWriter() = default;
RooflineWriter::RooflineWriter(RooflineWriter&&) noexcept = default;
RooflineWriter& RooflineWriter::operator=(RooflineWriter&&) noexcept = default;

void RooflineWriter::write_ceilings(const std::vector<CeilingRecord>& ceilings) {
  auto& db = impl_->db;
  in_transaction(db, [&] {
    auto insert = db.prepare(
        "INSERT INTO ceiling(device_id,device_name,name,value,method,measured_utc_ns)"
        " VALUES(?,?,?,?,?,?)");
    for (const auto& c : ceilings) {
      insert.bind(1, static_cast<std::int64_t>(c.device_id));
      insert.bind(2, std::string_view(c.device_name));
      insert.bind(3, std::string_view(c.name));
      insert.bind(4, c.value);
      insert.bind(5, std::string_view(c.method));
      insert.bind(6, static_cast<std::int64_t>(c.measured_utc_ns));
      insert.run();
    }
  });
}

void RooflineWriter::write_kernel_metrics(const std::vector<KernelMetricRecord>& launches) {
  if (launches.empty()) return;
  auto& db = impl_->db;
  in_transaction(db, [&] {
    auto insert = db.prepare(
        "INSERT OR REPLACE INTO kernel_metric(pid,correlation_id,metric_id,value) VALUES(?,?,?,?)");
    for (const auto& launch : launches) {
      for (const auto& [name, value] : launch.values) {
        insert.bind(1, static_cast<std::int64_t>(launch.pid));
        insert.bind(2, static_cast<std::int64_t>(launch.correlation_id));
        insert.bind(3, impl_->intern(name));
        insert.bind(4, value);
        insert.run();
      }
    }
  });
}

void RooflineWriter::write_metric_session(const MetricSessionRecord& s) {
  auto insert = impl_->db.prepare(
      "INSERT OR REPLACE INTO metric_session(pid,device_id,metric_set,metrics,passes,ranges,"
      "unattributed_ranges,status) VALUES(?,?,?,?,?,?,?,?)");
  insert.bind(1, static_cast<std::int64_t>(s.pid));
  insert.bind(2, static_cast<std::int64_t>(s.device_id));
  insert.bind(3, std::string_view(s.metric_set));
  const std::string metrics = join(s.metrics);
  insert.bind(4, std::string_view(metrics));
  insert.bind(5, s.passes);
  insert.bind(6, s.ranges);
  insert.bind(7, s.unattributed_ranges);
  insert.bind(8, std::string_view(s.status));
  insert.run();
  impl_->db.exec(
      "CREATE TABLE IF NOT EXISTS metric_replay(pid INTEGER NOT NULL, device_id INTEGER NOT NULL,"
      " replay TEXT NOT NULL, cache_control TEXT NOT NULL, PRIMARY KEY (pid, device_id))");
  auto replay = impl_->db.prepare(
      "INSERT OR REPLACE INTO metric_replay(pid,device_id,replay,cache_control) VALUES(?,?,?,?)");
  replay.bind(1, static_cast<std::int64_t>(s.pid));
  replay.bind(2, static_cast<std::int64_t>(s.device_id));
  replay.bind(3, std::string_view(s.replay));
  replay.bind(4, std::string_view(s.cache_control));
  replay.run();
}

std::vector<CeilingRecord> read_ceilings(const Reader& reader) {
  std::vector<CeilingRecord> out;
  if (!reader.has_table("ceiling")) return out;
  auto s = reader.prepare(
      "SELECT device_id, device_name, name, value, method, measured_utc_ns FROM ceiling ORDER BY "
      "id");
  while (s.step()) {
    CeilingRecord c;
    c.device_id = static_cast<std::uint32_t>(s.int64(0));
    c.device_name = s.text(1);
    c.name = s.text(2);
    c.value = s.real(3);
    c.method = s.text(4);
    c.measured_utc_ns = static_cast<std::uint64_t>(s.int64(5));
    out.push_back(std::move(c));
  }
  return out;
}

std::string describe_replay(const MetricSessionRecord& s) {
  if (s.replay == "application") {
    return "application replay, " + std::to_string(s.passes) + " runs, " +
           (s.cache_control == "all" ? "L2 flushed before each launch" : "caches as left");
  }
  return std::to_string(s.passes) + " kernel replay passes per launch" +
         (s.cache_control == "all" ? ", memory restored and L2 flushed before each" : "");
}

std::vector<MetricSessionRecord> read_metric_sessions(const Reader& reader) {
  std::vector<MetricSessionRecord> out;
  if (!reader.has_table("metric_session")) return out;
  const bool replay = reader.has_table("metric_replay");
  auto s = reader.prepare(
      replay
          ? "SELECT s.pid, s.device_id, metric_set, metrics, passes, ranges, unattributed_ranges,"
            " status, coalesce(r.replay, 'kernel'), coalesce(r.cache_control, 'none')"
            " FROM metric_session s LEFT JOIN metric_replay r"
            " ON r.pid = s.pid AND r.device_id = s.device_id ORDER BY s.pid, s.device_id"
          : "SELECT pid, device_id, metric_set, metrics, passes, ranges, unattributed_ranges,"
            " status, 'kernel', 'none' FROM metric_session ORDER BY pid, device_id");
  while (s.step()) {
    MetricSessionRecord m;
    m.pid = static_cast<std::uint32_t>(s.int64(0));
    m.device_id = static_cast<std::uint32_t>(s.int64(1));
    m.metric_set = s.text(2);
    m.metrics = split(s.text(3));
    m.passes = s.int64(4);
    m.ranges = s.int64(5);
    m.unattributed_ranges = s.int64(6);
    m.status = s.text(7);
    m.replay = s.text(8);
    m.cache_control = s.text(9);
    out.push_back(std::move(m));
  }
  return out;
}

bool has_kernel_metrics(const Reader& reader) {
  return reader.has_table("kernel_metric") &&
         reader.query_int("SELECT EXISTS(SELECT 1 FROM kernel_metric)") != 0;
}

}  // namespace fuselens::db
