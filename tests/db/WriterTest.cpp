#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "TempDir.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/Writer.h"

using namespace fuselens::db;

namespace {

RunInfo sample_run() {
  RunInfo run;
  run.command_line = {"./bench", "--n", "has \"quotes\", commas and \\ backslash"};
  run.working_directory = "/tmp/work";
  run.host_name = "host-a";
  run.fuselens_version = "0.1.0";
  run.trace = "cuda,nvtx";
  run.start_utc_ns = 1'700'000'000'000'000'000ull;
  return run;
}

KernelRecord kernel(std::uint32_t correlation, std::uint64_t start, std::uint64_t end,
                    const std::string& mangled) {
  KernelRecord k;
  k.pid = 42;
  k.start_ns = start;
  k.end_ns = end;
  k.stream_id = 7;
  k.correlation_id = correlation;
  k.grid_x = 4;
  k.grid_y = 2;
  k.grid_z = 1;
  k.block_x = 256;
  k.block_y = 1;
  k.block_z = 1;
  k.registers_per_thread = 32;
  k.static_shared_bytes = 1024;
  k.dynamic_shared_bytes = 2048;
  k.mangled_name = mangled;
  return k;
}

}  // namespace

TEST(Writer, CreatesCaptureWithSchemaVersionAndRunRow) {
  fuselens::test::TempDir dir;
  const auto path = dir.file("a.sqlite");
  { Writer::create(path, sample_run()); }
  Reader reader(path);
  EXPECT_EQ(reader.schema_version(), kSchemaVersion);
  const RunSummary run = reader.run();
  EXPECT_EQ(run.info.command_line, sample_run().command_line);
  EXPECT_EQ(run.info.working_directory, "/tmp/work");
  EXPECT_EQ(run.info.host_name, "host-a");
  EXPECT_EQ(run.info.start_utc_ns, sample_run().start_utc_ns);
  EXPECT_EQ(run.end.reason, EndReason::NotFinalized);
  EXPECT_FALSE(run.end.exit_status.has_value());
}

TEST(Writer, RefusesToOverwriteAnExistingFile) {
  fuselens::test::TempDir dir;
  const auto path = dir.file("a.sqlite");
  { Writer::create(path, sample_run()); }
  EXPECT_THROW(Writer::create(path, sample_run()), Error);
}

TEST(Writer, FailsOnUnwritableDirectory) {
  EXPECT_THROW(Writer::create("/nonexistent-dir/x/a.sqlite", sample_run()), Error);
}

TEST(Writer, StoresKernelsWithInternedDemangledAndShortNames) {
  fuselens::test::TempDir dir;
  const auto path = dir.file("a.sqlite");
  {
    auto w = Writer::create(path, sample_run());
    RecordBatch batch;
    batch.kernels.push_back(kernel(1, 100, 250, "_ZN8fuselens7kernels4gemmILi64EEEvPKfPfi"));
    batch.kernels.push_back(kernel(2, 300, 400, "_ZN8fuselens7kernels4gemmILi64EEEvPKfPfi"));
    batch.kernels.push_back(kernel(3, 500, 510, "relu_kernel"));
    batch.kernels.back().graph_id = 9;
    batch.kernels.back().graph_node_id = 77;
    w.write(batch);
    EXPECT_EQ(w.records_written(), 3u);
    w.finalize({EndReason::Exited, 0, std::nullopt, 123});
  }
  Reader reader(path);
  auto s = reader.prepare(
      "SELECT k.correlation_id, k.end_ns - k.start_ns, sn.value, dn.value, mn.value, k.graph_id,"
      " k.graph_node_id, k.grid_x * k.grid_y, k.dynamic_shared_bytes FROM kernel k"
      " JOIN strings sn ON sn.id = k.short_name_id JOIN strings dn ON dn.id = k.demangled_name_id"
      " JOIN strings mn ON mn.id = k.mangled_name_id ORDER BY k.correlation_id");
  ASSERT_TRUE(s.step());
  EXPECT_EQ(s.int64(1), 150);
  EXPECT_EQ(s.text(2), "gemm");
  EXPECT_EQ(s.text(3), "void fuselens::kernels::gemm<64>(float const*, float*, int)");
  EXPECT_EQ(s.text(4), "_ZN8fuselens7kernels4gemmILi64EEEvPKfPfi");
  EXPECT_TRUE(s.is_null(5));
  EXPECT_EQ(s.int64(7), 8);
  EXPECT_EQ(s.int64(8), 2048);
  ASSERT_TRUE(s.step());
  ASSERT_TRUE(s.step());
  EXPECT_EQ(s.text(2), "relu_kernel");
  EXPECT_EQ(s.int64(5), 9);
  EXPECT_EQ(s.int64(6), 77);
  EXPECT_FALSE(s.step());
  // Each distinct string is stored once.
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM strings"), 4);
}

TEST(Writer, StoresEveryRecordKindAndNvtxPayloads) {
  fuselens::test::TempDir dir;
  const auto path = dir.file("a.sqlite");
  {
    auto w = Writer::create(path, sample_run());
    RecordBatch b;
    MemcpyRecord m;
    m.copy_kind = MemcpyKind::HostToDevice;
    m.src_kind = MemoryKind::Pageable;
    m.dst_kind = MemoryKind::Device;
    m.bytes = 4096;
    b.memcpys.push_back(m);
    MemsetRecord ms;
    ms.bytes = 64;
    ms.value = 0xFF;
    b.memsets.push_back(ms);
    MemoryEventRecord me;
    me.operation = MemoryOperation::Release;
    me.memory_kind = MemoryKind::Device;
    me.address = 0x7f0000000000ull;
    me.bytes = 1 << 20;
    b.memory_events.push_back(me);
    ApiCallRecord a;
    a.tid = 11;
    a.name = "cudaLaunchKernel";
    a.correlation_id = 5;
    b.api_calls.push_back(a);
    NvtxRangeRecord r;
    r.tid = 11;
    r.text = "gemm_bias_relu/fused/M64_N128_K256";
    r.start_ns = 10;
    r.end_ns = 20;
    r.payload_kind = PayloadKind::UInt64;
    r.payload_int = 50;
    b.nvtx_ranges.push_back(r);
    NvtxRangeRecord open;
    open.text = "never ended";
    b.nvtx_ranges.push_back(open);
    NvtxMarkRecord mark;
    mark.text = "checkpoint";
    mark.payload_kind = PayloadKind::Double;
    mark.payload_real = 2.5;
    b.nvtx_marks.push_back(mark);
    b.syncs.push_back(SyncRecord{});
    b.overheads.push_back(OverheadRecord{});
    w.write(b);
    EXPECT_EQ(w.records_written(), 9u);
  }
  Reader reader(path);
  EXPECT_EQ(reader.query_int("SELECT bytes FROM memcpy WHERE copy_kind = 1 AND dst_kind = 3"),
            4096);
  EXPECT_EQ(reader.query_int("SELECT value FROM memset"), 0xFF);
  EXPECT_EQ(reader.query_int("SELECT operation FROM memory_event"), 2);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM api_call a JOIN strings s ON s.id = a.name_id"
                             " WHERE s.value = 'cudaLaunchKernel'"),
            1);
  EXPECT_EQ(reader.query_int("SELECT payload FROM nvtx_range WHERE end_ns IS NOT NULL"), 50);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM nvtx_range WHERE end_ns IS NULL"), 1);
  auto s = reader.prepare("SELECT payload FROM nvtx_mark");
  ASSERT_TRUE(s.step());
  EXPECT_DOUBLE_EQ(s.real(0), 2.5);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM sync_event"), 1);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM overhead"), 1);
}

// The schema's views (db/schema.sql, "Views") join the names and compute durations, so that a
// `sqlite3` user needs no join; the Reader accepts them, and no other view.
TEST(Writer, SchemaViewsNameTheRowsAndTheReaderAcceptsOnlyThem) {
  fuselens::test::TempDir dir;
  const auto path = dir.file("a.sqlite");
  {
    auto w = Writer::create(path, sample_run());
    RecordBatch b;
    b.kernels.push_back(kernel(1, 100, 250, "_ZN8fuselens7kernels4gemmILi64EEEvPKfPfi"));
    MemcpyRecord m;
    m.copy_kind = MemcpyKind::DeviceToHost;
    m.start_ns = 300;
    m.end_ns = 340;
    b.memcpys.push_back(m);
    ApiCallRecord a;
    a.name = "cudaLaunchKernel";
    a.domain = ApiDomain::Driver;
    a.start_ns = 90;
    a.end_ns = 97;
    b.api_calls.push_back(a);
    NvtxRangeRecord open;
    open.text = "never ended";
    open.start_ns = 5;
    b.nvtx_ranges.push_back(open);
    w.write(b);
  }
  Reader reader(path);  // accepts the schema's views
  EXPECT_TRUE(is_schema_view("kernel_v"));
  EXPECT_TRUE(is_schema_view("api_context_v"));
  EXPECT_FALSE(is_schema_view("kernel"));
  EXPECT_FALSE(is_schema_view("kernel_"));
  auto k = reader.prepare("SELECT name, short_name, duration_ns FROM kernel_v");
  ASSERT_TRUE(k.step());
  EXPECT_EQ(k.text(0), "void fuselens::kernels::gemm<64>(float const*, float*, int)");
  EXPECT_EQ(k.text(1), "gemm");
  EXPECT_EQ(k.int64(2), 150);
  auto c = reader.prepare("SELECT name, copy_kind, duration_ns FROM memcpy_v");
  ASSERT_TRUE(c.step());
  EXPECT_EQ(c.text(0), "[CUDA memcpy Device-to-Host]");
  EXPECT_EQ(c.text(1), "Device-to-Host");
  EXPECT_EQ(c.int64(2), 40);
  auto api = reader.prepare("SELECT name, domain, duration_ns FROM api_call_v");
  ASSERT_TRUE(api.step());
  EXPECT_EQ(api.text(0), "cudaLaunchKernel");
  EXPECT_EQ(api.text(1), "CUDA driver");
  EXPECT_EQ(api.int64(2), 7);
  auto r = reader.prepare("SELECT name, duration_ns FROM nvtx_range_v");
  ASSERT_TRUE(r.step());
  EXPECT_EQ(r.text(0), "never ended");
  EXPECT_TRUE(r.is_null(1));
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM process_v"), 0);

  // Any other view is refused, as before the schema had views (issue 22).
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(
      sqlite3_exec(db, "CREATE VIEW kernel_v2 AS SELECT * FROM kernel", nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(db);
  try {
    Reader hostile(path);
    FAIL() << "a view the schema does not create was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("holds a view 'kernel_v2'"), std::string::npos)
        << e.what();
  }
}

TEST(Writer, FinalizeRecordsEndAndSumsDroppedRecordsIntoOneFile) {
  fuselens::test::TempDir dir;
  const auto path = dir.file("a.sqlite");
  {
    auto w = Writer::create(path, sample_run());
    ProcessInfo p1;
    p1.pid = 1;
    p1.dropped_records = 3;
    ProcessInfo p2;
    p2.pid = 2;
    p2.dropped_records = 4;
    w.write_process(p1);
    w.write_process(p2);
    w.finalize({EndReason::Signaled, std::nullopt, 9, 999});
  }
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  Reader reader(path);
  const auto run = reader.run();
  EXPECT_EQ(run.end.reason, EndReason::Signaled);
  EXPECT_EQ(run.end.exit_signal, 9);
  EXPECT_EQ(run.dropped_records, 7u);
  EXPECT_EQ(run.cuda_processes, 2);
  auto mode = reader.prepare("PRAGMA journal_mode");
  ASSERT_TRUE(mode.step());
  EXPECT_EQ(mode.text(0), "delete");  // one self-contained file, no WAL beside it
  EXPECT_GE(reader.query_int("SELECT COUNT(*) FROM sqlite_master WHERE type = 'index'"), 9);
}

TEST(Writer, SecondWriterAppendsToTheSameCapture) {
  fuselens::test::TempDir dir;
  const auto path = dir.file("a.sqlite");
  auto creator = Writer::create(path, sample_run());
  auto appender = Writer::open(path);
  RecordBatch b;
  b.kernels.push_back(kernel(1, 1, 2, "k"));
  appender.write(b);
  creator.write(b);
  Reader reader(path);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM kernel"), 2);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM strings"), 1);
}

TEST(Writer, DevicesAreRecordedOncePerOrdinal) {
  fuselens::test::TempDir dir;
  const auto path = dir.file("a.sqlite");
  auto w = Writer::create(path, sample_run());
  DeviceInfo d;
  d.id = 0;
  d.name = "NVIDIA H100 80GB HBM3";
  d.cc_major = 9;
  d.sm_count = 132;
  w.write_device(d);
  d.name = "other";
  w.write_device(d);
  Reader reader(path);
  const auto devices = reader.devices();
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(devices[0].sm_count, 132);
}

TEST(Writer, StoresCallingContextTreesWithTheirFramesAndContexts) {
  fuselens::test::TempDir dir;
  const auto path = dir.file("cct.sqlite");
  CallingContextTree tree;
  tree.pid = 77;
  tree.frames = {{FrameKind::Native, "/bin/app", 0x1234, "main", "app.cpp", 10},
                 {FrameKind::Native, "/bin/app", 0x2000, "a()", "", 0},
                 {FrameKind::Native, "/lib/libx.so", 0x40, "", "", 0}};
  tree.nodes = {{0, 0}, {0, 0}, {1, 1}, {1, 2}};  // root, main, main>a(), main>libx
  tree.contexts = {{5, 900, 2}, {6, 900, 3}};
  {
    auto w = Writer::create(path, RunInfo{});
    w.write_calling_contexts(tree);
  }
  Reader reader(path);
  EXPECT_TRUE(reader.has_table("cct_node"));
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM cct_node WHERE pid = 77"), 4);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM cct_node WHERE parent_id IS NULL"), 1);
  // The context of correlation 5 is main > a(): its node's frame is a(), its parent's is main.
  auto s = reader.prepare(
      "SELECT f.value, pf.value, c.tid FROM api_context c JOIN cct_node n ON n.id = c.cct_node_id"
      " JOIN frame fr ON fr.id = n.frame_id JOIN strings f ON f.id = fr.function_id"
      " JOIN cct_node p ON p.id = n.parent_id JOIN frame pfr ON pfr.id = p.frame_id"
      " JOIN strings pf ON pf.id = pfr.function_id WHERE c.correlation_id = 5");
  ASSERT_TRUE(s.step());
  EXPECT_EQ(s.text(0), "a()");
  EXPECT_EQ(s.text(1), "main");
  EXPECT_EQ(s.int64(2), 900);
  EXPECT_EQ(
      reader.query_int("SELECT COUNT(*) FROM frame WHERE function_id IS NULL AND file_id IS NULL"),
      1);
  EXPECT_EQ(reader.query_int("SELECT line FROM frame WHERE line IS NOT NULL"), 10);
}

TEST(Writer, RefusesATreeWhoseNodesPointForward) {
  fuselens::test::TempDir dir;
  CallingContextTree tree;
  tree.frames = {{}};
  tree.nodes = {{0, 0}, {2, 0}, {0, 0}};
  auto w = Writer::create(dir.file("bad.sqlite"), RunInfo{});
  EXPECT_THROW(w.write_calling_contexts(tree), Error);
  EXPECT_EQ(Reader(dir.file("bad.sqlite")).query_int("SELECT COUNT(*) FROM cct_node"), 0);
}

TEST(Writer, StoresKernelArgumentsAsSigned64BitValues) {
  fuselens::test::TempDir dir;
  const auto path = dir.file("args.sqlite");
  {
    auto w = Writer::create(path, RunInfo{});
    w.write_kernel_args({{42, 5, 0, 0x7f00'0000'1000ull},
                         {42, 5, 2, 0xffff'ffff'ffff'fff0ull},  // above INT64_MAX: stored as bits
                         {42, 6, 0, 0x7f00'0000'1000ull}});
    w.write_kernel_args({});
  }
  Reader reader(path);
  EXPECT_TRUE(reader.has_table("kernel_arg"));
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM kernel_arg"), 3);
  EXPECT_EQ(
      reader.query_int("SELECT value FROM kernel_arg WHERE correlation_id = 5 AND param_index = 0"),
      0x7f00'0000'1000LL);
  EXPECT_EQ(static_cast<std::uint64_t>(reader.query_int(
                "SELECT value FROM kernel_arg WHERE correlation_id = 5 AND param_index = 2")),
            0xffff'ffff'ffff'fff0ull);
}

// Every CUDA process of a run appends to the one capture at the same time (the collector in each,
// prof-run's children started by fork or exec): WAL mode and the busy timeout serialize their
// transactions, and no record is lost or mixed up.
TEST(Writer, SeveralProcessesAppendToOneCaptureAtOnce) {
  fuselens::test::TempDir dir;
  const auto path = dir.file("shared.sqlite");
  { Writer::create(path, sample_run()); }
  constexpr int kProcesses = 4, kBatches = 40, kPerBatch = 100;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      int status = 0;
      try {
        auto w = Writer::open(path);
        const auto pid = static_cast<std::uint32_t>(::getpid());
        ProcessInfo process;
        process.pid = pid;
        process.parent_pid = static_cast<std::uint32_t>(::getppid());
        process.executable = "worker";
        w.write_process(process);
        for (int b = 0; b < kBatches; ++b) {
          RecordBatch batch;
          for (int i = 0; i < kPerBatch; ++i) {
            auto k = kernel(static_cast<std::uint32_t>(b * kPerBatch + i), 10, 20,
                            "k" + std::to_string(i % 7));
            k.pid = pid;
            batch.kernels.push_back(k);
          }
          w.write(batch);
        }
      } catch (...) {
        status = 1;
      }
      ::_exit(status);
    }
    children.push_back(child);
  }
  for (const pid_t child : children) {
    int status = -1;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "writer " << child << " failed";
  }
  Reader reader(path);
  const auto processes = reader.processes();
  ASSERT_EQ(processes.size(), static_cast<std::size_t>(kProcesses));
  for (const auto& p : processes) {
    EXPECT_EQ(p.parent_pid, static_cast<std::uint32_t>(::getpid()));
    auto count =
        reader.prepare("SELECT COUNT(*), COUNT(DISTINCT correlation_id) FROM kernel WHERE pid = ?");
    count.bind(1, static_cast<std::int64_t>(p.pid));
    ASSERT_TRUE(count.step());
    EXPECT_EQ(count.int64(0), kBatches * kPerBatch) << p.pid;
    EXPECT_EQ(count.int64(1), kBatches * kPerBatch) << p.pid;
  }
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM strings WHERE value LIKE 'k_'"),
            7);  // interned once
}

// Schema 8: the rank rows of distributed processes come back ordered by rank, optional fields
// kept NULL, and a rank outside [0, 2^31) written by hand is refused.
TEST(Writer, StoresProcessRanksAndReadsThemByRank) {
  fuselens::test::TempDir dir;
  const auto path = dir.file("a.sqlite");
  {
    auto w = Writer::create(path, sample_run());
    ProcessRank r1;
    r1.pid = 200;
    r1.rank = 1;
    r1.local_rank = 1;
    r1.world_size = 2;
    r1.launcher = "torch";
    r1.host_name = "node-b";
    ProcessRank r0 = r1;
    r0.pid = 300;
    r0.rank = 0;
    r0.local_rank.reset();
    r0.host_name = "node-a";
    w.write_process_rank(r1);
    w.write_process_rank(r0);
  }
  {
    Reader reader(path);
    const auto ranks = reader.process_ranks();
    ASSERT_EQ(ranks.size(), 2u);
    EXPECT_EQ(ranks[0].pid, 300u);
    EXPECT_EQ(ranks[0].rank, 0);
    EXPECT_FALSE(ranks[0].local_rank.has_value());
    EXPECT_EQ(ranks[0].world_size, 2);
    EXPECT_EQ(ranks[0].host_name, "node-a");
    EXPECT_EQ(ranks[1].pid, 200u);
    EXPECT_EQ(ranks[1].local_rank, 1);
    EXPECT_EQ(ranks[1].launcher, "torch");
  }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "UPDATE process_rank SET rank = -3 WHERE pid = 200", nullptr, nullptr,
                         nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  Reader reader(path);
  EXPECT_THROW(reader.process_ranks(), Error);
}
