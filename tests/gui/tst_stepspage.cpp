// The Steps page, the timeline's step lane and the window (issue 19) on the committed H100
// training capture train_steps.sqlite (65 steps marked by NVTX ranges, docs/steps.md).

#include <QComboBox>
#include <QLineEdit>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "CaptureLoader.h"
#include "GuiTestSupport.h"
#include "MainWindow.h"
#include "flags/Flags.h"
#include "fuselens/db/Reader.h"
#include "models/StepsModel.h"
#include "models/SummaryModels.h"
#include "summary/Summary.h"
#include "views/FlagsPage.h"
#include "views/StepsPage.h"
#include "views/SummaryPage.h"
#include "views/TimelinePage.h"
#include "views/TimelineWidget.h"

using namespace fuselens;
using namespace fuselens::gui;

namespace {

const std::string kTrain = test::dataFile("train_steps.sqlite");

bool waitForLoads(MainWindow& window) {
  if (window.pendingLoads() == 0) return true;
  QSignalSpy spy(&window, &MainWindow::loadsFinished);
  return spy.wait(120000) || window.pendingLoads() == 0;
}

/// analyze_steps of the whole capture, as `prof-analyze steps --window all` finds them.
analyzer::StepReport stepsOf(const std::string& path) {
  return analyzer::analyze_steps(db::Reader(path));
}

}  // namespace

class TestStepsPage : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() { QSettings().clear(); }

  void stepsPageShowsEveryStep() {
    const auto expected = stepsOf(kTrain);
    QCOMPARE(static_cast<int>(expected.steps.size()), 65);  // docs/steps.md: 65 marked steps
    const auto data = loadCapture(QString::fromStdString(kTrain));
    QVERIFY2(data->analysisErrors.isEmpty(), qPrintable(data->analysisErrors));
    StepsPage page;
    page.setCaptures(data, {data});
    QCOMPARE(page.model()->rowCount(), static_cast<int>(expected.steps.size()));
    for (int r = 0; r < page.model()->rowCount(); ++r) {
      const auto& s = expected.steps[static_cast<std::size_t>(r)];
      QCOMPARE(page.model()->index(r, StepsModel::Wall).data(TableModel::RawRole).toLongLong(),
               static_cast<qlonglong>(s.wall_ns()));
      QCOMPARE(page.model()->index(r, StepsModel::GpuBusy).data(TableModel::RawRole).toLongLong(),
               static_cast<qlonglong>(s.gpu_busy_ns));
      QCOMPARE(page.model()->index(r, StepsModel::HostWait).data(TableModel::RawRole).toLongLong(),
               static_cast<qlonglong>(s.host_wait_ns));
      QCOMPARE(page.model()->index(r, StepsModel::TopKernel).data(TableModel::RawRole).toString(),
               QString::fromStdString(s.top_kernel));
    }
    // Warm-up before the steady window, outliers named.
    QCOMPARE(page.model()->state(1), QStringLiteral("warm-up"));
    for (const auto& o : expected.outliers) {
      QVERIFY(page.model()->state(o.index).startsWith(QStringLiteral("outlier")));
    }
    QVERIFY2(page.headerText().contains(QStringLiteral("65 steps")), qPrintable(page.headerText()));
    // The default window is steady, and the header names it.
    QVERIFY(data->window);
    QCOMPARE(data->window->first_step, expected.steady_first);
    QVERIFY(page.headerText().contains(
        QString::fromStdString(data->window->description).toHtmlEscaped()));
    // The summary and the flags describe the window as `prof-analyze summary|flags` do.
    QCOMPARE(data->summary.totals.kernel_count,
             analyzer::summarize(*test::windowedReader(kTrain)).totals.kernel_count);
    db::Reader reader(kTrain);
    const auto window = analyzer::resolve_window(reader, analyzer::parse_window("steady"));
    analyzer::apply_window(reader, window);
    const auto flags =
        analyzer::run_flags(reader, analyzer::FlagsConfig{}, analyzer::NameKind::Short, &window);
    QVERIFY(data->flags);
    QCOMPARE(data->flags->hits.size(), flags.hits.size());
    // The Flags page opens with the window's verdict.
    QVERIFY(!flags.verdict.headline.empty());
    FlagsPage flagsPage;
    flagsPage.setCaptures(data, {data});
    QVERIFY2(flagsPage.headerText().startsWith(
                 QStringLiteral("<b>%1</b>")
                     .arg(QString::fromStdString(flags.verdict.headline).toHtmlEscaped())),
             qPrintable(flagsPage.headerText()));
    // The rule filter shows one rule's findings.
    const QString rule = QString::fromStdString(flags.hits.front().rule);
    const auto ofRule = std::count_if(flags.hits.begin(), flags.hits.end(), [&](const auto& h) {
      return h.rule == flags.hits.front().rule;
    });
    flagsPage.filterRule(rule);
    QCOMPARE(flagsPage.shownHits(), static_cast<int>(ofRule));
    flagsPage.filterRule({});
    QCOMPARE(flagsPage.shownHits(), static_cast<int>(flags.hits.size()));
    for (std::size_t i = 0; i < flags.hits.size(); ++i) {
      QCOMPARE(data->flags->hits[i].rule, flags.hits[i].rule);
      QCOMPARE(data->flags->hits[i].time_ns, flags.hits[i].time_ns);
    }
  }

  void aProgramWithoutRepetitionHasNoSteps() {
    // No steps: the page says why, the timeline has no step lane, the window is the whole capture.
    const auto data = loadCapture(QString::fromStdString(test::dataFile("no_repetition.sqlite")));
    QVERIFY2(data->analysisErrors.isEmpty(), qPrintable(data->analysisErrors));
    QVERIFY(data->steps && data->steps->steps.empty());
    StepsPage page;
    page.setCaptures(data, {data});
    QCOMPARE(page.model()->rowCount(), 0);
    QVERIFY2(page.headerText().contains(QStringLiteral("No steps")), qPrintable(page.headerText()));
    TimelineWidget widget;
    widget.setCapture(data);
    QCOMPARE(widget.stepLaneItemCount(), 0);
    QVERIFY(data->window && data->window->whole);
    const auto whole = analyzer::summarize(db::Reader(test::dataFile("no_repetition.sqlite")));
    QCOMPARE(data->summary.totals.kernel_count, whole.totals.kernel_count);
  }

  void timelineHasAStepLane() {
    const auto data = loadCapture(QString::fromStdString(kTrain));
    TimelinePage page;
    page.resize(1400, 800);
    page.setCaptures(data, {data});
    TimelineWidget* widget = page.timelineWidget();
    QCOMPARE(widget->stepLaneItemCount(), 65);
    // The step lane lies just under the ruler: a point inside step 30 names it.
    const auto& step = data->steps->steps[29];
    widget->setView(static_cast<double>(step.start_ns), static_cast<double>(step.end_ns));
    const QPoint at(
        static_cast<int>(widget->xForTime(static_cast<double>(step.start_ns + step.end_ns) / 2)),
        TimelineWidget::kRulerHeight + TimelineWidget::kRowHeight / 2);
    QCOMPARE(widget->stepAt(at), 30);
    // A double click on it asks for that step as the window.
    QSignalSpy stepRequested(&page, &TimelinePage::windowRequested);
    QTest::mouseDClick(widget, Qt::LeftButton, {}, at);
    QCOMPARE(stepRequested.size(), 1);
    QCOMPARE(stepRequested[0][0].toString(), QStringLiteral("steps:30"));
    // A Shift+drag over the timeline asks for that time range as the window.
    QSignalSpy requested(&page, &TimelinePage::windowRequested);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    const int y = TimelineWidget::kRulerHeight + 40;
    QTest::mousePress(widget, Qt::LeftButton, Qt::ShiftModifier, QPoint(300, y));
    QTest::mouseMove(widget, QPoint(700, y));
    QTest::mouseRelease(widget, Qt::LeftButton, Qt::ShiftModifier, QPoint(700, y));
    QCOMPARE(requested.size(), 1);
    const QString window = requested[0][0].toString();
    QVERIFY2(window.startsWith(QStringLiteral("time:")), qPrintable(window));
    analyzer::parse_window(window.toStdString());  // throws when the GUI wrote a malformed one
  }

  void selectingStepsSetsTheWindowOfEveryPage() {
    MainWindow window;
    window.setErrorDialogsEnabled(false);
    window.show();
    window.openFiles({QString::fromStdString(kTrain)});
    QVERIFY(waitForLoads(window));
    QVERIFY(window.lastError().isEmpty());
    QCOMPARE(window.stepsPage()->model()->rowCount(), 65);
    QVERIFY2(window.windowText().contains(QStringLiteral("steady")),
             qPrintable(window.windowText()));

    QSignalSpy changed(window.loader(), &CaptureLoader::windowChanged);
    window.showPage(window.stepsPage());
    window.stepsPage()->selectSteps(10, 20);
    QVERIFY(changed.wait(60000));
    QVERIFY(waitForLoads(window));
    const auto current = window.currentCapture();
    QCOMPARE(QString::fromStdString(current->windowSpec.text), QStringLiteral("steps:10-20"));
    QCOMPARE(current->window->first_step, 10);
    QCOMPARE(current->window->last_step, 20);

    // The summary describes steps 10-20: what `prof-analyze summary --window steps:10-20` reads.
    const auto expected = analyzer::summarize(*test::windowedReader(kTrain, "steps:10-20"));
    const auto whole = analyzer::summarize(db::Reader(kTrain));
    QVERIFY(expected.totals.kernel_count < whole.totals.kernel_count);
    QCOMPARE(current->summary.totals.kernel_count, expected.totals.kernel_count);
    QCOMPARE(window.summaryPage()->kernelModel()->rowCount(),
             static_cast<int>(expected.kernels.size()));
    // The status bar names the window and what lies outside it.
    const QString description = QString::fromStdString(current->window->description);
    QVERIFY(description.contains(QStringLiteral("steps 10-20")));
    QCOMPARE(window.windowText(), QStringLiteral("Window: ") + description);

    // The HTML report describes the window and names it.
    QTemporaryDir dir;
    const QString html = dir.filePath(QStringLiteral("report.html"));
    QSignalSpy written(window.loader(), &CaptureLoader::htmlReportWritten);
    window.loader()->requestHtmlReport(current, html);
    QVERIFY(written.wait(120000));
    QVERIFY2(written[0][2].toString().isEmpty(), qPrintable(written[0][2].toString()));
    QFile file(html);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QVERIFY(QString::fromUtf8(file.readAll()).contains(QStringLiteral("steps 10-20")));

    // A Shift+drag on the timeline: the time range becomes the window of the summary.
    const auto& steps = current->steps->steps;
    window.showPage(window.timelinePage());
    window.timelinePage()->timelineWidget()->selectTimeRange(
        static_cast<double>(steps[29].start_ns), static_cast<double>(steps[39].end_ns));
    QVERIFY(changed.wait(60000));
    QVERIFY(waitForLoads(window));
    QCOMPARE(window.currentCapture()->windowSpec.kind, analyzer::WindowKind::Time);
    const auto timed = analyzer::summarize(
        *test::windowedReader(kTrain, window.currentCapture()->windowSpec.text));
    QCOMPARE(window.currentCapture()->summary.totals.kernel_count, timed.totals.kernel_count);
    QVERIFY(timed.totals.kernel_count > 0 && timed.totals.kernel_count < whole.totals.kernel_count);

    // The window control in the tool bar: typed and entered.
    auto* box = window.findChild<QComboBox*>(QStringLiteral("windowBox"));
    QVERIFY(box);
    box->setFocus();
    box->lineEdit()->selectAll();
    QTest::keyClicks(box->lineEdit(), QStringLiteral("steps:5-6"));
    QTest::keyClick(box->lineEdit(), Qt::Key_Return);
    QVERIFY(changed.wait(60000));
    QVERIFY(waitForLoads(window));
    QCOMPARE(window.currentCapture()->window->first_step, 5);
    QCOMPARE(window.currentCapture()->window->last_step, 6);

    // Back to the whole capture; a malformed window changes nothing.
    QVERIFY(window.setWindow(QStringLiteral("all")));
    QVERIFY(changed.wait(60000));
    QVERIFY(waitForLoads(window));
    QCOMPARE(window.currentCapture()->summary.totals.kernel_count, whole.totals.kernel_count);
    QVERIFY(!window.setWindow(QStringLiteral("steps:banana")));
    QVERIFY(!window.lastError().isEmpty());
    QCOMPARE(QString::fromStdString(window.currentCapture()->windowSpec.text),
             QStringLiteral("all"));
    // A window that selects nothing is refused with the analyzer's line; the window stays.
    QSignalSpy failed(window.loader(), &CaptureLoader::windowFailed);
    QVERIFY(window.setWindow(QStringLiteral("steps:500-600")));
    QVERIFY(failed.wait(60000));
    QVERIFY(waitForLoads(window));
    QCOMPARE(QString::fromStdString(window.currentCapture()->windowSpec.text),
             QStringLiteral("all"));
  }
};

QTEST_MAIN(TestStepsPage)
#include "tst_stepspage.moc"
