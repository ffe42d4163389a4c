// The flame graph layout (cct/FlameGraph.h) and the HTML report's flame graph
// (export/ExportHtmlFlame.h): widths as shares, subtrees of narrow boxes left out, zooming,
// escaped text, and the section in a real capture's report.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "cct/FlameGraph.h"
#include "export/Export.h"
#include "export/ExportHtml.h"
#include "export/ExportHtmlFlame.h"
#include "fuselens/db/Reader.h"

using namespace fuselens;
using namespace fuselens::analyzer;

namespace {

// <all> 1000 > A 600 > (A1 500, A2 1); <all> > B 400 > B1 400.
CctReport tree(const std::string& a_label = "A") {
  CctReport r;
  r.available = true;
  auto add = [&](std::string label, int parent, std::int64_t ns) {
    CctRow row;
    row.kind = parent < 0 ? CctRow::Kind::Root : CctRow::Kind::Frame;
    row.label = std::move(label);
    row.parent = parent;
    row.depth = parent < 0 ? 0 : r.rows[static_cast<std::size_t>(parent)].depth + 1;
    row.inclusive.gpu_time_ns = ns;
    r.rows.push_back(row);
    const int id = static_cast<int>(r.rows.size()) - 1;
    if (parent >= 0) r.rows[static_cast<std::size_t>(parent)].children.push_back(id);
    return id;
  };
  add("<all>", -1, 1000);
  const int a = add(a_label, 0, 600);
  add("A1", a, 500);
  add("A2", a, 1);
  const int b = add("B", 0, 400);
  add("B1", b, 400);
  r.total.gpu_time_ns = 1000;
  return r;
}

const FlameBox* box_of(const std::vector<FlameBox>& boxes, int row) {
  for (const auto& b : boxes) {
    if (b.row == row) return &b;
  }
  return nullptr;
}

}  // namespace

TEST(FlameGraph, BoxesAreTheirShareOfTheRootLeftToRight) {
  const auto r = tree();
  const auto boxes = flame_layout(r);
  ASSERT_EQ(boxes.size(), r.rows.size());
  EXPECT_EQ(boxes.front().row, 0);
  const FlameBox* a = box_of(boxes, 1);
  const FlameBox* a1 = box_of(boxes, 2);
  const FlameBox* b = box_of(boxes, 4);
  ASSERT_TRUE(a && a1 && b);
  EXPECT_DOUBLE_EQ(a->x0, 0.0);
  EXPECT_DOUBLE_EQ(a->x1, 0.6);
  EXPECT_DOUBLE_EQ(b->x0, 0.6);
  EXPECT_DOUBLE_EQ(b->x1, 1.0);
  EXPECT_EQ(a1->level, 2);
  EXPECT_DOUBLE_EQ(a1->x1, 0.5);  // A's exclusive remainder is the gap after its children
  // A2 (1/1000) is left out below a minimum width of 1/100; the rest stays.
  const auto wide = flame_layout(r, 0, 0.01);
  EXPECT_EQ(box_of(wide, 3), nullptr);
  EXPECT_EQ(wide.size(), r.rows.size() - 1);
}

TEST(FlameGraph, ZoomingMakesARowTheWholeWidth) {
  const auto r = tree();
  const auto boxes = flame_layout(r, 4);
  ASSERT_EQ(boxes.size(), 2u);
  EXPECT_EQ(boxes[0].row, 4);
  EXPECT_EQ(boxes[0].level, 0);
  EXPECT_DOUBLE_EQ(boxes[1].x1, 1.0);
  EXPECT_TRUE(flame_layout(r, 99).empty());
  EXPECT_TRUE(flame_layout(r, -1).empty());
  EXPECT_TRUE(flame_layout(CctReport{}).empty());
}

TEST(FlameGraph, HtmlFlameGraphEscapesLabelsAndHasATitlePerBox) {
  const auto html = svg_flame_graph(tree("<script>alert('x')</script> & co"), "Flame <graph>");
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert("), std::string::npos);
  EXPECT_NE(html.find("Flame &lt;graph&gt;"), std::string::npos);
  const std::regex rect("<rect ");
  EXPECT_EQ(
      std::distance(std::sregex_iterator(html.begin(), html.end(), rect), std::sregex_iterator()),
      static_cast<long>(tree().rows.size()));
  EXPECT_NE(html.find("B1: 400 ns (40.0 %)"), std::string::npos) << html;
  EXPECT_TRUE(svg_flame_graph(CctReport{}, "x").empty());
}

TEST(FlameGraph, HtmlReportOfAPythonCaptureHasTheFlameGraphWithFoldedFrames) {
  const std::string path = std::string(FUSELENS_TEST_DATA_DIR) + "/cct_torch.sqlite";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "cct_torch.sqlite is not committed";
  const db::Reader reader(path);
  const auto analyses = load_export_analyses(reader);
  ASSERT_TRUE(analyses.calling_contexts.has_value());
  const auto html = svg_flame_graph(*analyses.calling_contexts, "t");
  EXPECT_NE(html.find("[torch: aten::linear]"), std::string::npos);
  EXPECT_EQ(html.find("wrap_kernel_functor"), std::string::npos);
  const auto all = load_export_analyses(reader, nullptr, nullptr, FramesMode::All);
  EXPECT_NE(svg_flame_graph(*all.calling_contexts, "t").find("wrap_kernel_functor"),
            std::string::npos);
}
