#include "views/RooflineChart.h"

#include <QCursor>
#include <QGraphicsEllipseItem>
#include <QGraphicsPathItem>
#include <QGraphicsSceneMouseEvent>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsTextItem>
#include <QLegendMarker>
#include <QPainter>
#include <QToolTip>
#include <QtCharts/QChart>
#include <QtCharts/QLegend>
#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QScatterSeries>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numbers>

#include "Format.h"

namespace fuselens::gui {


using analyzer::MemoryLevel;
using analyzer::Precision;
using analyzer::WorkSource;

namespace {

constexpr double kTera = 1e12;  // the y axis is in TFLOP/s
const QColor kRoofColor(60, 60, 70);

double decadeBelow(double v) { return std::pow(10.0, std::floor(std::log10(v))); }
double decadeAbove(double v) { return std::pow(10.0, std::ceil(std::log10(v))); }

QString bandwidthText(double bytesPerSecond) {
  return bytesPerSecond >= 1e12 ? QStringLiteral("%1 TB/s").arg(bytesPerSecond / 1e12, 0, 'f', 2)
                                : QStringLiteral("%1 GB/s").arg(bytesPerSecond / 1e9, 0, 'f', 0);
}

void hideFromLegend(QChart* chart, QAbstractSeries* series) {
  for (auto* marker : chart->legend()->markers(series)) marker->setVisible(false);
}

/// A ceiling's label: text on a translucent white ground, so grid lines do not cross it.
class LabelItem : public QGraphicsSimpleTextItem {
 public:
  LabelItem(const QString& text, QGraphicsItem* parent) : QGraphicsSimpleTextItem(text, parent) {
    setBrush(kRoofColor);
    setZValue(5);
  }
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override {
    painter->fillRect(boundingRect(), QColor(255, 255, 255, 205));
    QGraphicsSimpleTextItem::paint(painter, option, widget);
  }
};

/// A point of the chart: a circle (hardware counters) or a diamond (declared work) of `size`
/// pixels centred on its position; a click calls `clicked` with its index.
class PointItem : public QGraphicsPathItem {
 public:
  PointItem(int index, bool circle, double size, std::function<void(int)> clicked,
            QGraphicsItem* parent)
      : QGraphicsPathItem(parent), index_(index), clicked_(std::move(clicked)) {
    QPainterPath path;
    const double r = size / 2;
    if (circle) {
      path.addEllipse(QPointF(0, 0), r, r);
    } else {
      path.moveTo(0, -r * 1.15);
      path.lineTo(r * 1.15, 0);
      path.lineTo(0, r * 1.15);
      path.lineTo(-r * 1.15, 0);
      path.closeSubpath();
    }
    setPath(path);
    setPen(QPen(QColor(40, 40, 40), 1));
    setAcceptHoverEvents(true);
    setCursor(Qt::PointingHandCursor);
  }

 protected:
  void hoverEnterEvent(QGraphicsSceneHoverEvent*) override { setPen(QPen(QColor(0, 0, 0), 2.2)); }
  void hoverLeaveEvent(QGraphicsSceneHoverEvent*) override { setPen(QPen(QColor(40, 40, 40), 1)); }
  void mousePressEvent(QGraphicsSceneMouseEvent* event) override {
    if (clicked_) clicked_(index_);
    event->accept();
  }

 private:
  int index_;
  std::function<void(int)> clicked_;
};

}  // namespace

RooflineChart::RooflineChart(QWidget* parent) : QChartView(new QChart, parent) {
  setRenderHint(QPainter::Antialiasing);
  setMinimumSize(420, 320);
  chart()->legend()->setAlignment(Qt::AlignBottom);
  chart()->setMargins(QMargins(6, 6, 6, 6));
  // Queued: the chart emits plotAreaChanged before its axes' domains take the new size, so
  // mapToPosition would still use the old one.
  connect(
      chart(), &QChart::plotAreaChanged, this, [this] { placeLabels(); }, Qt::QueuedConnection);
}

void RooflineChart::clear() {
  for (auto& l : labels_) delete l.item;
  labels_.clear();
  for (auto& p : plotted_) delete p.item;
  delete ringLabel_;
  ringLabel_ = nullptr;
  delete ring_;
  ring_ = nullptr;
  chart()->removeAllSeries();
  for (auto* axis : chart()->axes()) {
    chart()->removeAxis(axis);
    delete axis;
  }
  xAxis_ = yAxis_ = nullptr;
  points_.clear();
  plotted_.clear();
  highlighted_ = -1;
}

void RooflineChart::setData(const analyzer::Ceilings& ceilings,
                            const std::vector<RooflinePoint>& points) {
  clear();
  points_ = points;
  QChart* c = chart();

  // Ranges: every point, every ridge point and every roof, with a margin, in whole decades.
  double peak = 0;
  for (const auto& f : ceilings.flops_per_s) peak = std::max(peak, f.value_or(0));
  const auto dram = ceilings.bandwidth(MemoryLevel::Dram);
  double xLo = std::numeric_limits<double>::max(), xHi = 0,
         yLo = std::numeric_limits<double>::max(), yHi = peak / kTera;
  for (const auto& p : points_) {
    if (!p.plotted()) continue;
    xLo = std::min(xLo, *p.intensity());
    xHi = std::max(xHi, *p.intensity());
    yLo = std::min(yLo, p.result.achieved_flops_per_s / kTera);
    yHi = std::max(yHi, p.result.achieved_flops_per_s / kTera);
  }
  for (const auto& f : ceilings.flops_per_s) {
    if (!f) continue;
    yLo = std::min(yLo, *f / kTera / 4);
    if (dram && *dram > 0) {
      xLo = std::min(xLo, *f / *dram / 4);
      xHi = std::max(xHi, *f / *dram);
    }
  }
  if (xHi <= 0) {  // nothing to place: the decades around a typical ridge point
    xLo = 0.1;
    xHi = 100;
  }
  if (yHi <= 0) yHi = 1;
  if (yLo >= yHi) yLo = yHi / 1000;
  const double xMin = decadeBelow(xLo / 1.5), xMax = decadeAbove(xHi * 4);
  const double yMax = decadeAbove(yHi * 2.5), yMin = std::min(decadeBelow(yLo / 1.5), yMax / 1000);

  xAxis_ = new QLogValueAxis;
  xAxis_->setBase(10);
  // Just beyond the decades: QLogValueAxis computes its first tick as ceil(ln(min) / ln(10)),
  // which rounding puts one decade too high for an exact power of ten (no label at the corner).
  constexpr double kSlack = 1e-9;
  xAxis_->setRange(xMin * (1 - kSlack), xMax * (1 + kSlack));
  xAxis_->setLabelFormat(QStringLiteral("%g"));
  xAxis_->setMinorTickCount(-1);  // the 2..9 ticks of each decade
  xAxis_->setTitleText(QStringLiteral("Arithmetic intensity (FLOP per DRAM byte)"));
  yAxis_ = new QLogValueAxis;
  yAxis_->setBase(10);
  yAxis_->setRange(yMin * (1 - kSlack), yMax * (1 + kSlack));
  yAxis_->setLabelFormat(QStringLiteral("%g"));
  yAxis_->setMinorTickCount(-1);
  yAxis_->setTitleText(QStringLiteral("Achieved TFLOP/s"));
  for (auto* axis : {xAxis_, yAxis_}) axis->setMinorGridLineColor(QColor(235, 235, 238));
  c->addAxis(xAxis_, Qt::AlignBottom);
  c->addAxis(yAxis_, Qt::AlignLeft);
  auto attach = [&](QAbstractSeries* series, bool legend) {
    c->addSeries(series);
    series->attachAxis(xAxis_);
    series->attachAxis(yAxis_);
    if (!legend) hideFromLegend(c, series);
  };

  // Memory slopes up to the highest roof, clipped to the axes.
  for (std::size_t l = 0; l < analyzer::kMemoryLevels; ++l) {
    const auto bw = ceilings.bytes_per_s[l];
    if (!bw || *bw <= 0) continue;
    const double perTera = *bw / kTera;  // TFLOP/s per FLOP/byte
    const double x0 = std::max(xMin, yMin / perTera);
    const double x1 = std::min({xMax, yMax / perTera, peak > 0 ? peak / *bw : xMax});
    if (x0 >= x1) continue;
    auto* line = new QLineSeries;
    const bool isDram = l == static_cast<std::size_t>(MemoryLevel::Dram);
    QPen pen(isDram ? kRoofColor : QColor(130, 130, 140), isDram ? 2.2 : 1.4);
    if (!isDram) pen.setStyle(Qt::DashLine);
    line->setPen(pen);
    line->append(x0, x0 * perTera);
    line->append(x1, x1 * perTera);
    line->setName(QStringLiteral("%1 %2").arg(
        toQString(analyzer::to_string(static_cast<MemoryLevel>(l))).toUpper(), bandwidthText(*bw)));
    attach(line, false);
    Label label{new LabelItem(line->name(), c), line->at(0), line->at(1), true};
    labels_.push_back(label);
  }

  // Compute roofs from their ridge point with DRAM, highest first; a dot on each ridge point.
  std::vector<std::pair<double, Precision>> roofs;
  for (std::size_t p = 0; p < analyzer::kPrecisions; ++p) {
    if (ceilings.flops_per_s[p] && *ceilings.flops_per_s[p] > 0)
      roofs.emplace_back(*ceilings.flops_per_s[p], static_cast<Precision>(p));
  }
  std::sort(roofs.rbegin(), roofs.rend());
  auto* ridges = new QScatterSeries;
  ridges->setMarkerSize(7);
  ridges->setColor(kRoofColor);
  ridges->setBorderColor(kRoofColor);
  for (const auto& [flops, precision] : roofs) {
    const double y = flops / kTera;
    if (y < yMin || y > yMax) continue;
    const bool hasRidge = dram && *dram > 0;
    const double ridge = hasRidge ? flops / *dram : xMin;
    auto* line = new QLineSeries;
    line->setPen(QPen(kRoofColor, precision == roofs.front().second ? 2.2 : 1.4));
    line->append(std::max(xMin, ridge), y);
    line->append(xMax, y);
    QString text = QStringLiteral("%1 %2 TFLOP/s")
                       .arg(toQString(analyzer::to_string(precision)), formatTera(y));
    if (hasRidge) {
      text += QStringLiteral(" · ridge %1 FLOP/B").arg(formatIntensity(ridge));
      if (ridge >= xMin && ridge <= xMax) ridges->append(ridge, y);
    }
    line->setName(text);
    attach(line, false);
    labels_.push_back({new LabelItem(text, c), line->at(0), line->at(1), false});
  }
  attach(ridges, false);

  // Points: drawn as scene items (Qt 6.4 draws no scatter point that has a per-point
  // configuration on log axes), one empty series per source of work for the legend's shapes.
  double longest = 0;
  for (const auto& p : points_) longest = std::max(longest, p.plotted() ? p.gpuTimeNs : 0.0);
  for (WorkSource source : {WorkSource::Counters, WorkSource::Annotation}) {
    bool any = false, ranges = false;
    for (int i = 0; i < static_cast<int>(points_.size()); ++i) {
      const auto& p = points_[static_cast<std::size_t>(i)];
      if (!p.plotted() || p.source != source) continue;
      const QPointF at(*p.intensity(), p.result.achieved_flops_per_s / kTera);
      const double size =
          8 + 26 * std::sqrt(longest > 0 ? p.gpuTimeNs / longest : 0);  // area ~ time
      auto* item = new PointItem(
          i, source == WorkSource::Counters, size,
          [this](int index) { Q_EMIT pointClicked(index); }, c);
      item->setBrush(colorForName(toQString(p.name)));
      item->setToolTip(pointTip(p));
      item->setZValue(10 + (longest > 0 ? 1 - p.gpuTimeNs / longest : 0));  // small points on top
      plotted_.push_back({i, at, size, item});
      any = true;
      ranges = p.isRange;
    }
    if (!any) continue;
    auto* legend = new QScatterSeries;  // no points: a legend entry
    legend->setName(QStringLiteral("%1, %2").arg(
        ranges ? QStringLiteral("NVTX ranges") : QStringLiteral("kernels"), formatSource(source)));
    legend->setMarkerShape(source == WorkSource::Counters
                               ? QScatterSeries::MarkerShapeCircle
                               : QScatterSeries::MarkerShapeRotatedRectangle);
    legend->setMarkerSize(12);
    legend->setColor(QColor(170, 170, 180));
    legend->setBorderColor(QColor(40, 40, 40));
    attach(legend, true);
  }
  ring_ = new QGraphicsEllipseItem(c);
  ring_->setPen(QPen(QColor(20, 20, 20), 2.5));
  ring_->setZValue(30);
  ring_->hide();
  ringLabel_ = new QGraphicsTextItem(c);
  ringLabel_->setZValue(31);
  ringLabel_->hide();
  placeLabels();
  // Again once the chart has laid out the new axes (mapToPosition uses their final geometry).
  QMetaObject::invokeMethod(
      this, [this] { placeLabels(); }, Qt::QueuedConnection);
}

void RooflineChart::highlight(int index) {
  highlighted_ = index;
  if (!ring_) return;
  ring_->hide();
  ringLabel_->hide();
  for (const auto& p : plotted_) {
    if (p.index != index) continue;
    const double r = p.markerSize / 2 + 4;
    ring_->setRect(-r, -r, 2 * r, 2 * r);
    ring_->show();
    ringLabel_->setHtml(
        QStringLiteral(
            "<span style='background-color: rgba(255,255,255,210)'>&nbsp;%1&nbsp;</span>")
            .arg(shortName(points_[static_cast<std::size_t>(index)]).toHtmlEscaped()));
    ringLabel_->show();
  }
  placeLabels();
}

void RooflineChart::placeLabels() {
  if (!xAxis_ || chart()->series().isEmpty()) return;
  QChart* c = chart();
  const QRectF plot = c->plotArea();
  // Points first; each label then takes the first of its candidate places that overlaps no point
  // and no label placed before it (the first candidate when none is free).
  QList<QPolygonF> taken;
  for (const auto& p : plotted_) {
    p.item->setPos(c->mapToPosition(p.position));
    taken << p.item->mapToParent(p.item->boundingRect());
  }
  // The ceilings too, as thin bands: a label may touch its own line only.
  std::vector<QPolygonF> lines;
  for (const auto& l : labels_) {
    const QPointF a = c->mapToPosition(l.from), b = c->mapToPosition(l.to);
    const QPointF d = b - a;
    const double length = std::hypot(d.x(), d.y());
    const QPointF n = length > 0 ? QPointF(-d.y(), d.x()) / length * 1.5 : QPointF(0, 1.5);
    lines.push_back(QPolygonF({a + n, b + n, b - n, a - n}));
  }
  auto isFree = [&](const QPolygonF& shape, std::size_t own) {
    if (!plot.contains(shape.boundingRect())) return false;
    for (const auto& t : taken) {
      if (t.intersects(shape)) return false;
    }
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (i != own && lines[i].intersects(shape)) return false;
    }
    return true;
  };
  for (std::size_t n = 0; n < labels_.size(); ++n) {
    Label& l = labels_[n];
    const QPointF a = c->mapToPosition(l.from), b = c->mapToPosition(l.to);
    const QRectF box = l.item->boundingRect();
    std::vector<std::pair<QPointF, double>> candidates;  // position, rotation
    if (l.slope) {
      // Along the slope, just above it (text reads upwards along the line).
      const double angle = std::atan2(b.y() - a.y(), b.x() - a.x()) * 180.0 / std::numbers::pi;
      const QPointF up = QTransform().rotate(angle).map(QPointF(0, -box.height() - 3));
      for (double f : {0.45, 0.3, 0.6, 0.15, 0.75, 0.05})
        candidates.emplace_back(a + (b - a) * f + up, angle);
    } else {
      // Right-aligned at the right edge above the roof, then below it, then step by step to
      // the left, at last beyond the ridge point (where the roof meets the slope).
      const double right = std::min(b.x(), plot.right()) - box.width() - 6;
      const double left = std::max(a.x() - box.width() - 8, plot.left() + 4);
      for (double x = right; x >= left - 20; x -= 24) {
        candidates.emplace_back(QPointF(std::max(x, left), b.y() - box.height() - 3), 0.0);
        candidates.emplace_back(QPointF(std::max(x, left), b.y() + 3), 0.0);
      }
    }
    QPolygonF shape;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      l.item->setRotation(candidates[i].second);
      l.item->setPos(candidates[i].first);
      shape = l.item->mapToParent(box);
      if (isFree(shape, n)) break;
      if (i + 1 == candidates.size()) {  // none free: the first
        l.item->setRotation(candidates[0].second);
        l.item->setPos(candidates[0].first);
        shape = l.item->mapToParent(box);
      }
    }
    taken << shape;
  }
  if (ringLabel_ && ringLabel_->isVisible()) {
    for (const auto& p : plotted_) {
      if (p.index != highlighted_) continue;
      const QPointF at = c->mapToPosition(p.position);
      ring_->setPos(at);
      const QRectF box = ringLabel_->boundingRect();
      QPointF pos(at.x() + p.markerSize / 2 + 6, at.y() - box.height() / 2);
      if (pos.x() + box.width() > plot.right())
        pos.setX(at.x() - p.markerSize / 2 - 6 - box.width());
      ringLabel_->setPos(pos);
    }
  }
}

QStringList RooflineChart::ceilingLabels() const {
  QStringList out;
  for (const auto& l : labels_) out << l.item->text();
  return out;
}

QString RooflineChart::tooltip(int index) const {
  if (index < 0 || index >= static_cast<int>(points_.size())) return {};
  return pointTip(points_[static_cast<std::size_t>(index)]);
}

QString RooflineChart::pointTip(const RooflinePoint& p) const {
  const auto& r = p.result;
  QString html = QStringLiteral("<b>%1</b><br>%2 · %3<br>")
                     .arg(toQString(p.name).toHtmlEscaped(),
                          p.isRange ? QStringLiteral("NVTX range") : QStringLiteral("kernel"),
                          formatSource(p.source));
  html += QStringLiteral("GPU time %1 · %2 %3<br>")
              .arg(formatDuration(p.gpuTimeNs), formatCount(p.instances),
                   p.isRange ? QStringLiteral("instances") : QStringLiteral("launches"));
  html += QStringLiteral("Arithmetic intensity <b>%1</b> FLOP per DRAM byte (%2 over %3)<br>")
              .arg(formatIntensity(p.intensity().value_or(0)), formatFlops(r.flops),
                   formatBytes(p.work.bytes_at(MemoryLevel::Dram).value_or(0)));
  html +=
      QStringLiteral("Achieved <b>%1</b> of %2 attainable<br>")
          .arg(formatFlopRate(r.achieved_flops_per_s), formatFlopRate(r.attainable_flops_per_s));
  html += QStringLiteral("Bound <b>%1</b>%2 · efficiency <b>%3</b>")
              .arg(formatBound(r.bound),
                   r.complete ? QString() : QStringLiteral(" (some work has no ceiling)"),
                   formatPercent(r.efficiency * 100));
  if (p.projectedNs)
    html += QStringLiteral("<br>Projected at these peaks: %1").arg(formatDuration(*p.projectedNs));
  return html;
}


}  // namespace fuselens::gui
