#include "views/FlameGraphWidget.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>

#include "Format.h"

namespace fuselens::gui {
namespace {

// Same colours as the HTML report's flame graph (export/ExportHtmlFlame.cpp): the user's frames
// warm, folded framework frames blue, GPU operations green, rows the analysis adds violet.
QColor fillOf(const analyzer::CctRow& row) {
  using Kind = analyzer::CctRow::Kind;
  switch (row.kind) {
    case Kind::GpuOperation:
      return QColor(0x7f, 0xbf, 0x7b);
    case Kind::BackwardOp:
    case Kind::BackwardThread:
    case Kind::Phase:
      return QColor(0xb2, 0xab, 0xd2);
    case Kind::Root:
      return QColor(0xd9, 0xd9, 0xd9);
    default:
      break;
  }
  return !row.label.empty() && row.label.front() == '[' ? QColor(0x9e, 0xca, 0xe1)
                                                        : QColor(0xfd, 0xb8, 0x63);
}

}  // namespace

FlameGraphWidget::FlameGraphWidget(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setFocusPolicy(Qt::StrongFocus);
  setBackgroundRole(QPalette::Base);
  setAutoFillBackground(true);
}

void FlameGraphWidget::setReport(const analyzer::CctReport& report) {
  report_ = report;
  root_ = 0;
  layoutBoxes();
}

void FlameGraphWidget::zoomTo(int row) {
  if (row < 0 || static_cast<std::size_t>(row) >= report_.rows.size()) row = 0;
  if (row == root_) return;
  root_ = row;
  layoutBoxes();
  Q_EMIT zoomChanged(root_);
}

void FlameGraphWidget::layoutBoxes() {
  // Boxes under half a pixel of a 4K-wide window are not drawn.
  boxes_ = analyzer::flame_layout(report_, root_, 1.0 / 8000.0);
  levels_ = 0;
  for (const auto& b : boxes_) levels_ = std::max(levels_, b.level + 1);
  setMinimumHeight((levels_ + 1) * kBoxHeight);
  updateGeometry();
  update();
}

QSize FlameGraphWidget::sizeHint() const {
  return {800, std::max(200, (levels_ + 1) * kBoxHeight)};
}

int FlameGraphWidget::rowAt(const QPoint& pos) const {
  if (width() <= 0) return -1;
  const int level = pos.y() / kBoxHeight;
  const double x = static_cast<double>(pos.x()) / width();
  for (const auto& b : boxes_) {
    if (b.level == level && x >= b.x0 && x < b.x1) return b.row;
  }
  return -1;
}

QString FlameGraphWidget::valueText(std::int64_t value) const {
  switch (report_.metric) {
    case analyzer::CctMetric::GpuTime:
      return formatDuration(static_cast<double>(value));
    case analyzer::CctMetric::Bytes:
      return formatBytes(static_cast<double>(value));
    case analyzer::CctMetric::Launches:
      break;
  }
  return formatCount(value) + QStringLiteral(" launches");
}

QString FlameGraphWidget::toolTipFor(int row) const {
  if (row < 0 || static_cast<std::size_t>(row) >= report_.rows.size()) return {};
  const auto& r = report_.rows[static_cast<std::size_t>(row)];
  const std::int64_t value = r.inclusive.get(report_.metric);
  const std::int64_t total = report_.rows.front().inclusive.get(report_.metric);
  const double percent =
      total > 0 ? 100.0 * static_cast<double>(value) / static_cast<double>(total) : 0.0;
  QString text = toQString(r.label) + QStringLiteral("\n") + valueText(value) +
                 QStringLiteral(" (") + formatPercent(percent) + QStringLiteral(" of all)");
  if (!r.file.empty()) text += QStringLiteral("\n%1:%2").arg(toQString(r.file)).arg(r.line);
  return text;
}

void FlameGraphWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  if (boxes_.empty()) {
    p.drawText(rect(), Qt::AlignCenter, tr("No GPU work to draw"));
    return;
  }
  const double w = width();
  const QFontMetrics metrics(font());
  for (const auto& b : boxes_) {
    const auto& row = report_.rows[static_cast<std::size_t>(b.row)];
    const QRectF box(b.x0 * w, b.level * kBoxHeight, (b.x1 - b.x0) * w, kBoxHeight - 1);
    p.fillRect(box, fillOf(row));
    p.setPen(palette().color(QPalette::Base));
    p.drawLine(box.topRight(), box.bottomRight());
    if (box.width() < 24) continue;
    p.setPen(Qt::black);
    const QRectF text = box.adjusted(3, 0, -3, 0);
    p.drawText(
        text, Qt::AlignVCenter | Qt::AlignLeft,
        metrics.elidedText(toQString(row.label), Qt::ElideRight, static_cast<int>(text.width())));
  }
}

void FlameGraphWidget::mousePressEvent(QMouseEvent* event) {
  if (event->button() == Qt::RightButton) {
    zoomTo(report_.rows.empty() ? 0 : report_.rows[static_cast<std::size_t>(root_)].parent);
    return;
  }
  const int row = rowAt(event->position().toPoint());
  if (row < 0) return;
  // The top box zooms out one level; any other zooms into itself.
  zoomTo(row == root_ ? report_.rows[static_cast<std::size_t>(row)].parent : row);
}

void FlameGraphWidget::keyPressEvent(QKeyEvent* event) {
  if (event->key() == Qt::Key_Escape && root_ != 0) {
    zoomTo(report_.rows[static_cast<std::size_t>(root_)].parent);
    return;
  }
  QWidget::keyPressEvent(event);
}

bool FlameGraphWidget::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    const QString text = toolTipFor(rowAt(help->pos()));
    if (text.isEmpty()) {
      QToolTip::hideText();
      event->ignore();
    } else {
      QToolTip::showText(help->globalPos(), text, this);
    }
    return true;
  }
  return QWidget::event(event);
}

}  // namespace fuselens::gui
