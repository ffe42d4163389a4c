#include "views/ModulesPage.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QStackedWidget>
#include <QTreeView>
#include <QVBoxLayout>

#include "CaptureLoader.h"
#include "Format.h"
#include "models/ModulesModel.h"
#include "models/TableModel.h"

namespace fuselens::gui {
namespace {

QString duration(std::int64_t ns) { return formatDuration(static_cast<double>(ns)); }

/// The notice of a capture (or window) without module ranges.
const char* const kNoModules =
    "no module ranges: record with prof-run (module view on by default) on a PyTorch program";

}  // namespace

QString modulesHeader(const analyzer::ModulesReport& report, const QString& window) {
  const auto& b = report.backward_total;
  const QString share =
      b.gpu_ns > 0
          ? QStringLiteral("Backward GPU time in modules: %1 (%2 of %3)")
                .arg(formatPercent(100.0 * report.backward_attributed_share()),
                     duration(b.gpu_ns - report.backward_outside.gpu_ns), duration(b.gpu_ns))
          : QStringLiteral("Backward GPU time in modules: no backward work in this window");
  const QString outside =
      QStringLiteral("Outside every module: forward %1 (%2 launches), backward %3 (%4 launches)")
          .arg(duration(report.forward_outside.gpu_ns),
               formatCount(report.forward_outside.launches),
               duration(report.backward_outside.gpu_ns),
               formatCount(report.backward_outside.launches));
  return QStringLiteral("Window: %1\n%2\n%3").arg(window, share, outside);
}

ModulesPage::ModulesPage(QWidget* parent) : Page(QStringLiteral("Modules"), parent) {
  auto* layout = new QVBoxLayout(this);
  auto* bar = new QHBoxLayout;
  header_ = new QLabel(this);
  header_->setObjectName(QStringLiteral("header"));
  header_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  search_ = new QLineEdit(this);
  search_->setPlaceholderText(QStringLiteral("Search modules…"));
  search_->setClearButtonEnabled(true);
  search_->setMaximumWidth(320);
  bar->addWidget(header_, 1);
  bar->addWidget(search_, 0, Qt::AlignTop);
  layout->addLayout(bar);

  stack_ = new QStackedWidget(this);
  notice_ = makeNotice(QString(), QString(), stack_);
  model_ = new ModulesModel(this);
  proxy_ = new QSortFilterProxyModel(this);
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(TableModel::SortRole);
  proxy_->setRecursiveFilteringEnabled(true);
  proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
  proxy_->setFilterRole(TableModel::RawRole);  // the full path: "attn.qkv" finds model.attn.qkv
  proxy_->setFilterKeyColumn(ModulesModel::Module);
  tree_ = new QTreeView(stack_);
  tree_->setModel(proxy_);
  tree_->setSortingEnabled(true);
  tree_->sortByColumn(-1, Qt::AscendingOrder);  // the analyzer's order until a header is clicked
  tree_->setAlternatingRowColors(true);
  tree_->setUniformRowHeights(true);
  tree_->header()->setStretchLastSection(false);
  stack_->addWidget(notice_);
  stack_->addWidget(tree_);
  layout->addWidget(stack_, 1);
  connect(search_, &QLineEdit::textChanged, proxy_, &QSortFilterProxyModel::setFilterFixedString);
  showNotice(QStringLiteral("<h2>No capture open</h2>"));
}

void ModulesPage::setCaptures(const CaptureDataPtr& current, const QList<CaptureDataPtr>&) {
  if (current == data_) return;
  data_ = current;
  request_ = 0;  // a report still coming for the previous capture (or window) is dropped
  running_ = false;
  model_->setReport({});
  header_->clear();
  showNotice(data_ ? QStringLiteral("<h2>Computing the module view…</h2>")
                   : QStringLiteral("<h2>No capture open</h2>"));
  invalidate();  // computed when the page is shown
}

void ModulesPage::analysisLoaded(const CaptureDataPtr& capture, Analysis analysis) {
  // The window is resolved: the view of the window can be computed now.
  if (capture == data_ && analysis == Analysis::Steps && request_ == 0) invalidate();
}

void ModulesPage::runAnalysis() {
  running_ = false;
  if (!data_) return;
  if (!data_->has(Analysis::Steps)) {
    showNotice(QStringLiteral("<h2>Finding the steps of the window…</h2>"));
    return;  // analysisLoaded(Steps) asks again
  }
  showNotice(QStringLiteral("<h2>Computing the module view…</h2>"));
  running_ = true;
  request_ = loader()->requestModules(data_);
}

void ModulesPage::connectLoader(CaptureLoader* loader) {
  connect(loader, &CaptureLoader::modulesReady, this, &ModulesPage::showReport);
}

void ModulesPage::showNotice(const QString& html) {
  notice_->setText(html);
  stack_->setCurrentWidget(notice_);
}

void ModulesPage::showReport(quint64 request,
                             const std::shared_ptr<const analyzer::ModulesReport>& report,
                             const QString& error) {
  if (request != request_ || !running_) return;
  running_ = false;
  const QString window = data_->windowDescription();
  if (!report) {
    header_->setText(QStringLiteral("Window: %1").arg(window));
    showNotice(
        QStringLiteral("<h2>The module view failed</h2><p>%1</p>").arg(error.toHtmlEscaped()));
  } else if (!report->available) {
    header_->setText(QStringLiteral("Window: %1").arg(window));
    showNotice(
        QStringLiteral("<h2>No module ranges in this window</h2><p>%1.</p><p>The view shows the "
                       "<code>fuselens:module</code> NVTX ranges FuseLens's Python instrumentation "
                       "records around each <code>nn.Module</code> call; a window without module "
                       "calls has none either (the window <b>all</b> shows the whole "
                       "capture).</p>")
            .arg(QString::fromLatin1(kNoModules)));
  } else {
    model_->setReport(*report);
    header_->setText(modulesHeader(*report, window));
    stack_->setCurrentWidget(tree_);
    tree_->expandToDepth(1);  // roots and their children: model, model.attn, model.mlp
    for (int c = 0; c < ModulesModel::Columns; ++c) tree_->resizeColumnToContents(c);
  }
  Q_EMIT finished();
}

QString ModulesPage::headerText() const { return header_->text(); }

QString ModulesPage::noticeText() const { return notice_->text(); }

bool ModulesPage::treeShown() const { return stack_->currentWidget() == tree_; }

QAbstractItemView* ModulesPage::currentTable() const { return tree_; }

}  // namespace fuselens::gui
