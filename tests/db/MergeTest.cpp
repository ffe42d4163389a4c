// db::merge_captures on synthetic per-process captures written with db::Writer: rows, strings,
// ids, the clock shift of another host's input, and the refusals (db/include/fuselens/db/Merge.h).

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "TempDir.h"
#include "fuselens/db/Merge.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/Writer.h"

using namespace fuselens::db;

namespace {

// One rank's capture as `prof-run --per-process` writes it: one process, its rank, rows in every
// table the collector fills, times from `base` on.
struct Rank {
  std::string host;
  std::uint32_t pid = 0;
  std::int32_t rank = 0;
  std::int64_t clock_offset_ns = 0;
  std::uint64_t base = 0;
};

void write_capture(const std::string& path, const Rank& r) {
  RunInfo run;
  run.command_line = {"python", "train.py"};
  run.working_directory = "/w";
  run.host_name = r.host;
  run.fuselens_version = "test";
  run.trace = "cuda,nvtx,context";
  run.start_utc_ns = 1'700'000'000'000'000'000ull;
  Writer w = Writer::create(path, run);
  ProcessInfo p;
  p.pid = r.pid;
  p.parent_pid = 1;
  p.executable = "/usr/bin/python3";
  p.start_utc_ns = run.start_utc_ns;
  p.clock_offset_ns = r.clock_offset_ns;
  p.dropped_records = 2;
  w.write_process(p);
  ProcessRank rank;
  rank.pid = r.pid;
  rank.rank = r.rank;
  rank.local_rank = r.rank;
  rank.world_size = 2;
  rank.local_world_size = 2;
  rank.launcher = "torch";
  rank.host_name = r.host;
  w.write_process_rank(rank);
  DeviceInfo device;
  device.id = 0;
  device.uuid = "GPU-" + r.host;
  device.name = "H100";
  w.write_device(device);
  w.write_threads({{r.pid, r.pid, "python"}});

  RecordBatch b;
  const std::uint64_t t = r.base;
  for (std::uint32_t i = 0; i < 3; ++i) {
    KernelRecord k;
    k.pid = r.pid;
    k.start_ns = t + 100 * i;
    k.end_ns = t + 100 * i + 50;
    k.correlation_id = 10 + i;
    k.mangled_name = i == 2 ? "_Z12only_rank_" + std::to_string(r.rank) + "v" : "_Z9allreducev";
    b.kernels.push_back(k);
    ApiCallRecord a;
    a.pid = r.pid;
    a.tid = r.pid;
    a.name = "cudaLaunchKernel";
    a.start_ns = t + 100 * i - 20;
    a.end_ns = t + 100 * i - 10;
    a.correlation_id = 10 + i;
    b.api_calls.push_back(a);
  }
  MemcpyRecord c;
  c.pid = r.pid;
  c.start_ns = t + 400;
  c.end_ns = t + 450;
  c.copy_kind = MemcpyKind::PeerToPeer;
  c.bytes = 4096;
  b.memcpys.push_back(c);
  MemsetRecord s;
  s.pid = r.pid;
  s.start_ns = t + 460;
  s.end_ns = t + 470;
  b.memsets.push_back(s);
  MemoryEventRecord m;
  m.pid = r.pid;
  m.timestamp_ns = t + 5;
  m.bytes = 1 << 20;
  b.memory_events.push_back(m);
  NvtxRangeRecord ended;
  ended.pid = r.pid;
  ended.tid = r.pid;
  ended.text = "ProfilerStep#1";
  ended.start_ns = t;
  ended.end_ns = t + 500;
  b.nvtx_ranges.push_back(ended);
  NvtxRangeRecord open = ended;
  open.text = "rank " + std::to_string(r.rank);
  open.end_ns.reset();
  b.nvtx_ranges.push_back(open);
  NvtxMarkRecord mark;
  mark.pid = r.pid;
  mark.tid = r.pid;
  mark.text = "mark";
  mark.timestamp_ns = t + 7;
  b.nvtx_marks.push_back(mark);
  SyncRecord sync;
  sync.pid = r.pid;
  sync.start_ns = t + 480;
  sync.end_ns = t + 490;
  b.syncs.push_back(sync);
  OverheadRecord o;
  o.pid = r.pid;
  o.start_ns = t + 1;
  o.end_ns = t + 2;
  b.overheads.push_back(o);
  w.write(b);

  CallingContextTree tree;
  tree.pid = r.pid;
  tree.frames = {{FrameKind::Native, "/lib/x.so", 0x10, "main", "x.cpp", 3},
                 {FrameKind::Python, "", 0, "train_step_" + std::to_string(r.rank), "train.py", 9}};
  tree.nodes = {{0, 0}, {0, 0}, {1, 1}};
  tree.contexts = {{10, r.pid, 2}, {11, r.pid, 1}};
  w.write_calling_contexts(tree);
  w.write_kernel_args({{r.pid, 10, 0, 0x7f0000001000ull}});
  w.write_capture_windows({{r.pid, t, t + 600, "steps"}});
  // Sampled tracing (schema 10): a step traced and one still open at exit.
  w.write_sampling({r.pid,
                    10,
                    2,
                    0,
                    {{0, t + 10, t + 20, false, {{"cuLaunchKernel", 3}}},
                     {1, t + 30, 0, true, {{"cuMemcpyAsync", 1}}}}});
  RunEnd end;
  end.reason = EndReason::Exited;
  end.exit_status = 0;
  end.end_utc_ns = run.start_utc_ns + 1000;
  w.finalize(end);
}

// Raw SQL on a capture, outside the code under test.
class Sql {
 public:
  explicit Sql(const std::string& path) {
    EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  }
  ~Sql() { sqlite3_close(db_); }
  // Every row of `sql`, each value as text ("NULL" for NULL).
  std::vector<std::vector<std::string>> rows(const std::string& sql) const {
    sqlite3_stmt* s = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr), SQLITE_OK) << sql;
    std::vector<std::vector<std::string>> out;
    while (s != nullptr && sqlite3_step(s) == SQLITE_ROW) {
      std::vector<std::string> row;
      for (int i = 0; i < sqlite3_column_count(s); ++i) {
        const auto* p = sqlite3_column_text(s, i);
        row.emplace_back(p ? reinterpret_cast<const char*>(p) : "NULL");
      }
      out.push_back(row);
    }
    sqlite3_finalize(s);
    return out;
  }
  std::int64_t integer(const std::string& sql) const { return std::stoll(rows(sql).at(0).at(0)); }
  void exec(const std::string& sql) {
    ASSERT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sql;
  }

 private:
  sqlite3* db_ = nullptr;
};

// The tables the collector fills and the time columns of each (db/schema.sql).
const std::map<std::string, std::vector<std::string>> kTimeColumns{
    {"kernel", {"start_ns", "end_ns"}},   {"memcpy", {"start_ns", "end_ns"}},
    {"memset", {"start_ns", "end_ns"}},   {"memory_event", {"timestamp_ns"}},
    {"api_call", {"start_ns", "end_ns"}}, {"nvtx_range", {"start_ns", "end_ns"}},
    {"nvtx_mark", {"timestamp_ns"}},      {"sync_event", {"start_ns", "end_ns"}},
    {"overhead", {"start_ns", "end_ns"}}, {"capture_window", {"start_ns", "end_ns"}}};
const std::vector<std::string> kPidTables{"process",  "thread",      "process_rank",
                                          "cct_node", "api_context", "kernel_arg"};

struct Fixture {
  fuselens::test::TempDir dir;
  std::string a = dir.file("rank0.sqlite"), b = dir.file("rank1.sqlite"),
              out = dir.file("merged.sqlite");
};

// Kernel names of `pid` in time order, resolved through strings.
std::vector<std::vector<std::string>> kernel_names(const Sql& sql, std::uint32_t pid) {
  return sql.rows(
      "SELECT s.value, d.value, m.value FROM kernel k JOIN strings s ON s.id = k.short_name_id "
      "JOIN strings d ON d.id = k.demangled_name_id JOIN strings m ON m.id = k.mangled_name_id "
      "WHERE k.pid = " +
      std::to_string(pid) + " ORDER BY k.start_ns");
}

// The calling context of each API call of `pid`: correlation id, the node's frame function and
// its parent's frame function.
std::vector<std::vector<std::string>> contexts(const Sql& sql, std::uint32_t pid) {
  return sql.rows(
      "SELECT c.correlation_id, f.function, pf.function FROM api_context c "
      "JOIN cct_node n ON n.id = c.cct_node_id "
      "LEFT JOIN (SELECT frame.id, s.value AS function FROM frame "
      "           LEFT JOIN strings s ON s.id = frame.function_id) f ON f.id = n.frame_id "
      "LEFT JOIN cct_node p ON p.id = n.parent_id "
      "LEFT JOIN (SELECT frame.id, s.value AS function FROM frame "
      "           LEFT JOIN strings s ON s.id = frame.function_id) pf ON pf.id = p.frame_id "
      "WHERE c.pid = " +
      std::to_string(pid) + " ORDER BY c.correlation_id");
}

std::set<std::string> string_values(const Sql& sql) {
  std::set<std::string> values;
  for (const auto& row : sql.rows("SELECT value FROM strings")) values.insert(row[0]);
  return values;
}

}  // namespace

TEST(Merge, SameHostKeepsTimesAndEveryRow) {
  Fixture f;
  write_capture(f.a, {"node-a", 100, 0, 1'000'000, 5'000'000'000});
  write_capture(f.b, {"node-a", 200, 1, 1'000'040, 5'000'000'300});
  const MergeReport report = merge_captures({f.a, f.b}, f.out);

  Sql a(f.a), b(f.b), merged(f.out);
  // Every table's rows of both inputs (the derived summary tables are not carried).
  for (const auto& [table, columns] : kTimeColumns) {
    EXPECT_EQ(
        merged.integer("SELECT COUNT(*) FROM " + table),
        a.integer("SELECT COUNT(*) FROM " + table) + b.integer("SELECT COUNT(*) FROM " + table))
        << table;
  }
  for (const std::string table :
       {"process", "thread", "process_rank", "cct_node", "api_context", "kernel_arg", "frame",
        "capture_window", "sampling", "sample_step", "sample_step_api"}) {
    EXPECT_EQ(
        merged.integer("SELECT COUNT(*) FROM " + table),
        a.integer("SELECT COUNT(*) FROM " + table) + b.integer("SELECT COUNT(*) FROM " + table))
        << table;
  }
  // One GPU ordinal 0 per host; both inputs name theirs after node-a: one row, no note.
  EXPECT_EQ(merged.integer("SELECT COUNT(*) FROM device"), 1);
  EXPECT_TRUE(report.notes.empty());
  // Strings: the union of both inputs' values, each once.
  std::set<std::string> expected = string_values(a);
  for (const auto& v : string_values(b)) expected.insert(v);
  EXPECT_EQ(string_values(merged), expected);
  EXPECT_EQ(merged.integer("SELECT COUNT(*) FROM strings"),
            static_cast<std::int64_t>(expected.size()));
  // Names and calling contexts resolve as in each input.
  EXPECT_EQ(kernel_names(merged, 100), kernel_names(a, 100));
  EXPECT_EQ(kernel_names(merged, 200), kernel_names(b, 200));
  EXPECT_EQ(contexts(merged, 100), contexts(a, 100));
  EXPECT_EQ(contexts(merged, 200), contexts(b, 200));
  // One host, one clock: no shift, times as recorded.
  for (const auto& [table, columns] : kTimeColumns) {
    for (const auto& c : columns) {
      EXPECT_EQ(merged.rows("SELECT " + c + " FROM " + table + " WHERE pid = 200 ORDER BY id"),
                b.rows("SELECT " + c + " FROM " + table + " ORDER BY id"))
          << table << "." << c;
    }
  }
  // The run row of the first input, processes summed; merge_source says where each came from.
  EXPECT_EQ(merged.rows("SELECT host_name, command_line, end_reason FROM run"),
            a.rows("SELECT host_name, command_line, end_reason FROM run"));
  EXPECT_EQ(
      merged.integer("SELECT cuda_processes FROM run"),
      a.integer("SELECT cuda_processes FROM run") + b.integer("SELECT cuda_processes FROM run"));
  EXPECT_EQ(merged.integer("SELECT dropped_records FROM run"), 4);  // 2 per process
  EXPECT_EQ(merged.rows("SELECT pid, input_index, path, host_name, shift_ns FROM merge_source "
                        "ORDER BY pid"),
            (std::vector<std::vector<std::string>>{{"100", "0", f.a, "node-a", "0"},
                                                   {"200", "1", f.b, "node-a", "0"}}));
  ASSERT_EQ(report.hosts.size(), 1u);
  EXPECT_TRUE(report.hosts[0].reference);
  EXPECT_EQ(report.hosts[0].processes, 2u);
  EXPECT_EQ(report.hosts[0].offset_spread_ns, 1'000'040 - 1'000'000);
  EXPECT_EQ(report.hosts[0].shift_ns, 0);
  EXPECT_EQ(merged.integer("SELECT clock_offset_ns FROM process WHERE pid = 200"), 1'000'040);
  // The merged file is a capture the Reader accepts, with both ranks.
  Reader reader(f.out);
  EXPECT_EQ(reader.processes().size(), 2u);
  EXPECT_EQ(reader.process_ranks().size(), 2u);
  EXPECT_EQ(reader.run().cuda_processes, 2);
}

TEST(Merge, OtherHostIsShiftedByTheOffsetDifference) {
  Fixture f;
  const std::int64_t offset_a = 1'000'000'000, offset_b = 1'000'000'000 - 7'500'123;
  write_capture(f.a, {"node-a", 100, 0, offset_a, 5'000'000'000});
  write_capture(f.b, {"node-b", 100 + 1, 1, offset_b, 5'010'000'000});
  const MergeReport report = merge_captures({f.a, f.b}, f.out);
  const std::int64_t shift = offset_b - offset_a;  // UTC = t_b + offset_b = t_a' + offset_a

  Sql a(f.a), b(f.b), merged(f.out);
  for (const auto& [table, columns] : kTimeColumns) {
    for (const auto& c : columns) {
      const auto original = b.rows("SELECT " + c + " FROM " + table + " ORDER BY id");
      const auto moved =
          merged.rows("SELECT " + c + " FROM " + table + " WHERE pid = 101 ORDER BY id");
      ASSERT_EQ(moved.size(), original.size()) << table;
      ASSERT_FALSE(original.empty()) << table;
      for (std::size_t i = 0; i < original.size(); ++i) {
        if (original[i][0] == "NULL") {
          EXPECT_EQ(moved[i][0], "NULL") << table << "." << c;  // an open NVTX range stays open
        } else {
          EXPECT_EQ(std::stoll(moved[i][0]), std::stoll(original[i][0]) + shift)
              << table << "." << c;
        }
      }
      // The reference input is untouched.
      EXPECT_EQ(merged.rows("SELECT " + c + " FROM " + table + " WHERE pid = 100 ORDER BY id"),
                a.rows("SELECT " + c + " FROM " + table + " ORDER BY id"))
          << table << "." << c;
    }
  }
  // The sampled steps move with their process; a step open at exit stays open; API names are
  // the moved process's own.
  for (const std::string c : {"start_ns", "end_ns"}) {
    const auto original = b.rows("SELECT " + c + " FROM sample_step ORDER BY step");
    const auto moved =
        merged.rows("SELECT " + c + " FROM sample_step WHERE pid = 101 ORDER BY step");
    ASSERT_EQ(moved.size(), original.size());
    for (std::size_t i = 0; i < original.size(); ++i) {
      if (original[i][0] == "NULL") {
        EXPECT_EQ(moved[i][0], "NULL");
      } else {
        EXPECT_EQ(std::stoll(moved[i][0]), std::stoll(original[i][0]) + shift) << c;
      }
    }
  }
  EXPECT_EQ(merged.rows("SELECT s.value, a.calls FROM sample_step_api a JOIN strings s ON s.id = "
                        "a.api_id WHERE a.pid = 101 ORDER BY a.step"),
            b.rows("SELECT s.value, a.calls FROM sample_step_api a JOIN strings s ON s.id = "
                   "a.api_id ORDER BY a.step"));
  // UTC = t + clock_offset_ns still holds for the moved process.
  EXPECT_EQ(merged.integer("SELECT clock_offset_ns FROM process WHERE pid = 101"),
            offset_b - shift);
  EXPECT_EQ(merged.integer("SELECT shift_ns FROM merge_source WHERE pid = 101"), shift);
  EXPECT_EQ(merged.integer("SELECT shift_ns FROM merge_source WHERE pid = 100"), 0);
  EXPECT_EQ(merged.rows("SELECT host_name FROM merge_source ORDER BY pid"),
            (std::vector<std::vector<std::string>>{{"node-a"}, {"node-b"}}));
  // UTC timestamps are not moved.
  EXPECT_EQ(merged.integer("SELECT start_utc_ns FROM process WHERE pid = 101"),
            b.integer("SELECT start_utc_ns FROM process"));
  ASSERT_EQ(report.hosts.size(), 2u);
  EXPECT_EQ(report.hosts[1].host_name, "node-b");
  EXPECT_EQ(report.hosts[1].shift_ns, shift);
  EXPECT_FALSE(report.hosts[1].reference);
  // Both hosts have a GPU 0 and they differ: one row kept, a note.
  EXPECT_EQ(merged.rows("SELECT uuid FROM device"),
            (std::vector<std::vector<std::string>>{{"GPU-node-a"}}));
  EXPECT_EQ(report.notes.size(), 1u);
  Reader reader(f.out);
  EXPECT_EQ(reader.processes().size(), 2u);
}

TEST(Merge, HostOffsetIsTheMedianOfItsProcesses) {
  Fixture f;
  const std::string c = f.dir.file("rank2.sqlite"), d = f.dir.file("rank3.sqlite");
  write_capture(f.a, {"node-a", 1, 0, 9'000, 5'000'000'000});
  write_capture(f.b, {"node-b", 2, 1, 4'000, 5'000'000'000});
  write_capture(c, {"node-b", 3, 2, 4'010, 5'000'000'000});
  write_capture(d, {"node-b", 4, 3, 4'100, 5'000'000'000});
  const MergeReport report = merge_captures({f.a, f.b, c, d}, f.out);
  ASSERT_EQ(report.hosts.size(), 2u);
  EXPECT_EQ(report.hosts[1].offset_ns, 4'010);  // the middle of 4000, 4010, 4100
  EXPECT_EQ(report.hosts[1].offset_spread_ns, 100);
  EXPECT_EQ(report.hosts[1].shift_ns, 4'010 - 9'000);
  Sql merged(f.out);
  // Every process of one host gets the same shift: they share one clock.
  EXPECT_EQ(merged.rows("SELECT DISTINCT shift_ns FROM merge_source WHERE host_name = 'node-b'"),
            (std::vector<std::vector<std::string>>{{std::to_string(4'010 - 9'000)}}));
}

TEST(Merge, RefusesTheSameFileTwice) {
  Fixture f;
  write_capture(f.a, {"node-a", 100, 0, 1, 5'000'000'000});
  EXPECT_THROW(merge_captures({f.a, f.a}, f.out), MergeError);
  const std::string link = f.dir.file("link.sqlite");
  std::filesystem::create_hard_link(f.a, link);
  try {
    merge_captures({f.a, link}, f.out);
    FAIL() << "merged a file with itself";
  } catch (const MergeError& e) {
    EXPECT_NE(std::string(e.what()).find("same file"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(f.out));
}

TEST(Merge, RefusesAnExistingOutput) {
  Fixture f;
  write_capture(f.a, {"node-a", 100, 0, 1, 5'000'000'000});
  write_capture(f.b, {"node-a", 200, 1, 1, 5'000'000'000});
  EXPECT_THROW(merge_captures({f.a, f.b}, f.b), Error);  // the output is an input
  Sql b(f.b);
  EXPECT_EQ(b.integer("SELECT COUNT(*) FROM process"), 1);  // untouched
  { std::ofstream(f.out) << "x"; }
  EXPECT_THROW(merge_captures({f.a, f.b}, f.out), Error);
}

TEST(Merge, RefusesNonCapturesAndOtherSchemaVersions) {
  Fixture f;
  write_capture(f.a, {"node-a", 100, 0, 1, 5'000'000'000});
  write_capture(f.b, {"node-a", 200, 1, 1, 5'000'000'000});
  const std::string text = f.dir.file("notes.txt");
  { std::ofstream(text) << "not a database\n"; }
  EXPECT_THROW(merge_captures({f.a, text}, f.out), Error);
  EXPECT_THROW(merge_captures({f.a, f.dir.file("missing.sqlite")}, f.out), Error);

  { Sql(f.b).exec("PRAGMA user_version = " + std::to_string(kSchemaVersion + 1)); }
  try {
    merge_captures({f.a, f.b}, f.out);
    FAIL() << "merged a newer schema";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("upgrade FuseLens"), std::string::npos) << e.what();
  }
  { Sql(f.b).exec("PRAGMA user_version = 7"); }
  try {
    merge_captures({f.a, f.b}, f.out);
    FAIL() << "merged an older schema";
  } catch (const MergeError& e) {
    EXPECT_NE(std::string(e.what()).find("schema version 7"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(f.out));
}

// A version-8 capture (no autograd sequence numbers in api_context) still merges with a
// current one: its calls get NULL sequence numbers (failed before: "lacks column forward_seq").
TEST(Merge, ReadsVersion8CapturesWithoutTheSequenceColumns) {
  Fixture f;
  write_capture(f.a, {"node-a", 100, 0, 1, 5'000'000'000});
  write_capture(f.b, {"node-a", 200, 1, 1, 5'000'000'000});
  {
    Sql b(f.b);
    b.exec("ALTER TABLE api_context DROP COLUMN forward_seq");
    b.exec("ALTER TABLE api_context DROP COLUMN backward_seq");
    b.exec("PRAGMA user_version = 8");
  }
  merge_captures({f.a, f.b}, f.out);
  Sql b(f.b), merged(f.out);
  EXPECT_EQ(merged.integer("SELECT COUNT(*) FROM api_context WHERE pid = 200"),
            b.integer("SELECT COUNT(*) FROM api_context"));
  EXPECT_EQ(merged.integer("SELECT COUNT(*) FROM api_context WHERE pid = 200 AND "
                           "(forward_seq IS NOT NULL OR backward_seq IS NOT NULL)"),
            0);
}

TEST(Merge, RefusesARepeatedPid) {
  Fixture f;
  write_capture(f.a, {"node-a", 100, 0, 1'000, 5'000'000'000});
  write_capture(f.b, {"node-b", 100, 1, 2'000, 5'000'000'000});
  try {
    merge_captures({f.a, f.b}, f.out);
    FAIL() << "mixed two processes of pid 100";
  } catch (const MergeError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("pid 100"), std::string::npos) << what;
    EXPECT_NE(what.find("node-b"), std::string::npos) << what;
  }
  std::filesystem::remove(f.b);
  write_capture(f.b, {"node-a", 100, 1, 2'000, 5'000'000'000});
  try {
    merge_captures({f.a, f.b}, f.out);
    FAIL() << "merged one process twice";
  } catch (const MergeError& e) {
    EXPECT_NE(std::string(e.what()).find("captured twice"), std::string::npos) << e.what();
  }
}

TEST(Merge, RefusesAHostWithoutAClockOffset) {
  Fixture f;
  write_capture(f.a, {"node-a", 100, 0, 1'000, 5'000'000'000});
  write_capture(f.b, {"node-b", 200, 1, 0, 5'000'000'000});  // never measured
  EXPECT_THROW(merge_captures({f.a, f.b}, f.out), MergeError);
}

TEST(Merge, RefusesAShiftOutOfTheClockRange) {
  Fixture f;
  // Host b's UTC offset is 2^62 larger: its times would land beyond kMaxTimestampNs.
  write_capture(f.a, {"node-a", 100, 0, 1'000, 5'000'000'000});
  write_capture(f.b, {"node-b", 200, 1, 1'000 + kMaxTimestampNs, 5'000'000'000});
  try {
    merge_captures({f.a, f.b}, f.out);
    FAIL() << "shifted times out of range";
  } catch (const MergeError& e) {
    EXPECT_NE(std::string(e.what()).find("2^62"), std::string::npos) << e.what();
  }
}

TEST(Merge, RefusesADanglingStringReference) {
  Fixture f;
  write_capture(f.a, {"node-a", 100, 0, 1'000, 5'000'000'000});
  write_capture(f.b, {"node-a", 200, 1, 1'000, 5'000'000'000});
  { Sql(f.b).exec("UPDATE kernel SET short_name_id = 999999 WHERE id = 1"); }
  try {
    merge_captures({f.a, f.b}, f.out);
    FAIL() << "merged a kernel without a name";
  } catch (const MergeError& e) {
    EXPECT_NE(std::string(e.what()).find("string 999999"), std::string::npos) << e.what();
  }
}

TEST(Merge, MergedCaptureMergesAgain) {
  Fixture f;
  const std::string c = f.dir.file("rank2.sqlite"), twice = f.dir.file("twice.sqlite");
  write_capture(f.a, {"node-a", 1, 0, 1'000, 5'000'000'000});
  write_capture(f.b, {"node-a", 2, 1, 1'000, 5'000'000'000});
  write_capture(c, {"node-a", 3, 2, 1'000, 5'000'000'000});
  merge_captures({f.a, f.b}, f.out);
  merge_captures({f.out, c}, twice);
  Sql merged(twice);
  EXPECT_EQ(merged.integer("SELECT COUNT(*) FROM kernel"), 9);
  EXPECT_EQ(merged.integer("SELECT cuda_processes FROM run"), 3);
  EXPECT_EQ(kernel_names(merged, 3), kernel_names(Sql(c), 3));
  EXPECT_EQ(contexts(merged, 2), contexts(Sql(f.b), 2));
}

TEST(Merge, WritesIntoAnEmptyFileMadeForIt) {
  Fixture f;
  write_capture(f.a, {"node-a", 100, 0, 1, 5'000'000'000});
  write_capture(f.b, {"node-a", 200, 1, 1, 5'000'000'000});
  { std::ofstream touch(f.out); }
  merge_captures({f.a, f.b}, f.out);
  EXPECT_EQ(Reader(f.out).processes().size(), 2u);
}

TEST(Merge, RefusesACaptureWithoutARunRow) {
  Fixture f;
  write_capture(f.a, {"node-a", 100, 0, 1, 5'000'000'000});
  write_capture(f.b, {"node-a", 200, 1, 1, 5'000'000'000});
  { Sql(f.b).exec("DELETE FROM run"); }
  try {
    merge_captures({f.a, f.b}, f.out);
    FAIL() << "merged a capture without a run row";
  } catch (const Error& e) {  // the Reader's refusal, or merge's own
    EXPECT_NE(std::string(e.what()).find("no run r"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(f.b), std::string::npos) << e.what();
  }
}

TEST(Merge, RefusesIdsTooFarApartToRenumber) {
  Fixture f;
  write_capture(f.a, {"node-a", 100, 0, 1, 5'000'000'000});
  write_capture(f.b, {"node-a", 200, 1, 1, 5'000'000'000});
  // Ids 1 .. 2^63 - 1 cannot follow the first input's ids without overflowing.
  { Sql(f.b).exec("UPDATE kernel SET id = 9223372036854775807 WHERE id = 3"); }
  try {
    merge_captures({f.a, f.b}, f.out);
    FAIL() << "renumbered ids past 2^63";
  } catch (const MergeError& e) {
    EXPECT_NE(std::string(e.what()).find("too far apart"), std::string::npos) << e.what();
  }
}
