#include "fuselens/db/AggregateStore.h"

#include <string>

#include "AggregateInsert.h"

namespace fuselens::db {
namespace {

std::optional<std::int64_t> node_id(std::int64_t node, const std::vector<std::int64_t>& ids) {
  if (node < 0 || static_cast<std::uint64_t>(node) >= ids.size()) return std::nullopt;
  return ids[static_cast<std::size_t>(node)];
}

// Binds columns 1..N in order.
class Bind {
 public:
  explicit Bind(Statement& s) : s_(s) {}
  Bind& operator()(std::int64_t v) {
    s_.bind(++i_, v);
    return *this;
  }
  Bind& operator()(const std::optional<std::int64_t>& v) {
    s_.bind(++i_, v);
    return *this;
  }
  Bind& operator()(double v) {
    s_.bind(++i_, v);
    return *this;
  }
  Bind& blob(const std::string& bytes) {
    s_.bind_blob(++i_, bytes);
    return *this;
  }
  void run() { s_.run(); }

 private:
  Statement& s_;
  int i_ = 0;
};

[[noreturn]] void damaged(const Reader& reader, const std::string& table, std::int64_t row,
                          const std::string& what) {
  throw Error(reader.path() + " is damaged: " + table + " row " + std::to_string(row) + " " + what);
}

// Reads column `c` as a non-negative integer, refusing NULL and negatives.
std::int64_t count_column(const Reader& reader, const Statement& s, int c, const char* table,
                          std::int64_t row, const char* column) {
  if (s.is_null(c)) damaged(reader, table, row, std::string("holds NULL in ") + column);
  const std::int64_t v = s.int64(c);
  if (v < 0) damaged(reader, table, row, std::string("holds a negative ") + column);
  return v;
}

}  // namespace

void insert_aggregates(
    Connection& db, const AggregateSet& set, const std::vector<std::int64_t>& node_ids,
    const std::function<std::array<std::int64_t, 3>(const std::string&)>& names) {
  auto process = db.prepare(
      "INSERT OR REPLACE INTO aggregate_process(pid,kernels,copies,memsets,memory_events,traced,"
      "without_context,sketch_alpha) VALUES(?,?,?,?,?,?,?,?)");
  for (const auto& p : set.processes) {
    Bind{process}(std::int64_t{p.pid})(p.kernels)(p.copies)(p.memsets)(p.memory_events)(p.traced)(
        p.without_context)(p.sketch_alpha)
        .run();
  }
  auto kernel = db.prepare(
      "INSERT INTO aggregate_kernel(pid,cct_node_id,device_id,short_name_id,demangled_name_id,"
      "mangled_name_id,grid_x,grid_y,grid_z,block_x,block_y,block_z,static_shared_bytes,"
      "dynamic_shared_bytes,count,total_ns,min_ns,max_ns,sketch,latency_count,latency_total_ns,"
      "latency_min_ns,latency_max_ns,latency_sketch) "
      "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  for (const auto& k : set.kernels) {
    const auto ids = names(k.mangled_name);
    Bind{kernel}(std::int64_t{k.pid})(node_id(k.node, node_ids))(std::int64_t{k.device_id})(ids[0])(
        ids[1])(ids[2])(std::int64_t{k.grid_x})(std::int64_t{k.grid_y})(std::int64_t{k.grid_z})(
        std::int64_t{k.block_x})(std::int64_t{k.block_y})(std::int64_t{k.block_z})(
        std::int64_t{k.static_shared_bytes})(std::int64_t{k.dynamic_shared_bytes})(k.gpu.count)(
        k.gpu.total)(k.gpu.min)(k.gpu.max)
        .blob(k.gpu.sketch.encode())(k.latency.count)(k.latency.total)(k.latency.min)(k.latency.max)
        .blob(k.latency.sketch.encode())
        .run();
  }
  auto transfer = db.prepare(
      "INSERT INTO aggregate_transfer(pid,cct_node_id,device_id,operation,copy_kind,src_kind,"
      "dst_kind,count,bytes,total_ns,min_ns,max_ns) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)");
  for (const auto& t : set.transfers) {
    Bind{transfer}(std::int64_t{t.pid})(node_id(t.node, node_ids))(std::int64_t{t.device_id})(
        std::int64_t{static_cast<int>(t.operation)})(std::int64_t{static_cast<int>(t.copy_kind)})(
        std::int64_t{static_cast<int>(t.src_kind)})(std::int64_t{static_cast<int>(t.dst_kind)})(
        t.count)(t.bytes)(t.total_ns)(t.min_ns)(t.max_ns)
        .run();
  }
  auto memory = db.prepare(
      "INSERT OR REPLACE INTO aggregate_memory(pid,device_id,context_id,allocations,releases,"
      "allocated_bytes,peak_bytes,final_bytes) VALUES(?,?,?,?,?,?,?,?)");
  for (const auto& m : set.memory) {
    Bind{memory}(std::int64_t{m.pid})(std::int64_t{m.device_id})(std::int64_t{m.context_id})(
        m.allocations)(m.releases)(m.allocated_bytes)(m.peak_bytes)(m.final_bytes)
        .run();
  }
}

bool has_cct_nodes(const Reader& reader) {
  return reader.has_table("cct_node") &&
         reader.query_int("SELECT EXISTS (SELECT 1 FROM cct_node)") != 0;
}

bool has_aggregates(const Reader& reader) {
  if (reader.restricted() || !reader.has_table("aggregate_process")) return false;
  return reader.query_int("SELECT EXISTS (SELECT 1 FROM aggregate_process)") != 0;
}

TraceWindows trace_windows(const Reader& reader) {
  TraceWindows out;
  if (reader.has_table("capture_window")) {
    out.windows = reader.query_int("SELECT COUNT(*) FROM capture_window");
    auto s = reader.prepare("SELECT DISTINCT reason FROM capture_window ORDER BY reason LIMIT 8");
    while (s.step()) out.reasons += (out.reasons.empty() ? "" : ", ") + s.text(0);
  }
  if (reader.has_table("aggregate_process")) {
    out.traced = reader.query_int(
        "SELECT COALESCE(SUM(MAX(COALESCE(traced, 0), 0)), 0) FROM aggregate_process");
  }
  return out;
}

AggregateSet read_aggregates(const Reader& reader) {
  AggregateSet out;
  if (!has_aggregates(reader)) return out;
  for (const char* table : {"aggregate_kernel", "aggregate_transfer", "aggregate_memory"}) {
    if (!reader.has_table(table))
      throw Error(reader.path() + " is damaged: aggregate_process has rows but table " + table +
                  " is missing");
  }
  {
    auto s = reader.prepare(
        "SELECT rowid,pid,kernels,copies,memsets,memory_events,traced,without_context,"
        "sketch_alpha FROM aggregate_process ORDER BY pid");
    while (s.step()) {
      const std::int64_t row = s.int64(0);
      AggregateProcessRow p;
      const auto pid = count_column(reader, s, 1, "aggregate_process", row, "pid");
      if (pid > UINT32_MAX) damaged(reader, "aggregate_process", row, "holds a pid out of range");
      p.pid = static_cast<std::uint32_t>(pid);
      p.kernels = count_column(reader, s, 2, "aggregate_process", row, "kernels");
      p.copies = count_column(reader, s, 3, "aggregate_process", row, "copies");
      p.memsets = count_column(reader, s, 4, "aggregate_process", row, "memsets");
      p.memory_events = count_column(reader, s, 5, "aggregate_process", row, "memory_events");
      p.traced = count_column(reader, s, 6, "aggregate_process", row, "traced");
      p.without_context = count_column(reader, s, 7, "aggregate_process", row, "without_context");
      if (s.is_null(8) || !(s.real(8) > 0 && s.real(8) < 1))
        damaged(reader, "aggregate_process", row, "holds a sketch_alpha outside (0, 1)");
      p.sketch_alpha = s.real(8);
      out.processes.push_back(p);
    }
  }
  {
    auto s = reader.prepare(
        "SELECT k.id,k.pid,k.cct_node_id,k.device_id,sn.value,dn.value,mn.value,k.grid_x,k.grid_y,"
        "k.grid_z,k.block_x,k.block_y,k.block_z,k.static_shared_bytes,k.dynamic_shared_bytes,"
        "k.count,k.total_ns,k.min_ns,k.max_ns,k.sketch,k.latency_count,k.latency_total_ns,"
        "k.latency_min_ns,k.latency_max_ns,k.latency_sketch FROM aggregate_kernel k "
        "LEFT JOIN strings sn ON sn.id = k.short_name_id "
        "LEFT JOIN strings dn ON dn.id = k.demangled_name_id "
        "LEFT JOIN strings mn ON mn.id = k.mangled_name_id ORDER BY k.id");
    const char* table = "aggregate_kernel";
    while (s.step()) {
      const std::int64_t row = s.int64(0);
      AggregateKernelRow k;
      k.pid =
          static_cast<std::uint32_t>(count_column(reader, s, 1, table, row, "pid") & 0xffffffff);
      k.node = s.is_null(2) ? -1 : s.int64(2);
      if (!s.is_null(2) && k.node < 0) damaged(reader, table, row, "holds a negative cct_node_id");
      k.device_id = static_cast<std::uint32_t>(count_column(reader, s, 3, table, row, "device_id") &
                                               0xffffffff);
      if (s.is_null(4) || s.is_null(5) || s.is_null(6))
        damaged(reader, table, row, "names a kernel name missing from strings");
      k.short_name = s.text(4);
      k.demangled_name = s.text(5);
      k.mangled_name = s.text(6);
      std::int32_t* dims[] = {&k.grid_x,
                              &k.grid_y,
                              &k.grid_z,
                              &k.block_x,
                              &k.block_y,
                              &k.block_z,
                              &k.static_shared_bytes,
                              &k.dynamic_shared_bytes};
      for (int i = 0; i < 8; ++i) {
        const auto v = count_column(reader, s, 7 + i, table, row, "launch configuration");
        if (v > INT32_MAX) damaged(reader, table, row, "holds a launch configuration out of range");
        *dims[i] = static_cast<std::int32_t>(v);
      }
      auto stats = [&](int c, const char* what, AggregateStats& st) {
        st.count = count_column(reader, s, c, table, row, what);
        st.total = count_column(reader, s, c + 1, table, row, what);
        st.min = count_column(reader, s, c + 2, table, row, what);
        st.max = count_column(reader, s, c + 3, table, row, what);
        if (st.min > st.max)
          damaged(reader, table, row, std::string("holds ") + what + " min > max");
        if (!s.type_is_blob(c + 4))
          damaged(reader, table, row, std::string("holds no ") + what + " sketch");
        const std::string bytes = s.blob(c + 4);
        auto sketch = DDSketch::decode(bytes.data(), bytes.size());
        if (!sketch)
          damaged(reader, table, row,
                  std::string("holds a ") + what + " sketch that does not decode");
        if (sketch->count() != static_cast<std::uint64_t>(st.count))
          damaged(reader, table, row, std::string("holds a ") + what + " sketch of another count");
        st.sketch = std::move(*sketch);
      };
      // Column order: count,total,min,max at 15..18, sketch 19; latency 20..23, sketch 24.
      stats(15, "GPU time", k.gpu);
      stats(20, "latency", k.latency);
      if (k.latency.count > k.gpu.count) damaged(reader, table, row, "holds latency_count > count");
      out.kernels.push_back(std::move(k));
    }
  }
  {
    auto s = reader.prepare(
        "SELECT id,pid,cct_node_id,device_id,operation,copy_kind,src_kind,dst_kind,count,bytes,"
        "total_ns,min_ns,max_ns FROM aggregate_transfer ORDER BY id");
    const char* table = "aggregate_transfer";
    while (s.step()) {
      const std::int64_t row = s.int64(0);
      AggregateTransferRow t;
      t.pid =
          static_cast<std::uint32_t>(count_column(reader, s, 1, table, row, "pid") & 0xffffffff);
      t.node = s.is_null(2) ? -1 : s.int64(2);
      if (!s.is_null(2) && t.node < 0) damaged(reader, table, row, "holds a negative cct_node_id");
      t.device_id = static_cast<std::uint32_t>(count_column(reader, s, 3, table, row, "device_id") &
                                               0xffffffff);
      const auto op = count_column(reader, s, 4, table, row, "operation");
      const auto copy = count_column(reader, s, 5, table, row, "copy_kind");
      const auto src = count_column(reader, s, 6, table, row, "src_kind");
      const auto dst = count_column(reader, s, 7, table, row, "dst_kind");
      if (op < 1 || op > 2 || copy > 10 || src > 7 || dst > 7)
        damaged(reader, table, row, "holds an operation or kind outside its enumeration");
      t.operation = static_cast<TransferOperation>(op);
      t.copy_kind = static_cast<MemcpyKind>(copy);
      t.src_kind = static_cast<MemoryKind>(src);
      t.dst_kind = static_cast<MemoryKind>(dst);
      t.count = count_column(reader, s, 8, table, row, "count");
      t.bytes = count_column(reader, s, 9, table, row, "bytes");
      t.total_ns = count_column(reader, s, 10, table, row, "total_ns");
      t.min_ns = count_column(reader, s, 11, table, row, "min_ns");
      t.max_ns = count_column(reader, s, 12, table, row, "max_ns");
      if (t.min_ns > t.max_ns) damaged(reader, table, row, "holds min_ns > max_ns");
      out.transfers.push_back(t);
    }
  }
  {
    auto s = reader.prepare(
        "SELECT rowid,pid,device_id,context_id,allocations,releases,allocated_bytes,peak_bytes,"
        "final_bytes FROM aggregate_memory ORDER BY pid, device_id, context_id");
    const char* table = "aggregate_memory";
    while (s.step()) {
      const std::int64_t row = s.int64(0);
      AggregateMemoryRow m;
      m.pid =
          static_cast<std::uint32_t>(count_column(reader, s, 1, table, row, "pid") & 0xffffffff);
      m.device_id = static_cast<std::uint32_t>(count_column(reader, s, 2, table, row, "device_id") &
                                               0xffffffff);
      m.context_id = static_cast<std::uint32_t>(
          count_column(reader, s, 3, table, row, "context_id") & 0xffffffff);
      m.allocations = count_column(reader, s, 4, table, row, "allocations");
      m.releases = count_column(reader, s, 5, table, row, "releases");
      m.allocated_bytes = count_column(reader, s, 6, table, row, "allocated_bytes");
      m.peak_bytes = count_column(reader, s, 7, table, row, "peak_bytes");
      m.final_bytes = count_column(reader, s, 8, table, row, "final_bytes");
      out.memory.push_back(m);
    }
  }
  return out;
}

}  // namespace fuselens::db
