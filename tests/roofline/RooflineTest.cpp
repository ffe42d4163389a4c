// analyze_roofline on a synthetic capture with counters, annotations and measured ceilings, the
// annotation parser, the formats, and prof-analyze roofline's command line.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <sstream>

#include "Subprocess.h"
#include "TempDir.h"
#include "roofline/Roofline.h"
#include "roofline/RooflineFormat.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/RooflineStore.h"
#include "fuselens/db/Writer.h"

namespace fuselens::analyzer {
namespace {

constexpr std::uint32_t kPid = 100, kTid = 7;

db::KernelRecord kernel(const char* mangled, std::uint32_t correlation, std::uint64_t start,
                        std::uint64_t duration) {
  db::KernelRecord k;
  k.pid = kPid;
  k.start_ns = start;
  k.end_ns = start + duration;
  k.correlation_id = correlation;
  k.mangled_name = mangled;
  return k;
}

db::ApiCallRecord launch(std::uint32_t correlation, std::uint64_t start) {
  db::ApiCallRecord a;
  a.pid = kPid;
  a.tid = kTid;
  a.name = "cudaLaunchKernel";
  a.start_ns = start;
  a.end_ns = start + 100;
  a.correlation_id = correlation;
  return a;
}

db::NvtxRangeRecord range(const char* text, std::uint64_t start, std::uint64_t end) {
  db::NvtxRangeRecord r;
  r.pid = kPid;
  r.tid = kTid;
  r.text = text;
  r.start_ns = start;
  r.end_ns = end;
  return r;
}

db::NvtxMarkRecord mark(const char* text, std::uint64_t ts) {
  db::NvtxMarkRecord m;
  m.pid = kPid;
  m.tid = kTid;
  m.domain = kAnnotationDomain;
  m.text = text;
  m.timestamp_ns = ts;
  return m;
}

db::KernelMetricRecord counters(std::uint32_t correlation) {
  namespace m = db::metric;
  return {kPid, correlation, {{m::kFfma, 1e6}, {m::kFadd, 0}, {m::kDramRead, 40000},
                              {m::kDramWrite, 10000}, {m::kL2Bytes, 200000}, {m::kDuration, 9000}}};
}

/// gemm() twice in range "step" with counters (2e6 FLOP and 5e4 DRAM bytes each) and a matching
/// annotation; swish() once in range "act", annotated only; an empty range "idle".
void write_capture(const std::string& path, bool with_ceilings) {
  auto w = db::Writer::create(path, db::RunInfo{});
  db::DeviceInfo d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.sm_count = 132;
  d.uuid = "GPU-0";
  w.write_device(d);
  db::ProcessInfo p;
  p.pid = kPid;
  w.write_process(p);
  db::RecordBatch b;
  b.kernels = {kernel("_Z4gemmv", 1, 1000, 10000), kernel("_Z4gemmv", 2, 20000, 10000),
               kernel("_Z5swishv", 3, 40000, 5000)};
  b.api_calls = {launch(1, 900), launch(2, 19000), launch(3, 39000)};
  b.nvtx_ranges = {range("step", 500, 30000), range("act", 35000, 50000), range("idle", 60000, 61000)};
  b.nvtx_marks = {mark("fuselens:work flops=4000000 bytes=100000 precision=fp32", 600),
                  mark("fuselens:work flops=3000 bytes=8000", 36000),
                  mark("fuselens:work flops=abc", 36500)};
  w.write(b);
  w.finalize(db::RunEnd{db::EndReason::Exited, 0, std::nullopt, 1});
  db::RooflineWriter r(path);
  r.write_kernel_metrics({counters(1), counters(2)});
  db::MetricSessionRecord s;
  s.pid = kPid;
  s.metric_set = "roofline";
  s.metrics = {db::metric::kFfma};
  s.passes = 5;
  s.ranges = 2;
  r.write_metric_session(s);
  if (with_ceilings) {
    r.write_ceilings({{0, d.name, db::kCeilingDramBandwidth, 3e12, "copy", 1},
                      {0, d.name, db::kCeilingFp32, 6e13, "fma", 1},
                      {0, d.name, db::kCeilingL2Bandwidth, 1e13, "l2", 1},
                      {0, d.name, db::kCeilingBf16Tensor, 8e14, "gemm", 1}});
  }
}

const RooflineRow* find(const std::vector<RooflineRow>& rows, const std::string& name) {
  for (const auto& r : rows) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

TEST(Roofline, ParsesWorkAnnotations) {
  const auto w = parse_work_annotation("fuselens:work flops=12 bytes=34 precision=tensor");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->flops_of(Precision::Tensor), 12);
  EXPECT_EQ(*w->bytes_at(MemoryLevel::Dram), 34);
  EXPECT_EQ(parse_work_annotation("fuselens:work bytes=8")->total_flops(), 0);
  EXPECT_EQ(parse_work_annotation("fuselens:work flops=1.5e9 future=1")->total_flops(), 1.5e9);
  for (const char* bad : {"fuselens:work", "fuselens:workflops=1", "fuselens:work flops=-1",
                          "fuselens:work flops=x", "fuselens:work precision=fp8 flops=1",
                          "other flops=1", "fuselens:work flops"}) {
    EXPECT_FALSE(parse_work_annotation(bad)) << bad;
  }
}

TEST(Roofline, CountersGiveFlopsAndBytesByTheAnchorFormulas) {
  namespace m = db::metric;
  const Work w = work_from_counters({{m::kFadd, 1}, {m::kFmul, 2}, {m::kFfma, 3}, {m::kDfma, 1},
                                     {m::kHadd, 1}, {m::kHfma, 1}, {m::kTensorFp16, 64},
                                     {m::kDramRead, 10}, {m::kDramWrite, 5}, {m::kL1Bytes, 7}});
  EXPECT_EQ(w.flops_of(Precision::Fp32), 1 + 2 + 2 * 3);
  EXPECT_EQ(w.flops_of(Precision::Fp64), 2);
  EXPECT_EQ(w.flops_of(Precision::Fp16), 2 + 4);
  EXPECT_EQ(w.flops_of(Precision::Tensor), 64);
  EXPECT_EQ(*w.bytes_at(MemoryLevel::Dram), 15);
  EXPECT_FALSE(w.bytes_at(MemoryLevel::L2).has_value());
  EXPECT_EQ(*w.bytes_at(MemoryLevel::L1), 7);
}

TEST(Roofline, KernelRowsComeFromCountersAgainstTheMatchedDatasheet) {
  test::TempDir dir;
  write_capture(dir.file("c.sqlite"), false);
  const db::Reader reader(dir.file("c.sqlite"));
  const RooflineReport r = analyze_roofline(reader);
  EXPECT_EQ(r.peaks.ceilings.id, "h100-sxm");
  EXPECT_TRUE(r.has_counters);
  EXPECT_TRUE(r.has_annotations);
  ASSERT_EQ(r.kernels.size(), 1u);  // swish() has no counters
  const RooflineRow& gemm = r.kernels[0];
  EXPECT_EQ(gemm.name, "gemm()");
  EXPECT_EQ(gemm.instances, 2);
  EXPECT_EQ(gemm.gpu_time_ns, 20000);
  EXPECT_EQ(gemm.counter_time_ns, 18000);
  ASSERT_TRUE(gemm.counters);
  const RooflineResult& res = gemm.counters->result;
  EXPECT_EQ(res.flops, 4e6);
  EXPECT_NEAR(*res.intensity[0], 40, 1e-12);   // 4e6 FLOP / 1e5 DRAM bytes
  EXPECT_NEAR(*res.intensity[1], 10, 1e-12);   // / 4e5 L2 bytes
  EXPECT_EQ(res.bound, "compute:fp32");        // 59.8 ns of FP32 vs 29.9 ns of DRAM
  EXPECT_NEAR(res.floor_ns, 4e6 / 66.9e12 * 1e9, 1e-9);
  EXPECT_NEAR(res.efficiency, res.floor_ns / 20000, 1e-15);
  EXPECT_FALSE(gemm.counters->projected_ns);  // the device's own datasheet: no projection
}

TEST(Roofline, RangesCompareAnnotationsWithCountersAndSkipEmptyOnes) {
  test::TempDir dir;
  write_capture(dir.file("c.sqlite"), false);
  const RooflineReport r = analyze_roofline(db::Reader(dir.file("c.sqlite")));
  ASSERT_EQ(r.ranges.size(), 2u);
  EXPECT_EQ(find(r.ranges, "idle"), nullptr);
  const RooflineRow* step = find(r.ranges, "step");
  ASSERT_TRUE(step && step->counters && step->annotation);
  EXPECT_EQ(step->kernels, 2);
  EXPECT_EQ(step->kernels_with_counters, 2);
  EXPECT_EQ(step->gpu_time_ns, 20000);
  EXPECT_NEAR(*step->flops_difference, 0.0, 1e-12);
  EXPECT_NEAR(*step->dram_bytes_difference, 0.0, 1e-12);
  const RooflineRow* act = find(r.ranges, "act");
  ASSERT_TRUE(act && act->annotation && !act->counters);
  EXPECT_EQ(act->annotation->work.total_flops(), 3000);  // the malformed mark is ignored
  EXPECT_EQ(act->annotation->result.bound, "memory:dram");
  EXPECT_NEAR(act->annotation->result.efficiency, 8000 / 3350e9 * 1e9 / 5000, 1e-12);
  bool noted = false;
  for (const auto& n : r.notes) noted = noted || n.find("1 mark(s)") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(Roofline, ProjectsOnAT4WithTheEfficiencyMeasuredAgainstTheOwnCeilings) {
  test::TempDir dir;
  write_capture(dir.file("c.sqlite"), true);
  RooflineOptions o;
  o.peaks = "t4";
  const RooflineReport r = analyze_roofline(db::Reader(dir.file("c.sqlite")), o);
  ASSERT_TRUE(r.device_ceilings);
  EXPECT_EQ(r.device_ceilings->id, "measured");
  const RooflineRow& gemm = r.kernels.at(0);
  // On a T4: max(4e6 / 8.1e12, 1e5 / 320e9) = 493.8 ns. Own (measured) floor: max(4e6 / 6e13,
  // 1e5 / 3e12, 4e5 / 1e13) = 66.67 ns, efficiency 66.67 / 20000.
  const double t4_floor = 4e6 / 8.1e12 * 1e9;
  EXPECT_NEAR(gemm.counters->result.floor_ns, t4_floor, 1e-9);
  const double own_efficiency = (4e6 / 6e13 * 1e9) / 20000;
  ASSERT_TRUE(gemm.counters->projected_ns);
  EXPECT_NEAR(*gemm.counters->projected_ns, t4_floor / own_efficiency, 1e-6);
  EXPECT_GT(gemm.counters->result.efficiency, 0);
}

TEST(Roofline, MeasuredPeaksUseTheCaptureCeilingsWithDatasheetFallback) {
  test::TempDir dir;
  write_capture(dir.file("c.sqlite"), true);
  RooflineOptions o;
  o.peaks = "measured";
  const RooflineReport r = analyze_roofline(db::Reader(dir.file("c.sqlite")), o);
  const Ceilings& c = r.peaks.ceilings;
  EXPECT_EQ(*c.flops(Precision::Fp32), 6e13);
  EXPECT_EQ(*c.flops(Precision::Tensor), 8e14);
  EXPECT_EQ(*c.bandwidth(MemoryLevel::L2), 1e13);
  EXPECT_NEAR(*c.flops(Precision::Fp64), 33.5e12, 1e9);  // from the h100-sxm datasheet
  EXPECT_NE(c.label.find("datasheet"), std::string::npos);
  EXPECT_EQ(r.measured.size(), 4u);
  // 4e6 / 6e13 = 66.7 ns beats 4e5 L2 bytes / 1e13 = 40 ns and 1e5 / 3e12 = 33.3 ns.
  EXPECT_EQ(r.kernels.at(0).counters->result.bound, "compute:fp32");
}

TEST(Roofline, ChartHoldsRoofsAndOnePointPerRowAndSource) {
  test::TempDir dir;
  write_capture(dir.file("c.sqlite"), false);
  const RooflineReport r = analyze_roofline(db::Reader(dir.file("c.sqlite")));
  EXPECT_EQ(r.chart.compute.size(), 4u);  // fp64, fp32, fp16, tensor
  EXPECT_EQ(r.chart.memory.size(), 1u);   // DRAM only: datasheets give no L2 figure
  // gemm() kernel (counters), step (counters + annotation), act (annotation).
  EXPECT_EQ(r.chart.points.size(), 4u);
}

TEST(Roofline, VersionOneCapturesHaveNoCountersAndSaySo) {
  const RooflineReport r =
      analyze_roofline(db::Reader(std::string(FUSELENS_TEST_DATA_DIR) + "/fusion_bench_schema_v1.sqlite"));
  EXPECT_FALSE(r.has_counters);
  EXPECT_TRUE(r.kernels.empty());
  EXPECT_TRUE(r.ranges.empty());
  ASSERT_GE(r.notes.size(), 2u);
  EXPECT_NE(r.notes[0].find("--metrics roofline"), std::string::npos);
}

TEST(RooflineFormat, CsvHasOneRowPerRowAndSourceAndJsonParses) {
  test::TempDir dir;
  write_capture(dir.file("c.sqlite"), false);
  const RooflineReport r = analyze_roofline(db::Reader(dir.file("c.sqlite")));
  std::ostringstream csv;
  write_roofline(csv, r, OutputFormat::Csv);
  std::istringstream in(csv.str());
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 1u + 4u);  // header, gemm() cnt, step cnt + ann, act ann
  EXPECT_EQ(lines[0].substr(0, 28), "section,name,source,instance");
  EXPECT_EQ(lines[1].substr(0, 24), "kernel,gemm(),counters,2");
  const auto json = nlohmann::json::parse(roofline_to_json(r).dump());
  EXPECT_EQ(json["peaks"]["id"], "h100-sxm");
  EXPECT_EQ(json["kernels"][0]["counters"]["bound"], "compute:fp32");
  std::ostringstream table;
  write_roofline(table, r, OutputFormat::Table);
  EXPECT_NE(table.str().find("ridge points"), std::string::npos);
  EXPECT_NE(table.str().find("gemm()"), std::string::npos);
}

TEST(ProfAnalyzeRoofline, PrintsTheTableAndRefusesUnknownPeaksInOneLine) {
  test::TempDir dir;
  write_capture(dir.file("c.sqlite"), false);
  const auto ok = test::run({PROF_ANALYZE_PATH, "roofline", dir.file("c.sqlite"), "--peaks", "t4"});
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_NE(ok.out.find("NVIDIA Tesla T4 (datasheet)"), std::string::npos);
  const auto bad = test::run({PROF_ANALYZE_PATH, "roofline", dir.file("c.sqlite"), "--peaks", "v100"});
  EXPECT_EQ(bad.status, 2);
  ASSERT_EQ(bad.err_lines().size(), 1u) << bad.err;
  EXPECT_NE(bad.err.find("not a known profile"), std::string::npos);
  const auto measured = test::run({PROF_ANALYZE_PATH, "roofline",
                                   std::string(FUSELENS_TEST_DATA_DIR) + "/fusion_bench.sqlite",
                                   "--peaks", "measured"});
  EXPECT_EQ(measured.status, 2);
  EXPECT_NE(measured.err.find("no measured ceilings"), std::string::npos) << measured.err;
}

}  // namespace
}  // namespace fuselens::analyzer
