#include "views/Page.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QFileDialog>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTreeView>

#include "CaptureLoader.h"
#include "GuiExport.h"
#include "models/TableModel.h"

namespace fuselens::gui {

Page::Page(QString title, QWidget* parent) : QWidget(parent), title_(std::move(title)) {}

CaptureLoader* Page::loader() {
  if (!loader_) {
    setLoader(new CaptureLoader(this));
    ownsLoader_ = true;
  }
  return loader_;
}

void Page::setLoader(CaptureLoader* loader) {
  if (loader == loader_) return;
  if (loader_) {
    disconnect(loader_, nullptr, this, nullptr);
    if (ownsLoader_) loader_->deleteLater();
  }
  loader_ = loader;
  ownsLoader_ = false;
  if (loader_) connectLoader(loader_);
}

void Page::invalidate() {
  stale_ = true;
  if (isVisible()) {
    stale_ = false;
    runAnalysis();
  }
}

void Page::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (stale_) {
    stale_ = false;
    runAnalysis();
  }
}

void Page::windowChanged(const CaptureDataPtr& capture, const QList<CaptureDataPtr>& all) {
  setCaptures(nullptr, all);
  setCaptures(capture, all);
}

QAction* Page::addTimelineJump(QAbstractItemView* view, TargetOf targetOf) {
  auto* action = new QAction(QStringLiteral("Show in timeline"), view);
  action->setObjectName(QStringLiteral("showInTimeline"));
  action->setToolTip(
      QStringLiteral("Shows the first instance in the window on the timeline (double click)"));
  const auto jump = [this, view, targetOf](const QModelIndex& index) {
    if (!index.isValid()) return;
    const TimelineTarget target = targetOf(index.siblingAtColumn(0));
    if (target.valid()) Q_EMIT timelineRequested(target);
  };
  connect(action, &QAction::triggered, this, [view, jump] { jump(view->currentIndex()); });
  // Enabled only on rows that name a timeline item (the view's model is set already).
  action->setEnabled(false);
  connect(view->selectionModel(), &QItemSelectionModel::currentChanged, action,
          [action, targetOf](const QModelIndex& index) {
            action->setEnabled(index.isValid() && targetOf(index.siblingAtColumn(0)).valid());
          });
  view->addAction(action);
  if (view->contextMenuPolicy() == Qt::DefaultContextMenu) {
    view->setContextMenuPolicy(Qt::ActionsContextMenu);
  }
  connect(view, &QAbstractItemView::doubleClicked, this, [view, jump](const QModelIndex& index) {
    if (qobject_cast<QTreeView*>(view) && view->model()->hasChildren(index.siblingAtColumn(0)))
      return;  // the tree expands it
    jump(index);
  });
  return action;
}

QString Page::slug() const {
  QString s = title_.toLower();
  s.replace(QLatin1Char(' '), QLatin1Char('-'));
  return s;
}

QLabel* makeNotice(const QString& title, const QString& explanation, QWidget* parent) {
  auto* label = new QLabel(parent);
  label->setObjectName(QStringLiteral("notice"));
  label->setTextFormat(Qt::RichText);
  label->setWordWrap(true);
  label->setAlignment(Qt::AlignCenter);
  label->setMargin(40);
  label->setText(QStringLiteral("<h2>%1</h2><p style='max-width:600px'>%2</p>")
                     .arg(title.toHtmlEscaped(), explanation));
  return label;
}

QTableView* makeTableView(QAbstractItemModel* source, QSortFilterProxyModel** proxyOut,
                          QWidget* parent) {
  auto* proxy = new QSortFilterProxyModel(parent);
  proxy->setSourceModel(source);
  proxy->setSortRole(TableModel::SortRole);
  proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
  if (auto* table = qobject_cast<TableModel*>(source)) {
    proxy->setFilterKeyColumn(table->nameColumn());
  }
  if (proxyOut) *proxyOut = proxy;

  auto* view = new QTableView(parent);
  view->setModel(proxy);
  view->setSortingEnabled(true);
  view->sortByColumn(-1, Qt::AscendingOrder);  // analyzer order until a header is clicked
  view->setAlternatingRowColors(true);
  view->setSelectionBehavior(QAbstractItemView::SelectRows);
  view->setWordWrap(false);
  view->setTextElideMode(Qt::ElideMiddle);
  view->verticalHeader()->hide();
  view->verticalHeader()->setDefaultSectionSize(view->fontMetrics().height() + 6);
  view->horizontalHeader()->setStretchLastSection(true);
  view->horizontalHeader()->setSectionsMovable(true);
  view->setContextMenuPolicy(Qt::CustomContextMenu);
  QObject::connect(view, &QWidget::customContextMenuRequested, view, [view](const QPoint& at) {
    QMenu menu(view);
    // The row under the cursor becomes the current one, for the view's own actions (first).
    const QModelIndex under = view->indexAt(at);
    if (under.isValid()) view->setCurrentIndex(under);
    for (QAction* own : view->actions()) menu.addAction(own);
    if (!view->actions().isEmpty()) menu.addSeparator();
    QAction* copy = menu.addAction(QStringLiteral("Copy cell"));
    QAction* csv = menu.addAction(QStringLiteral("Export table as CSV…"));
    QAction* chosen = menu.exec(view->viewport()->mapToGlobal(at));
    if (chosen == copy) {
      const QModelIndex index = view->indexAt(at);
      if (index.isValid()) QApplication::clipboard()->setText(index.data().toString());
    } else if (chosen == csv) {
      const QString path = QFileDialog::getSaveFileName(view, QStringLiteral("Export table as CSV"),
                                                        QString(), QStringLiteral("CSV (*.csv)"));
      QString error;
      if (!path.isEmpty() && !exportCsv(*view->model(), path, &error)) {
        QMessageBox::warning(view, QStringLiteral("Export failed"), error);
      }
    }
  });
  return view;
}

void fitColumns(QTableView* view, int maxWidth) {
  auto* header = view->horizontalHeader();
  const int n = header->count();
  for (int c = 0; c + 1 < n; ++c) {
    view->resizeColumnToContents(c);
    header->resizeSection(c, std::min(header->sectionSize(c) + 12, maxWidth));
  }
}

}  // namespace fuselens::gui
