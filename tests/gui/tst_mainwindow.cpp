// MainWindow: opens the H100 captures off the GUI thread and fills every page with the
// analyzer's numbers; staged loading (the visible page's analyses first, pages saying what they
// wait for); a file it cannot read gives the db::Error message and the window keeps working;
// exports (CSV, PNG, SVG, PDF, HTML); screenshots of every page. Open Recent and drag and drop:
// tst_openfiles.

#include <QAbstractItemView>
#include <QFile>
#include <QLabel>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>

#include "CaptureLoader.h"
#include "GuiExport.h"
#include "GuiTestSupport.h"
#include "MainWindow.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/Sqlite.h"
#include "models/CompareModel.h"
#include "models/FlagsModel.h"
#include "models/HeatmapModel.h"
#include "models/SummaryModels.h"
#include "summary/Summary.h"
#include "summary/SummaryFormat.h"
#include "views/ComparePage.h"
#include "views/FlagsPage.h"
#include "views/HeatmapPage.h"
#include "views/SummaryPage.h"
#include "views/TimelinePage.h"
#include "views/TimelineWidget.h"

using namespace fuselens;
using namespace fuselens::gui;

namespace {

QString capture(const char* name) {
  return QStringLiteral(FUSELENS_TEST_DATA_DIR "/") + QString::fromLatin1(name);
}

/// The message db::Reader gives for `path`.
QString readerError(const QString& path) {
  try {
    db::Reader reader(path.toStdString());
  } catch (const db::Error& e) {
    return QString::fromUtf8(e.what());
  }
  return {};
}

bool waitForLoads(MainWindow& window) {
  if (window.pendingLoads() == 0) return true;
  QSignalSpy spy(&window, &MainWindow::loadsFinished);
  return spy.wait(120000) || window.pendingLoads() == 0;
}

}  // namespace

class TestMainWindow : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() { QSettings().clear(); }

  void opensCapturesAndFillsEveryPage() {
    MainWindow window;
    window.setErrorDialogsEnabled(false);
    window.show();
    window.openFiles({capture("fusion_bench.sqlite"), capture("pytorch_mlp.sqlite")});
    QVERIFY(window.pendingLoads() > 0);  // asynchronous: the GUI thread is free meanwhile
    QVERIFY(waitForLoads(window));
    QTRY_COMPARE(window.captures().size(), 2);
    QVERIFY(window.lastError().isEmpty());
    // Captures load concurrently and are listed in the order they finish loading.
    int bench = -1;
    for (int i = 0; i < window.captures().size(); ++i) {
      if (window.captures()[i]->displayName == QStringLiteral("fusion_bench.sqlite")) bench = i;
    }
    QVERIFY(bench >= 0);
    window.setCurrentCapture(bench);
    const auto current = window.currentCapture();
    QCOMPARE(current->displayName, QStringLiteral("fusion_bench.sqlite"));

    // The pages describe the default window (steady), as prof-analyze does.
    const auto summary =
        analyzer::summarize(*test::windowedReader(capture("fusion_bench.sqlite").toStdString()));
    QCOMPARE(window.summaryPage()->kernelModel()->rowCount(),
             static_cast<int>(summary.kernels.size()));
    QCOMPARE(window.summaryPage()->apiModel()->rowCount(), static_cast<int>(summary.api.size()));
    QCOMPARE(window.summaryPage()->nvtxModel()->rowCount(), static_cast<int>(summary.nvtx.size()));

    const auto* timeline = window.timelinePage()->timelineWidget()->timeline();
    QVERIFY(timeline);
    QVERIFY(timeline->item_count() >= static_cast<std::size_t>(summary.totals.kernel_count));

    QCOMPARE(window.flagsPage()->model()->rowCount(),
             static_cast<int>(current->flags->hits.size()));
    QVERIFY(window.heatmapPage()->model()->rowCount() > 0);
    QTRY_VERIFY_WITH_TIMEOUT(window.comparePage()->entryModel()->rowCount() > 0, 30000);
    QVERIFY(MainWindow::recentFiles().contains(capture("fusion_bench.sqlite")));

    // Switching captures updates the pages.
    window.setCurrentCapture(1 - bench);
    QCOMPARE(window.currentCapture()->displayName, QStringLiteral("pytorch_mlp.sqlite"));
    const auto mlp =
        analyzer::summarize(*test::windowedReader(capture("pytorch_mlp.sqlite").toStdString()));
    QCOMPARE(window.summaryPage()->kernelModel()->rowCount(), static_cast<int>(mlp.kernels.size()));
  }

  void visiblePageLoadsFirst_data() {
    QTest::addColumn<QString>("page");
    QTest::addColumn<int>("first");
    QTest::newRow("timeline") << QStringLiteral("timeline") << static_cast<int>(Analysis::Timeline);
    QTest::newRow("summary") << QStringLiteral("summary") << static_cast<int>(Analysis::Summary);
    QTest::newRow("flags") << QStringLiteral("flags") << static_cast<int>(Analysis::Flags);
    QTest::newRow("heatmap") << QStringLiteral("heatmap") << static_cast<int>(Analysis::Ranges);
  }

  void visiblePageLoadsFirst() {
    QFETCH(QString, page);
    QFETCH(int, first);
    MainWindow window;
    window.setErrorDialogsEnabled(false);
    window.loader()->setMaxRunning(1);  // one analysis at a time: a deterministic order
    window.showPage(window.page(page));
    window.show();
    QSignalSpy loaded(&window, &MainWindow::analysisLoaded);
    bool checked = false;
    connect(&window, &MainWindow::analysisLoaded, this, [&](const CaptureDataPtr& c, Analysis a) {
      if (checked) return;
      // A windowed page's analysis waits for the window, resolved by the steps job first.
      if (a == Analysis::Steps && windowed(static_cast<Analysis>(first))) return;
      checked = true;
      // The first analysis in: its page shows it, the others still wait and say so.
      QCOMPARE(static_cast<int>(a), first);
      QVERIFY(c->has(a));
      if (a == Analysis::Timeline) {
        QVERIFY(window.timelinePage()->timelineWidget()->timeline() != nullptr);
        QCOMPARE(window.summaryPage()->kernelModel()->rowCount(), 0);
      }
      if (a == Analysis::Summary) {
        QVERIFY(window.summaryPage()->kernelModel()->rowCount() > 0);
        QVERIFY(window.timelinePage()->timelineWidget()->timeline() == nullptr);
      }
    });
    window.openFiles({capture("fusion_bench.sqlite")});
    QVERIFY(waitForLoads(window));
    QVERIFY(checked);
    QCOMPARE(loaded.size(), allAnalyses().size());  // then every other one, in the background
    for (Analysis a : allAnalyses()) QVERIFY(window.currentCapture()->has(a));
    QVERIFY2(window.currentCapture()->analysisErrors.isEmpty(),
             qPrintable(window.currentCapture()->analysisErrors));
  }

  void aPageShownWhileLoadingGetsItsAnalysisNext() {
    MainWindow window;
    window.setErrorDialogsEnabled(false);
    window.loader()->setMaxRunning(1);
    window.showPage(window.timelinePage());
    window.show();
    QList<Analysis> order;
    connect(&window, &MainWindow::analysisLoaded, this, [&](const CaptureDataPtr&, Analysis a) {
      order << a;
      if (a == Analysis::Timeline) window.showPage(window.heatmapPage());  // the user moves on
    });
    window.openFiles({capture("fusion_bench.sqlite")});
    QVERIFY(waitForLoads(window));
    QCOMPARE(order.size(), allAnalyses().size());
    QCOMPARE(order[0], Analysis::Timeline);
    QCOMPARE(order[1], Analysis::Steps);   // the timeline's step lane, and the window
    QCOMPARE(order[2], Analysis::Ranges);  // the heatmap's, ahead of the summary
    QVERIFY(window.heatmapPage()->model()->rowCount() > 0);
  }

  void pagesSayWhatTheyWaitFor() {
    // A capture opened but not analysed yet: each page says it is loading, then shows the
    // analysis when told it is in.
    auto data = openCapture(capture("fusion_bench.sqlite"));
    SummaryPage summary;
    TimelinePage timeline;
    summary.setCaptures(data, {data});
    timeline.setCaptures(data, {data});
    QCOMPARE(summary.kernelModel()->rowCount(), 0);
    QVERIFY(timeline.timelineWidget()->timeline() == nullptr);
    for (Analysis a : {Analysis::Summary, Analysis::Timeline}) {
      CaptureData part;
      part.path = data->path;
      loadAnalysis(a, part);
      data->take(a, std::move(part));
      summary.analysisLoaded(data, a);
      timeline.analysisLoaded(data, a);
    }
    QVERIFY(summary.kernelModel()->rowCount() > 0);
    QVERIFY(timeline.timelineWidget()->timeline() != nullptr);
    // The header says how the run ended in the CLI's words (analyzer::describe_run_end).
    const QString ended =
        QString::fromStdString(analyzer::describe_run_end(data->summary.run.end)).toHtmlEscaped();
    bool said = false;
    for (const auto* label : summary.findChildren<QLabel*>())
      said = said || label->text().contains(ended);
    QVERIFY2(said, qPrintable(ended));
  }

  void badFilesGiveTheReaderMessageAndTheWindowCarriesOn_data() {
    QTest::addColumn<QString>("kind");
    QTest::newRow("missing") << QStringLiteral("missing");
    QTest::newRow("not sqlite") << QStringLiteral("text");
    QTest::newRow("newer schema") << QStringLiteral("newer");
  }

  void badFilesGiveTheReaderMessageAndTheWindowCarriesOn() {
    QFETCH(QString, kind);
    QTemporaryDir dir;
    QString path = dir.filePath(QStringLiteral("bad.sqlite"));
    if (kind == QLatin1String("text")) {
      QFile f(path);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("this is not a database\n");
    } else if (kind == QLatin1String("newer")) {
      QVERIFY(QFile::copy(capture("pytorch_mlp.sqlite"), path));
      QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner);
      db::Connection c(path.toStdString(), db::Connection::Mode::ReadWrite);
      c.exec("PRAGMA user_version = 99");
    }
    const QString expected = readerError(path);
    QVERIFY(!expected.isEmpty());

    MainWindow window;
    window.setErrorDialogsEnabled(false);
    window.openFiles({path});
    QVERIFY(waitForLoads(window));
    QVERIFY2(window.lastError().contains(expected), qPrintable(window.lastError()));
    QCOMPARE(window.captures().size(), 0);
    // Still usable: a good file opens afterwards.
    window.openFiles({capture("pytorch_mlp.sqlite")});
    QVERIFY(waitForLoads(window));
    QCOMPARE(window.captures().size(), 1);
  }

  void exportsWriteFiles() {
    MainWindow window;
    window.setErrorDialogsEnabled(false);
    window.resize(1400, 900);
    window.show();
    window.openFiles({capture("fusion_bench.sqlite")});
    QVERIFY(waitForLoads(window));
    QTemporaryDir dir;
    QString error;
    auto* table = window.summaryPage()->currentTable();
    QVERIFY(exportCsv(*table->model(), dir.filePath(QStringLiteral("k.csv")), &error));
    QVERIFY(QFileInfo(dir.filePath(QStringLiteral("k.csv"))).size() > 100);
    QWidget* timeline = window.timelinePage()->imageWidget();
    QVERIFY(exportImage(timeline, dir.filePath(QStringLiteral("t.png")), &error));
    QVERIFY(exportImage(timeline, dir.filePath(QStringLiteral("t.svg")), &error));
    QFile svg(dir.filePath(QStringLiteral("t.svg")));
    QVERIFY(svg.open(QIODevice::ReadOnly));
    QVERIFY(svg.readAll().contains("<svg"));
    QVERIFY(exportPdfReport(*window.currentCapture(),
                            {{QStringLiteral("Timeline"), timeline->grab().toImage()}},
                            dir.filePath(QStringLiteral("r.pdf")), &error));
    QFile pdf(dir.filePath(QStringLiteral("r.pdf")));
    QVERIFY(pdf.open(QIODevice::ReadOnly));
    QVERIFY(pdf.read(5) == "%PDF-");
    if (htmlReportAvailable()) {
      QVERIFY2(exportHtmlReport(*window.currentCapture(), nullptr,
                                dir.filePath(QStringLiteral("r.html")), &error),
               qPrintable(error));
      QFile html(dir.filePath(QStringLiteral("r.html")));
      QVERIFY(html.open(QIODevice::ReadOnly));
      QVERIFY(html.readAll().contains("fuselens:slot"));
    }
    QVERIFY(!exportImage(timeline, QStringLiteral("/nonexistent/dir/t.png"), &error));
    QVERIFY(!error.isEmpty());
  }

  void screenshotsEveryPage() {
    MainWindow window;
    window.setErrorDialogsEnabled(false);
    window.resize(1400, 900);
    window.show();
    window.openFiles({capture("fusion_bench.sqlite")});
    QVERIFY(waitForLoads(window));
    QTemporaryDir dir;
    const QStringList files = window.screenshotPages(dir.path());
    // One per page, the Calling Context page's flame graph, the timeline's search and the
    // zoomed-out timeline.
    QCOMPARE(files.size(), window.pages().size() + 3);
    QVERIFY(files.contains(dir.filePath(QStringLiteral("flamegraph.png"))));
    QVERIFY(files.contains(dir.filePath(QStringLiteral("timeline-search.png"))));
    QVERIFY(files.contains(dir.filePath(QStringLiteral("timeline-overview.png"))));
    QVERIFY(files.contains(dir.filePath(QStringLiteral("modules.png"))));
    for (const auto& f : files) QVERIFY(!QImage(f).isNull());
  }
};

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
