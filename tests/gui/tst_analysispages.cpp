// The pages that show other analyses: Flags (every hit of run_flags), Heatmap (cells equal the
// range statistics and Compare's speedups), Compare (entries and kernel diff equal
// compare_ranges / compare_captures) and Calling Context (computed when first shown), each
// model under QAbstractItemModelTester; and the loader's requests, which those pages send. The
// Roofline page has tst_rooflinepage.

#include <QAbstractItemModelTester>
#include <QPushButton>
#include <QSignalSpy>
#include <QtTest>

#include "CaptureData.h"
#include "CaptureLoader.h"
#include "Format.h"
#include "GuiTestSupport.h"
#include "fuselens/db/Reader.h"
#include "models/CompareModel.h"
#include "models/FlagsModel.h"
#include "models/HeatmapModel.h"
#include "views/CallingContextPage.h"
#include "views/ComparePage.h"
#include "views/FlagsPage.h"
#include "views/HeatmapPage.h"

using namespace fuselens;
using namespace fuselens::gui;

namespace {
QString capture(const char* name) {
  return QStringLiteral(FUSELENS_TEST_DATA_DIR "/") + QString::fromLatin1(name);
}
constexpr auto kMode = QAbstractItemModelTester::FailureReportingMode::QtTest;
}  // namespace

class TestAnalysisPages : public QObject {
  Q_OBJECT

 private:
  CaptureDataPtr bench_, mlp_;

 private Q_SLOTS:
  void initTestCase() {
    bench_ = loadCapture(capture("fusion_bench.sqlite"));
    mlp_ = loadCapture(capture("pytorch_mlp.sqlite"));
    QVERIFY2(bench_->analysisErrors.isEmpty(), qPrintable(bench_->analysisErrors));
  }

  void suggestRangePatterns_data() {
    QTest::addColumn<QStringList>("names");
    QTest::addColumn<QString>("baseline");
    QTest::addColumn<QString>("candidate");
    QTest::newRow("fused") << QStringList{"gemm/unfused/M64", "gemm/fused/M64"} << "*/unfused/*"
                           << "*/fused/*";
    QTest::newRow("other") << QStringList{"op/b/x", "op/a/x"} << "*/a/*"
                           << "*/b/*";
    QTest::newRow("flat") << QStringList{"mlp/step0", "forward"} << ""
                          << "";
  }
  void suggestRangePatterns() {
    QFETCH(QStringList, names);
    QFETCH(QString, baseline);
    QFETCH(QString, candidate);
    const auto p = gui::suggestRangePatterns(names);
    QCOMPARE(p.first, baseline);
    QCOMPARE(p.second, candidate);
  }

  void flagsPageListsEveryHit() {
    FlagsPage page;
    QAbstractItemModelTester tester(page.model(), kMode);
    page.setCaptures(bench_, {bench_});
    const auto expected =
        analyzer::run_flags(db::Reader(bench_->path.toStdString()), analyzer::FlagsConfig{});
    QCOMPARE(page.model()->rowCount(), static_cast<int>(expected.hits.size()));
    for (int r = 0; r < page.model()->rowCount(); ++r) {
      const auto& hit = expected.hits[static_cast<std::size_t>(r)];
      QCOMPARE(page.model()->index(r, FlagsModel::Rule).data().toString(), toQString(hit.rule));
      QCOMPARE(
          page.model()->index(r, FlagsModel::TimeAtStake).data(TableModel::RawRole).toLongLong(),
          hit.time_ns);
    }
    // A hit that names a kernel links to it.
    int kernelHit = -1;
    for (int r = 0; r < page.model()->rowCount() && kernelHit < 0; ++r) {
      if (toQString(expected.hits[static_cast<std::size_t>(r)].rule) ==
          QLatin1String("launch_short"))
        kernelHit = r;
    }
    QVERIFY(kernelHit >= 0);
    page.selectHit(kernelHit);
    QVERIFY(page.explanationText().contains(
        toQString(expected.hits[static_cast<std::size_t>(kernelHit)].advice)));
    // The launch call path, as prof-analyze flags prints it ("called from ...").
    const auto& context = expected.hits[static_cast<std::size_t>(kernelHit)].context;
    QVERIFY(!context.empty());
    QVERIFY(page.explanationText().contains(QStringLiteral("Called from: ") + toQString(context)));
    QSignalSpy spy(&page, &FlagsPage::showKernelInTimeline);
    auto* button = page.findChild<QPushButton*>();
    QVERIFY(button && button->isEnabled());
    button->click();
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy[0][0].toString(),
             toQString(expected.hits[static_cast<std::size_t>(kernelHit)].subject));
  }

  void heatmapCellsEqualRangeStatsAndCompare() {
    HeatmapModel model;
    QAbstractItemModelTester tester(&model, kMode);
    const db::Reader reader(bench_->path.toStdString());
    const auto ranges = analyzer::range_stats(reader);
    model.setHeatmap(buildHeatmap(ranges, HeatmapMetric::Latency));
    const Heatmap& latency = model.heatmap();
    QCOMPARE(latency.columns, (QStringList{"fused", "unfused"}));
    QCOMPARE(latency.rows.size(), 5);
    int checked = 0;
    for (const auto& r : ranges) {
      const QStringList parts = toQString(r.name).split(QLatin1Char('/'));
      const auto row = latency.rows.indexOf(parts[0] + QStringLiteral(" · ") + parts[2]);
      const auto column = latency.columns.indexOf(parts[1]);
      QVERIFY(row >= 0 && column >= 0);
      QCOMPARE(*latency.at(static_cast<int>(row), static_cast<int>(column)),
               r.median_gpu_ns_per_iter);
      QCOMPARE(model.index(static_cast<int>(row), static_cast<int>(column) + 1)
                   .data(TableModel::RawRole)
                   .toDouble(),
               r.median_gpu_ns_per_iter);
      ++checked;
    }
    QCOMPARE(checked, 10);

    // Speedups over "unfused" equal compare_ranges' speedups.
    model.setHeatmap(buildHeatmap(ranges, HeatmapMetric::Speedup, QStringLiteral("unfused")));
    const auto report = analyzer::compare_ranges(reader, "*/unfused/*", "*/fused/*");
    QCOMPARE(report.entries.size(), std::size_t{5});
    for (const auto& e : report.entries) {
      const auto row = model.heatmap().rows.indexOf(toQString(e.op) + QStringLiteral(" · ") +
                                                    toQString(e.shape));
      QVERIFY2(row >= 0, qPrintable(toQString(e.op + " " + e.shape)));
      QCOMPARE(*model.heatmap().at(static_cast<int>(row), 0), *e.speedup);
      QCOMPARE(*model.heatmap().at(static_cast<int>(row), 1), 1.0);
    }
    // Span speedups over "unfused" equal compare_ranges' span speedups.
    model.setHeatmap(buildHeatmap(ranges, HeatmapMetric::SpanSpeedup, QStringLiteral("unfused")));
    for (const auto& e : report.entries) {
      const auto row = model.heatmap().rows.indexOf(toQString(e.op) + QStringLiteral(" · ") +
                                                    toQString(e.shape));
      QVERIFY(row >= 0 && e.span_speedup);
      QCOMPARE(*model.heatmap().at(static_cast<int>(row), 0), *e.span_speedup);
      QCOMPARE(*model.heatmap().at(static_cast<int>(row), 1), 1.0);
    }
    for (const auto& metric : heatmapMetrics()) {
      model.setHeatmap(buildHeatmap(ranges, metric.metric, QStringLiteral("unfused")));
      QCOMPARE(model.rowCount(), 5);
    }
  }

  void heatmapPageShowsTheCapture() {
    HeatmapPage page;
    page.setCaptures(bench_, {bench_});
    QCOMPARE(page.model()->rowCount(), 5);
    QCOMPARE(page.model()->columnCount(), 3);
    page.setMetric(1, QStringLiteral("unfused"));
    QCOMPARE(page.model()->heatmap().metric, HeatmapMetric::Speedup);
  }

  void comparePageEqualsCompareRanges() {
    ComparePage page;
    QAbstractItemModelTester entryTester(page.entryModel(), kMode);
    QAbstractItemModelTester diffTester(page.kernelDiffModel(), kMode);
    QSignalSpy done(&page, &ComparePage::finished);
    page.setCaptures(bench_, {bench_, mlp_});  // suggests */unfused/* vs */fused/* and runs it
    QVERIFY(done.wait(60000));
    const auto report = analyzer::compare_ranges(db::Reader(bench_->path.toStdString()),
                                                 "*/unfused/*", "*/fused/*");
    QCOMPARE(page.entryModel()->rowCount(), static_cast<int>(report.entries.size()));
    for (int r = 0; r < page.entryModel()->rowCount(); ++r) {
      const auto& e = report.entries[static_cast<std::size_t>(r)];
      QCOMPARE(page.entryModel()
                   ->index(r, CompareEntryModel::Speedup)
                   .data(TableModel::RawRole)
                   .toDouble(),
               *e.speedup);
      QCOMPARE(page.entryModel()
                   ->index(r, CompareEntryModel::SpanSpeedup)
                   .data(TableModel::RawRole)
                   .toDouble(),
               *e.span_speedup);
      QCOMPARE(page.entryModel()
                   ->index(r, CompareEntryModel::BaselineSpan)
                   .data(TableModel::RawRole)
                   .toDouble(),
               e.baseline->median_span_ns_per_iter);
    }

    page.compareWith(mlp_);
    QVERIFY(done.wait(60000));
    // Each capture's default window (steady), as the loader reads them.
    const auto two = analyzer::compare_captures(*test::windowedReader(bench_->path.toStdString()),
                                                *test::windowedReader(mlp_->path.toStdString()));
    QCOMPARE(page.kernelDiffModel()->rowCount(), static_cast<int>(two.kernel_diff.size()));
    QCOMPARE(page.entryModel()->rowCount(), static_cast<int>(two.entries.size()));

    page.compareRanges(QStringLiteral("nothing/*"), QStringLiteral("*/fused/*"));
    QVERIFY(done.wait(60000));
    QVERIFY(page.statusText().contains(QStringLiteral("Cannot compare")));
    QCOMPARE(page.entryModel()->rowCount(), 0);
  }

  void callingContextPageShowsTheReportOrItsReason() {
    CallingContextPage page;
    QAbstractItemModelTester tester(page.model(), kMode);
    QSignalSpy done(&page, &CallingContextPage::finished);
    page.setCaptures(bench_, {bench_});
    QTest::qWait(20);
    QVERIFY(!page.busy() && done.isEmpty());  // hidden: computed on first show (staged loading)
    page.show();
    QVERIFY(done.wait(60000));
    const auto report =
        analyzer::calling_context_report(db::Reader(bench_->path.toStdString()), {});
    if (report.available) {
      QCOMPARE(page.model()->rowCount(), static_cast<int>(report.rows[0].children.size()));
      const auto& first = report.rows[static_cast<std::size_t>(report.rows[0].children[0])];
      QCOMPARE(page.model()
                   ->index(0, CallingContextModel::Inclusive)
                   .data(TableModel::RawRole)
                   .toLongLong(),
               first.inclusive.gpu_time_ns);
    } else {
      QCOMPARE(page.model()->rowCount(), 0);
      QVERIFY2(page.noticeText().contains(toQString(report.unavailable_reason).toHtmlEscaped()),
               qPrintable(page.noticeText()));
    }
  }

  void loaderAnswersEachRequestBySignalWithItsNumber() {
    CaptureLoader loader;
    QList<quint64> answered;
    std::shared_ptr<const analyzer::CompareReport> report;
    connect(&loader, &CaptureLoader::compareReady, this,
            [&](quint64 id, const std::shared_ptr<const analyzer::CompareReport>& r,
                const QString& error) {
              answered << id;
              QVERIFY2(r && error.isEmpty(), qPrintable(error));
              report = r;
            });
    const auto id = loader.requestRangeComparison(bench_, QStringLiteral("*/unfused/*"),
                                                  QStringLiteral("*/fused/*"));
    QVERIFY(id > 0);
    QCOMPARE(loader.pending(), 0);  // a request is not part of loading a capture
    QTRY_COMPARE_WITH_TIMEOUT(answered.size(), 1, 60000);
    QCOMPARE(answered.front(), id);
    const auto expected = analyzer::compare_ranges(db::Reader(bench_->path.toStdString()),
                                                   "*/unfused/*", "*/fused/*");
    QCOMPARE(report->entries.size(), expected.entries.size());

    // A capture that cannot be opened: no report, the reader's message.
    auto missing = std::make_shared<CaptureData>();
    missing->path = QStringLiteral("/nonexistent/capture.sqlite");
    QString error;
    bool reportless = false;
    connect(&loader, &CaptureLoader::callingContextReady, this,
            [&](quint64, const std::shared_ptr<const analyzer::CctReport>& r, const QString& e) {
              reportless = !r;
              error = e;
            });
    const auto next = loader.requestCallingContext(missing, {});
    QVERIFY(next > id);
    QTRY_VERIFY_WITH_TIMEOUT(!error.isEmpty(), 60000);
    QVERIFY(reportless);

    // The HTML report is written off the GUI thread too.
    QTemporaryDir dir;
    QString written, htmlError = QStringLiteral("pending");
    connect(&loader, &CaptureLoader::htmlReportWritten, this,
            [&](quint64, const QString& path, const QString& e) {
              written = path;
              htmlError = e;
            });
    loader.requestHtmlReport(bench_, dir.filePath(QStringLiteral("report.html")));
    QTRY_VERIFY_WITH_TIMEOUT(!written.isEmpty(), 60000);
    QVERIFY2(htmlError.isEmpty(), qPrintable(htmlError));
    QVERIFY(QFileInfo(written).size() > 0);
  }
};

QTEST_MAIN(TestAnalysisPages)
#include "tst_analysispages.moc"
