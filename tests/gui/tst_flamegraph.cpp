// The flame graph of the Calling Context page (views/FlameGraphWidget.h): box widths, hit
// testing, tooltips and click-to-zoom on a hand-made report, and the page's frames mode and flame
// graph on the committed PyTorch capture tests/data/cct_torch.sqlite.
#include <QSignalSpy>
#include <QtTest>

#include "CaptureData.h"
#include "cct/CallingContext.h"
#include "views/CallingContextPage.h"
#include "views/FlameGraphWidget.h"

using namespace fuselens;
using namespace fuselens::gui;

namespace {

// <all> 100 ns > A 60 ns > A1 60 ns (a kernel); <all> > B 40 ns.
analyzer::CctReport smallReport() {
  analyzer::CctReport r;
  r.available = true;
  auto add = [&](const char* label, int parent, std::int64_t ns, analyzer::CctRow::Kind kind) {
    analyzer::CctRow row;
    row.kind = kind;
    row.label = label;
    row.parent = parent;
    row.depth = parent < 0 ? 0 : r.rows[static_cast<std::size_t>(parent)].depth + 1;
    row.inclusive.gpu_time_ns = ns;
    r.rows.push_back(row);
    const int id = static_cast<int>(r.rows.size()) - 1;
    if (parent >= 0) r.rows[static_cast<std::size_t>(parent)].children.push_back(id);
    return id;
  };
  using Kind = analyzer::CctRow::Kind;
  add("<all>", -1, 100, Kind::Root);
  const int a = add("A [a.py:1]", 0, 60, Kind::Frame);
  add("<gpu kernel> k", a, 60, Kind::GpuOperation);
  add("[torch: aten::relu]", 0, 40, Kind::Frame);
  r.total.gpu_time_ns = 100;
  return r;
}

}  // namespace

class TestFlameGraph : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void boxesAreAsWideAsTheirShareAndClicksZoom() {
    FlameGraphWidget w;
    w.resize(1000, 200);
    w.setReport(smallReport());
    QCOMPARE(static_cast<int>(w.boxes().size()), 4);
    QCOMPARE(w.rowAt(QPoint(300, 25)), 1);   // level 1, left 60 %: A
    QCOMPARE(w.rowAt(QPoint(800, 25)), 3);   // level 1, right 40 %: B
    QCOMPARE(w.rowAt(QPoint(800, 45)), -1);  // nothing under B
    QVERIFY(w.toolTipFor(1).contains(QStringLiteral("A [a.py:1]")));
    QVERIFY(w.toolTipFor(1).contains(QStringLiteral("60")));
    QVERIFY(w.toolTipFor(-1).isEmpty());

    QSignalSpy zoomed(&w, &FlameGraphWidget::zoomChanged);
    QTest::mouseClick(&w, Qt::LeftButton, {}, QPoint(300, 25));
    QCOMPARE(w.zoomRoot(), 1);
    QCOMPARE(zoomed.count(), 1);
    // A fills the width now, its kernel below it.
    QCOMPARE(w.rowAt(QPoint(950, 5)), 1);
    QCOMPARE(w.rowAt(QPoint(950, 25)), 2);
    // Clicking the top box zooms out one level; Escape at the top does nothing.
    QTest::mouseClick(&w, Qt::LeftButton, {}, QPoint(10, 5));
    QCOMPARE(w.zoomRoot(), 0);
    QTest::keyClick(&w, Qt::Key_Escape);
    QCOMPARE(w.zoomRoot(), 0);
    w.zoomTo(2);
    QTest::keyClick(&w, Qt::Key_Escape);
    QCOMPARE(w.zoomRoot(), 1);
    // Drawing does not fail (offscreen).
    QVERIFY(!w.grab().isNull());
  }

  void pageFoldsFramesAndShowsTheFlameGraph() {
    const QString path = QStringLiteral(FUSELENS_TEST_DATA_DIR "/cct_torch.sqlite");
    if (!QFile::exists(path)) QSKIP("tests/data/cct_torch.sqlite is not committed");
    const CaptureDataPtr capture = loadCapture(path);
    CallingContextPage page;
    QSignalSpy done(&page, &CallingContextPage::finished);
    page.setCaptures(capture, {capture});
    page.show();
    QVERIFY(done.wait(60000));
    QCOMPARE(page.model()->report().frames, analyzer::FramesMode::User);
    const auto labelled = [&](const char* text) {
      for (const auto& row : page.model()->report().rows) {
        if (row.label.find(text) != std::string::npos) return true;
      }
      return false;
    };
    QVERIFY(labelled("[torch: aten::linear]"));
    QVERIFY(!labelled("wrap_kernel_functor"));
    const auto userRows = page.model()->report().rows.size();

    page.setFramesMode(analyzer::FramesMode::All);
    QVERIFY(done.wait(60000));
    QCOMPARE(page.model()->report().frames, analyzer::FramesMode::All);
    QVERIFY(labelled("wrap_kernel_functor"));
    QVERIFY(page.model()->report().rows.size() > userRows);

    page.setFlameGraphShown(true);
    QVERIFY(page.flameGraph()->isVisible());
    QCOMPARE(page.flameGraph()->report().rows.size(), page.model()->report().rows.size());
    QVERIFY(!page.flameGraph()->boxes().empty());
    page.setFlameGraphShown(false);
    QVERIFY(!page.flameGraph()->isVisible());
  }
};

QTEST_MAIN(TestFlameGraph)
#include "tst_flamegraph.moc"
