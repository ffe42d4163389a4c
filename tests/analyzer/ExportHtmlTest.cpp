#include "export/ExportHtml.h"

#include <gtest/gtest.h>

#include <sstream>

#include "TestSupport.h"
#include "export/ExportHtmlWidgets.h"
#include "fuselens/db/Writer.h"

namespace fuselens::analyzer {
namespace {

using test::TempDir;

constexpr const char* kScript = "<script>alert('x')</script>";

std::string report_html(const std::vector<ExportRun>& runs, const HtmlReport* custom = nullptr) {
  std::ostringstream out;
  if (custom) {
    custom->write(out);
  } else {
    make_html_report(runs).write(out);
  }
  return out.str();
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

/// A capture whose kernel name, NVTX text, executable, host and command line hold markup.
void write_hostile_capture(const std::string& path) {
  db::RunInfo run;
  run.command_line = {"./run", kScript};
  run.host_name = "<b>host</b>";
  run.working_directory = "/tmp/a&b";
  auto writer = db::Writer::create(path, run);
  db::ProcessInfo p;
  p.pid = 7;
  p.executable = "/bin/<img src=x>";
  writer.write_process(p);
  db::DeviceInfo d;
  d.name = "GPU <&>";
  writer.write_device(d);
  db::RecordBatch batch;
  db::KernelRecord k;
  k.pid = 7;
  k.start_ns = 100;
  k.end_ns = 200;
  k.mangled_name = std::string("kernel") + kScript;  // not a mangled name: stored as it is
  batch.kernels = {k};
  db::NvtxRangeRecord r;
  r.pid = r.tid = 7;
  r.text = kScript;
  r.domain = "<dom>";
  r.start_ns = 0;
  r.end_ns = 300;
  batch.nvtx_ranges = {r};
  writer.write(batch);
  writer.finalize({db::EndReason::Exited, 0, std::nullopt, 1});
}

TEST(HtmlEscape, EscapesMarkupAndRepairsUtf8) {
  EXPECT_EQ(html_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(html_escape("µs"), "µs");
  EXPECT_EQ(html_escape("x\xff"), "x\xEF\xBF\xBD");
  EXPECT_EQ(truncate_text("abcdef", 3), "abc…");
  EXPECT_EQ(truncate_text("µµµ", 3), "µµµ");
}

TEST(HtmlReport, EscapesEveryNameFromTheCapture) {
  TempDir dir;
  const auto path = dir.file("hostile.sqlite");
  write_hostile_capture(path);
  const std::string html = report_html({load_export_run(db::Reader(path), "A")});
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<b>"), std::string::npos);
  EXPECT_EQ(html.find("<dom>"), std::string::npos);
  EXPECT_NE(html.find("kernel&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("&lt;dom&gt;:&lt;script&gt;"), std::string::npos);  // NVTX "domain:text"
  EXPECT_NE(html.find("/bin/&lt;img src=x&gt;"), std::string::npos);
  EXPECT_NE(html.find("GPU &lt;&amp;&gt;"), std::string::npos);
  EXPECT_NE(html.find("/tmp/a&amp;b"), std::string::npos);
}

TEST(HtmlReport, IsSelfContained) {
  TempDir dir;
  const auto path = dir.file("reference.sqlite");
  test::write_reference_capture(path);
  const std::string html = report_html({load_export_run(db::Reader(path), "A")});
  for (const char* fetch : {"<script", "<link", "<img", "<iframe", "src=", "@import", "url(",
                            "href=\"http", "href='http"}) {
    EXPECT_EQ(html.find(fetch), std::string::npos) << fetch;
  }
  EXPECT_NE(html.find("Content-Security-Policy"), std::string::npos);
  EXPECT_NE(html.find("default-src 'none'"), std::string::npos);
}

TEST(HtmlReport, ShowsRunDevicesChartsAndEverySummaryTable) {
  TempDir dir;
  const auto path = dir.file("reference.sqlite");
  test::write_reference_capture(path);
  const std::string html = report_html({load_export_run(db::Reader(path), "A")});
  for (const char* id :
       {"id=\"run-table\"", "id=\"processes-table\"", "id=\"devices-table\"", "id=\"kernels\"",
        "id=\"memory-operations\"", "id=\"api\"", "id=\"nvtx\"", "id=\"device-memory\""}) {
    EXPECT_NE(html.find(id), std::string::npos) << id;
  }
  EXPECT_NE(html.find(test::kDeviceName), std::string::npos);
  EXPECT_EQ(count(html, "<svg"), 2U);  // top kernels, device memory over time
  EXPECT_NE(html.find("Top kernels by total GPU time"), std::string::npos);
  EXPECT_NE(html.find("Device memory in use"), std::string::npos);
  // Four kernel rows (gemm<64>, quoted, gemm<128>, relu) in the kernel table.
  const auto table = html.substr(html.find("id=\"kernels\""));
  EXPECT_EQ(count(table.substr(0, table.find("</table>")), "<tr>"), 5U);  // header + 4
  // The marker of every slot, in order, extension slots included.
  std::size_t at = 0;
  for (const char* slot : {"run", "devices", "peaks", "overview", "flags", "comparison", "summary",
                           "calling-contexts", "roofline", "heatmaps", "appendix"}) {
    const auto found = html.find(std::string("<!-- fuselens:slot ") + slot + " -->", at);
    ASSERT_NE(found, std::string::npos) << slot;
    at = found;
  }
}

TEST(HtmlReport, ExtensionSectionsGoToTheirSlotInOrder) {
  TempDir dir;
  const auto path = dir.file("reference.sqlite");
  test::write_reference_capture(path);
  HtmlReport report = make_html_report({load_export_run(db::Reader(path), "A")});
  report.add({HtmlSlot::Roofline, "roofline", "Roofline <1>", "<p>roof</p>"});
  report.add({HtmlSlot::Flags, "flags", "Flags", "<p>first flag</p>"});
  report.add({HtmlSlot::Flags, "bad id!", "More flags", "<p>second flag</p>"});
  const auto sections = report.sections();
  std::vector<HtmlSlot> slots;
  for (const auto& s : sections) slots.push_back(s.slot);
  EXPECT_TRUE(std::is_sorted(slots.begin(), slots.end()));
  const std::string html = report_html({}, &report);
  const auto first = html.find("first flag"), second = html.find("second flag");
  const auto summary = html.find("CUDA GPU Kernel Summary"), roof = html.find("roof</p>");
  EXPECT_LT(html.find("Device memory in use"), first);
  EXPECT_LT(first, second);
  EXPECT_LT(second, summary);
  EXPECT_LT(summary, roof);
  EXPECT_NE(html.find("Roofline &lt;1&gt;"), std::string::npos);  // titles are escaped
  EXPECT_NE(html.find("id=\"flags-"), std::string::npos);         // an invalid id is replaced
  EXPECT_NE(html.find("href=\"#roofline\""), std::string::npos);
}

TEST(HtmlReport, TwoRunsAreShownSideBySide) {
  TempDir dir;
  const auto a = dir.file("a.sqlite"), b = dir.file("b.sqlite");
  test::write_reference_capture(a);
  write_hostile_capture(b);
  const std::string html =
      report_html({load_export_run(db::Reader(a), "A"), load_export_run(db::Reader(b), "B")});
  EXPECT_NE(html.find("id=\"comparison\""), std::string::npos);
  EXPECT_NE(html.find("id=\"compare-kernels\""), std::string::npos);
  EXPECT_NE(html.find("id=\"kernels-A\""), std::string::npos);
  EXPECT_NE(html.find("id=\"kernels-B\""), std::string::npos);
  EXPECT_NE(html.find("only in A"), std::string::npos);
  EXPECT_NE(html.find("only in B"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

TEST(HtmlReport, SideBySideRatiosAreBOverA) {
  TempDir dir;
  const auto path = dir.file("reference.sqlite");
  test::write_reference_capture(path);
  const Summary s = summarize(db::Reader(path));
  const SideBySide joined = side_by_side(s, s);
  ASSERT_EQ(joined.kernels.size(), 4U);
  EXPECT_EQ(joined.kernels[0].name, test::kQuoted);  // 4000 ns, the largest
  for (const auto& r : joined.kernels) {
    ASSERT_TRUE(r.ratio.has_value());
    EXPECT_DOUBLE_EQ(*r.ratio, 1.0);
    EXPECT_EQ(r.a_total_ns, r.b_total_ns);
  }
  const HtmlTable t{"t", {{"n", true, false}}, {}, "(empty)", ""};
  EXPECT_NE(t.to_html().find("(empty)"), std::string::npos);
}

}  // namespace
}  // namespace fuselens::analyzer
