// The lean trace layout (issue 21; db/include/fuselens/db/Layout.h, `prof-run --layout lean`):
// the same records written through db::Writer in the full and the lean layout read back with
// the same values in every column, and every analysis (`prof-analyze` summary, cct, flags,
// steps, the timeline exports) prints the same; damaged lean rows are refused in one line;
// older captures (full layout, schema versions 1 to 9) still read; merge refuses a lean capture.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "Subprocess.h"
#include "TestSupport.h"
#include "fuselens/db/Layout.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/Writer.h"

#ifndef PROF_ANALYZE_PATH
#error "PROF_ANALYZE_PATH must name the prof-analyze binary"
#endif
#ifndef FUSELENS_TEST_DATA_DIR
#error "FUSELENS_TEST_DATA_DIR must name tests/data"
#endif

namespace fuselens::analyzer {
namespace {

using fuselens::test::Result;
using fuselens::test::run_cli;
using test::TempDir;
namespace fs = std::filesystem;

constexpr std::uint32_t kPid = 4242, kOtherTid = 4243;

// A run of two threads launching kernels of five names on three streams, with copies, memsets,
// allocations, NVTX step ranges, one CUDA graph replay, calling contexts, and starts spread over
// 6 s so that the lean layout starts new config rows (more than 2^31 ns from a base).
struct Records {
  std::vector<db::RecordBatch> batches;
  db::CallingContextTree tree;
  std::size_t kernels = 0;
};

Records make_records() {
  Records r;
  std::mt19937 rng(7);
  const std::vector<std::string> names = {"_Z4gemmILi64EEvPfi", "_Z4reluPf", "_Z6reducePfi",
                                          "_Z7softmaxPKfPfi", "_Z4copyPfS_"};
  r.tree.pid = kPid;
  r.tree.nodes.push_back({0, 0});
  for (std::uint32_t i = 0; i < 12; ++i) {
    db::FrameInfo f;
    f.module = i % 3 == 0 ? "/usr/lib/libcuda.so.1" : "/work/app/train";
    f.module_offset = 0x1000 + 16 * i;
    f.function = "site_" + std::to_string(i);
    f.file = "train.cpp";
    f.line = 10 + i;
    r.tree.frames.push_back(f);
    r.tree.nodes.push_back({i / 3, i});
  }
  std::uint64_t t = 1'700'000'000'000'000'000ull;
  std::uint32_t correlation = 100;
  for (int batch = 0; batch < 3; ++batch) {
    db::RecordBatch b;
    for (int step = 0; step < 8; ++step) {
      db::NvtxRangeRecord range;
      range.pid = kPid;
      range.tid = kPid;
      range.text = "ProfilerStep#" + std::to_string(batch * 8 + step);
      range.start_ns = t;
      for (int i = 0; i < 40; ++i) {
        db::ApiCallRecord a;
        a.pid = kPid;
        a.tid = i % 7 == 6 ? kOtherTid : kPid;
        a.callback_id = 211;
        a.name = i % 9 == 8 ? "cudaMemcpyAsync" : "cudaLaunchKernel";
        a.return_code = i % 31 == 30 ? 2 : 0;
        a.start_ns = t;
        t += 2000 + rng() % 4000;
        a.end_ns = t;
        a.correlation_id = ++correlation;
        r.tree.contexts.push_back(
            {a.correlation_id, a.tid, 1 + static_cast<std::uint32_t>(rng() % 12)});
        b.api_calls.push_back(a);
        if (a.name == "cudaMemcpyAsync") {
          db::MemcpyRecord m;
          m.pid = kPid;
          m.start_ns = t + 1000;
          m.end_ns = m.start_ns + 8000;
          m.stream_id = 7;
          m.correlation_id = a.correlation_id;
          m.copy_kind = db::MemcpyKind::HostToDevice;
          m.bytes = 1 << 20;
          b.memcpys.push_back(m);
          continue;
        }
        db::KernelRecord k;
        k.pid = kPid;
        k.start_ns = t + 3000 + rng() % 5000;
        k.end_ns = k.start_ns + 1000 + rng() % 40000;
        k.stream_id = 7 + static_cast<std::uint32_t>(rng() % 3);
        k.context_id = 1;
        k.correlation_id = a.correlation_id;
        k.grid_x = 64 << (rng() % 3);
        k.grid_y = k.grid_z = 1;
        k.block_x = 256;
        k.block_y = k.block_z = 1;
        k.registers_per_thread = 40;
        k.dynamic_shared_bytes = i % 2 ? 4096 : 0;
        k.mangled_name = names[rng() % names.size()];
        if (step == 5 && i < 4) {  // one graph replayed: kernels of one launch call
          k.graph_id = 3;
          k.graph_node_id = 900 + static_cast<std::uint64_t>(i);
        }
        b.kernels.push_back(k);
      }
      db::MemsetRecord s;
      s.pid = kPid;
      s.start_ns = t;
      s.end_ns = t + 500;
      s.correlation_id = correlation;
      s.bytes = 4096;
      b.memsets.push_back(s);
      range.end_ns = t + 100;
      b.nvtx_ranges.push_back(range);
    }
    r.kernels += b.kernels.size();
    r.batches.push_back(std::move(b));
    t += 2'500'000'000ull;  // 2.5 s between batches: new config rows in the lean layout
  }
  return r;
}

void write_capture(const std::string& path, const Records& r, db::TraceLayout layout) {
  db::RunInfo run;
  run.command_line = {"./train", "--steps", "24"};
  run.host_name = "host-a";
  run.fuselens_version = "test";
  run.trace = "cuda,api,nvtx,context";
  run.start_utc_ns = 1'700'000'000'000'000'000ull;
  db::Writer w = db::Writer::create(path, run, layout);
  EXPECT_EQ(w.layout(), layout);
  db::ProcessInfo p;
  p.pid = kPid;
  p.executable = "/work/app/train";
  p.start_utc_ns = run.start_utc_ns;
  w.write_process(p);
  w.write_threads({{kPid, kPid, "main"}, {kPid, kOtherTid, "loader"}});
  db::DeviceInfo d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.uuid = "GPU-0";
  d.cc_major = 9;
  d.sm_count = 132;
  w.write_device(d);
  for (const auto& b : r.batches) w.write(b);
  w.write_calling_contexts(r.tree);
  w.finalize({db::EndReason::Exited, 0, std::nullopt, 1});
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every row of `sql` through a Reader's connection (its views), one line per row, each column
// with its type and value.
std::string rows_of(db::Reader& reader, const std::string& sql) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(reader.connection().handle(), sql.c_str(), -1, &s, nullptr) != SQLITE_OK)
    return "error: " + std::string(sqlite3_errmsg(reader.connection().handle()));
  std::string out;
  while (sqlite3_step(s) == SQLITE_ROW) {
    for (int c = 0; c < sqlite3_column_count(s); ++c) {
      const auto* text = sqlite3_column_text(s, c);
      out += std::to_string(sqlite3_column_type(s, c)) + ":" +
             (text != nullptr ? reinterpret_cast<const char*>(text) : "NULL") + "|";
    }
    out += "\n";
  }
  sqlite3_finalize(s);
  return out;
}

class LeanLayout : public ::testing::Test {
 protected:
  void SetUp() override {
    records_ = make_records();
    fs::create_directories(dir_.path() / "full");
    fs::create_directories(dir_.path() / "lean");
    full_ = dir_.file("full/capture.sqlite");
    lean_ = dir_.file("lean/capture.sqlite");
    write_capture(full_, records_, db::TraceLayout::Full);
    write_capture(lean_, records_, db::TraceLayout::Lean);
  }
  TempDir dir_;
  Records records_;
  std::string full_, lean_;
};

TEST_F(LeanLayout, EveryColumnReadsBackAsInTheFullLayout) {
  db::Reader full(full_), lean(lean_);
  EXPECT_FALSE(full.lean());
  ASSERT_TRUE(lean.lean());
  EXPECT_EQ(lean.schema_version(), db::kSchemaVersion);
  // The lean capture really is lean: no kernel or api_call table, the lean tables hold the rows.
  EXPECT_EQ(lean.query_int("SELECT COUNT(*) FROM main.sqlite_master WHERE type = 'table' AND "
                           "name IN ('kernel', 'api_call')"),
            0);
  EXPECT_EQ(lean.query_int("SELECT COUNT(*) FROM kernel_lean"),
            static_cast<std::int64_t>(records_.kernels));
  // Starts are stored within 2^31 ns of their config's base although the run spans more.
  EXPECT_GT(full.query_int("SELECT MAX(end_ns) - MIN(start_ns) FROM kernel"),
            2 * db::kLeanRebaseNs);
  EXPECT_LT(lean.query_int("SELECT MAX(ABS(start_ns)) FROM kernel_lean"), db::kLeanRebaseNs);
  EXPECT_LT(lean.query_int("SELECT MAX(ABS(start_ns)) FROM api_call_lean"), db::kLeanRebaseNs);
  for (const char* sql :
       {"SELECT * FROM kernel ORDER BY id", "SELECT * FROM api_call ORDER BY id"}) {
    const std::string expected = rows_of(full, sql);
    EXPECT_FALSE(expected.empty());
    EXPECT_EQ(rows_of(lean, sql), expected) << sql;
  }
  // Smaller, derived from the two files rather than a fixed figure.
  EXPECT_LT(fs::file_size(lean_), fs::file_size(full_));
}

TEST_F(LeanLayout, AppendingAfterOpenKeepsTheLayout) {
  {
    db::Writer w = db::Writer::open(lean_);
    EXPECT_EQ(w.layout(), db::TraceLayout::Lean);
    w.write(records_.batches.front());
  }
  {
    db::Writer w = db::Writer::open(full_);
    EXPECT_EQ(w.layout(), db::TraceLayout::Full);
    w.write(records_.batches.front());
  }
  db::Reader full(full_), lean(lean_);
  // Rows added after the finalized ones: ids continue, values as in the full layout.
  const char* sql = "SELECT * FROM kernel ORDER BY id";
  EXPECT_EQ(rows_of(lean, sql), rows_of(full, sql));
  EXPECT_EQ(lean.query_int("SELECT COUNT(*) FROM kernel"),
            static_cast<std::int64_t>(records_.kernels + records_.batches.front().kernels.size()));
}

TEST_F(LeanLayout, AnalysesPrintTheSameAsOnTheFullLayout) {
  const std::vector<std::vector<std::string>> commands = {
      {"summary", "--format", "json"},
      {"summary", "--names", "short"},
      {"cct", "--view", "top-down", "--format", "json"},
      {"cct", "--view", "bottom-up"},
      {"cct", "--view", "flat", "--format", "csv"},
      {"flags", "--format", "json"},
      {"steps", "--format", "json"},
      {"summary", "--window", "steps:2-5", "--format", "json"},
  };
  for (const auto& command : commands) {
    std::vector<std::string> on_full = command, on_lean = command;
    on_full.insert(on_full.begin() + 1, full_);
    on_lean.insert(on_lean.begin() + 1, lean_);
    const Result a = run_cli(dir_, on_full), b = run_cli(dir_, on_lean);
    std::string lean_out = b.out, lean_err = b.err;
    // The outputs may name the capture: the lean one's path reads as the full one's.
    for (std::string* s : {&lean_out, &lean_err}) {
      for (auto at = s->find(lean_); at != std::string::npos; at = s->find(lean_, at))
        s->replace(at, lean_.size(), full_);
    }
    EXPECT_EQ(a.status, 0) << command[0] << ": " << a.err;
    EXPECT_EQ(b.status, a.status) << command[0];
    EXPECT_FALSE(a.out.empty()) << command[0];
    EXPECT_EQ(lean_out, a.out) << command[0] << " " << command[1];
    EXPECT_EQ(lean_err, a.err) << command[0] << " " << command[1];
  }
  for (const char* format : {"chrome-trace", "json", "csv", "html"}) {
    const std::string a = dir_.file(std::string("full.") + format),
                      b = dir_.file(std::string("lean.") + format);
    ASSERT_EQ(run_cli(dir_, {"export", full_, "--format", format, "-o", a}).status, 0) << format;
    ASSERT_EQ(run_cli(dir_, {"export", lean_, "--format", format, "-o", b}).status, 0) << format;
    std::string lean_text = read_file(b);
    for (auto at = lean_text.find(lean_); at != std::string::npos; at = lean_text.find(lean_, at))
      lean_text.replace(at, lean_.size(), full_);
    EXPECT_FALSE(lean_text.empty());
    EXPECT_EQ(lean_text, read_file(a)) << format;
  }
}

TEST_F(LeanLayout, ConvertGivesTheWriterLayoutsValues) {
  const std::string converted = dir_.file("converted.sqlite");
  const Result r = run_cli(dir_, {"convert", full_, "--layout", "lean", "-o", converted});
  ASSERT_EQ(r.status, 0) << r.err;
  db::Reader full(full_), lean(converted);
  ASSERT_TRUE(lean.lean());
  for (const char* sql : {"SELECT * FROM kernel ORDER BY id", "SELECT * FROM api_call ORDER BY id",
                          "SELECT * FROM api_context ORDER BY pid, correlation_id"}) {
    EXPECT_EQ(rows_of(lean, sql), rows_of(full, sql)) << sql;
  }
  // Converting a lean capture, or to another layout, is refused in one line.
  const Result again =
      run_cli(dir_, {"convert", converted, "--layout", "lean", "-o", dir_.file("again.sqlite")});
  EXPECT_EQ(again.status, 1);
  EXPECT_NE(again.err.find("already in the lean layout"), std::string::npos) << again.err;
  EXPECT_EQ(again.err_lines().size(), 1u) << again.err;
  EXPECT_FALSE(fs::exists(dir_.file("again.sqlite")));
  EXPECT_EQ(
      run_cli(dir_, {"convert", full_, "--layout", "full", "-o", dir_.file("x.sqlite")}).status, 2);
}

TEST_F(LeanLayout, DamagedLeanRowsAreRefusedInOneLine) {
  struct Damage {
    const char* sql;
    const char* expect;
  };
  const Damage damages[] = {
      // a kernel whose config row is missing: its times read as NULL
      {"UPDATE kernel_lean SET config_id = 99999 WHERE id = 3", "implausible timestamp"},
      // base + delta overflows int64: SQLite gives a real, refused
      {"UPDATE kernel_config SET base_ns = 9223372036854775000", "implausible timestamp"},
      {"UPDATE api_call_lean SET duration_ns = -5 WHERE id = 2", "implausible timestamp"},
      {"DELETE FROM api_config", "implausible timestamp"},
  };
  for (const auto& d : damages) {
    const std::string path = dir_.file("damaged.sqlite");
    fs::copy_file(lean_, path, fs::copy_options::overwrite_existing);
    {
      db::Connection c(path, db::Connection::Mode::ReadWrite);
      c.exec(d.sql);
    }
    try {
      db::Reader reader(path);
      ADD_FAILURE() << "read a capture damaged by " << d.sql;
    } catch (const db::Error& e) {
      EXPECT_NE(std::string(e.what()).find(d.expect), std::string::npos)
          << d.sql << ": " << e.what();
    }
    const Result r = run_cli(dir_, {"summary", path});
    EXPECT_EQ(r.status, 1) << d.sql;
    EXPECT_EQ(r.err_lines().size(), 1u) << d.sql << ": " << r.err;
  }
}

TEST_F(LeanLayout, TheFilesOwnViewsAreNeverRead) {
  // A lean capture whose view `kernel` was replaced: the reader reads its own definition.
  const std::string path = dir_.file("views.sqlite");
  fs::copy_file(lean_, path);
  {
    db::Connection c(path, db::Connection::Mode::ReadWrite);
    c.exec("DROP VIEW kernel; CREATE VIEW kernel AS SELECT * FROM kernel_lean WHERE 0");
  }
  const db::Reader reader(path);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM kernel"),
            static_cast<std::int64_t>(records_.kernels));
  // Another view is still refused, as in a full capture.
  {
    db::Connection c(path, db::Connection::Mode::ReadWrite);
    c.exec("CREATE VIEW kernel_rows AS SELECT 1");
  }
  EXPECT_THROW(db::Reader{path}, db::Error);
}

TEST_F(LeanLayout, WindowsSelectTheSameRows) {
  db::Reader full(full_), lean(lean_);
  const std::int64_t first = full.query_int("SELECT MIN(start_ns) FROM api_call");
  const std::vector<db::TimeSpan> spans = {{first + 1'000'000, first + 3'000'000},
                                           {first + 2'600'000'000, first + 2'700'000'000}};
  full.restrict_to(spans);
  lean.restrict_to(spans);
  for (const char* sql :
       {"SELECT * FROM kernel ORDER BY id", "SELECT * FROM api_call ORDER BY id"}) {
    const std::string expected = rows_of(full, sql);
    EXPECT_FALSE(expected.empty()) << sql;
    EXPECT_EQ(rows_of(lean, sql), expected) << sql;
  }
}

TEST_F(LeanLayout, MergeRefusesALeanCapture) {
  const Result r = run_cli(dir_, {"merge", full_, lean_, "-o", dir_.file("merged.sqlite")});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("lean capture"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_.file("merged.sqlite")));
}

// The committed captures are real ones of schema versions 1 to 9, all in the full layout: each
// still opens, is not taken for a lean one, and its summary and cct print. (Every analysis on
// their lean conversions: tests/golden/lean_outputs.sh.)
TEST(LeanLayoutCompat, OlderCapturesStillRead) {
  TempDir dir;
  int versions_seen = 0;
  for (const auto& entry : fs::directory_iterator(FUSELENS_TEST_DATA_DIR)) {
    if (entry.path().extension() != ".sqlite") continue;
    const std::string path = entry.path().string();
    const db::Reader reader(path);
    EXPECT_LT(reader.schema_version(), db::kSchemaVersion) << path;
    EXPECT_FALSE(reader.lean()) << path;
    EXPECT_TRUE(reader.has_table("kernel")) << path;
    ++versions_seen;
    for (const char* command : {"summary", "cct"}) {
      // Version 1 recorded no calling contexts: cct says so (tested in ProfAnalyzeTest).
      if (std::string_view(command) == "cct" && reader.schema_version() < 2) continue;
      const Result r = run_cli(dir, {command, path});
      EXPECT_EQ(r.status, 0) << command << " " << path << ": " << r.err;
    }
  }
  EXPECT_GT(versions_seen, 0);
}

}  // namespace
}  // namespace fuselens::analyzer
