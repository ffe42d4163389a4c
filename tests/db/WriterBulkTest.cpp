// The writer's multi-row INSERT path (db/src/Writer.cpp, BulkInsert): every row of every batch
// stored once with its own values, whatever the batch size around the 32-row statements, and
// calling contexts stored in key order with the last of two rows of one call winning.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "TempDir.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/Writer.h"

using namespace fuselens::db;

namespace {

// A batch of `n` kernels and launch calls from correlation id `first`, each with values derived
// from its id so that a row stored with another row's values shows.
RecordBatch batch_of(std::uint32_t first, int n) {
  RecordBatch b;
  for (int i = 0; i < n; ++i) {
    const std::uint32_t c = first + static_cast<std::uint32_t>(i);
    KernelRecord k;
    k.pid = 42;
    k.correlation_id = c;
    k.start_ns = 1000ull * c;
    k.end_ns = 1000ull * c + c % 97;
    k.stream_id = c % 5;
    k.grid_x = static_cast<std::int32_t>(c % 13 + 1);
    k.block_x = static_cast<std::int32_t>(c % 7 + 32);
    k.registers_per_thread = c % 11;
    k.mangled_name = "_Z6kernelILi" + std::to_string(c % 3) + "EEvv";
    if (c % 2 == 0) {
      k.graph_id = c;
      k.graph_node_id = 10ull * c;
    }
    b.kernels.push_back(k);
    ApiCallRecord a;
    a.pid = 42;
    a.tid = 100 + c % 2;
    a.name = c % 4 == 0 ? "cudaLaunchKernel" : "cuLaunchKernel";
    a.correlation_id = c;
    a.start_ns = 1000ull * c - 500;
    a.end_ns = 1000ull * c - 100;
    a.return_code = c % 3;
    b.api_calls.push_back(a);
    NvtxRangeRecord r;
    r.pid = 42;
    r.tid = 100;
    r.text = "range " + std::to_string(c % 4);
    r.start_ns = 1000ull * c;
    if (c % 3 != 0) r.end_ns = 1000ull * c + 10;
    r.payload_kind =
        c % 3 == 0 ? PayloadKind::None : (c % 3 == 1 ? PayloadKind::Double : PayloadKind::Int64);
    r.payload_real = c + 0.5;
    r.payload_int = -static_cast<std::int64_t>(c);
    b.nvtx_ranges.push_back(r);
  }
  return b;
}

}  // namespace

TEST(WriterBulk, EveryRowOfEveryBatchSizeIsStoredOnceWithItsOwnValues) {
  fuselens::test::TempDir dir;
  const auto path = dir.file("bulk.sqlite");
  const std::vector<int> sizes = {1, 31, 32, 33, 64, 70, 5};
  std::uint32_t next = 1;
  {
    auto w = Writer::create(path, RunInfo{});
    for (const int n : sizes) {
      w.write(batch_of(next, n));
      next += static_cast<std::uint32_t>(n);
    }
  }
  const auto total = static_cast<std::int64_t>(next - 1);
  Reader reader(path);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM kernel"), total);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM api_call"), total);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM nvtx_range"), total);
  // Rows in the order written: the row id follows the correlation id.
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM kernel WHERE id <> correlation_id"), 0);
  const RecordBatch expected = batch_of(1, static_cast<int>(total));
  auto k = reader.prepare(
      "SELECT k.correlation_id, k.start_ns, k.end_ns, k.stream_id, k.grid_x, k.block_x,"
      " k.registers_per_thread, s.value, k.graph_id, k.graph_node_id FROM kernel k"
      " JOIN strings s ON s.id = k.mangled_name_id ORDER BY k.id");
  for (const auto& e : expected.kernels) {
    ASSERT_TRUE(k.step());
    EXPECT_EQ(k.int64(0), e.correlation_id);
    EXPECT_EQ(k.int64(1), static_cast<std::int64_t>(e.start_ns));
    EXPECT_EQ(k.int64(2), static_cast<std::int64_t>(e.end_ns));
    EXPECT_EQ(k.int64(3), e.stream_id);
    EXPECT_EQ(k.int64(4), e.grid_x);
    EXPECT_EQ(k.int64(5), e.block_x);
    EXPECT_EQ(k.int64(6), e.registers_per_thread);
    EXPECT_EQ(k.text(7), e.mangled_name);
    EXPECT_EQ(k.is_null(8), !e.graph_id.has_value());
    if (e.graph_id) {
      EXPECT_EQ(k.int64(8), *e.graph_id);
      EXPECT_EQ(k.int64(9), static_cast<std::int64_t>(*e.graph_node_id));
    }
  }
  EXPECT_FALSE(k.step());
  auto a = reader.prepare(
      "SELECT a.correlation_id, a.tid, s.value, a.start_ns, a.end_ns, a.return_code"
      " FROM api_call a JOIN strings s ON s.id = a.name_id ORDER BY a.id");
  for (const auto& e : expected.api_calls) {
    ASSERT_TRUE(a.step());
    EXPECT_EQ(a.int64(0), e.correlation_id);
    EXPECT_EQ(a.int64(1), e.tid);
    EXPECT_EQ(a.text(2), e.name);
    EXPECT_EQ(a.int64(3), static_cast<std::int64_t>(e.start_ns));
    EXPECT_EQ(a.int64(4), static_cast<std::int64_t>(e.end_ns));
    EXPECT_EQ(a.int64(5), e.return_code);
  }
  auto r = reader.prepare(
      "SELECT s.value, r.start_ns, r.end_ns, r.payload_kind, r.payload FROM nvtx_range r"
      " JOIN strings s ON s.id = r.text_id ORDER BY r.id");
  for (const auto& e : expected.nvtx_ranges) {
    ASSERT_TRUE(r.step());
    EXPECT_EQ(r.text(0), e.text);
    EXPECT_EQ(r.int64(1), static_cast<std::int64_t>(e.start_ns));
    EXPECT_EQ(r.is_null(2), !e.end_ns.has_value());
    if (e.end_ns) {
      EXPECT_EQ(r.int64(2), static_cast<std::int64_t>(*e.end_ns));
    }
    EXPECT_EQ(r.int64(3), static_cast<std::int64_t>(e.payload_kind));
    switch (e.payload_kind) {
      case PayloadKind::None:
        EXPECT_TRUE(r.is_null(4));
        break;
      case PayloadKind::Double:
        EXPECT_DOUBLE_EQ(r.real(4), e.payload_real);
        break;
      default:
        EXPECT_EQ(r.int64(4), e.payload_int);
    }
  }
}

TEST(WriterBulk, ContextsOfSeveralThreadsAreStoredByCallWithTheLastOfADuplicateKept) {
  fuselens::test::TempDir dir;
  const auto path = dir.file("contexts.sqlite");
  CallingContextTree tree;
  tree.pid = 42;
  tree.frames = {{FrameKind::Native, "/bin/app", 0x10, "f", "", 0},
                 {FrameKind::Native, "/bin/app", 0x20, "g", "", 0}};
  tree.nodes = {{0, 0}, {0, 0}, {0, 1}};  // root, f, g
  // Thread by thread, as the collector lists them: 100 runs from correlation 1 to 80 (odd ids),
  // 200 from 2 to 80 (even ids); then correlation 7 again on thread 300, which must win.
  for (std::uint32_t c = 1; c <= 80; c += 2) tree.contexts.push_back({c, 100, 1});
  for (std::uint32_t c = 2; c <= 80; c += 2) tree.contexts.push_back({c, 200, 2, c, -1});
  tree.contexts.push_back({7, 300, 2});
  {
    auto w = Writer::create(path, RunInfo{});
    w.write_calling_contexts(tree);
  }
  Reader reader(path);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM api_context"), 80);
  auto s = reader.prepare(
      "SELECT c.correlation_id, c.tid, f.value, c.forward_seq FROM api_context c"
      " JOIN cct_node n ON n.id = c.cct_node_id JOIN frame fr ON fr.id = n.frame_id"
      " JOIN strings f ON f.id = fr.function_id ORDER BY c.correlation_id");
  for (std::uint32_t c = 1; c <= 80; ++c) {
    ASSERT_TRUE(s.step());
    EXPECT_EQ(s.int64(0), c);
    const bool even = c % 2 == 0;
    EXPECT_EQ(s.int64(1), c == 7 ? 300 : (even ? 200 : 100));
    EXPECT_EQ(s.text(2), c == 7 || even ? "g" : "f");
    EXPECT_EQ(s.is_null(3), !even);
    if (even) {
      EXPECT_EQ(s.int64(3), c);
    }
  }
}
