// The Modules page (issue 20): the PyTorch module view of analyzer/modules as a tree, on the
// committed H100 capture of an eager transformer step (transformer_eager.sqlite: modules model,
// model.attn, model.attn.qkv, model.mlp.fc1, ... with forward and backward time) and on a capture
// without module ranges (train_steps.sqlite); the model under QAbstractItemModelTester.

#include <QAbstractItemModelTester>
#include <QAbstractItemView>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QtTest>

#include <sstream>

#include "CaptureData.h"
#include "CaptureLoader.h"
#include "GuiExport.h"
#include "GuiTestSupport.h"
#include "fuselens/db/Reader.h"
#include "models/ModulesModel.h"
#include "models/TableModel.h"
#include "modules/Modules.h"
#include "views/ModulesPage.h"

using namespace fuselens;
using namespace fuselens::gui;

namespace {

constexpr auto kMode = QAbstractItemModelTester::FailureReportingMode::QtTest;
const std::string kEager = test::dataFile("transformer_eager.sqlite");
const std::string kTrain = test::dataFile("train_steps.sqlite");

/// `path` opened with its window resolved (the Steps analysis, which the page waits for), as
/// the loader hands it to the pages; the other analyses are not needed here.
CaptureDataPtr withWindow(const std::string& path) {
  auto data = openCapture(QString::fromStdString(path));
  CaptureData part;
  part.path = data->path;
  part.capture = data->capture;
  part.windowSpec = data->windowSpec;
  loadAnalysis(Analysis::Steps, part);
  data->take(Analysis::Steps, std::move(part));
  return data;
}

qint64 raw(const QModelIndex& index, int column) {
  return index.siblingAtColumn(column).data(TableModel::RawRole).toLongLong();
}

/// P of the header's "Backward GPU time in modules: P %", -1 when absent.
double backwardShare(const QString& header) {
  static const QRegularExpression re(QStringLiteral("Backward GPU time in modules: ([0-9.]+) %"));
  const auto match = re.match(header);
  return match.hasMatch() ? match.captured(1).toDouble() : -1.0;
}

}  // namespace

class TestModulesPage : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void modelFollowsTheReport() {
    const auto report = analyzer::module_report(*test::windowedReader(kEager));
    QVERIFY(report.available);
    ModulesModel model;
    QAbstractItemModelTester tester(&model, kMode);
    model.setReport(report);
    int roots = 0;
    for (const auto& row : report.rows) roots += row.parent < 0 ? 1 : 0;
    QCOMPARE(model.rowCount(), roots);
    // Every row of the report is in the tree, under its parent, with the analyzer's numbers.
    for (std::size_t i = 0; i < report.rows.size(); ++i) {
      const auto& row = report.rows[i];
      const QModelIndex index = model.indexOfPath(QString::fromStdString(row.path));
      QVERIFY2(index.isValid(), row.path.c_str());
      QCOMPARE(index.data().toString(), QString::fromStdString(row.name));
      QCOMPARE(index.data(Qt::ToolTipRole).toString(), QString::fromStdString(row.path));
      QCOMPARE(index.parent(), row.parent < 0 ? QModelIndex()
                                              : model.indexOfPath(QString::fromStdString(
                                                    report.rows[std::size_t(row.parent)].path)));
      QCOMPARE(raw(index, ModulesModel::Calls), row.calls);
      QCOMPARE(raw(index, ModulesModel::ForwardInclusive), row.forward_inclusive.gpu_ns);
      QCOMPARE(raw(index, ModulesModel::ForwardExclusive), row.forward_exclusive.gpu_ns);
      QCOMPARE(raw(index, ModulesModel::BackwardInclusive), row.backward_inclusive.gpu_ns);
      QCOMPARE(raw(index, ModulesModel::BackwardExclusive), row.backward_exclusive.gpu_ns);
      QCOMPARE(raw(index, ModulesModel::Launches),
               row.forward_inclusive.launches + row.backward_inclusive.launches);
      QCOMPARE(raw(index, ModulesModel::Bytes),
               row.forward_inclusive.bytes + row.backward_inclusive.bytes);
      QCOMPARE(raw(index, ModulesModel::PeakForward), row.peak_forward_bytes);
      QCOMPARE(raw(index, ModulesModel::PeakBackward), row.peak_backward_bytes);
    }
    QCOMPARE(model.headerData(ModulesModel::BackwardExclusive, Qt::Horizontal).toString(),
             QStringLiteral("Bwd GPU (excl)"));
    model.setReport({});  // an unavailable report: no rows
    QCOMPARE(model.rowCount(), 0);
    QVERIFY(!model.indexOfPath(QStringLiteral("model")).isValid());
  }

  void peakWithoutMemoryEventsIsADash() {
    analyzer::ModulesReport report;
    report.available = true;
    analyzer::ModuleRow root;
    root.path = root.name = "net";
    analyzer::ModuleRow child;
    child.path = "net.fc";
    child.name = "fc";
    child.depth = 1;
    child.parent = 0;
    report.rows = {root, child};
    ModulesModel model;
    QAbstractItemModelTester tester(&model, kMode);
    model.setReport(report);
    const QModelIndex fc = model.indexOfPath(QStringLiteral("net.fc"));
    QCOMPARE(fc.parent(), model.index(0, 0));
    QCOMPARE(fc.siblingAtColumn(ModulesModel::PeakForward).data().toString(), QStringLiteral("-"));
    QCOMPARE(fc.siblingAtColumn(ModulesModel::PeakBackward).data(TableModel::SortRole).toDouble(),
             -1.0);
  }

  void pageShowsTheModuleTreeOfTheWindow() {
    const auto data = withWindow(kEager);
    QVERIFY(data->window);
    ModulesPage page;
    QAbstractItemModelTester tester(page.model(), kMode);
    QSignalSpy done(&page, &ModulesPage::finished);
    page.setCaptures(data, {data});
    QTest::qWait(20);
    QVERIFY(!page.busy() && done.isEmpty());  // hidden: computed on first show
    page.show();
    QVERIFY(done.wait(60000));
    QVERIFY2(page.treeShown(), qPrintable(page.noticeText()));
    for (const char* path : {"model", "model.attn", "model.attn.qkv", "model.attn.proj",
                             "model.mlp", "model.mlp.fc1", "model.mlp.fc2"}) {
      const QModelIndex index = page.model()->indexOfPath(QString::fromLatin1(path));
      QVERIFY2(index.isValid(), path);
      QVERIFY2(raw(index, ModulesModel::ForwardInclusive) > 0, path);
      QVERIFY2(raw(index, ModulesModel::BackwardInclusive) > 0, path);
      QVERIFY2(raw(index, ModulesModel::Calls) > 0, path);
    }
    // The page's report is the steady window's, as `prof-analyze modules` computes it.
    const auto expected = analyzer::module_report(*test::windowedReader(kEager));
    const QModelIndex model = page.model()->indexOfPath(QStringLiteral("model"));
    QCOMPARE(raw(model, ModulesModel::BackwardInclusive),
             expected.rows.front().backward_inclusive.gpu_ns);
    const QString header = page.headerText();
    QVERIFY2(header.contains(QStringLiteral("Window: ") + data->windowDescription()),
             qPrintable(header));
    QVERIFY2(backwardShare(header) > 95.0, qPrintable(header));
    QVERIFY2(header.contains(QStringLiteral("Outside every module: forward ")), qPrintable(header));
    QCOMPARE(page.currentTable()->model()->rowCount(), 1);  // the root, through the proxy
    // "Export table as CSV": every module, each parent before its children, by its full path.
    std::ostringstream csv;
    writeCsv(*page.currentTable()->model(), csv);
    const QStringList lines = QString::fromStdString(csv.str()).split(QStringLiteral("\r\n"));
    QCOMPARE(lines.size(), static_cast<qsizetype>(expected.rows.size()) + 2);  // header, rows, ""
    QVERIFY(lines[0].startsWith(QStringLiteral("Module,Calls,Fwd GPU (incl)")));
    QVERIFY(lines[1].startsWith(QStringLiteral("model,")));
    const auto attn = lines.indexOf(QRegularExpression(QStringLiteral("^model\\.attn,.*")));
    const auto qkv = lines.indexOf(QRegularExpression(QStringLiteral("^model\\.attn\\.qkv,.*")));
    QVERIFY(attn > 1 && qkv > attn);

    // A new window: the page asks again, for the whole capture.
    const QString steady = data->windowDescription();
    CaptureLoader* loader = page.loader();
    QSignalSpy changed(loader, &CaptureLoader::windowChanged);
    QVERIFY(loader->setWindow(data, QStringLiteral("all")));
    QVERIFY(changed.wait(60000));
    loader->forget(data);  // the windowed analyses the loader queued: not needed here
    page.windowChanged(data, {data});
    QVERIFY(done.wait(60000));
    const auto whole = analyzer::module_report(db::Reader(kEager));
    QCOMPARE(
        raw(page.model()->indexOfPath(QStringLiteral("model")), ModulesModel::BackwardInclusive),
        whole.rows.front().backward_inclusive.gpu_ns);
    QVERIFY(data->windowDescription() != steady);
    QVERIFY2(page.headerText().contains(QStringLiteral("Window: ") + data->windowDescription()),
             qPrintable(page.headerText()));
    QTRY_COMPARE_WITH_TIMEOUT(loader->pending(), 0, 60000);  // its jobs end before the page
  }

  void pageWithoutModuleRangesSaysHowToRecordThem() {
    const auto data = withWindow(kTrain);
    ModulesPage page;
    QAbstractItemModelTester tester(page.model(), kMode);
    QSignalSpy done(&page, &ModulesPage::finished);
    page.setCaptures(data, {data});
    page.show();
    QVERIFY(done.wait(60000));
    QVERIFY(!page.treeShown());
    QCOMPARE(page.model()->rowCount(), 0);
    QVERIFY2(page.noticeText().contains(
                 QStringLiteral("no module ranges: record with prof-run (module view on by "
                                "default) on a PyTorch program")),
             qPrintable(page.noticeText()));
    QVERIFY(page.headerText().startsWith(QStringLiteral("Window: ")));
  }

  void pageWaitsForTheWindow() {
    // Opened only: the window is not resolved yet, so the page asks for nothing.
    const auto data = openCapture(QString::fromStdString(kEager));
    ModulesPage page;
    QSignalSpy done(&page, &ModulesPage::finished);
    page.setCaptures(data, {data});
    page.show();
    QTest::qWait(50);
    QVERIFY(!page.busy() && done.isEmpty());
    QVERIFY2(page.noticeText().contains(QStringLiteral("Finding the steps")),
             qPrintable(page.noticeText()));
    QVERIFY(page.analyses() == QList<Analysis>{Analysis::Steps});
  }
};

QTEST_MAIN(TestModulesPage)
#include "tst_modulespage.moc"
