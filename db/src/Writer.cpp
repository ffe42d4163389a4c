#include "fuselens/db/Writer.h"

#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <string>
#include <thread>
#include <unordered_map>

#include "AggregateInsert.h"
#include "LeanEncoder.h"
#include "RowInsert.h"
#include "fuselens/db/CaptureIndexes.h"
#include "fuselens/db/Sqlite.h"

namespace fuselens::db {

using rows::Binder;
using rows::BulkInsert;
using rows::i64;
using rows::KernelNameIds;
using rows::RowFiller;

struct Writer::Impl {
  Connection db;
  Statement intern_insert, intern_select;
  BulkInsert memcpy, memset, memory, range, mark, sync, overhead;
  std::optional<BulkInsert> kernel, api;  // the full layout's
  std::unordered_map<std::string, std::int64_t> strings;
  std::unordered_map<std::string, KernelNameIds> kernel_names;
  // The last kernel name looked up: launch loops repeat one kernel, and a hit skips hashing it.
  std::string last_kernel_name;
  KernelNameIds last_kernel_ids{0, 0, 0};
  std::uint64_t written = 0;
  // The lean layout (TraceLayout::Lean) writes kernels and API calls through `lean`.
  TraceLayout layout;
  std::optional<LeanEncoder> lean;

  Impl(Connection connection, TraceLayout trace_layout)
      : db(std::move(connection)),
        intern_insert(
            db.prepare("INSERT INTO strings(value) VALUES(?) ON CONFLICT(value) DO NOTHING")),
        intern_select(db.prepare("SELECT id FROM strings WHERE value = ?")),
        memcpy(db,
               "INSERT INTO memcpy(pid,start_ns,end_ns,device_id,context_id,stream_id,"
               "correlation_id,copy_kind,src_kind,dst_kind,bytes,is_async,graph_id,graph_node_id)",
               14),
        memset(db,
               "INSERT INTO memset(pid,start_ns,end_ns,device_id,context_id,stream_id,"
               "correlation_id,bytes,value,memory_kind,is_async,graph_id,graph_node_id)",
               13),
        memory(db,
               "INSERT INTO memory_event(pid,timestamp_ns,operation,memory_kind,address,bytes,"
               "device_id,context_id,stream_id,correlation_id,is_async)",
               11),
        range(db,
              "INSERT INTO nvtx_range(pid,tid,domain_id,text_id,start_ns,end_ns,depth,category,"
              "color,payload_kind,payload)",
              11),
        mark(db,
             "INSERT INTO nvtx_mark(pid,tid,domain_id,text_id,timestamp_ns,category,color,"
             "payload_kind,payload)",
             9),
        sync(db,
             "INSERT INTO sync_event(pid,start_ns,end_ns,sync_type,context_id,stream_id,"
             "cuda_event_id,correlation_id)",
             8),
        overhead(
            db, "INSERT INTO overhead(pid,overhead_kind,object_kind,object_id,start_ns,end_ns)", 6),
        layout(trace_layout) {
    if (layout == TraceLayout::Lean) {
      lean.emplace(db);
      return;
    }
    kernel.emplace(db,
                   "INSERT INTO kernel(pid,start_ns,end_ns,device_id,context_id,stream_id,"
                   "correlation_id,grid_x,grid_y,grid_z,block_x,block_y,block_z,"
                   "registers_per_thread,static_shared_bytes,dynamic_shared_bytes,"
                   "local_memory_per_thread,short_name_id,demangled_name_id,mangled_name_id,"
                   "graph_id,graph_node_id)",
                   22);
    api.emplace(db,
                "INSERT INTO api_call(pid,tid,domain,callback_id,name_id,start_ns,end_ns,"
                "correlation_id,return_code)",
                9);
  }

  // The lean rows of the batch's kernels and API calls; ids are given here (after the largest
  // in the table: the transaction is IMMEDIATE, so no other writer adds rows meanwhile) so that
  // correlation_delta = correlation id - id can be stored.
  void write_lean(const RecordBatch& batch) {
    if (!batch.kernels.empty()) {
      std::int64_t id = db.query_int("SELECT COALESCE(MAX(id), 0) FROM kernel_lean");
      for (const auto& k : batch.kernels) lean->kernel(++id, k, kernel_name(k.mangled_name));
    }
    if (!batch.api_calls.empty()) {
      std::int64_t id = db.query_int("SELECT COALESCE(MAX(id), 0) FROM api_call_lean");
      for (const auto& a : batch.api_calls) lean->api_call(++id, a, intern(a.name));
    }
    lean->flush();
  }

  std::int64_t intern(const std::string& value) {
    if (auto it = strings.find(value); it != strings.end()) return it->second;
    intern_insert.bind(1, std::string_view(value));
    intern_insert.run();
    intern_select.bind(1, std::string_view(value));
    if (!intern_select.step()) throw Error("interning a string failed");
    const std::int64_t id = intern_select.int64(0);
    intern_select.reset();
    strings.emplace(value, id);
    return id;
  }

  const KernelNameIds& kernel_name(const std::string& mangled) {
    if (mangled == last_kernel_name && last_kernel_ids.mangled_id != 0) return last_kernel_ids;
    auto it = kernel_names.find(mangled);
    if (it == kernel_names.end()) {
      const std::string demangled = demangle(mangled);
      KernelNameIds ids{intern(short_kernel_name(demangled)), intern(demangled), intern(mangled)};
      it = kernel_names.emplace(mangled, ids).first;
    }
    last_kernel_name = mangled;
    last_kernel_ids = it->second;
    return last_kernel_ids;
  }

  static void fill_payload(RowFiller& f, PayloadKind kind, double real, std::int64_t integer) {
    f(kind);
    if (kind == PayloadKind::None)
      f.null();
    else if (kind == PayloadKind::Double || kind == PayloadKind::Float)
      f(real);
    else
      f(integer);
  }

  void write(const RecordBatch& batch) {
    if (layout == TraceLayout::Lean) write_lean(batch);
    for (const auto& k : layout == TraceLayout::Lean ? kEmptyKernels : batch.kernels) {
      const auto& n = kernel_name(k.mangled_name);
      RowFiller f(*kernel);
      f(k.pid)(i64(k.start_ns))(i64(k.end_ns))(k.device_id)(k.context_id)(k.stream_id)(
          k.correlation_id)(k.grid_x)(k.grid_y)(k.grid_z)(k.block_x)(k.block_y)(k.block_z)(
          k.registers_per_thread)(k.static_shared_bytes)(k.dynamic_shared_bytes)(
          k.local_memory_per_thread)(n.short_id)(n.demangled_id)(n.mangled_id)(k.graph_id)(
          k.graph_node_id);
      f.next();
    }
    if (kernel) kernel->flush();
    for (const auto& m : batch.memcpys) {
      RowFiller f(memcpy);
      f(m.pid)(i64(m.start_ns))(i64(m.end_ns))(m.device_id)(m.context_id)(m.stream_id)(
          m.correlation_id)(m.copy_kind)(m.src_kind)(m.dst_kind)(i64(m.bytes))(m.is_async ? 1 : 0)(
          m.graph_id)(m.graph_node_id);
      f.next();
    }
    memcpy.flush();
    for (const auto& m : batch.memsets) {
      RowFiller f(memset);
      f(m.pid)(i64(m.start_ns))(i64(m.end_ns))(m.device_id)(m.context_id)(m.stream_id)(
          m.correlation_id)(i64(m.bytes))(m.value)(m.memory_kind)(m.is_async ? 1 : 0)(m.graph_id)(
          m.graph_node_id);
      f.next();
    }
    memset.flush();
    for (const auto& m : batch.memory_events) {
      RowFiller f(memory);
      f(m.pid)(i64(m.timestamp_ns))(m.operation)(m.memory_kind)(i64(m.address))(i64(m.bytes))(
          m.device_id)(m.context_id)(m.stream_id)(m.correlation_id)(m.is_async ? 1 : 0);
      f.next();
    }
    memory.flush();
    for (const auto& a : layout == TraceLayout::Lean ? kEmptyApiCalls : batch.api_calls) {
      const std::int64_t name_id = intern(a.name);
      RowFiller f(*api);
      f(a.pid)(a.tid)(a.domain)(a.callback_id)(name_id)(i64(a.start_ns))(i64(a.end_ns))(
          a.correlation_id)(a.return_code);
      f.next();
    }
    if (api) api->flush();
    for (const auto& r : batch.nvtx_ranges) {
      const std::int64_t domain_id = intern(r.domain), text_id = intern(r.text);
      RowFiller f(range);
      f(r.pid)(r.tid)(domain_id)(text_id)(i64(r.start_ns))(
          r.end_ns ? std::optional<std::int64_t>(i64(*r.end_ns))
                   : std::nullopt)(r.depth)(r.category)(r.color);
      fill_payload(f, r.payload_kind, r.payload_real, r.payload_int);
      f.next();
    }
    range.flush();
    for (const auto& m : batch.nvtx_marks) {
      const std::int64_t domain_id = intern(m.domain), text_id = intern(m.text);
      RowFiller f(mark);
      f(m.pid)(m.tid)(domain_id)(text_id)(i64(m.timestamp_ns))(m.category)(m.color);
      fill_payload(f, m.payload_kind, m.payload_real, m.payload_int);
      f.next();
    }
    mark.flush();
    for (const auto& s : batch.syncs) {
      RowFiller f(sync);
      f(s.pid)(i64(s.start_ns))(i64(s.end_ns))(s.type)(s.context_id)(s.stream_id)(s.cuda_event_id)(
          s.correlation_id);
      f.next();
    }
    sync.flush();
    for (const auto& o : batch.overheads) {
      RowFiller f(overhead);
      f(o.pid)(o.overhead_kind)(o.object_kind)(o.object_id)(i64(o.start_ns))(i64(o.end_ns));
      f.next();
    }
    overhead.flush();
    written += batch.size();
  }

  // After a failed write(): no row of it may reach the next transaction.
  void discard() {
    for (BulkInsert* b : {&memcpy, &memset, &memory, &range, &mark, &sync, &overhead}) b->discard();
    for (auto* b : {&kernel, &api}) {
      if (*b) (*b)->discard();
    }
    if (lean) lean->discard();  // its config rows are gone with the transaction
  }

  static inline const std::vector<KernelRecord> kEmptyKernels{};
  static inline const std::vector<ApiCallRecord> kEmptyApiCalls{};
};

namespace {

void check_capture(Connection& db) {
  if (db.query_int("PRAGMA application_id") != kApplicationId) {
    throw Error("'" + db.path() + "' is not a FuseLens capture");
  }
  const auto version = db.query_int("PRAGMA user_version");
  if (version > kSchemaVersion) {
    throw Error("'" + db.path() + "' has schema version " + std::to_string(version) +
                ", newer than this FuseLens supports (" + std::to_string(kSchemaVersion) + ")");
  }
}

std::string json_array(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    out += '"';
    for (const unsigned char c : items[i]) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += static_cast<char>(c);
      } else if (c < 0x20) {
        static constexpr char hex[] = "0123456789abcdef";
        out += "\\u00";
        out += hex[c >> 4];
        out += hex[c & 15];
      } else {
        out += static_cast<char>(c);
      }
    }
    out += '"';
  }
  return out + "]";
}

}  // namespace

Writer::Writer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Writer::Writer(Writer&&) noexcept = default;
Writer& Writer::operator=(Writer&&) noexcept = default;
Writer::~Writer() = default;

Writer Writer::create(const std::string& path, const RunInfo& run, TraceLayout layout,
                      IndexBuild indexes) {
  Connection db(path, Connection::Mode::Create);
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  in_transaction(db, [&] {
    db.exec(schema_sql());
    if (layout == TraceLayout::Lean) {
      // The full layout's two tables give way to views of the same names over the lean ones
      // (for sqlite3 and DataFrame users; FuseLens's readers use their own, Reader.cpp).
      db.exec("DROP TABLE kernel; DROP TABLE api_call;");
      db.exec(lean_view_sql("CREATE VIEW", "kernel", "api_call", ""));
    }
    if (indexes == IndexBuild::WhileWriting) {
      for (std::size_t i = 0; i < capture_index_count(); ++i) {
        create_capture_index(db, capture_index(i));  // none on a lean layout's views
      }
    }
    db.exec("PRAGMA application_id = " + std::to_string(kApplicationId));
    db.exec("PRAGMA user_version = " + std::to_string(kSchemaVersion));
    auto insert = db.prepare(
        "INSERT INTO run(id,command_line,working_directory,host_name,fuselens_version,trace,"
        "start_utc_ns) VALUES(1,?,?,?,?,?,?)");
    Binder{insert}(json_array(run.command_line))(run.working_directory)(run.host_name)(
        run.fuselens_version)(run.trace)(i64(run.start_utc_ns))
        .run();
  });
  return Writer(std::make_unique<Impl>(std::move(db), layout));
}

Writer Writer::open(const std::string& path) {
  Connection db(path, Connection::Mode::ReadWrite);
  check_capture(db);
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  const TraceLayout layout = capture_layout(db);
  return Writer(std::make_unique<Impl>(std::move(db), layout));
}

TraceLayout Writer::layout() const { return impl_->layout; }

int Writer::drop_indexes() { return drop_capture_indexes(impl_->db); }

void Writer::write(const RecordBatch& batch) {
  if (batch.empty()) return;
  try {
    in_transaction(impl_->db, [&] { impl_->write(batch); });
  } catch (...) {
    impl_->discard();
    throw;
  }
}

void Writer::write_process(const ProcessInfo& p) {
  auto insert = impl_->db.prepare(
      "INSERT OR REPLACE INTO process(pid,parent_pid,executable,start_utc_ns,end_utc_ns,"
      "clock_offset_ns,cuda_driver_version,cuda_runtime_version,cupti_version,dropped_records,"
      "buffers_used,records_written) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)");
  Binder{insert}(p.pid)(p.parent_pid)(p.executable)(i64(p.start_utc_ns))(
      p.end_utc_ns ? std::optional<std::int64_t>(i64(*p.end_utc_ns)) : std::nullopt)(
      p.clock_offset_ns)(p.cuda_driver_version)(p.cuda_runtime_version)(p.cupti_version)(
      i64(p.dropped_records))(i64(p.buffers_used))(i64(p.records_written))
      .run();
}

void Writer::write_process_rank(const ProcessRank& r) {
  auto insert = impl_->db.prepare(
      "INSERT OR REPLACE INTO process_rank(pid,rank,local_rank,world_size,local_world_size,"
      "launcher,host_name) VALUES(?,?,?,?,?,?,?)");
  Binder{insert}(r.pid)(r.rank)(r.local_rank)(r.world_size)(r.local_world_size)(r.launcher)(
      r.host_name)
      .run();
}

void Writer::write_threads(const std::vector<ThreadInfo>& threads) {
  in_transaction(impl_->db, [&] {
    auto insert = impl_->db.prepare("INSERT OR REPLACE INTO thread(pid,tid,name) VALUES(?,?,?)");
    for (const auto& t : threads) Binder{insert}(t.pid)(t.tid)(t.name).run();
  });
}

std::vector<std::int64_t> Writer::write_calling_contexts(const CallingContextTree& tree) {
  auto& impl = *impl_;
  std::vector<std::int64_t> node_ids;
  auto& db = impl.db;
  auto optional_string = [&](const std::string& value) {
    return value.empty() ? std::optional<std::int64_t>()
                         : std::optional<std::int64_t>(impl.intern(value));
  };
  in_transaction(db, [&] {
    auto frame = db.prepare(
        "INSERT INTO frame(kind,module_id,module_offset,function_id,file_id,line) "
        "VALUES(?,?,?,?,?,?)");
    auto node = db.prepare("INSERT INTO cct_node(pid,parent_id,frame_id) VALUES(?,?,?)");
    BulkInsert context(db,
                       "INSERT OR REPLACE INTO api_context(pid,correlation_id,tid,cct_node_id,"
                       "forward_seq,backward_seq)",
                       6);
    std::vector<std::int64_t> frame_ids;
    frame_ids.reserve(tree.frames.size());
    for (const auto& f : tree.frames) {
      Binder{frame}(f.kind)(optional_string(f.module))(i64(f.module_offset))(
          optional_string(f.function))(optional_string(f.file))(
          f.line ? std::optional<std::int64_t>(f.line) : std::nullopt)
          .run();
      frame_ids.push_back(sqlite3_last_insert_rowid(db.handle()));
    }
    node_ids.clear();
    node_ids.reserve(tree.nodes.size());
    for (std::size_t i = 0; i < tree.nodes.size(); ++i) {
      const auto& n = tree.nodes[i];
      if (i == 0) {
        Binder{node}(tree.pid)(std::optional<std::int64_t>())(std::optional<std::int64_t>()).run();
      } else {
        if (n.parent >= i || n.frame >= frame_ids.size())
          throw Error("malformed calling context tree");
        Binder{node}(tree.pid)(node_ids[n.parent])(frame_ids[n.frame]).run();
      }
      node_ids.push_back(sqlite3_last_insert_rowid(db.handle()));
    }
    // In correlation-id order, the order of the table's key: the collector lists the calls thread
    // by thread, and rows inserted in key order append to the table's B-tree instead of landing
    // all over it. A stable sort keeps the last of two rows of one id last, as before.
    std::vector<std::uint32_t> order(tree.contexts.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::uint32_t>(i);
    auto by_correlation = [&](std::uint32_t a, std::uint32_t b) {
      return tree.contexts[a].correlation_id < tree.contexts[b].correlation_id;
    };
    if (!std::is_sorted(order.begin(), order.end(), by_correlation))
      std::stable_sort(order.begin(), order.end(), by_correlation);
    auto seq = [](std::int64_t v) {
      return v >= 0 ? std::optional<std::int64_t>(v) : std::optional<std::int64_t>();
    };
    for (const auto i : order) {
      const auto& c = tree.contexts[i];
      if (c.node >= node_ids.size()) throw Error("calling context names a missing node");
      RowFiller f(context);
      f(tree.pid)(c.correlation_id)(c.tid)(node_ids[c.node])(seq(c.forward_seq))(
          seq(c.backward_seq));
      f.next();
    }
    context.flush();
    if (!tree.graph_nodes.empty()) {  // schema version 7
      auto graph = db.prepare(
          "INSERT INTO graph_node(pid,node_id,original_node_id,graph_id,correlation_id) "
          "VALUES(?,?,?,?,?)");
      for (const auto& g : tree.graph_nodes) {
        Binder{graph}(tree.pid)(i64(g.node_id))(i64(g.original_node_id))(g.graph_id)(
            g.correlation_id)
            .run();
      }
    }
  });
  return node_ids;
}

void Writer::write_aggregates(const AggregateSet& set, const std::vector<std::int64_t>& node_ids) {
  if (set.empty()) return;
  auto& impl = *impl_;
  in_transaction(impl.db, [&] {
    insert_aggregates(impl.db, set, node_ids, [&](const std::string& mangled) {
      const auto& n = impl.kernel_name(mangled);
      return std::array<std::int64_t, 3>{n.short_id, n.demangled_id, n.mangled_id};
    });
  });
}

void Writer::write_kernel_args(const std::vector<KernelArgRecord>& args) {
  if (args.empty()) return;
  auto& db = impl_->db;
  in_transaction(db, [&] {
    auto insert = db.prepare(
        "INSERT OR REPLACE INTO kernel_arg(pid,correlation_id,param_index,value) VALUES(?,?,?,?)");
    for (const auto& a : args) Binder{insert}(a.pid)(a.correlation_id)(a.index)(i64(a.value)).run();
  });
}

void Writer::write_capture_windows(const std::vector<CaptureWindowRecord>& windows) {
  if (windows.empty()) return;
  auto& db = impl_->db;
  in_transaction(db, [&] {
    auto insert =
        db.prepare("INSERT INTO capture_window(pid,start_ns,end_ns,reason) VALUES(?,?,?,?)");
    for (const auto& w : windows) {
      Binder{insert}(w.pid)(i64(w.start_ns));
      if (w.end_ns != 0) {
        insert.bind(3, i64(w.end_ns));
      } else {
        insert.bind_null(3);
      }
      insert.bind(4, w.reason);
      insert.run();
    }
  });
}

void Writer::write_sampling(const SamplingRecord& sampling) {
  auto& db = impl_->db;
  in_transaction(db, [&] {
    for (const char* table : {"sampling", "sample_step", "sample_step_api"}) {
      auto erase = db.prepare(std::string("DELETE FROM ") + table + " WHERE pid = ?");
      Binder{erase}(sampling.pid).run();
    }
    auto head = db.prepare("INSERT INTO sampling(pid,every,steps,steps_lost) VALUES(?,?,?,?)");
    Binder{head}(sampling.pid)(sampling.every)(i64(sampling.steps))(i64(sampling.steps_lost)).run();
    auto step = db.prepare(
        "INSERT OR REPLACE INTO sample_step(pid,step,start_ns,end_ns,traced) VALUES(?,?,?,?,?)");
    auto api =
        db.prepare("INSERT OR REPLACE INTO sample_step_api(pid,step,api_id,calls) VALUES(?,?,?,?)");
    for (const auto& r : sampling.step_rows) {
      Binder{step}(sampling.pid)(i64(r.step))(i64(r.start_ns));
      if (r.end_ns != 0) {
        step.bind(4, i64(r.end_ns));
      } else {
        step.bind_null(4);
      }
      step.bind(5, std::int64_t{r.traced ? 1 : 0});
      step.run();
      for (const auto& [name, calls] : r.calls) {
        Binder{api}(sampling.pid)(i64(r.step))(impl_->intern(name))(i64(calls)).run();
      }
    }
  });
}

void Writer::write_device(const DeviceInfo& d) {
  auto insert = impl_->db.prepare(
      "INSERT OR IGNORE INTO device(id,uuid,name,compute_capability_major,compute_capability_minor,"
      "sm_count,core_clock_khz,memory_clock_khz,memory_bus_width_bits,global_memory_bytes,"
      "l2_cache_bytes,max_threads_per_sm,shared_memory_per_sm_bytes,registers_per_sm) "
      "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  Binder{insert}(d.id)(d.uuid)(d.name)(d.cc_major)(d.cc_minor)(d.sm_count)(d.core_clock_khz)(
      d.memory_clock_khz)(d.memory_bus_width_bits)(i64(d.global_memory_bytes))(d.l2_cache_bytes)(
      d.max_threads_per_sm)(d.shared_memory_per_sm_bytes)(d.registers_per_sm)
      .run();
}

namespace {

const int kFinalizeSteps = 3 + static_cast<int>(capture_index_count());

// Checkpoints the WAL and leaves WAL mode for a rollback journal; false (still in WAL mode) when
// another connection holds the capture, found at once rather than after the busy timeout.
bool leave_wal_now(Connection& db) {
  sqlite3_busy_timeout(db.handle(), 0);
  bool left = false;
  try {
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    db.exec("PRAGMA journal_mode = DELETE");
    auto mode = db.prepare("PRAGMA journal_mode");
    left = mode.step() && mode.raw_text(0) == "delete";
  } catch (const Error&) {
    left = false;
  }
  sqlite3_busy_timeout(db.handle(), 10000);
  return left;
}

// Index builds sort every row of their table: let SQLite's sorter use worker threads (PRAGMA
// threads; at most SQLITE_MAX_WORKER_THREADS, 8 in the default build) and sort in memory runs of
// up to 256 MiB (cache_size) before it merges, instead of the default 2 MiB.
void prepare_index_builds(Connection& db) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  db.exec("PRAGMA threads = " + std::to_string(std::min(cores, 8u) - 1));
  db.exec("PRAGMA cache_size = -262144");
}

void write_run_end(Connection& db, const RunEnd& end) {
  auto update = db.prepare(
      "UPDATE run SET end_utc_ns = ?, end_reason = ?, exit_status = ?, exit_signal = ?,"
      " dropped_records = (SELECT COALESCE(SUM(dropped_records), 0) FROM process),"
      " cuda_processes = (SELECT COUNT(*) FROM process) WHERE id = 1");
  Binder{update}(i64(end.end_utc_ns))(end.reason)(end.exit_status)(end.exit_signal).run();
}

// Writer::finalize's work on the capture open in `db`.
void finalize_open(Connection& db, const RunEnd& end, const FinalizeProgressCallback& progress) {
  int number = 0;
  auto step = [&](std::string_view what) {
    if (progress) progress(FinalizeProgress{what, ++number, kFinalizeSteps});
  };
  // Out of WAL mode before the indexes when no other process holds the capture: their pages are
  // then written once, into the file, instead of into the WAL and again into the file at the
  // checkpoint. A finalize killed midway leaves a hot rollback journal, with which the capture
  // opens as last committed: every record, no index, the run not finalized (docs/RELIABILITY.md,
  // "Journals and WAL files"; Writer.FinalizeKilledMidwayLeavesTheCaptureAsLastCommitted).
  step("checkpoint");
  const bool left_wal = leave_wal_now(db);
  prepare_index_builds(db);
  in_transaction(db, [&] {
    step("run end");
    write_run_end(db, end);
    for (std::size_t i = 0; i < capture_index_count(); ++i) {
      const IndexDefinition& index = capture_index(i);
      step(std::string("index ") + index.name);
      create_capture_index(db, index);  // a no-op for a live index or a lean layout's view
    }
  });
  step("journal");
  if (!left_wal) {  // another connection held it: as before, wait for it at the end
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    db.exec("PRAGMA journal_mode = DELETE");
  }
}

}  // namespace

void Writer::finalize(const RunEnd& end, const FinalizeProgressCallback& progress) {
  finalize_open(impl_->db, end, progress);
}

void finalize_capture(Connection& db, const RunEnd& end, const FinalizeProgressCallback& progress) {
  check_capture(db);  // as Writer::open does
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  finalize_open(db, end, progress);
}

void begin_finalize(Connection& db) {
  check_capture(db);
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  prepare_index_builds(db);
}

void end_finalize(Connection& db, const RunEnd& end) {
  in_transaction(db, [&] { write_run_end(db, end); });
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  db.exec("PRAGMA journal_mode = DELETE");
}

std::uint64_t Writer::records_written() const { return impl_->written; }

void RecordBatch::clear() {
  kernels.clear();
  memcpys.clear();
  memsets.clear();
  memory_events.clear();
  api_calls.clear();
  nvtx_ranges.clear();
  nvtx_marks.clear();
  syncs.clear();
  overheads.clear();
}

const char* to_string(MemcpyKind kind) {
  static constexpr std::array<const char*, 11> names = {
      "Unknown",          "Host-to-Device", "Device-to-Host",  "Host-to-Array",
      "Array-to-Host",    "Array-to-Array", "Array-to-Device", "Device-to-Array",
      "Device-to-Device", "Host-to-Host",   "Peer-to-Peer"};
  const auto i = static_cast<std::size_t>(kind);
  return i < names.size() ? names[i] : "Unknown";
}

const char* to_string(MemoryKind kind) {
  static constexpr std::array<const char*, 8> names = {"Unknown",       "Pageable",      "Pinned",
                                                       "Device",        "Array",         "Managed",
                                                       "Device static", "Managed static"};
  const auto i = static_cast<std::size_t>(kind);
  return i < names.size() ? names[i] : "Unknown";
}

}  // namespace fuselens::db
