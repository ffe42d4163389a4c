#include "views/StepsPage.h"

#include <QHBoxLayout>
#include <QItemSelectionModel>
#include <QLabel>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>

#include "Format.h"
#include "models/StepsModel.h"
#include "views/StepChart.h"

namespace fuselens::gui {

StepsPage::StepsPage(QWidget* parent) : Page(QStringLiteral("Steps"), parent) {
  auto* layout = new QVBoxLayout(this);
  header_ = new QLabel(this);
  header_->setWordWrap(true);
  header_->setTextFormat(Qt::RichText);
  layout->addWidget(header_);
  auto* splitter = new QSplitter(Qt::Vertical, this);
  chart_ = new StepChart(splitter);
  model_ = new StepsModel(this);
  view_ = makeTableView(model_, &proxy_, splitter);
  view_->setObjectName(QStringLiteral("stepsTable"));
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setSelectionMode(QAbstractItemView::ContiguousSelection);
  splitter->addWidget(chart_);
  splitter->addWidget(view_);
  splitter->setSizes({280, 520});
  layout->addWidget(splitter, 1);
  auto* buttons = new QHBoxLayout;
  apply_ = new QPushButton(QStringLiteral("Window: selected steps"), this);
  apply_->setEnabled(false);
  steady_ = new QPushButton(QStringLiteral("Window: steady steps"), this);
  buttons->addWidget(apply_);
  buttons->addWidget(steady_);
  buttons->addStretch(1);
  layout->addLayout(buttons);

  // A drag over the rows changes the selection many times: the window follows once it rests.
  settle_ = new QTimer(this);
  settle_->setSingleShot(true);
  settle_->setInterval(400);
  connect(settle_, &QTimer::timeout, this, [this] {
    const QString window = selectionWindow();
    if (!window.isEmpty()) Q_EMIT windowRequested(window);
  });
  connect(view_->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
    const QString window = selectionWindow();
    apply_->setEnabled(!window.isEmpty());
    apply_->setText(window.isEmpty() ? QStringLiteral("Window: selected steps")
                                     : QStringLiteral("Window: %1").arg(window));
    if (!window.isEmpty() && view_->hasFocus()) settle_->start();
  });
  connect(apply_, &QPushButton::clicked, this, [this] {
    settle_->stop();
    const QString window = selectionWindow();
    if (!window.isEmpty()) Q_EMIT windowRequested(window);
  });
  connect(steady_, &QPushButton::clicked, this,
          [this] { Q_EMIT windowRequested(QStringLiteral("steady")); });
}

void StepsPage::setCaptures(const CaptureDataPtr& current, const QList<CaptureDataPtr>&) {
  if (current == data_) return;
  data_ = current;
  showSteps();
}

void StepsPage::analysisLoaded(const CaptureDataPtr& capture, Analysis analysis) {
  if (capture == data_ && analysis == Analysis::Steps) showSteps();
}

void StepsPage::windowChanged(const CaptureDataPtr& capture, const QList<CaptureDataPtr>&) {
  if (capture != data_ || !data_) return;
  // The steps stay; the chart and the header follow the window.
  showSteps();
}

QAbstractItemView* StepsPage::currentTable() const { return view_; }

QWidget* StepsPage::imageWidget() { return chart_; }

QString StepsPage::headerText() const { return header_->text(); }

void StepsPage::showSteps() {
  const bool ready = data_ && data_->has(Analysis::Steps) && data_->steps;
  // Keep the selection when only the window changed (the rows are the same steps).
  const analyzer::StepReport* report = ready ? &*data_->steps : nullptr;
  if (report != shown_ || !report) {
    shown_ = report;
    model_->setReport(report);
    fitColumns(view_);
  }
  chart_->setReport(report ? std::shared_ptr<const analyzer::StepReport>(data_, report) : nullptr,
                    data_ ? data_->window : nullptr);
  if (!data_) {
    header_->setText(QStringLiteral("<h3>No capture open</h3>"));
    return;
  }
  if (!data_->has(Analysis::Steps)) {
    header_->setText(QStringLiteral("<h3>Finding the steps…</h3>"));
    return;
  }
  if (!report) {
    header_->setText(QStringLiteral("<h3>The steps could not be found</h3>%1")
                         .arg(data_->error(Analysis::Steps).toHtmlEscaped()));
    return;
  }
  QString text;
  const auto count = static_cast<int>(report->steps.size());
  if (count == 0) {
    text = QStringLiteral("<b>No steps</b>: %1").arg(toQString(report->note).toHtmlEscaped());
  } else {
    text = QStringLiteral("<b>%1 steps</b> found by %2%3")
               .arg(count)
               .arg(QString::fromUtf8(analyzer::step_method_name(report->method)))
               .arg(report->pattern.empty()
                        ? QString()
                        : QStringLiteral(" '%1'").arg(toQString(report->pattern).toHtmlEscaped()));
    if (report->method == analyzer::StepMethod::Auto) {
      text += QStringLiteral(" (period %1 launches, confidence %2)")
                  .arg(report->period)
                  .arg(formatPercent(100.0 * report->confidence));
    }
    const auto& d = report->distribution;
    text += QStringLiteral(". Steady from step %1: median %2, p10 %3, p90 %4, max %5")
                .arg(report->steady_first)
                .arg(formatDuration(d.median_ns), formatDuration(d.p10_ns),
                     formatDuration(d.p90_ns), formatDuration(d.max_ns));
    if (!report->outliers.empty()) {
      QStringList named;
      for (const auto& o : report->outliers) {
        named << QStringLiteral("%1 (%2; %3)")
                     .arg(o.index)
                     .arg(toQString(o.reason).toHtmlEscaped(),
                          toQString(o.differs).toHtmlEscaped());
      }
      text += QStringLiteral("<br>Outlier steps: ") + named.join(QStringLiteral(", "));
    }
  }
  text += QStringLiteral("<br>Window: %1").arg(data_->windowDescription().toHtmlEscaped());
  header_->setText(text);
}

QString StepsPage::selectionWindow() const {
  int first = 0, last = 0;
  for (const QModelIndex& index : view_->selectionModel()->selectedRows()) {
    const int step = model_->rowAt(proxy_->mapToSource(index).row()).index;
    first = first == 0 ? step : std::min(first, step);
    last = std::max(last, step);
  }
  if (first == 0) return {};
  return first == last ? QStringLiteral("steps:%1").arg(first)
                       : QStringLiteral("steps:%1-%2").arg(first).arg(last);
}

void StepsPage::selectSteps(int first, int last) {
  settle_->stop();
  QItemSelection selection;
  for (int row = 0; row < model_->rowCount(); ++row) {
    const int step = model_->rowAt(row).index;
    if (step < first || step > last) continue;
    const QModelIndex index = proxy_->mapFromSource(model_->index(row, 0));
    selection.select(index, index);
  }
  view_->selectionModel()->select(selection,
                                  QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  const QString window = selectionWindow();
  if (!window.isEmpty()) Q_EMIT windowRequested(window);
}

}  // namespace fuselens::gui
