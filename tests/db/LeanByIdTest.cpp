// Reader::read_lean_by_id: a lean capture's kernels and calls read in id order where a cursor
// asks for them in (pid, correlation id) order, that order checked (Cursor.h, OrderBroken).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "TempDir.h"
#include "fuselens/db/ActivityCursors.h"
#include "fuselens/db/Layout.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/Writer.h"

using namespace fuselens::db;

namespace {

// `n` launches of one process: a kernel and its call for each correlation id 1..n, written in
// the order of `order` (indexes into 1..n); two calls share correlation id 3 (a runtime call
// and the driver call inside it).
void write_launches(const std::string& path, TraceLayout layout,
                    const std::vector<std::uint32_t>& order) {
  auto w = Writer::create(path, RunInfo{}, layout);
  RecordBatch b;
  for (const std::uint32_t i : order) {
    KernelRecord k;
    k.pid = 7;
    k.correlation_id = i;
    k.start_ns = 1'000'000 + 2000ull * i;
    k.end_ns = k.start_ns + 700;
    k.stream_id = 7;
    k.mangled_name = "_Z6kernelv";
    b.kernels.push_back(k);
    ApiCallRecord a;
    a.pid = 7;
    a.tid = 7;
    a.name = "cudaLaunchKernel";
    a.correlation_id = i;
    a.start_ns = k.start_ns - 900;
    a.end_ns = k.start_ns - 200;
    b.api_calls.push_back(a);
    if (i == 3) {
      ApiCallRecord driver = a;
      driver.name = "cuLaunchKernel";
      driver.start_ns += 100;
      driver.end_ns -= 100;
      b.api_calls.push_back(driver);
    }
  }
  w.write(b);
}

std::vector<std::uint32_t> in_order(std::uint32_t n) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t i = 1; i <= n; ++i) out.push_back(i);
  return out;
}

// Every row of the three cursors that may read by id, as text, in the order read.
std::string read_all(const Reader& reader) {
  std::string out;
  auto calls = api_call_starts_by_correlation(reader);
  while (auto r = calls.next()) {
    out += "start " + std::to_string(r->pid) + ' ' + std::to_string(r->correlation_id) + ' ' +
           std::to_string(r->start_ns) + '\n';
  }
  auto by_start = api_calls_by_correlation(reader);
  while (auto r = by_start.next()) {
    out += "call " + std::to_string(r->correlation_id) + ' ' + std::to_string(r->start_ns) + ' ' +
           std::to_string(r->name_id) + '\n';
  }
  auto starts = api_calls_by_start(reader);
  while (auto r = starts.next()) {
    out += "by start " + std::to_string(r->start_ns) + ' ' + std::to_string(r->id) + '\n';
  }
  auto work = launch_work(reader, GpuTable::Kernel, /*by_correlation=*/true);
  while (auto r = work.next()) {
    out +=
        "kernel " + std::to_string(r->correlation_id) + ' ' + std::to_string(r->duration_ns) + '\n';
  }
  return out;
}

}  // namespace

TEST(LeanById, ReadsTheRowsSortingWouldGiveWhenTheyWereWrittenInOrder) {
  fuselens::test::TempDir dir;
  const std::string path = dir.file("lean.sqlite");
  write_launches(path, TraceLayout::Lean, in_order(50));
  Reader sorted(path);
  Reader by_id(path);
  by_id.read_lean_by_id(true);
  ASSERT_TRUE(by_id.lean_by_id());
  EXPECT_FALSE(sorted.lean_by_id());
  const std::string rows = read_all(sorted);
  EXPECT_NE(rows.find("kernel 50 700"), std::string::npos);
  EXPECT_EQ(read_all(by_id), rows);
  EXPECT_TRUE(by_id.twin().lean_by_id());  // a twin reads the same way
  EXPECT_EQ(read_all(by_id.twin()), rows);
}

TEST(LeanById, ARowWrittenOutOfOrderThrowsOrderBroken) {
  fuselens::test::TempDir dir;
  const std::string path = dir.file("lean.sqlite");
  std::vector<std::uint32_t> order = in_order(50);
  std::swap(order[20], order[21]);  // as two threads' buffers or two streams interleave
  write_launches(path, TraceLayout::Lean, order);
  Reader sorted(path);
  const std::string rows = read_all(sorted);
  EXPECT_NE(rows.find("kernel 21 700\nkernel 22 700"), std::string::npos);  // sorted
  Reader by_id(path);
  by_id.read_lean_by_id(true);
  EXPECT_THROW(read_all(by_id), OrderBroken);
  auto calls = api_call_starts_by_correlation(by_id);
  EXPECT_THROW(while (calls.next()){}, OrderBroken);
  auto starts = api_calls_by_start(by_id);
  EXPECT_THROW(while (starts.next()){}, OrderBroken);
  auto work = launch_work(by_id, GpuTable::Kernel, /*by_correlation=*/true);
  EXPECT_THROW(while (work.next()){}, OrderBroken);
  // Unordered reads and copies are not read by id: no order to check.
  auto unordered = launch_work(by_id, GpuTable::Kernel, /*by_correlation=*/false);
  int n = 0;
  while (unordered.next()) ++n;
  EXPECT_EQ(n, 50);
}

TEST(LeanById, AFullLayoutCaptureIsReadAsBefore) {
  fuselens::test::TempDir dir;
  const std::string path = dir.file("full.sqlite");
  std::vector<std::uint32_t> order = in_order(50);
  std::swap(order[20], order[21]);
  write_launches(path, TraceLayout::Full, order);
  Reader by_id(path);
  by_id.read_lean_by_id(true);
  EXPECT_FALSE(by_id.lean_by_id());
  EXPECT_EQ(read_all(by_id), read_all(Reader(path)));
}
