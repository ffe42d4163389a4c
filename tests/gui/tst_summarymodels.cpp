// The Summary page's models hold exactly analyzer::summarize's rows and pass
// QAbstractItemModelTester; the page's search box filters every table.

#include <QAbstractItemModelTester>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QtTest>

#include <sstream>

#include "CaptureData.h"
#include "GuiExport.h"
#include "Format.h"
#include "summary/Summary.h"
#include "fuselens/db/Reader.h"
#include "models/SummaryModels.h"
#include "views/SummaryPage.h"

using namespace fuselens;
using namespace fuselens::gui;

class TestSummaryModels : public QObject {
  Q_OBJECT

 private:
  static QString capture(const QString& name) {
    return QStringLiteral(FUSELENS_TEST_DATA_DIR "/") + name;
  }

 private Q_SLOTS:
  void kernelRowsEqualSummarize_data() {
    QTest::addColumn<QString>("file");
    QTest::newRow("fusion_bench") << capture(QStringLiteral("fusion_bench.sqlite"));
    QTest::newRow("pytorch_mlp") << capture(QStringLiteral("pytorch_mlp.sqlite"));
  }

  void kernelRowsEqualSummarize() {
    QFETCH(QString, file);
    const auto summary = analyzer::summarize(db::Reader(file.toStdString()));
    QVERIFY(!summary.kernels.empty());

    KernelSummaryModel kernels;
    QAbstractItemModelTester kernelTester(&kernels, QAbstractItemModelTester::FailureReportingMode::QtTest);
    kernels.setRows(summary.kernels);
    QCOMPARE(kernels.rowCount(), static_cast<int>(summary.kernels.size()));
    QCOMPARE(kernels.columnCount(), StatsColumns + 1);
    for (int r = 0; r < kernels.rowCount(); ++r) {
      const auto& row = summary.kernels[static_cast<std::size_t>(r)];
      QCOMPARE(kernels.index(r, StatsColumns).data().toString(), toQString(row.name));
      QCOMPARE(kernels.index(r, Total).data(TableModel::RawRole).toLongLong(), row.stats.total_ns);
      QCOMPARE(kernels.index(r, Instances).data(TableModel::RawRole).toLongLong(), row.stats.count);
      QCOMPARE(kernels.index(r, Med).data(TableModel::RawRole).toDouble(), row.stats.median_ns);
      QCOMPARE(kernels.index(r, Total).data().toString(), formatDuration(static_cast<double>(row.stats.total_ns)));
    }

    MemoryOperationModel memory;
    QAbstractItemModelTester memoryTester(&memory, QAbstractItemModelTester::FailureReportingMode::QtTest);
    memory.setRows(summary.memory_operations);
    QCOMPARE(memory.rowCount(), static_cast<int>(summary.memory_operations.size()));
    for (int r = 0; r < memory.rowCount(); ++r) {
      const auto& row = summary.memory_operations[static_cast<std::size_t>(r)];
      QCOMPARE(memory.index(r, StatsColumns).data(TableModel::RawRole).toLongLong(), row.total_bytes);
      QCOMPARE(memory.index(r, StatsColumns + 2).data().toString(), toQString(row.name));
    }

    ApiSummaryModel api;
    QAbstractItemModelTester apiTester(&api, QAbstractItemModelTester::FailureReportingMode::QtTest);
    api.setRows(summary.api);
    QCOMPARE(api.rowCount(), static_cast<int>(summary.api.size()));
    QCOMPARE(api.index(0, Instances).data(TableModel::RawRole).toLongLong(), summary.api[0].stats.count);

    NvtxSummaryModel nvtx;
    QAbstractItemModelTester nvtxTester(&nvtx, QAbstractItemModelTester::FailureReportingMode::QtTest);
    nvtx.setRows(summary.nvtx);
    QCOMPARE(nvtx.rowCount(), static_cast<int>(summary.nvtx.size()));
    for (int r = 0; r < nvtx.rowCount(); ++r) {
      const auto& row = summary.nvtx[static_cast<std::size_t>(r)];
      QCOMPARE(nvtx.index(r, StatsColumns + 3).data(TableModel::RawRole).toLongLong(), row.gpu_time_ns);
      QCOMPARE(nvtx.index(r, StatsColumns + 2).data(TableModel::RawRole).toLongLong(),
               row.left_out_kernels);
      QCOMPARE(nvtx.index(r, StatsColumns + 1).data(TableModel::RawRole).toLongLong(), row.kernel_count);
    }

    DeviceMemoryModel devices;
    QAbstractItemModelTester deviceTester(&devices, QAbstractItemModelTester::FailureReportingMode::QtTest);
    devices.setRows(summary.device_memory);
    QCOMPARE(devices.rowCount(), static_cast<int>(summary.device_memory.size()));
    if (devices.rowCount() > 0) {
      QCOMPARE(devices.index(0, 1).data(TableModel::RawRole).toLongLong(), summary.device_memory[0].peak_bytes);
    }
  }

  void proxySortsNumerically() {
    const auto summary = analyzer::summarize(db::Reader(capture(QStringLiteral("fusion_bench.sqlite")).toStdString()));
    KernelSummaryModel kernels;
    kernels.setRows(summary.kernels);
    QSortFilterProxyModel proxy;
    proxy.setSourceModel(&kernels);
    proxy.setSortRole(TableModel::SortRole);
    proxy.sort(Max, Qt::DescendingOrder);
    for (int r = 1; r < proxy.rowCount(); ++r) {
      QVERIFY(proxy.index(r - 1, Max).data(TableModel::SortRole).toDouble() >=
              proxy.index(r, Max).data(TableModel::SortRole).toDouble());
    }
  }

  void pageFiltersEveryTable() {
    auto data = loadCapture(capture(QStringLiteral("fusion_bench.sqlite")));
    SummaryPage page;
    page.setCaptures(data, {data});
    QCOMPARE(page.kernelModel()->rowCount(), static_cast<int>(data->summary.kernels.size()));
    page.setFilter(QStringLiteral("swish"));
    auto* view = qobject_cast<QTableView*>(page.currentTable());
    QVERIFY(view);
    int expected = 0;
    for (const auto& k : data->summary.kernels) expected += toQString(k.name).contains(QStringLiteral("swish"), Qt::CaseInsensitive);
    QVERIFY(expected > 0);
    QCOMPARE(view->model()->rowCount(), expected);
  }

  void csvHoldsRawValues() {
    const auto summary = analyzer::summarize(db::Reader(capture(QStringLiteral("fusion_bench.sqlite")).toStdString()));
    KernelSummaryModel kernels;
    kernels.setRows(summary.kernels);
    std::ostringstream out;
    writeCsv(kernels, out);
    const QStringList lines = QString::fromStdString(out.str()).split(QStringLiteral("\r\n"), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), kernels.rowCount() + 1);
    QVERIFY(lines[0].startsWith(QStringLiteral("Time (%),Total Time,Instances")));
    QVERIFY(lines[1].contains(QStringLiteral(",%1,%2,").arg(summary.kernels[0].stats.total_ns).arg(summary.kernels[0].stats.count)));
  }
};

QTEST_MAIN(TestSummaryModels)
#include "tst_summarymodels.moc"
