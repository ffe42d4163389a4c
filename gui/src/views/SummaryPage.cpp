#include "views/SummaryPage.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include "Format.h"
#include "summary/SummaryFormat.h"
#include "models/SummaryModels.h"

namespace fuselens::gui {
namespace {

QString headerHtml(const CaptureData& data) {
  const auto& s = data.summary;
  QStringList argv;
  for (const auto& a : s.run.info.command_line) argv << toQString(a);
  QStringList devices;
  for (const auto& d : s.devices) {
    devices << QStringLiteral("GPU %1: %2 (sm_%3%4, %5 SMs, %6)")
                   .arg(d.id)
                   .arg(toQString(d.name).toHtmlEscaped())
                   .arg(d.cc_major)
                   .arg(d.cc_minor)
                   .arg(d.sm_count)
                   .arg(formatBytes(static_cast<double>(d.global_memory_bytes)));
  }
  const auto& t = s.totals;
  QString html = QStringLiteral("<b>%1</b> &nbsp; <code>%2</code><br>")
                     .arg(data.displayName.toHtmlEscaped(), argv.join(QLatin1Char(' ')).toHtmlEscaped());
  html += QStringLiteral("host %1 · %2 · dropped records %3 · %4<br>")
              .arg(toQString(s.run.info.host_name).toHtmlEscaped(),
                   toQString(analyzer::describe_run_end(s.run.end)).toHtmlEscaped())
              .arg(s.run.dropped_records)
              .arg(devices.isEmpty() ? QStringLiteral("no device") : devices.join(QStringLiteral("; ")));
  html += QStringLiteral("%1 kernels (%2 GPU time) · %3 memcpys (%4) · %5 memsets · %6 API calls · "
                         "%7 NVTX ranges")
              .arg(formatCount(t.kernel_count), formatDuration(static_cast<double>(t.kernel_time_ns)),
                   formatCount(t.memcpy_count), formatBytes(static_cast<double>(t.memcpy_bytes)),
                   formatCount(t.memset_count), formatCount(t.api_call_count),
                   formatCount(t.nvtx_range_count));
  if (!s.nvtx.empty()) {
    std::int64_t leftOut = 0, otherThreads = 0;
    for (const auto& r : s.nvtx) {
      leftOut += r.left_out_kernels;
      otherThreads += r.other_thread_kernels;
    }
    html += QStringLiteral("<br>NVTX ranges: ") +
            toQString(analyzer::nvtx_projection_note(s.nvtx_projection, leftOut, otherThreads))
                .toHtmlEscaped();
  }
  if (!s.cuda_used) {
    html += QStringLiteral("<br><b>The workload never initialized CUDA: every table is empty.</b>");
  }
  return html;
}

}  // namespace

SummaryPage::SummaryPage(QWidget* parent) : Page(QStringLiteral("Summary"), parent) {
  auto* layout = new QVBoxLayout(this);
  header_ = new QLabel(this);
  header_->setTextFormat(Qt::RichText);
  header_->setWordWrap(true);
  header_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(header_);

  auto* searchRow = new QHBoxLayout;
  search_ = new QLineEdit(this);
  search_->setObjectName(QStringLiteral("summarySearch"));
  search_->setPlaceholderText(QStringLiteral("Filter by name (all tables)…"));
  search_->setClearButtonEnabled(true);
  searchRow->addWidget(new QLabel(QStringLiteral("Search:"), this));
  searchRow->addWidget(search_);
  layout->addLayout(searchRow);

  tabs_ = new QTabWidget(this);
  tabs_->setDocumentMode(true);
  layout->addWidget(tabs_, 1);

  kernels_ = new KernelSummaryModel(this);
  memory_ = new MemoryOperationModel(this);
  api_ = new ApiSummaryModel(this);
  nvtx_ = new NvtxSummaryModel(this);
  devices_ = new DeviceMemoryModel(this);
  const QList<QPair<QAbstractItemModel*, QString>> tables = {
      {kernels_, QStringLiteral("Kernels")},
      {memory_, QStringLiteral("Memory operations")},
      {api_, QStringLiteral("CUDA API")},
      {nvtx_, QStringLiteral("NVTX ranges")},
      {devices_, QStringLiteral("Device memory")}};
  for (const auto& [model, name] : tables) {
    QSortFilterProxyModel* proxy = nullptr;
    auto* view = makeTableView(model, &proxy, this);
    view->setObjectName(name);
    proxies_ << proxy;
    views_ << view;
    tabs_->addTab(view, name);
  }
  connect(search_, &QLineEdit::textChanged, this, &SummaryPage::setFilter);

  // "Show in timeline" on the kernel, memory-operation, API and NVTX rows: the first instance
  // of the row's name in the window (the device-memory rows name no item).
  const auto jump = [this](int table, auto* model, auto targetOf) {
    QSortFilterProxyModel* proxy = proxies_[table];
    addTimelineJump(views_[table], [model, proxy, targetOf](const QModelIndex& index) {
      const QModelIndex source = proxy->mapToSource(index);
      if (!source.isValid() || source.row() >= model->rowCount()) return TimelineTarget{};
      return targetOf(toQString(model->rowAt(source.row()).name));
    });
  };
  jump(0, kernels_, [](const QString& name) { return timelineTarget(name, SearchKernels); });
  jump(1, memory_,
       [](const QString& name) { return timelineTarget(timelineCopyName(name), SearchCopies); });
  jump(2, api_, [](const QString& name) { return timelineTarget(name, SearchApi); });
  jump(3, nvtx_, [](const QString& name) { return timelineTarget(name, SearchRanges); });
}

void SummaryPage::setFilter(const QString& text) {
  if (search_->text() != text) search_->setText(text);
  for (auto* proxy : proxies_) proxy->setFilterFixedString(text);
}

void SummaryPage::showKernels(const QString& text) {
  setFilter(text);
  tabs_->setCurrentIndex(0);
}

void SummaryPage::setCaptures(const CaptureDataPtr& current, const QList<CaptureDataPtr>&) {
  if (current == data_) return;
  data_ = current;
  showSummary();
}

void SummaryPage::analysisLoaded(const CaptureDataPtr& capture, Analysis analysis) {
  if (capture == data_ && analysis == Analysis::Summary) showSummary();
}

void SummaryPage::showSummary() {
  if (!data_ || !data_->has(Analysis::Summary) || !data_->error(Analysis::Summary).isEmpty()) {
    if (!data_) {
      header_->setText(QStringLiteral("No capture open. Use File → Open or drop a .sqlite file here."));
    } else if (!data_->has(Analysis::Summary)) {
      header_->setText(QStringLiteral("<b>%1</b><br>Summarizing… (the other pages fill in as their analyses load)")
                           .arg(data_->displayName.toHtmlEscaped()));
    } else {
      header_->setText(QStringLiteral("<b>%1</b><br>The summary could not be computed: %2")
                           .arg(data_->displayName.toHtmlEscaped(), data_->error(Analysis::Summary).toHtmlEscaped()));
    }
    kernels_->setRows({});
    memory_->setRows({});
    api_->setRows({});
    nvtx_->setRows({});
    devices_->setRows({});
    return;
  }
  const auto& s = data_->summary;
  header_->setText(headerHtml(*data_));
  kernels_->setRows(s.kernels);
  memory_->setRows(s.memory_operations);
  api_->setRows(s.api);
  nvtx_->setRows(s.nvtx);
  devices_->setRows(s.device_memory);
  const int counts[] = {static_cast<int>(s.kernels.size()), static_cast<int>(s.memory_operations.size()),
                        static_cast<int>(s.api.size()), static_cast<int>(s.nvtx.size()),
                        static_cast<int>(s.device_memory.size())};
  for (int i = 0; i < tabs_->count(); ++i) {
    tabs_->setTabText(i, QStringLiteral("%1 (%2)").arg(views_[i]->objectName()).arg(counts[i]));
    fitColumns(views_[i]);
  }
}

QAbstractItemView* SummaryPage::currentTable() const {
  return qobject_cast<QAbstractItemView*>(tabs_->currentWidget());
}

}  // namespace fuselens::gui
