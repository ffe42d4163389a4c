#include "views/StepChart.h"

#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

#include "Format.h"

namespace fuselens::gui {

namespace {
const QColor kWall(0x2f, 0x5f, 0x9e);
const QColor kBusy(0xe0, 0x7b, 0x22);
const QColor kSteady(0xe3, 0xf1, 0xe1);
const QColor kWindow(0x4a, 0x6f, 0x96);
const QColor kOutlier(0xc6, 0x28, 0x28);
}  // namespace

StepChart::StepChart(QWidget* parent) : QWidget(parent) { setMinimumHeight(180); }

void StepChart::setReport(std::shared_ptr<const analyzer::StepReport> report,
                          std::shared_ptr<const analyzer::Window> window) {
  report_ = std::move(report);
  window_ = std::move(window);
  update();
}

void StepChart::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  p.fillRect(rect(), Qt::white);
  if (!report_ || report_->steps.empty()) {
    p.setPen(Qt::darkGray);
    p.drawText(rect(), Qt::AlignCenter,
               report_ ? QStringLiteral("No steps in this capture") : QStringLiteral("No steps"));
    return;
  }
  const auto& steps = report_->steps;
  const int n = static_cast<int>(steps.size());
  // The scale fits the steady steps: a warm-up step of a second would flatten the rest. Taller
  // steps are cut at the top and labelled with their time.
  double top = 0;
  const int fitFrom = report_->steady_first > 0 ? report_->steady_first : 1;
  for (const auto& s : steps) {
    if (s.index >= fitFrom) top = std::max(top, static_cast<double>(s.wall_ns()));
  }
  if (top <= 0) {
    for (const auto& s : steps) top = std::max(top, static_cast<double>(s.wall_ns()));
  }
  top = std::max(top * 1.15, 1.0);
  const QRect area = rect().adjusted(70, 28, -16, -42);
  const auto xOf = [&](double index) {  // step index (1-based) to the centre of its slot
    return area.left() + (index - 0.5) * area.width() / n;
  };
  const auto yOf = [&](double ns) {
    return area.bottom() - std::min(ns, top) * area.height() / top;
  };
  const double slot = static_cast<double>(area.width()) / n;

  // The steady window, and the steps of the current window under the axis.
  if (report_->steady_first > 0) {
    p.fillRect(QRectF(xOf(report_->steady_first) - slot / 2, area.top(),
                      (n - report_->steady_first + 1) * slot, area.height()),
               kSteady);
  }
  if (window_ && window_->first_step > 0) {
    p.fillRect(QRectF(xOf(window_->first_step) - slot / 2, area.bottom() + 3,
                      (window_->last_step - window_->first_step + 1) * slot, 5),
               kWindow);
  }
  // Axes and grid.
  p.setPen(QColor(0xdd, 0xe0, 0xe5));
  QFont small = font();
  small.setPointSizeF(std::max(7.0, small.pointSizeF() - 1));
  p.setFont(small);
  for (int k = 0; k <= 4; ++k) {
    const double ns = top * k / 4;
    const double y = yOf(ns);
    p.setPen(QColor(0xdd, 0xe0, 0xe5));
    p.drawLine(QPointF(area.left(), y), QPointF(area.right(), y));
    p.setPen(QColor(0x55, 0x5b, 0x63));
    p.drawText(QRectF(0, y - 8, area.left() - 6, 16), Qt::AlignRight | Qt::AlignVCenter,
               formatDuration(ns));
  }
  const int every = std::max(1, static_cast<int>(std::ceil(40.0 / slot)));
  for (int i = 1; i <= n; ++i) {
    if (i != 1 && i % every != 0) continue;
    p.drawText(QRectF(xOf(i) - 20, area.bottom() + 9, 40, 14), Qt::AlignCenter, QString::number(i));
  }
  p.drawText(QRectF(area.left(), area.bottom() + 24, area.width(), 16), Qt::AlignCenter,
             QStringLiteral("step"));
  // Wall and GPU busy per step.
  const auto line = [&](auto value, const QColor& color) {
    QPainterPath path;
    for (int i = 0; i < n; ++i) {
      const QPointF pt(xOf(i + 1),
                       yOf(static_cast<double>(value(steps[static_cast<std::size_t>(i)]))));
      if (i == 0) {
        path.moveTo(pt);
      } else {
        path.lineTo(pt);
      }
    }
    p.setPen(QPen(color, 1.6));
    p.setBrush(Qt::NoBrush);
    p.drawPath(path);
  };
  line([](const analyzer::Step& s) { return s.wall_ns(); }, kWall);
  line([](const analyzer::Step& s) { return s.gpu_busy_ns; }, kBusy);
  p.setPen(QColor(0x30, 0x34, 0x3a));
  int cut = 0;  // the labels of cut steps, one under the other
  for (const auto& s : steps) {
    if (static_cast<double>(s.wall_ns()) <= top || cut > 3) continue;
    p.drawText(QRectF(xOf(s.index) + 6, area.top() + 14 * cut, 160, 14),
               Qt::AlignLeft | Qt::AlignVCenter,
               QStringLiteral("step %1: %2 (cut)")
                   .arg(s.index)
                   .arg(formatDuration(static_cast<double>(s.wall_ns()))));
    ++cut;
  }
  p.setPen(QPen(kOutlier, 1.6));
  for (const auto& o : report_->outliers) {
    if (o.index < 1 || o.index > n) continue;
    const auto& s = steps[static_cast<std::size_t>(o.index - 1)];
    p.drawEllipse(QPointF(xOf(o.index), yOf(static_cast<double>(s.wall_ns()))), 5, 5);
  }
  // Legend.
  int x = area.left();
  const auto legend = [&](const QColor& color, const QString& text, bool box) {
    if (box) {
      p.fillRect(QRect(x, 9, 14, 10), color);
    } else {
      p.setPen(QPen(color, 2));
      p.drawLine(x, 14, x + 14, 14);
    }
    p.setPen(QColor(0x30, 0x34, 0x3a));
    const int w = p.fontMetrics().horizontalAdvance(text);
    p.drawText(QRect(x + 18, 4, w + 4, 20), Qt::AlignLeft | Qt::AlignVCenter, text);
    x += w + 36;
  };
  legend(kWall, QStringLiteral("wall time"), false);
  legend(kBusy, QStringLiteral("GPU busy"), false);
  legend(kSteady, QStringLiteral("steady steps"), true);
  legend(kWindow, QStringLiteral("window"), true);
  p.setPen(QPen(kOutlier, 1.6));
  p.setBrush(Qt::NoBrush);
  p.drawEllipse(QPointF(x + 7, 14), 5, 5);
  p.setPen(QColor(0x30, 0x34, 0x3a));
  p.drawText(QRect(x + 18, 4, 80, 20), Qt::AlignLeft | Qt::AlignVCenter, QStringLiteral("outlier"));
}

}  // namespace fuselens::gui
