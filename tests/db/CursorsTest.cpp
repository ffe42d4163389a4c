// The typed cursors of db (ActivityCursors.h, TraceCursors.h), the string cache (Strings.h) and
// the summary store (SummaryStore.h) on synthetic captures written with Writer.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "TempDir.h"
#include "fuselens/db/ActivityCursors.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/Strings.h"
#include "fuselens/db/SummaryStore.h"
#include "fuselens/db/TraceCursors.h"
#include "fuselens/db/Writer.h"

using namespace fuselens::db;

namespace {

KernelRecord kernel(std::uint32_t pid, std::uint32_t device, std::uint32_t stream,
                    std::uint32_t corr, std::uint64_t start, std::uint64_t end,
                    const std::string& name) {
  KernelRecord k;
  k.pid = pid;
  k.device_id = device;
  k.stream_id = stream;
  k.correlation_id = corr;
  k.start_ns = start;
  k.end_ns = end;
  k.mangled_name = name;
  k.grid_x = k.grid_y = k.grid_z = 1;
  k.block_x = 128;
  k.block_y = k.block_z = 1;
  return k;
}

ApiCallRecord call(std::uint32_t pid, std::uint32_t tid, std::uint32_t corr, std::uint64_t start,
                   std::uint64_t end, const std::string& name) {
  ApiCallRecord a;
  a.pid = pid;
  a.tid = tid;
  a.correlation_id = corr;
  a.start_ns = start;
  a.end_ns = end;
  a.name = name;
  return a;
}

/// Kernels at starts 100, 200, ..., 1200 over two processes, two devices, two streams and two
/// names; one API call per kernel; three NVTX ranges (one never ended); device-memory events.
class Cursors : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.file("capture.sqlite");
    RunInfo run;
    run.command_line = {"x"};
    auto w = Writer::create(path_, run);
    RecordBatch b;
    for (std::uint32_t i = 1; i <= 12; ++i) {
      const std::uint32_t pid = i % 2 == 0 ? 20 : 10;
      const std::uint32_t device = i % 3 == 0 ? 1 : 0;
      const std::uint32_t stream = i % 4 < 2 ? 7 : 8;
      const std::string name = i % 2 == 0 ? "_Z4gemmPfi" : "_Z4relu";
      b.kernels.push_back(kernel(pid, device, stream, i, 100 * i, 100 * i + 10 * i, name));
      b.api_calls.push_back(call(pid, i % 2 == 0 ? 21 : 11, i, 100 * i - 50, 100 * i - 40,
                                 i % 3 == 0 ? "cudaMemcpy" : "cudaLaunchKernel"));
    }
    NvtxRangeRecord r;
    r.pid = 10;
    r.tid = 11;
    r.text = "step";
    r.start_ns = 50;
    r.end_ns = 650;
    r.payload_kind = PayloadKind::Int64;
    r.payload_int = 3;
    b.nvtx_ranges.push_back(r);
    r.domain = "app";
    r.start_ns = 700;
    r.end_ns = 1300;
    r.payload_kind = PayloadKind::Double;
    r.payload_real = 2.5;
    b.nvtx_ranges.push_back(r);
    r.domain.clear();
    r.text = "open";
    r.start_ns = 900;
    r.end_ns.reset();
    r.payload_kind = PayloadKind::None;
    b.nvtx_ranges.push_back(r);
    for (std::uint32_t i = 0; i < 6; ++i) {
      MemoryEventRecord m;
      m.pid = 10;
      m.device_id = i % 2;
      m.timestamp_ns = 100 + 100 * i;
      m.operation = i < 4 ? MemoryOperation::Allocation : MemoryOperation::Release;
      m.memory_kind = i == 5 ? MemoryKind::Pinned : MemoryKind::Device;
      m.address = 0x1000 * (i + 1);
      m.bytes = 1000 * (i + 1);
      b.memory_events.push_back(m);
    }
    w.write(b);
    w.finalize({EndReason::Exited, 0, std::nullopt, 1});
  }

  template <typename Row>
  static std::vector<Row> all(Cursor<Row> c) {
    std::vector<Row> out;
    while (auto row = c.next()) out.push_back(*row);
    return out;
  }

  fuselens::test::TempDir dir_;
  std::string path_;
};

}  // namespace

TEST(KernelNameColumn, NamesTheColumnOfEachKind) {
  EXPECT_STREQ(kernel_name_column(NameKind::Demangled), "demangled_name_id");
  EXPECT_STREQ(kernel_name_column(NameKind::Short), "short_name_id");
  EXPECT_STREQ(kernel_name_column(NameKind::Mangled), "mangled_name_id");
}

TEST_F(Cursors, UnfilteredCursorReadsEveryRowThenStaysDone) {
  const Reader reader(path_);
  auto c = kernel_launches(reader, NameKind::Short);
  int rows = 0;
  while (c.next()) ++rows;
  EXPECT_EQ(rows, 12);
  EXPECT_FALSE(c.next());
  EXPECT_FALSE(c.next());
}

TEST_F(Cursors, TimeWindowSelectsExactlyTheKernelsStartingInsideIt) {
  const Reader reader(path_);
  ActivityFilter f;
  f.t0_ns = 300;  // inclusive
  f.t1_ns = 700;  // exclusive
  std::vector<std::int64_t> starts;
  for (const auto& k : all(kernel_launches(reader, NameKind::Short, f)))
    starts.push_back(k.start_ns);
  std::sort(starts.begin(), starts.end());
  EXPECT_EQ(starts, (std::vector<std::int64_t>{300, 400, 500, 600}));
  ActivityFilter open_ended;
  open_ended.t0_ns = 1150;
  EXPECT_EQ(all(kernel_details(reader, NameKind::Demangled, open_ended)).size(), 1u);
}

TEST_F(Cursors, ProcessDeviceStreamAndNameFiltersCombine) {
  const Reader reader(path_);
  ActivityFilter f;
  f.pid = 20;
  for (const auto& k : all(kernel_launches(reader, NameKind::Short, f))) EXPECT_EQ(k.pid, 20);
  EXPECT_EQ(all(kernel_launches(reader, NameKind::Short, f)).size(), 6u);
  f.device_id = 1;  // i = 6, 12
  const auto on_device = all(kernel_launches(reader, NameKind::Short, f));
  ASSERT_EQ(on_device.size(), 2u);
  f.stream_id = 8;  // i % 4 >= 2: 6 only
  const auto on_stream = all(kernel_launches(reader, NameKind::Short, f));
  ASSERT_EQ(on_stream.size(), 1u);
  EXPECT_EQ(on_stream[0].correlation_id, 6);

  StringCache strings(reader);
  ActivityFilter by_name;
  by_name.name_id = on_stream[0].name_id;
  const auto named = all(kernel_durations(reader, NameKind::Short, by_name));
  EXPECT_EQ(named.size(), 6u);
  for (const auto& k : named) EXPECT_EQ(strings.get(k.name_id), "gemm");
}

TEST_F(Cursors, DurationsByNameComeOrderedByNameId) {
  const Reader reader(path_);
  const auto rows = all(kernel_durations_by_name(reader, NameKind::Demangled, RowOrder::ById));
  ASSERT_EQ(rows.size(), 12u);
  EXPECT_TRUE(std::is_sorted(rows.begin(), rows.end(),
                             [](const IdDuration& a, const IdDuration& b) { return a.id < b.id; }));
  std::int64_t total = 0;
  for (const auto& r : rows) total += r.duration_ns;
  EXPECT_EQ(total, 10 * (12 * 13 / 2));
  const auto calls = all(api_durations_by_name(reader));
  ASSERT_EQ(calls.size(), 12u);
  for (const auto& c : calls) EXPECT_EQ(c.duration_ns, 10);
}

TEST_F(Cursors, ApiCallsFilterByThreadAndWindow) {
  const Reader reader(path_);
  ActivityFilter f;
  f.pid = 10;
  f.tid = 11;
  f.t0_ns = 0;
  f.t1_ns = 560;  // calls at 50, 250, 450 of process 10
  const auto calls = all(api_calls_by_start(reader, f));
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].start_ns, 50);
  EXPECT_EQ(calls[2].start_ns, 450);
  StringCache strings(reader);
  EXPECT_EQ(strings.get(calls[1].name_id), "cudaMemcpy");  // correlation id 3
}

TEST_F(Cursors, NvtxRangesKeepNullEndsAndBothPayloadReadings) {
  const Reader reader(path_);
  const auto ranges = all(nvtx_ranges(reader, /*with_style=*/false));
  ASSERT_EQ(ranges.size(), 3u);
  EXPECT_EQ(ranges[0].end_ns, 650);
  EXPECT_EQ(ranges[0].payload_int, 3);
  EXPECT_EQ(ranges[1].payload_real, 2.5);
  EXPECT_FALSE(ranges[2].end_ns.has_value());
  EXPECT_FALSE(ranges[2].payload_int.has_value());
  EXPECT_EQ(all(ended_nvtx_ranges(reader)).size(), 2u);
  const auto named = all(ended_nvtx_ranges_named(reader));
  ASSERT_EQ(named.size(), 2u);
  std::set<std::string> domains{named[0].domain, named[1].domain};
  EXPECT_EQ(domains, (std::set<std::string>{"", "app"}));
  ActivityFilter window;
  window.t0_ns = 600;
  window.t1_ns = 1000;
  EXPECT_EQ(all(nvtx_ranges(reader, false, window)).size(), 2u);
}

TEST_F(Cursors, DeviceMemoryEventsSkipOtherKindsAndFilterByDevice) {
  const Reader reader(path_);
  EXPECT_EQ(all(device_memory_events(reader, MemoryOrder::ByTime)).size(), 5u);
  EXPECT_EQ(all(memory_events(reader)).size(), 6u);
  ActivityFilter f;
  f.device_id = 1;  // events 1, 3 (5 is pinned)
  const auto events = all(device_memory_events(reader, MemoryOrder::ByDevice, f));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].timestamp_ns, 200);
  EXPECT_EQ(events[1].timestamp_ns, 400);
  const auto extents = all(device_memory_extents(reader));
  ASSERT_EQ(extents.size(), 2u);
  EXPECT_EQ(extents[0].events, 3);
  EXPECT_EQ(extents[0].first_ns, 100);
  EXPECT_EQ(extents[0].last_ns, 500);
}

TEST_F(Cursors, TimeExtentOfAnEmptyTableIsNull) {
  const Reader reader(path_);
  EXPECT_FALSE(time_extent(reader, TimedTable::Memcpy).first_ns.has_value());
  const auto kernels = time_extent(reader, TimedTable::Kernel);
  EXPECT_EQ(kernels.first_ns, 100);
  EXPECT_EQ(kernels.last_ns, 1320);
  EXPECT_EQ(time_extent(reader, TimedTable::NvtxRange).last_ns, 1300);
}

// has_rows: what a window's emptiness check asks, under the window's views too.
TEST_F(Cursors, HasRowsTellsAnEmptyTableAndAWindowWithoutRows) {
  Reader reader(path_);
  EXPECT_FALSE(has_rows(reader, TimedTable::Memcpy));
  EXPECT_TRUE(has_rows(reader, TimedTable::Kernel));
  EXPECT_TRUE(has_rows(reader, TimedTable::NvtxRange));
  Reader late(path_);
  late.restrict_to({{5000, 6000}});  // after every record
  EXPECT_FALSE(has_rows(late, TimedTable::Kernel));
  EXPECT_FALSE(has_rows(late, TimedTable::NvtxRange));
}

TEST_F(Cursors, StringCacheAnswersMissingIdsWithItsPlaceholder) {
  const Reader reader(path_);
  StringCache strings(reader, "<unknown>");
  EXPECT_EQ(strings.get(-5), "<unknown>");
  const auto k = all(kernel_launches(reader, NameKind::Mangled));
  EXPECT_EQ(strings.get(k[0].name_id), "_Z4relu");
  StringCache loaded(reader);
  loaded.load_all();
  EXPECT_EQ(loaded.get(k[1].name_id), "_Z4gemmPfi");
  EXPECT_EQ(loaded.get(-5), "");
}

TEST_F(Cursors, SummaryStoreWritesAndReadsBack) {
  {
    const Reader reader(path_);
    EXPECT_TRUE(has_summary_tables(reader));
    EXPECT_FALSE(summary_tables_to_add(reader, path_));
  }
  SummaryAggregateRows rows;
  rows.kernels = {{5, 2, 30, 10, 20, 15.0, 7.0}};
  rows.calls = {{9, 1, 4, 4, 4, 4.0, 0.0}, {3, 1, 6, 6, 6, 6.0, 0.0}};
  rows.nvtx_work = {{1, 2, 300}};
  {
    Connection connection(path_, Connection::Mode::ReadWrite);
    write_summary_aggregates(connection, false, rows);
  }
  const Reader reader(path_);
  const auto sources = read_summary_sources(reader);
  ASSERT_EQ(sources.size(), 3u);
  EXPECT_EQ(sources[0].table, "kernel");
  EXPECT_EQ(sources[0].row_count, 12);
  EXPECT_EQ(sources[0].max_id, max_row_id(reader, "kernel"));
  EXPECT_THROW(max_row_id(reader, "strings"), Error);
  const auto kernels = all(summary_durations(reader, "kernel"));
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].total_ns, 30);
  EXPECT_EQ(kernels[0].median_ns, 15.0);
  const auto calls = all(summary_durations(reader, "api_call"));
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].name_id, 3);  // ordered by name id
  const auto work = all(summary_nvtx_work(reader));
  ASSERT_EQ(work.size(), 1u);
  EXPECT_EQ(work[0].gpu_ns, 300);
}

TEST(ModuleCursors, ModuleRangesAndTheWholeMemoryHistoryInsideAWindow) {
  fuselens::test::TempDir dir;
  const std::string path = dir.file("modules.sqlite");
  {
    RunInfo run;
    run.command_line = {"x"};
    auto w = Writer::create(path, run);
    RecordBatch b;
    NvtxRangeRecord r;
    r.pid = 10;
    r.tid = 11;
    for (const auto& [text, start] :
         std::vector<std::pair<std::string, std::uint64_t>>{{"fuselens:module:fwd:model", 300},
                                                            {"user", 100},
                                                            {"fuselens:module:bwd:model.fc", 200},
                                                            {"fuselens:inductor:{}", 250}}) {
      r.text = text;
      r.start_ns = start;
      r.end_ns = start + 50;
      b.nvtx_ranges.push_back(r);
    }
    r.text = "fuselens:module:fwd:open";
    r.start_ns = 400;
    r.end_ns.reset();
    b.nvtx_ranges.push_back(r);
    for (std::uint64_t t : {10, 500}) {
      MemoryEventRecord m;
      m.pid = 10;
      m.timestamp_ns = t;
      m.operation = MemoryOperation::Allocation;
      m.memory_kind = MemoryKind::Device;
      m.bytes = 100;
      b.memory_events.push_back(m);
    }
    w.write(b);
    w.finalize({EndReason::Exited, 0, std::nullopt, 1});
  }
  Reader reader(path);
  std::vector<std::string> texts;
  module_nvtx_ranges(reader).for_each([&](const NvtxRow& row) { texts.push_back(row.text); });
  EXPECT_EQ(texts,
            (std::vector<std::string>{"fuselens:module:bwd:model.fc", "fuselens:module:fwd:model",
                                      "fuselens:module:fwd:open"}));
  reader.restrict_to({TimeSpan{150, 450}});
  std::vector<std::int64_t> ends;
  module_nvtx_ranges(reader).for_each([&](const NvtxRow& row) { ends.push_back(*row.end_ns); });
  EXPECT_EQ(ends, (std::vector<std::int64_t>{250, 350, std::numeric_limits<std::int64_t>::max()}));
  std::vector<std::int64_t> times;  // the window's view would hold neither event
  device_memory_history(reader).for_each(
      [&](const MemoryEventRow& e) { times.push_back(e.timestamp_ns); });
  EXPECT_EQ(times, (std::vector<std::int64_t>{10, 500}));
  EXPECT_FALSE(device_memory_events(reader, MemoryOrder::ByTime).next().has_value());
}
