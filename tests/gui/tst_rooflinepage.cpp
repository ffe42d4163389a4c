// The Roofline page on tests/data/fusion_bench_roofline.sqlite (hardware counters and work
// annotations): every row of its table and every point of its chart equals analyze_roofline's
// figures for the same peaks, the chart draws the chosen ceilings, the model passes
// QAbstractItemModelTester; a capture without counters or annotations says how to get them;
// the chart exports as PNG and SVG.

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QFile>
#include <QGraphicsItem>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QtCharts/QChart>
#include <QtCharts/QLogValueAxis>
#include <QtTest>

#include <cmath>

#include "CaptureData.h"
#include "Format.h"
#include "GuiExport.h"
#include "roofline/Peaks.h"
#include "roofline/Roofline.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/Sqlite.h"
#include "models/RooflineModel.h"
#include "views/RooflineChart.h"
#include "views/RooflinePage.h"

using namespace fuselens;
using namespace fuselens::gui;

namespace {

QString capture(const char* name) {
  return QStringLiteral(FUSELENS_TEST_DATA_DIR "/") + QString::fromLatin1(name);
}
constexpr auto kMode = QAbstractItemModelTester::FailureReportingMode::QtTest;

/// The page showing `file` (opened, no analysis: the page runs its own), shown and finished.
bool showPage(RooflinePage& page, const QString& file, CaptureDataPtr* keep) {
  *keep = openCapture(file);
  QSignalSpy done(&page, &RooflinePage::finished);
  page.resize(1400, 800);
  page.setCaptures(*keep, {*keep});
  page.show();
  return done.count() > 0 || done.wait(60000);
}

bool near(double a, double b) {
  return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b));
}

}  // namespace

class TestRooflinePage : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void pointsEqualTheAnalyzer_data() {
    QTest::addColumn<QString>("peaks");
    QTest::addColumn<bool>("ranges");
    for (const char* peaks : {"auto", "measured", "t4"}) {
      QTest::addRow("%s kernels", peaks) << QString::fromLatin1(peaks) << false;
      QTest::addRow("%s ranges", peaks) << QString::fromLatin1(peaks) << true;
    }
  }

  void pointsEqualTheAnalyzer() {
    QFETCH(QString, peaks);
    QFETCH(bool, ranges);
    RooflinePage page;
    QAbstractItemModelTester tester(page.model(), kMode);
    CaptureDataPtr data;
    QVERIFY(showPage(page, capture("fusion_bench_roofline.sqlite"), &data));
    QVERIFY(page.offeredPeaks().contains(QStringLiteral("measured")));  // the capture has ceilings
    QVERIFY(page.offeredPeaks().contains(QStringLiteral("t4")));
    if (peaks != page.peaks()) {
      QSignalSpy done(&page, &RooflinePage::finished);
      QVERIFY(page.setPeaks(peaks));
      QVERIFY(done.wait(60000));
    }
    page.setShowRanges(ranges);
    QVERIFY2(page.noticeText().isEmpty(), qPrintable(page.noticeText()));

    analyzer::RooflineOptions options;
    options.peaks = peaks.toStdString();
    const auto expected = analyzer::analyze_roofline(db::Reader(data->path.toStdString()), options);
    QCOMPARE(toQString(page.report()->peaks.ceilings.id), toQString(expected.peaks.ceilings.id));

    // Table: one row per (row, source of work), the analyzer's figures.
    const auto& rows = ranges ? expected.ranges : expected.kernels;
    int n = 0;
    for (const auto& row : rows) {
      for (const auto* entry :
           {row.counters ? &*row.counters : nullptr, row.annotation ? &*row.annotation : nullptr}) {
        if (!entry) continue;
        auto cell = [&](int column) {
          return page.model()->index(n, column).data(TableModel::RawRole);
        };
        QCOMPARE(cell(RooflineModel::Name).toString(), toQString(row.name));
        QCOMPARE(cell(RooflineModel::Source).toString(),
                 QString::fromLatin1(analyzer::to_string(entry->source)));
        QCOMPARE(cell(RooflineModel::Projected).isValid(), entry->projected_ns.has_value());
        if (entry->projected_ns)
          QCOMPARE(cell(RooflineModel::Projected).toDouble(), *entry->projected_ns);
        QCOMPARE(cell(RooflineModel::GpuTime).toDouble(), row.gpu_time_ns);
        QCOMPARE(cell(RooflineModel::Achieved).toDouble(), entry->result.achieved_flops_per_s);
        QCOMPARE(cell(RooflineModel::Efficiency).toDouble(), entry->result.efficiency);
        QCOMPARE(cell(RooflineModel::Flops).toDouble(), entry->result.flops);
        QCOMPARE(cell(RooflineModel::Attainable).toDouble(), entry->result.attainable_flops_per_s);
        const auto intensity =
            entry->result.intensity[static_cast<std::size_t>(analyzer::MemoryLevel::Dram)];
        QCOMPARE(cell(RooflineModel::Intensity).isValid(), intensity.has_value());
        if (intensity) QCOMPARE(cell(RooflineModel::Intensity).toDouble(), *intensity);
        QVERIFY(cell(RooflineModel::Bound).toString().startsWith(formatBound(entry->result.bound)));
        ++n;
      }
    }
    QVERIFY(n > 0);
    QCOMPARE(page.model()->rowCount(), n);

    // Chart: exactly the analyzer's chart points of this kind, where the analyzer puts them.
    QTRY_VERIFY(page.chart()->isVisible());
    QApplication::processEvents();
    const auto& plotted = page.chart()->plotted();
    int expectedPoints = 0;
    for (const auto& point : expected.chart.points) {
      if (point.is_range != ranges) continue;
      ++expectedPoints;
      bool found = false;
      for (const auto& p : plotted) {
        const RooflinePoint& shown = page.model()->rowAt(p.index);
        if (shown.name != point.label || shown.source != point.source) continue;
        found = true;
        QVERIFY(near(p.position.x(), point.intensity));
        QVERIFY(near(p.position.y() * 1e12, point.flops_per_s));  // the y axis is in TFLOP/s
        QCOMPARE(shown.result.efficiency, point.efficiency);
        // Drawn at that value, inside the plot area, with its figures in the tooltip.
        const QPointF at = page.chart()->chart()->mapToPosition(p.position);
        QVERIFY(std::abs(p.item->pos().x() - at.x()) < 0.5 &&
                std::abs(p.item->pos().y() - at.y()) < 0.5);
        QVERIFY(page.chart()->chart()->plotArea().adjusted(-1, -1, 1, 1).contains(at));
        QVERIFY(p.item->toolTip().contains(toQString(point.label).toHtmlEscaped()));
        QVERIFY(p.item->toolTip().contains(formatPercent(point.efficiency * 100)));
      }
      QVERIFY2(found, point.label.c_str());
    }
    QCOMPARE(static_cast<int>(plotted.size()), expectedPoints);
    // Larger GPU time, larger point.
    for (const auto& a : plotted) {
      for (const auto& b : plotted) {
        if (page.model()->rowAt(a.index).gpuTimeNs > page.model()->rowAt(b.index).gpuTimeNs) {
          QVERIFY(a.markerSize >= b.markerSize);
        }
      }
    }

    // Ceilings: every compute roof and memory slope of the chosen peaks, labelled.
    const QStringList labels = page.chart()->ceilingLabels();
    for (const auto& roof : expected.chart.compute) {
      bool labelled = false;
      for (const auto& l : labels)
        labelled = labelled || l.startsWith(toQString(roof.label) + QLatin1Char(' '));
      QVERIFY2(labelled, roof.label.c_str());
    }
    for (const auto& roof : expected.chart.memory) {
      bool labelled = false;
      for (const auto& l : labels)
        labelled = labelled || l.startsWith(toQString(roof.label).toUpper() + QLatin1Char(' '));
      QVERIFY2(labelled, roof.label.c_str());
    }
    // Both axes logarithmic and holding every point.
    QCOMPARE(page.chart()->xAxis()->base(), 10.0);
    for (const auto& p : plotted) {
      QVERIFY(p.position.x() >= page.chart()->xAxis()->min() &&
              p.position.x() <= page.chart()->xAxis()->max());
      QVERIFY(p.position.y() >= page.chart()->yAxis()->min() &&
              p.position.y() <= page.chart()->yAxis()->max());
    }
  }

  void tableAndChartSelectTogether() {
    RooflinePage page;
    CaptureDataPtr data;
    QVERIFY(showPage(page, capture("fusion_bench_roofline.sqlite"), &data));
    auto* table = page.findChild<QTableView*>(QStringLiteral("rooflineTable"));
    QVERIFY(table);
    const auto& plotted = page.chart()->plotted();
    QVERIFY(!plotted.empty());
    // Clicking a point selects its row.
    QApplication::processEvents();
    const auto& target = plotted.back();
    const QPoint at = page.chart()->mapFromScene(target.item->scenePos());
    QTest::mouseClick(page.chart()->viewport(), Qt::LeftButton, {}, at);
    QTRY_COMPARE(table->currentIndex().isValid(), true);
    auto* proxy = qobject_cast<QSortFilterProxyModel*>(table->model());
    QCOMPARE(proxy->mapToSource(table->currentIndex()).row(), target.index);
  }

  void withoutCountersOrAnnotationsSaysHowToGetThem() {
    RooflinePage page;
    CaptureDataPtr data;
    QVERIFY(showPage(page, capture("pytorch_mlp.sqlite"), &data));
    const auto report = analyzer::analyze_roofline(db::Reader(data->path.toStdString()));
    QVERIFY(!report.has_counters && !report.has_annotations);
    QVERIFY2(page.noticeText().contains(QStringLiteral("prof-run --metrics roofline")),
             qPrintable(page.noticeText()));
    QVERIFY(page.noticeText().contains(QStringLiteral("fuselens/annotate.h")));
    QCOMPARE(page.model()->rowCount(), 0);
    QVERIFY(!page.offeredPeaks().contains(QStringLiteral("measured")));  // no ceilings in it
  }

  void annotationsOnlyShowTheRanges() {
    // fusion_bench.sqlite declares work (annotate.h) but has no counters: the ranges are shown.
    RooflinePage page;
    CaptureDataPtr data;
    QVERIFY(showPage(page, capture("fusion_bench.sqlite"), &data));
    const auto report = analyzer::analyze_roofline(db::Reader(data->path.toStdString()));
    QVERIFY(!report.has_counters && report.has_annotations);
    QVERIFY2(page.noticeText().isEmpty(), qPrintable(page.noticeText()));
    QCOMPARE(page.findChild<QComboBox*>(QStringLiteral("rooflineRows"))->currentIndex(), 1);
    QCOMPARE(page.model()->rowCount(), static_cast<int>(report.ranges.size()));
    page.setShowRanges(false);
    QVERIFY(page.noticeText().contains(QStringLiteral("No kernel has hardware counters")));
  }

  void runsOnlyWhenShown() {
    RooflinePage page;
    const CaptureDataPtr data = openCapture(capture("fusion_bench_roofline.sqlite"));
    page.setCaptures(data, {data});
    QTest::qWait(50);
    QVERIFY(!page.busy());
    QVERIFY(page.report() == nullptr);  // hidden: nothing computed
    QSignalSpy done(&page, &RooflinePage::finished);
    page.show();
    QVERIFY(page.busy() || done.count() > 0);
    QVERIFY(done.count() > 0 || done.wait(60000));
    QVERIFY(page.report() != nullptr);
  }

  void exportsTheChartAsPngAndSvg() {
    RooflinePage page;
    CaptureDataPtr data;
    QVERIFY(showPage(page, capture("fusion_bench_roofline.sqlite"), &data));
    QTemporaryDir dir;
    QString error;
    QVERIFY2(exportImage(page.imageWidget(), dir.filePath(QStringLiteral("r.png")), &error),
             qPrintable(error));
    QVERIFY(!QImage(dir.filePath(QStringLiteral("r.png"))).isNull());
    QVERIFY2(exportImage(page.imageWidget(), dir.filePath(QStringLiteral("r.svg")), &error),
             qPrintable(error));
    QFile svg(dir.filePath(QStringLiteral("r.svg")));
    QVERIFY(svg.open(QIODevice::ReadOnly));
    const QByteArray text = svg.readAll();
    QVERIFY(text.contains("<svg"));
    QVERIFY(text.contains("TFLOP/s"));  // the ceiling labels are part of the drawing
    QVERIFY(
        exportCsv(*page.currentTable()->model(), dir.filePath(QStringLiteral("r.csv")), &error));
  }

  void unknownDeviceAsksForAProfile() {
    // A capture of a GPU peaks.json does not know: "auto" has no ceilings, the page says so and
    // another profile works.
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("mystery.sqlite"));
    QVERIFY(QFile::copy(capture("fusion_bench.sqlite"), path));
    QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner);
    {
      db::Connection c(path.toStdString(), db::Connection::Mode::ReadWrite);
      c.exec("UPDATE device SET name = 'Mystery GPU 9000'");
    }
    RooflinePage page;
    CaptureDataPtr data;
    QVERIFY(showPage(page, path, &data));
    QVERIFY(page.report() == nullptr);
    QVERIFY2(page.noticeText().contains(QStringLiteral("Choose a peak profile")),
             qPrintable(page.noticeText()));
    QSignalSpy done(&page, &RooflinePage::finished);
    QVERIFY(page.setPeaks(QStringLiteral("t4")));
    QVERIFY(done.wait(60000));
    QVERIFY(page.report() != nullptr);
    QCOMPARE(toQString(page.report()->peaks.ceilings.id), QStringLiteral("t4"));
    QVERIFY(page.model()->rowCount() > 0);
    QVERIFY(!page.setPeaks(QStringLiteral("no-such-gpu")));
    QCOMPARE(page.peaks(), QStringLiteral("t4"));
  }
};

QTEST_MAIN(TestRooflinePage)
#include "tst_rooflinepage.moc"
