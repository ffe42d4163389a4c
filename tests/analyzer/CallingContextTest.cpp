// Calling-context views on a synthetic capture whose paths and costs are known:
//   main > a [x.cpp:10] > b [x.cpp:20] > libcuda > launch kernel K (100 ns)      corr 1
//   main > a [x.cpp:11] > c [x.cpp:30] > libcuda > launch kernel K (300 ns)      corr 2
//   main > d [x.cpp:40] > libcuda > memcpy Host-to-Device (50 ns, 4096 bytes)    corr 3
//   kernel K with no recorded context (7 ns)                                      corr 4
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "TestSupport.h"
#include "cct/CallingContextFormat.h"
#include "fuselens/db/Writer.h"

using namespace fuselens;
using namespace fuselens::analyzer;

namespace {

constexpr const char* kKernel = "K(float*)";

void write_cct_capture(const std::string& path) {
  db::RunInfo run;
  run.command_line = {"x"};
  auto w = db::Writer::create(path, run);
  db::RecordBatch b;
  auto kernel = [&](std::uint32_t corr, std::uint64_t start, std::uint64_t dur) {
    db::KernelRecord k;
    k.pid = 9;
    k.correlation_id = corr;
    k.start_ns = start;
    k.end_ns = start + dur;
    k.mangled_name = kKernel;
    b.kernels.push_back(k);
  };
  kernel(1, 1000, 100);
  kernel(2, 2000, 300);
  kernel(4, 4000, 7);
  db::MemcpyRecord m;
  m.pid = 9;
  m.correlation_id = 3;
  m.copy_kind = db::MemcpyKind::HostToDevice;
  m.bytes = 4096;
  m.start_ns = 3000;
  m.end_ns = 3050;
  b.memcpys.push_back(m);
  w.write(b);

  db::CallingContextTree t;
  t.pid = 9;
  using db::FrameKind;
  t.frames = {
      {FrameKind::Native, "/bin/x", 0x10, "main", "/src/x.cpp", 5},   // 0
      {FrameKind::Native, "/bin/x", 0x20, "a()", "/src/x.cpp", 10},   // 1: a, call site of b
      {FrameKind::Native, "/bin/x", 0x21, "a()", "/src/x.cpp", 11},   // 2: a, call site of c
      {FrameKind::Native, "/bin/x", 0x30, "b()", "/src/x.cpp", 20},   // 3
      {FrameKind::Native, "/bin/x", 0x40, "c()", "/src/x.cpp", 30},   // 4
      {FrameKind::Native, "/bin/x", 0x50, "d()", "/src/x.cpp", 40},   // 5
      {FrameKind::Native, "/usr/lib/libcuda.so.1", 0x99, "", "", 0},  // 6: internal
  };
  t.nodes = {{0, 0}, {0, 0},          // 1 main
             {1, 1}, {2, 3}, {3, 6},  // 2 a:10, 3 b, 4 libcuda
             {1, 2}, {5, 4}, {6, 6},  // 5 a:11, 6 c, 7 libcuda
             {1, 5}, {8, 6}};         // 8 d, 9 libcuda
  t.contexts = {{1, 100, 4}, {2, 100, 7}, {3, 100, 9}};
  w.write_calling_contexts(t);
  w.finalize({db::EndReason::Exited, 0, std::nullopt, 1});
}

class CallingContextViews : public ::testing::Test {
 protected:
  void SetUp() override { write_cct_capture(path); }
  CctReport report(CctView view, bool internal = false) {
    db::Reader reader(path);
    CctOptions o;
    o.view = view;
    o.show_internal = internal;
    return calling_context_report(reader, o);
  }
  // Label path (root excluded) -> row.
  static std::map<std::string, CctRow> by_path(const CctReport& r) {
    std::map<std::string, CctRow> out;
    for (std::size_t i = 1; i < r.rows.size(); ++i) {
      std::string p = r.rows[i].label;
      for (int a = r.rows[i].parent; a > 0; a = r.rows[static_cast<std::size_t>(a)].parent) {
        p = r.rows[static_cast<std::size_t>(a)].label + " / " + p;
      }
      out.emplace(p, r.rows[i]);
    }
    return out;
  }
  analyzer::test::TempDir dir;
  std::string path = dir.file("cct.sqlite");
};

}  // namespace

TEST_F(CallingContextViews, TopDownChargesEachLaunchSiteAndHidesTheCudaStack) {
  const auto r = report(CctView::TopDown);
  ASSERT_TRUE(r.available);
  EXPECT_EQ(r.total.gpu_time_ns, 457);
  EXPECT_EQ(r.total.launches, 4);
  EXPECT_EQ(r.total.bytes, 4096);
  EXPECT_EQ(r.unattributed_operations, 1);
  const auto rows = by_path(r);
  EXPECT_EQ(rows.at("main [x.cpp:5]").inclusive.gpu_time_ns, 450);
  EXPECT_EQ(rows.at("main [x.cpp:5]").exclusive.gpu_time_ns, 0);
  EXPECT_EQ(rows.at("main [x.cpp:5] / a() [x.cpp:10]").inclusive.gpu_time_ns, 100);
  EXPECT_EQ(rows.at("main [x.cpp:5] / a() [x.cpp:11]").inclusive.gpu_time_ns, 300);
  const auto& leaf =
      rows.at("main [x.cpp:5] / a() [x.cpp:11] / c() [x.cpp:30] / <gpu kernel> K(float*)");
  EXPECT_EQ(leaf.exclusive.gpu_time_ns, 300);
  EXPECT_EQ(leaf.kind, CctRow::Kind::GpuOperation);
  const auto& copy = rows.at("main [x.cpp:5] / d() [x.cpp:40] / <gpu copy> Host-to-Device");
  EXPECT_EQ(copy.inclusive.bytes, 4096);
  EXPECT_EQ(copy.inclusive.launches, 1);
  EXPECT_EQ(rows.at("<no calling context> / <gpu kernel> K(float*)").inclusive.gpu_time_ns, 7);
  for (const auto& [p, row] : rows) EXPECT_EQ(p.find("libcuda"), std::string::npos) << p;
  // Children are ordered by inclusive GPU time.
  const auto& main_row = r.rows[static_cast<std::size_t>(r.rows[0].children[0])];
  EXPECT_EQ(main_row.label, "main [x.cpp:5]");
  EXPECT_EQ(r.rows[static_cast<std::size_t>(main_row.children[0])].label, "a() [x.cpp:11]");
}

TEST_F(CallingContextViews, ShowInternalKeepsTheCudaStackFrames) {
  const auto rows = by_path(report(CctView::TopDown, true));
  EXPECT_EQ(rows.count("main [x.cpp:5] / d() [x.cpp:40] / libcuda.so.1+0x99"), 1u);
}

TEST_F(CallingContextViews, BottomUpSplitsAKernelAmongItsCallers) {
  const auto rows = by_path(report(CctView::BottomUp));
  const auto& k = rows.at("<gpu kernel> K(float*)");
  EXPECT_EQ(k.inclusive.gpu_time_ns, 407);
  EXPECT_EQ(k.exclusive.gpu_time_ns, 407);
  EXPECT_EQ(rows.at("<gpu kernel> K(float*) / b() [x.cpp:20]").inclusive.gpu_time_ns, 100);
  EXPECT_EQ(rows.at("<gpu kernel> K(float*) / c() [x.cpp:30]").inclusive.gpu_time_ns, 300);
  EXPECT_EQ(rows.at("<gpu kernel> K(float*) / c() [x.cpp:30] / a() [x.cpp:11] / main [x.cpp:5]")
                .inclusive.gpu_time_ns,
            300);
  EXPECT_EQ(rows.at("<gpu kernel> K(float*) / <no calling context>").inclusive.gpu_time_ns, 7);
}

TEST_F(CallingContextViews, FlatGroupsByModuleFunctionAndLine) {
  const auto rows = by_path(report(CctView::Flat));
  const auto& a = rows.at("/bin/x / a()");
  EXPECT_EQ(a.inclusive.gpu_time_ns, 400);  // both call sites of a, counted once per launch
  EXPECT_EQ(a.exclusive.gpu_time_ns, 0);
  EXPECT_EQ(rows.at("/bin/x / b()").exclusive.gpu_time_ns, 100);
  EXPECT_EQ(rows.at("/bin/x / c() / x.cpp:30").exclusive.gpu_time_ns, 300);
  EXPECT_EQ(rows.at("/bin/x").inclusive.gpu_time_ns, 450);
  EXPECT_EQ(rows.at("/bin/x").exclusive.gpu_time_ns, 450);
}

TEST_F(CallingContextViews, FormatsDepthPercentAndFilter) {
  const auto r = report(CctView::TopDown);
  std::ostringstream table, csv;
  CctDisplay d;
  d.filter.emplace("c\\(\\)");
  write_cct(table, r, OutputFormat::Table, d);
  EXPECT_NE(table.str().find("c() [x.cpp:30]"), std::string::npos);
  EXPECT_EQ(table.str().find("b() [x.cpp:20]"), std::string::npos);
  CctDisplay shallow;
  shallow.max_depth = 1;
  write_cct(csv, r, OutputFormat::Csv, shallow);
  const auto records = analyzer::test::parse_csv(csv.str());
  ASSERT_GE(records.size(), 3u);
  EXPECT_EQ(records[0][0], "id");
  EXPECT_EQ(records[0][9], "incl_gpu_time_ns");
  for (std::size_t i = 1; i < records.size(); ++i) {
    if (!records[i].empty() && records[i].size() > 2) {
      EXPECT_LE(std::stoi(records[i][2]), 1);
    }
  }
}

TEST(CallingContext, VersionOneCapturesSayWhyThereIsNothingToShow) {
  db::Reader reader(std::string(FUSELENS_TEST_DATA_DIR) + "/fusion_bench_schema_v1.sqlite");
  const auto r = calling_context_report(reader, CctOptions{});
  EXPECT_FALSE(r.available);
  EXPECT_NE(r.unavailable_reason.find("schema version 1"), std::string::npos);
}
