#include "views/HeatmapPage.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLinearGradient>
#include <QPainter>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

#include "Format.h"
#include "models/HeatmapModel.h"

namespace fuselens::gui {

/// The colour scale of the current heatmap: a bar from min to max with labels.
class HeatmapLegend : public QWidget {
 public:
  explicit HeatmapLegend(const HeatmapModel* model, QWidget* parent) : QWidget(parent), model_(model) {
    setMinimumHeight(46);
  }

 protected:
  void paintEvent(QPaintEvent*) override {
    const Heatmap& h = model_->heatmap();
    QPainter p(this);
    if (h.values.empty() || !(h.max >= h.min)) return;
    const QRect bar(10, 4, std::min(width() - 20, 520), 16);
    constexpr int kSteps = 64;
    for (int i = 0; i < kSteps; ++i) {
      const double t = static_cast<double>(i) / (kSteps - 1);
      double value = h.min + (h.max - h.min) * t;
      if (!isSpeedup(h.metric) && h.min > 0 && h.max / h.min > 10) {
        value = h.min * std::pow(h.max / h.min, t);  // the log scale the cells use
      } else if (isSpeedup(h.metric) && h.min > 0) {
        value = h.min * std::pow(h.max / h.min, t);
      }
      const int x0 = bar.left() + bar.width() * i / kSteps;
      const int x1 = bar.left() + bar.width() * (i + 1) / kSteps;
      p.fillRect(QRect(x0, bar.top(), x1 - x0 + 1, bar.height()), heatmapColor(h, value));
    }
    p.setPen(Qt::darkGray);
    p.drawRect(bar);
    p.setPen(palette().color(QPalette::WindowText));
    const QRect labels(bar.left(), bar.bottom() + 2, bar.width(), 20);
    p.drawText(labels, Qt::AlignLeft | Qt::AlignTop, formatHeatmapValue(h.metric, h.min));
    p.drawText(labels, Qt::AlignRight | Qt::AlignTop, formatHeatmapValue(h.metric, h.max));
    p.drawText(labels, Qt::AlignHCenter | Qt::AlignTop,
               h.higherIsBetter ? QStringLiteral("green: better (higher)") : QStringLiteral("green: better (lower)"));
  }

 private:
  const HeatmapModel* model_;
};

HeatmapPage::HeatmapPage(QWidget* parent) : Page(QStringLiteral("Heatmap"), parent) {
  auto* layout = new QVBoxLayout(this);
  auto* bar = new QHBoxLayout;
  metric_ = new QComboBox(this);
  metric_->setObjectName(QStringLiteral("heatmapMetric"));
  for (const auto& m : heatmapMetrics()) metric_->addItem(m.name);
  baseline_ = new QComboBox(this);
  baseline_->setObjectName(QStringLiteral("heatmapBaseline"));
  bar->addWidget(new QLabel(QStringLiteral("Metric:"), this));
  bar->addWidget(metric_);
  bar->addSpacing(12);
  bar->addWidget(new QLabel(QStringLiteral("Baseline variant:"), this));
  bar->addWidget(baseline_);
  bar->addStretch(1);
  layout->addLayout(bar);
  note_ = new QLabel(this);
  note_->setWordWrap(true);
  note_->setStyleSheet(QStringLiteral("color: #444"));
  layout->addWidget(note_);

  chartArea_ = new QWidget(this);
  auto* chartLayout = new QVBoxLayout(chartArea_);
  chartLayout->setContentsMargins(0, 0, 0, 0);
  model_ = new HeatmapModel(this);
  view_ = makeTableView(model_, nullptr, chartArea_);
  view_->setObjectName(QStringLiteral("heatmapTable"));
  view_->setSortingEnabled(false);
  view_->setAlternatingRowColors(false);
  view_->setSelectionMode(QAbstractItemView::SingleSelection);
  view_->setSelectionBehavior(QAbstractItemView::SelectItems);
  view_->verticalHeader()->setDefaultSectionSize(34);
  view_->horizontalHeader()->setStretchLastSection(false);
  view_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  chartLayout->addWidget(view_, 1);
  legend_ = new HeatmapLegend(model_, chartArea_);
  chartLayout->addWidget(legend_);
  layout->addWidget(chartArea_, 1);

  connect(metric_, &QComboBox::currentIndexChanged, this, &HeatmapPage::rebuild);
  connect(baseline_, &QComboBox::currentIndexChanged, this, &HeatmapPage::rebuild);
}

void HeatmapPage::setCaptures(const CaptureDataPtr& current, const QList<CaptureDataPtr>&) {
  if (current == data_) return;
  data_ = current;
  showRanges();
}

void HeatmapPage::analysisLoaded(const CaptureDataPtr& capture, Analysis analysis) {
  if (capture == data_ && analysis == Analysis::Ranges) showRanges();
}

void HeatmapPage::showRanges() {
  QSignalBlocker block(baseline_);
  baseline_->clear();
  if (data_ && data_->has(Analysis::Ranges)) {
    const Heatmap h = buildHeatmap(data_->ranges, HeatmapMetric::Latency);
    baseline_->addItems(h.columns);
    const int unfused = static_cast<int>(h.columns.indexOf(QStringLiteral("unfused")));
    if (unfused >= 0) baseline_->setCurrentIndex(unfused);
  }
  rebuild();
}

void HeatmapPage::setMetric(int metricIndex, const QString& baselineVariant) {
  if (!metric_) return;
  if (!baselineVariant.isEmpty()) baseline_->setCurrentText(baselineVariant);
  metric_->setCurrentIndex(metricIndex);
  rebuild();
}

void HeatmapPage::rebuild() {
  if (!data_ || !data_->has(Analysis::Ranges) || !data_->error(Analysis::Ranges).isEmpty()) {
    model_->setHeatmap({});
    note_->setText(!data_ ? QStringLiteral("No capture open.")
                   : !data_->has(Analysis::Ranges)
                       ? QStringLiteral("Computing the range statistics of %1…").arg(data_->displayName)
                       : QStringLiteral("The range statistics failed: %1").arg(data_->error(Analysis::Ranges)));
    legend_->update();
    return;
  }
  const auto metric = heatmapMetrics()[static_cast<std::size_t>(std::max(0, metric_->currentIndex()))].metric;
  baseline_->setEnabled(isSpeedup(metric));
  model_->setHeatmap(buildHeatmap(data_->ranges, metric, baseline_->currentText()));
  view_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  legend_->update();
  if (model_->heatmap().rows.isEmpty()) {
    note_->setText(QStringLiteral("No NVTX range of this capture is named op/variant/shape (or op/variant): "
                                  "nothing to lay out. Name ranges like <code>gemm/fused/M64_N128</code>."));
    return;
  }
  std::int64_t leftOut = 0;
  auto projection = analyzer::NvtxProjection::Process;
  for (const auto& r : data_->ranges) {
    leftOut += r.left_out_kernels;
    projection = r.projection;
  }
  note_->setText(QStringLiteral("From the analyzer's range statistics (the figures of "
                                "<code>prof-analyze compare</code>): GPU time is "
                                "the kernels launched inside each range, per iteration (its NVTX "
                                "payload), median over instances. "
                                "<b>GPU projection: %1</b> (%2; %3 kernels left out). "
                                "Efficiency (percent of peak) is on the <b>Roofline</b> page: it "
                                "needs FLOP and byte counts "
                                "(counters or annotations), which range statistics do not have.")
                     .arg(QString::fromUtf8(analyzer::to_string(projection)),
                          projection == analyzer::NvtxProjection::Thread
                              ? QStringLiteral("kernels launched by the range's own thread")
                              : QStringLiteral("kernels launched by any thread of its process"),
                          formatCount(leftOut)));
}

QAbstractItemView* HeatmapPage::currentTable() const { return view_; }

}  // namespace fuselens::gui
