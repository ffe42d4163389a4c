#include "views/CallingContextPage.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QScrollArea>
#include <QSortFilterProxyModel>
#include <QStackedWidget>
#include <QTreeView>
#include <QVBoxLayout>

#include <exception>

#include "CaptureLoader.h"
#include "Format.h"
#include "models/TableModel.h"
#include "views/FlameGraphWidget.h"

namespace fuselens::gui {

const std::vector<int> CallingContextModel::kNone;

CallingContextModel::CallingContextModel(QObject* parent) : QAbstractItemModel(parent) {}

void CallingContextModel::setReport(analyzer::CctReport report) {
  beginResetModel();
  report_ = std::move(report);
  rowInParent_.assign(report_.rows.size(), 0);
  for (const auto& row : report_.rows) {
    for (std::size_t i = 0; i < row.children.size(); ++i) {
      rowInParent_[static_cast<std::size_t>(row.children[i])] = static_cast<int>(i);
    }
  }
  endResetModel();
}

const std::vector<int>& CallingContextModel::childrenOf(const QModelIndex& parent) const {
  if (report_.rows.empty()) return kNone;
  if (!parent.isValid()) return report_.rows[0].children;  // the root is not shown
  return report_.rows[static_cast<std::size_t>(parent.internalId())].children;
}

QModelIndex CallingContextModel::index(int row, int column, const QModelIndex& parent) const {
  if (column < 0 || column >= Columns || (parent.isValid() && parent.column() != 0)) return {};
  const auto& children = childrenOf(parent);
  if (row < 0 || row >= static_cast<int>(children.size())) return {};
  return createIndex(row, column, static_cast<quintptr>(children[static_cast<std::size_t>(row)]));
}

QModelIndex CallingContextModel::parent(const QModelIndex& child) const {
  if (!child.isValid()) return {};
  const int parentRow = report_.rows[static_cast<std::size_t>(child.internalId())].parent;
  if (parentRow <= 0) return {};  // top level (child of the hidden root)
  return createIndex(rowInParent_[static_cast<std::size_t>(parentRow)], 0,
                     static_cast<quintptr>(parentRow));
}

int CallingContextModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() && parent.column() != 0) return 0;
  return static_cast<int>(childrenOf(parent).size());
}

int CallingContextModel::columnCount(const QModelIndex&) const { return Columns; }

QString CallingContextModel::valueText(std::int64_t value) const {
  switch (report_.metric) {
    case analyzer::CctMetric::GpuTime:
      return formatDuration(static_cast<double>(value));
    case analyzer::CctMetric::Bytes:
      return formatBytes(static_cast<double>(value));
    case analyzer::CctMetric::Launches:
      break;
  }
  return formatCount(value);
}

QVariant CallingContextModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const auto& row = report_.rows[static_cast<std::size_t>(index.internalId())];
  const std::int64_t inclusive = row.inclusive.get(report_.metric);
  const std::int64_t exclusive = row.exclusive.get(report_.metric);
  const std::int64_t total = report_.total.get(report_.metric);
  switch (index.column()) {
    case Name:
      if (role == Qt::ToolTipRole && !row.file.empty()) {
        return QStringLiteral("%1\n%2:%3")
            .arg(toQString(row.label), toQString(row.file))
            .arg(row.line);
      }
      return TableModel::textCell(toQString(row.label), role);
    case Inclusive:
      return TableModel::numberCell(static_cast<double>(inclusive), valueText(inclusive), role);
    case Exclusive:
      return TableModel::numberCell(static_cast<double>(exclusive), valueText(exclusive), role);
    case InclusivePercent: {
      const double percent =
          total > 0 ? 100.0 * static_cast<double>(inclusive) / static_cast<double>(total) : 0.0;
      return TableModel::numberCell(percent, formatPercent(percent), role);
    }
    default:
      return TableModel::textCell(toQString(row.module), role);
  }
}

QVariant CallingContextModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* const names[] = {"Calling context", "Inclusive", "Exclusive", "Inclusive %",
                                      "Module"};
  return section >= 0 && section < Columns ? QString::fromLatin1(names[section]) : QVariant();
}

CallingContextPage::CallingContextPage(QWidget* parent)
    : Page(QStringLiteral("Calling Context"), parent) {
  auto* layout = new QVBoxLayout(this);
  auto* bar = new QHBoxLayout;
  view_ = new QComboBox(this);
  view_->addItems(
      {QStringLiteral("Top-down"), QStringLiteral("Bottom-up"), QStringLiteral("Flat")});
  metric_ = new QComboBox(this);
  metric_->addItems(
      {QStringLiteral("GPU time"), QStringLiteral("Launches"), QStringLiteral("Bytes")});
  frames_ = new QComboBox(this);
  // In analyzer::FramesMode order.
  frames_->addItems({QStringLiteral("Auto"), QStringLiteral("User"), QStringLiteral("Python"),
                     QStringLiteral("Native"), QStringLiteral("All")});
  frames_->setToolTip(
      QStringLiteral("User: your own frames, framework frames folded into one per op "
                     "([torch: aten::linear]) or library; Python: every Python frame; Native: "
                     "native frames only; All: every frame. Auto: User for captures with Python "
                     "frames, else Native."));
  flameToggle_ = new QCheckBox(QStringLiteral("Flame graph"), this);
  search_ = new QLineEdit(this);
  search_->setPlaceholderText(QStringLiteral("Search functions, kernels, modules…"));
  search_->setClearButtonEnabled(true);
  bar->addWidget(new QLabel(QStringLiteral("View:"), this));
  bar->addWidget(view_);
  bar->addWidget(new QLabel(QStringLiteral("Metric:"), this));
  bar->addWidget(metric_);
  bar->addWidget(new QLabel(QStringLiteral("Frames:"), this));
  bar->addWidget(frames_);
  bar->addWidget(flameToggle_);
  bar->addWidget(search_, 1);
  layout->addLayout(bar);
  stack_ = new QStackedWidget(this);
  notice_ = makeNotice(QString(), QString(), stack_);
  model_ = new CallingContextModel(this);
  proxy_ = new QSortFilterProxyModel(this);
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(TableModel::SortRole);
  proxy_->setRecursiveFilteringEnabled(true);
  proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
  proxy_->setFilterKeyColumn(-1);
  tree_ = new QTreeView(stack_);
  tree_->setModel(proxy_);
  tree_->setSortingEnabled(true);
  tree_->sortByColumn(CallingContextModel::Inclusive, Qt::DescendingOrder);
  tree_->setAlternatingRowColors(true);
  tree_->setUniformRowHeights(true);
  tree_->header()->setStretchLastSection(true);
  addTimelineJump(tree_, [this](const QModelIndex& index) {
    const QModelIndex source = proxy_->mapToSource(index);
    return source.isValid()
               ? cctTimelineTarget(model_->report(), static_cast<int>(source.internalId()))
               : TimelineTarget{};
  });
  stack_->addWidget(notice_);
  stack_->addWidget(tree_);
  flame_ = new FlameGraphWidget;
  flameScroll_ = new QScrollArea(stack_);
  flameScroll_->setWidgetResizable(true);
  flameScroll_->setWidget(flame_);
  stack_->addWidget(flameScroll_);
  layout->addWidget(stack_, 1);
  connect(view_, &QComboBox::currentIndexChanged, this, &CallingContextPage::recompute);
  connect(metric_, &QComboBox::currentIndexChanged, this, &CallingContextPage::recompute);
  connect(frames_, &QComboBox::currentIndexChanged, this, &CallingContextPage::recompute);
  connect(flameToggle_, &QCheckBox::toggled, this, &CallingContextPage::setFlameGraphShown);
  connect(search_, &QLineEdit::textChanged, proxy_, &QSortFilterProxyModel::setFilterFixedString);
}

TimelineTarget cctTimelineTarget(const analyzer::CctReport& report, int row) {
  using Kind = analyzer::CctRow::Kind;
  const auto& rows = report.rows;
  if (row < 0 || static_cast<std::size_t>(row) >= rows.size()) return {};
  // The heaviest GPU operation at or below `row` (depth-first; children index later rows).
  int best = -1;
  std::vector<int> stack = {row};
  while (!stack.empty()) {
    const int r = stack.back();
    stack.pop_back();
    if (r < 0 || static_cast<std::size_t>(r) >= rows.size()) continue;
    const auto& node = rows[static_cast<std::size_t>(r)];
    if (node.kind == Kind::GpuOperation) {
      if (best < 0 || node.inclusive.get(report.metric) >
                          rows[static_cast<std::size_t>(best)].inclusive.get(report.metric)) {
        best = r;
      }
      continue;
    }
    for (const int child : node.children) {
      if (child > r) stack.push_back(child);  // the tree only points forward: no cycles
    }
  }
  if (best < 0) return {};
  const QString label = toQString(rows[static_cast<std::size_t>(best)].label);
  static const QString kernel = QStringLiteral("<gpu kernel> ");
  static const QString copy = QStringLiteral("<gpu copy> ");
  if (label.startsWith(kernel)) return timelineTarget(label.mid(kernel.size()), SearchKernels);
  if (label.startsWith(copy)) {
    return timelineTarget(QStringLiteral("Memcpy ") + label.mid(copy.size()), SearchCopies);
  }
  if (label == QStringLiteral("<gpu memset>")) {
    return timelineTarget(QStringLiteral("Memset"), SearchCopies);
  }
  return {};
}

void CallingContextPage::setCaptures(const CaptureDataPtr& current, const QList<CaptureDataPtr>&) {
  if (current == data_) return;
  data_ = current;
  request_ = 0;  // a report still coming for the previous capture is dropped
  running_ = false;
  model_->setReport({});
  notice_->setText(data_ ? QStringLiteral("<h2>Computing the calling contexts…</h2>")
                         : QStringLiteral("<h2>No capture open</h2>"));
  stack_->setCurrentWidget(notice_);
  invalidate();  // computed when the page is shown
}

void CallingContextPage::recompute() {
  model_->setReport({});
  running_ = false;
  if (!data_) {
    notice_->setText(QStringLiteral("<h2>No capture open</h2>"));
    stack_->setCurrentWidget(notice_);
    return;
  }
  analyzer::CctOptions options;
  options.view = static_cast<analyzer::CctView>(view_->currentIndex());
  options.metric = static_cast<analyzer::CctMetric>(metric_->currentIndex());
  options.frames = static_cast<analyzer::FramesMode>(frames_->currentIndex());
  running_ = true;
  request_ = loader()->requestCallingContext(data_, options);
}

void CallingContextPage::connectLoader(CaptureLoader* loader) {
  connect(loader, &CaptureLoader::callingContextReady, this, &CallingContextPage::showReport);
}

void CallingContextPage::showReport(quint64 request,
                                    const std::shared_ptr<const analyzer::CctReport>& report,
                                    const QString& error) {
  if (request != request_ || !running_) return;
  running_ = false;
  if (!report || !report->available) {
    const QString why = report ? toQString(report->unavailable_reason) : error;
    notice_->setText(
        QStringLiteral(
            "<h2>No calling contexts in this capture</h2><p>%1</p><p>The <b>Timeline</b> "
            "page shows each kernel's launching API call and enclosing NVTX ranges.</p>")
            .arg(why.toHtmlEscaped()));
    stack_->setCurrentWidget(notice_);
  } else {
    model_->setReport(*report);
    flame_->setReport(*report);
    stack_->setCurrentWidget(flameToggle_->isChecked() ? static_cast<QWidget*>(flameScroll_)
                                                       : tree_);
    expandHotPath();
    tree_->resizeColumnToContents(CallingContextModel::Name);
    // Long C++ names: keep the value columns in view (the view elides the names).
    const int cap = tree_->viewport()->width() * 3 / 5;
    if (cap > 200 && tree_->columnWidth(CallingContextModel::Name) > cap) {
      tree_->setColumnWidth(CallingContextModel::Name, cap);
    }
  }
  Q_EMIT finished();
}

// Opens the hottest path, as profilers' top-down views do: from the root, the child with the
// largest inclusive value, down to a leaf or 64 levels.
void CallingContextPage::expandHotPath() {
  QModelIndex node;
  for (int depth = 0; depth < 64; ++depth) {
    const int rows = proxy_->rowCount(node);
    if (rows == 0) break;
    QModelIndex hottest;
    double best = -1;
    for (int r = 0; r < rows; ++r) {
      const QModelIndex child = proxy_->index(r, CallingContextModel::Inclusive, node);
      const double value = child.data(TableModel::SortRole).toDouble();
      if (value > best) {
        best = value;
        hottest = child.siblingAtColumn(0);
      }
    }
    node = hottest;
    tree_->expand(node);
  }
  if (node.isValid()) tree_->scrollTo(node);
}

QAbstractItemView* CallingContextPage::currentTable() const { return tree_; }

void CallingContextPage::setFlameGraphShown(bool shown) {
  if (flameToggle_->isChecked() != shown) {
    flameToggle_->setChecked(shown);  // comes back here through toggled
    return;
  }
  if (stack_->currentWidget() == notice_) return;  // shown when the report arrives
  stack_->setCurrentWidget(shown ? static_cast<QWidget*>(flameScroll_) : tree_);
}

void CallingContextPage::setFramesMode(analyzer::FramesMode mode) {
  frames_->setCurrentIndex(static_cast<int>(mode));
}

QString CallingContextPage::noticeText() const { return notice_ ? notice_->text() : QString(); }

}  // namespace fuselens::gui
