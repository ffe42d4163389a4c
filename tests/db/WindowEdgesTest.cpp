// leave_out_window_edge_records: GPU records launched outside every capture window are left out,
// everything else is kept (WindowEdges.h).
#include "fuselens/db/WindowEdges.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "TempDir.h"
#include "fuselens/db/Layout.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/Sqlite.h"
#include "fuselens/db/Writer.h"

using namespace fuselens::db;

namespace {

KernelRecord kernel(std::uint32_t pid, std::uint32_t correlation, std::uint64_t start) {
  KernelRecord k;
  k.pid = pid;
  k.correlation_id = correlation;
  k.start_ns = start;
  k.end_ns = start + 100;
  k.mangled_name = "_Z1kv";
  return k;
}

ApiCallRecord call(std::uint32_t pid, std::uint32_t correlation, std::uint64_t start) {
  ApiCallRecord a;
  a.pid = a.tid = pid;
  a.name = "cudaLaunchKernel";
  a.correlation_id = correlation;
  a.start_ns = start;
  a.end_ns = start + 10;
  return a;
}

// Process 7 ran two windows, [1000, 2000] with calls 10-12 and [5000, open) with calls 40-41;
// process 8 ran no window; process 9 ran one window but traced no API calls.
std::string write_capture(const fuselens::test::TempDir& dir,
                          TraceLayout layout = TraceLayout::Full) {
  const auto path = dir.file("w.sqlite");
  auto w = Writer::create(path, RunInfo{}, layout);
  RecordBatch b;
  for (std::uint32_t c : {10u, 11u, 12u}) b.api_calls.push_back(call(7, c, 1000 + 100 * c));
  for (std::uint32_t c : {40u, 41u}) b.api_calls.push_back(call(7, c, 5000 + 100 * c));
  // launched before the first window, run inside it: no call recorded, id below 10
  b.kernels.push_back(kernel(7, 9, 1100));
  // with their calls: kept
  for (std::uint32_t c : {10u, 11u, 12u, 40u, 41u}) b.kernels.push_back(kernel(7, c, 3000 + c));
  // inside the first window's id range but its call missing (another reason): kept
  b.kernels.push_back(kernel(7, 11, 1500));
  // launched between the windows (id 20): left out; after the last recorded call of the last
  // window, which was still open when the process ended (id 50): kept (its call may be lost)
  b.kernels.push_back(kernel(7, 20, 5100));
  b.kernels.push_back(kernel(7, 50, 9000));
  MemcpyRecord m;
  m.pid = 7;
  m.correlation_id = 30;
  m.start_ns = 5200;
  m.end_ns = 5300;
  b.memcpys.push_back(m);
  MemsetRecord s;
  s.pid = 7;
  s.correlation_id = 12;  // inside a range: kept
  s.start_ns = 1300;
  s.end_ns = 1400;
  b.memsets.push_back(s);
  b.kernels.push_back(kernel(7, 0, 1200));  // correlation id 0: kept
  b.kernels.push_back(kernel(8, 3, 100));   // no windows in process 8: kept
  b.kernels.push_back(kernel(9, 3, 100));   // process 9 traced no calls: kept
  w.write(b);
  w.write_capture_windows({{7, 1000, 2000, "time"}, {7, 5000, 0, "time"}, {9, 0, 10, "time"}});
  w.finalize({EndReason::Exited, 0, std::nullopt, 10000});
  return path;
}

std::vector<std::int64_t> ids(Connection& c, const std::string& table, int pid) {
  std::vector<std::int64_t> out;
  auto q = c.prepare("SELECT correlation_id FROM " + table + " WHERE pid = ? ORDER BY 1");
  q.bind(1, static_cast<std::int64_t>(pid));
  while (q.step()) out.push_back(q.int64(0));
  return out;
}

}  // namespace

TEST(WindowEdges, LeavesOutOnlyTheWorkLaunchedOutsideEveryWindow) {
  fuselens::test::TempDir dir;
  const auto path = write_capture(dir);
  Connection c(path, Connection::Mode::ReadWrite);
  const auto left = leave_out_window_edge_records(c);
  EXPECT_EQ(left.kernels, 2u);  // ids 9 and 20
  EXPECT_EQ(left.memcpys, 1u);  // id 30
  EXPECT_EQ(left.memsets, 0u);
  EXPECT_EQ(left.total(), 3u);
  EXPECT_EQ(ids(c, "kernel", 7), (std::vector<std::int64_t>{0, 10, 11, 11, 12, 40, 41, 50}));
  EXPECT_EQ(ids(c, "kernel", 8), (std::vector<std::int64_t>{3}));
  EXPECT_EQ(ids(c, "kernel", 9), (std::vector<std::int64_t>{3}));
  EXPECT_TRUE(ids(c, "memcpy", 7).empty());
  EXPECT_EQ(ids(c, "memset", 7), (std::vector<std::int64_t>{12}));
  // A second pass finds nothing more, and the capture still reads.
  EXPECT_EQ(leave_out_window_edge_records(c).total(), 0u);
  Reader reader(path);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM kernel"), 10);
}

// The lean layout (Layout.h): `kernel` is a view over kernel_lean, which the deletion must reach
// (a DELETE of the view failed, so prof-run could not finalize a lean capture with windows).
TEST(WindowEdges, LeavesOutTheSameRecordsOfALeanCapture) {
  fuselens::test::TempDir dir;
  const auto path = write_capture(dir, TraceLayout::Lean);
  Connection c(path, Connection::Mode::ReadWrite);
  ASSERT_EQ(capture_layout(c), TraceLayout::Lean);
  const auto left = leave_out_window_edge_records(c);
  EXPECT_EQ(left.kernels, 2u);  // ids 9 and 20
  EXPECT_EQ(left.memcpys, 1u);  // id 30
  EXPECT_EQ(left.memsets, 0u);
  EXPECT_EQ(ids(c, "kernel", 7), (std::vector<std::int64_t>{0, 10, 11, 11, 12, 40, 41, 50}));
  EXPECT_EQ(ids(c, "kernel", 8), (std::vector<std::int64_t>{3}));
  EXPECT_EQ(ids(c, "kernel", 9), (std::vector<std::int64_t>{3}));
  EXPECT_EQ(c.query_int("SELECT COUNT(*) FROM kernel_lean"), 10);
  EXPECT_EQ(leave_out_window_edge_records(c).total(), 0u);
  Reader reader(path);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM kernel"), 10);
}

TEST(WindowEdges, ACaptureWithoutWindowsIsLeftAlone) {
  fuselens::test::TempDir dir;
  const auto path = dir.file("n.sqlite");
  {
    auto w = Writer::create(path, RunInfo{});
    RecordBatch b;
    b.api_calls.push_back(call(7, 10, 1000));
    b.kernels.push_back(kernel(7, 9, 1100));  // no call, but no window either
    w.write(b);
    w.finalize({EndReason::Exited, 0, std::nullopt, 2000});
  }
  Connection c(path, Connection::Mode::ReadWrite);
  EXPECT_EQ(leave_out_window_edge_records(c).total(), 0u);
  EXPECT_EQ(c.query_int("SELECT COUNT(*) FROM kernel"), 1);
}
