// The analysis sections of the HTML report (ExportHtmlAnalyses.cpp) on the real captures in
// tests/data and on synthetic ones, and the heatmap and roofline widgets.
#include <gtest/gtest.h>

#include <sstream>

#include "TestSupport.h"
#include "compare/Compare.h"
#include "export/ExportHtml.h"
#include "export/ExportHtmlWidgets.h"
#include "fuselens/db/Writer.h"

#ifndef FUSELENS_TEST_DATA_DIR
#error "FUSELENS_TEST_DATA_DIR must name tests/data"
#endif

namespace fuselens::analyzer {
namespace {

using test::TempDir;

std::string data(const char* name) { return std::string(FUSELENS_TEST_DATA_DIR) + "/" + name; }

std::string report_html(const std::vector<ExportRun>& runs) {
  std::ostringstream out;
  make_html_report(runs).write(out);
  return out.str();
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

/// The body of the section with `id` (up to its </section>), or "" when it is missing.
std::string section(const std::string& html, const std::string& id) {
  const auto start = html.find("<section id=\"" + id + "\"");
  if (start == std::string::npos) return {};
  return html.substr(start, html.find("</section>", start) - start);
}

TEST(HtmlAnalyses, FusionBenchHasEveryAnalysisSection) {
  const std::string html =
      report_html({load_export_run(db::Reader(data("fusion_bench.sqlite")), "A")});
  for (const char* id :
       {"peaks", "flags", "variant-comparison", "calling-contexts", "roofline", "heatmap"}) {
    EXPECT_FALSE(section(html, id).empty()) << id;
    EXPECT_NE(html.find(std::string("href=\"#") + id + "\""), std::string::npos) << id;
  }
  // Sections follow the order of the slots.
  EXPECT_LT(html.find("id=\"peaks\""), html.find("id=\"overview\""));
  EXPECT_LT(html.find("id=\"flags\""), html.find("id=\"variant-comparison\""));
  EXPECT_LT(html.find("id=\"variant-comparison\""), html.find("id=\"summary\""));
  EXPECT_LT(html.find("id=\"calling-contexts\""), html.find("id=\"roofline\""));
  EXPECT_LT(html.find("id=\"roofline\""), html.find("id=\"heatmap\""));

  const std::string peaks = section(html, "peaks");
  EXPECT_NE(peaks.find("FP32"), std::string::npos);
  EXPECT_NE(peaks.find("DRAM bandwidth"), std::string::npos);
  EXPECT_NE(peaks.find("Ridge point"), std::string::npos);
  EXPECT_NE(peaks.find("H100"), std::string::npos);

  EXPECT_NE(section(html, "flags").find("id=\"flags-table\""), std::string::npos);
  EXPECT_LE(count(section(html, "flags"), "<tr>"), 31U);  // header + at most 30 hits

  // One heatmap cell per op · shape × variant of the comparison.
  const CompareReport compare =
      compare_ranges(db::Reader(data("fusion_bench.sqlite")), "*/unfused/*", "*/fused/*");
  ASSERT_FALSE(compare.entries.empty());
  std::size_t present = 0;
  for (const auto& e : compare.entries) present += (e.baseline ? 1 : 0) + (e.candidate ? 1 : 0);
  const std::string heatmap = section(html, "heatmap");
  EXPECT_EQ(count(heatmap, "<svg"), 1U);
  EXPECT_EQ(count(heatmap, "class=\"heat-cell\""), present);
  EXPECT_EQ(count(heatmap, "class=\"heat-cell\"") + count(heatmap, "class=\"heat-empty\""),
            2 * compare.entries.size());
  const std::string table = section(html, "variant-comparison");
  EXPECT_EQ(count(table, "<tr>"), compare.entries.size() + 1);
  EXPECT_NE(table.find("×"), std::string::npos);  // a speedup

  const std::string roofline = section(html, "roofline");
  EXPECT_EQ(count(roofline, "<svg"), 1U);
  EXPECT_GE(count(roofline, "class=\"roof-point\""), 1U);
  EXPECT_GE(count(roofline, "roof-compute"), 1U);
  EXPECT_GE(count(roofline, "roof-memory"), 1U);

  const std::string contexts = section(html, "calling-contexts");
  const auto rows = contexts.find("id=\"calling-contexts-table\"");
  ASSERT_NE(rows, std::string::npos) << contexts;
  EXPECT_NE(contexts.find(">\u00a0\u00a0", rows), std::string::npos);  // indented labels
  EXPECT_NE(contexts.find("main", rows), std::string::npos);
  EXPECT_LE(count(contexts, "<tr>"), 16U);
}

TEST(HtmlAnalyses, PytorchMlpHasSectionsWithoutAComparison) {
  const std::string html =
      report_html({load_export_run(db::Reader(data("pytorch_mlp.sqlite")), "A")});
  for (const char* id : {"peaks", "flags", "calling-contexts", "roofline", "heatmap"}) {
    EXPECT_FALSE(section(html, id).empty()) << id;
  }
  EXPECT_TRUE(section(html, "variant-comparison").empty());  // no op/unfused|fused/shape ranges
  const std::string heatmap = section(html, "heatmap");
  EXPECT_EQ(heatmap.find("<svg"), std::string::npos);
  EXPECT_NE(heatmap.find("class=\"empty\""), std::string::npos);
  EXPECT_NE(section(html, "peaks").find("FP32"), std::string::npos);
}

TEST(HtmlAnalyses, MissingDataBecomesASentence) {
  TempDir dir;
  const auto path = dir.file("reference.sqlite");
  test::write_reference_capture(path);
  const std::string html = report_html({load_export_run(db::Reader(path), "A")});
  // No counters, no annotations: the roofline is one sentence.
  const std::string roofline = section(html, "roofline");
  EXPECT_EQ(roofline.find("<svg"), std::string::npos);
  EXPECT_NE(roofline.find("neither hardware counters"), std::string::npos) << roofline;
  EXPECT_FALSE(section(html, "calling-contexts").empty());
  EXPECT_NE(section(html, "calling-contexts").find("<p class=\"empty\">"), std::string::npos);
  EXPECT_TRUE(section(html, "variant-comparison").empty());
}

TEST(HtmlAnalyses, JsonAndCsvRunsSkipTheAnalyses) {
  TempDir dir;
  const auto path = dir.file("reference.sqlite");
  test::write_reference_capture(path);
  const ExportRun run = load_export_run(db::Reader(path), "A", NameKind::Demangled, false);
  EXPECT_FALSE(run.analyses.has_value());
  const std::string html = report_html({run});
  EXPECT_TRUE(section(html, "flags").empty());
  EXPECT_TRUE(section(html, "roofline").empty());
}

TEST(HtmlAnalyses, TwoRunsGetLabelledSections) {
  const std::string html =
      report_html({load_export_run(db::Reader(data("fusion_bench.sqlite")), "A"),
                   load_export_run(db::Reader(data("pytorch_mlp.sqlite")), "B")});
  for (const char* id :
       {"peaks-A", "peaks-B", "flags-A", "flags-B", "calling-contexts-A", "roofline-B"}) {
    EXPECT_FALSE(section(html, id).empty()) << id;
  }
  EXPECT_TRUE(section(html, "heatmap-A").empty());  // the one-capture comparison only
}

// The heatmap of an auto-detected unfused/fused comparison shows every variant of each op and
// shape (issue 24: the hand-written and CUTLASS pairs side by side), unfused and fused first; a
// variant missing for a shape is an empty cell.
TEST(HtmlAnalyses, HeatmapShowsEveryVariantOfEachShape) {
  TempDir dir;
  const auto path = dir.file("variants.sqlite");
  db::RunInfo info;
  info.command_line = {"./fusion_bench"};
  auto writer = db::Writer::create(path, info);
  db::ProcessInfo p;
  p.pid = 7;
  p.executable = "/bin/fusion_bench";
  writer.write_process(p);
  writer.write_device(db::DeviceInfo{});
  db::RecordBatch batch;
  std::int64_t t = 0;
  const std::vector<std::string> names{"gemm/unfused/M1",         "gemm/fused/M1",
                                       "gemm/cutlass_unfused/M1", "gemm/cutlass_fused/M1",
                                       "gemm/unfused/M2",         "gemm/fused/M2"};
  for (const auto& name : names) {
    db::NvtxRangeRecord r;
    r.pid = r.tid = 7;
    r.text = name;
    r.start_ns = t;
    r.end_ns = t + 1000;
    batch.nvtx_ranges.push_back(r);
    db::KernelRecord k;
    k.pid = 7;
    k.start_ns = t + 100;
    k.end_ns = t + 300;
    k.mangled_name = "kernel_" + std::to_string(t);
    k.correlation_id = static_cast<std::uint32_t>(batch.kernels.size() + 1);
    batch.kernels.push_back(k);
    db::ApiCallRecord call;
    call.pid = 7;
    call.tid = 7;
    call.start_ns = t + 10;
    call.end_ns = t + 20;
    call.name = "cudaLaunchKernel";
    call.correlation_id = static_cast<std::uint32_t>(batch.kernels.size());
    batch.api_calls.push_back(call);
    t += 2000;
  }
  writer.write(batch);
  writer.finalize({db::EndReason::Exited, 0, std::nullopt, 1});
  const std::string html = report_html({load_export_run(db::Reader(path), "A")});
  const std::string heatmap = section(html, "heatmap");
  ASSERT_NE(heatmap.find("<svg"), std::string::npos) << heatmap;
  EXPECT_EQ(count(heatmap, "class=\"heat-cell\""), names.size());
  EXPECT_EQ(count(heatmap, "class=\"heat-empty\""), 2U);  // M2 has no CUTLASS pair
  const auto at = [&](const char* label) { return heatmap.find(std::string(">") + label + "<"); };
  ASSERT_NE(at("cutlass_fused"), std::string::npos);
  EXPECT_LT(at("unfused"), at("fused"));
  EXPECT_LT(at("fused"), at("cutlass_fused"));
  EXPECT_LT(at("cutlass_fused"), at("cutlass_unfused"));
}

TEST(HtmlAnalyses, HostileNamesStayEscapedInTheAnalysisSections) {
  TempDir dir;
  const auto path = dir.file("hostile.sqlite");
  db::RunInfo info;
  info.command_line = {"./run"};
  auto writer = db::Writer::create(path, info);
  db::ProcessInfo p;
  p.pid = 7;
  p.executable = "/bin/x";
  writer.write_process(p);
  db::DeviceInfo d;
  d.name = "NVIDIA H100 80GB HBM3 <script>";
  writer.write_device(d);
  db::RecordBatch batch;
  for (int i = 0; i < 4; ++i) {
    db::KernelRecord k;
    k.pid = 7;
    k.start_ns = 1000 * i + 100;
    k.end_ns = 1000 * i + 200;
    k.mangled_name = "kernel<script>alert(1)</script>";
    batch.kernels.push_back(k);
  }
  db::NvtxRangeRecord r;
  r.pid = r.tid = 7;
  r.text = "op<script>/unfused/M1";
  r.start_ns = 0;
  r.end_ns = 5000;
  batch.nvtx_ranges = {r};
  writer.write(batch);
  writer.finalize({db::EndReason::Exited, 0, std::nullopt, 1});
  const std::string html = report_html({load_export_run(db::Reader(path), "A")});
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_FALSE(section(html, "flags").empty());
  EXPECT_FALSE(section(html, "peaks").empty());
}

TEST(HtmlWidgets, HeatmapHasOneCellPerValueAndEscapes) {
  Heatmap h;
  h.title = "t<1>";
  h.rows = {"gemm · M<64>", "relu · M128"};
  h.columns = {"unfused", "fused"};
  h.values = {{2000.0, 1000.0}, {500.0, std::nullopt}};
  h.format_value = [](double v) { return std::to_string(static_cast<int>(v)) + " ns"; };
  h.scale_label = "median";
  const std::string svg = svg_heatmap(h);
  EXPECT_EQ(count(svg, "class=\"heat-cell\""), 3U);
  EXPECT_EQ(count(svg, "class=\"heat-empty\""), 1U);
  EXPECT_EQ(count(svg, "class=\"heat-legend\""), 6U);
  EXPECT_NE(svg.find(">2000 ns</text>"), std::string::npos);
  EXPECT_EQ(svg.find("M<64>"), std::string::npos);
  EXPECT_NE(svg.find("M&lt;64&gt;"), std::string::npos);
  EXPECT_NE(svg.find("t&lt;1&gt;"), std::string::npos);
}

// Column labels wider than their cells (nine variants, "cublas_unfused_epilogue") are rotated so
// they do not overlap; short labels in wide cells stay horizontal.
TEST(HtmlWidgets, HeatmapRotatesColumnLabelsOnlyWhenTheyDoNotFit) {
  Heatmap h;
  h.rows = {"gemm · M1"};
  h.columns = {"unfused", "fused"};
  h.values = {{2.0, 1.0}};
  EXPECT_EQ(svg_heatmap(h).find("rotate("), std::string::npos);
  h.columns = {"unfused",           "fused",         "cublas_unfused_epilogue",
               "cublaslt_epilogue", "cutlass_fused", "cutlass_unfused",
               "fully_fused",       "layer_fused",   "online"};
  h.values = {std::vector<std::optional<double>>(h.columns.size(), 1.0)};
  const std::string svg = svg_heatmap(h);
  EXPECT_EQ(count(svg, "rotate(-35"), h.columns.size());
  EXPECT_EQ(count(svg, "class=\"heat-cell\""), h.columns.size());
}

TEST(HtmlWidgets, RooflineDrawsRoofsAndValidPointsOnly) {
  RooflinePlot plot;
  plot.title = "roof";
  plot.compute = {{"fp32", 67e12}, {"tensor", 989e12}};
  plot.memory = {{"dram", 3.35e12}};
  plot.series = {"kernels"};
  plot.points = {{"k<1>", 10, 1e12, 0}, {"zero", 0, 1e12, 0}, {"neg", 5, -1, 0}};
  const std::string svg = svg_roofline_chart(plot);
  EXPECT_EQ(count(svg, "class=\"roof-point\""), 1U);
  EXPECT_EQ(count(svg, "roof-compute"), 2U);
  EXPECT_EQ(count(svg, "roof-memory"), 1U);
  EXPECT_NE(svg.find("k&lt;1&gt;"), std::string::npos);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
  // Nothing at all still gives a valid, empty chart.
  EXPECT_NE(svg_roofline_chart({}).find("</svg>"), std::string::npos);
}

}  // namespace
}  // namespace fuselens::analyzer
