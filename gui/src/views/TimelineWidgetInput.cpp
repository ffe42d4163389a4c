// TimelineWidget's input: wheel, mouse (pan, select, Shift+drag range, drag-to-zoom on the
// ruler) and keys. Drawing and layout are in TimelineWidget.cpp.

#include <QKeyEvent>
#include <QMouseEvent>
#include <QScrollBar>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

#include "views/TimelineWidget.h"

namespace fuselens::gui {

void TimelineWidget::resizeEvent(QResizeEvent*) {
  const int w = vbar_->sizeHint().width();
  vbar_->setGeometry(width() - w, kRulerHeight, w, height() - kRulerHeight);
  updateScrollBar();
}

void TimelineWidget::wheelEvent(QWheelEvent* e) {
  const int delta = e->angleDelta().y();
  if (delta == 0) return;
  if (e->modifiers() & Qt::ShiftModifier || e->position().x() < kGutterWidth) {
    vbar_->setValue(vbar_->value() - delta / 2);
  } else {
    // Ctrl: the fine step; otherwise halve the span per notch (a capture to one step in a few).
    const double perNotch = (e->modifiers() & Qt::ControlModifier) ? kFineWheelZoom : kWheelZoom;
    zoom(std::pow(perNotch, delta / 120.0), e->position().x());
  }
  e->accept();
}

void TimelineWidget::zoomToRange(double startNs, double endNs) {
  if (endNs < startNs) std::swap(startNs, endNs);
  setView(startNs, endNs);
}

void TimelineWidget::mousePressEvent(QMouseEvent* e) {
  if (e->button() != Qt::LeftButton) return;
  pressPos_ = e->pos();
  pressViewStart_ = viewStart_;
  dragging_ = false;
  // Drag on the ruler (or Ctrl+drag over the lanes): a rubber band to zoom to.
  const bool onRuler = e->pos().y() < kRulerHeight && e->pos().x() >= kGutterWidth;
  zoomSelecting_ =
      data_ &&
      (onRuler || ((e->modifiers() & Qt::ControlModifier) && timeArea().contains(e->pos())));
  if (zoomSelecting_) {
    zoomStartNs_ = zoomEndNs_ = nsAt(e->pos().x(), timeArea());
    rangeSelecting_ = false;
    return;
  }
  rangeSelecting_ = (e->modifiers() & Qt::ShiftModifier) && data_ && timeArea().contains(e->pos());
  if (rangeSelecting_) rangeStartNs_ = rangeEndNs_ = nsAt(e->pos().x(), timeArea());
}

void TimelineWidget::mouseMoveEvent(QMouseEvent* e) {
  if (!(e->buttons() & Qt::LeftButton)) return;
  if (zoomSelecting_) {
    zoomEndNs_ = nsAt(e->pos().x(), timeArea());
    update();
    return;
  }
  if (rangeSelecting_) {
    rangeEndNs_ = nsAt(e->pos().x(), timeArea());
    update();
    return;
  }
  const QPoint d = e->pos() - pressPos_;
  if (!dragging_ && d.manhattanLength() < 4) return;
  dragging_ = true;
  setCursor(Qt::ClosedHandCursor);
  const double span = viewEnd_ - viewStart_;
  const double start = pressViewStart_ - d.x() * span / timeArea().width();
  setView(start, start + span);
  vbar_->setValue(vbar_->value() - (e->pos().y() - pressPos_.y()) / 4);
}

void TimelineWidget::mouseReleaseEvent(QMouseEvent* e) {
  if (e->button() != Qt::LeftButton) return;
  unsetCursor();
  if (zoomSelecting_) {
    zoomSelecting_ = false;
    zoomEndNs_ = nsAt(e->pos().x(), timeArea());
    if (std::abs(e->pos().x() - pressPos_.x()) >= 4) {
      zoomToRange(zoomStartNs_, zoomEndNs_);
    } else {
      update();
    }
    return;
  }
  if (rangeSelecting_) {
    rangeSelecting_ = false;
    rangeEndNs_ = nsAt(e->pos().x(), timeArea());
    if (std::abs(e->pos().x() - pressPos_.x()) >= 4) {
      selectTimeRange(rangeStartNs_, rangeEndNs_);
      rangeSelecting_ = false;
    }
    update();
    return;
  }
  if (!dragging_) select(itemAt(e->pos()));
  dragging_ = false;
}

void TimelineWidget::mouseDoubleClickEvent(QMouseEvent* e) {
  if (e->button() != Qt::LeftButton) return;
  if (const int index = stepAt(e->pos())) Q_EMIT stepActivated(index);
}

void TimelineWidget::keyPressEvent(QKeyEvent* e) {
  const double center = timeArea().center().x();
  switch (e->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
      zoom(0.5, center);
      break;
    case Qt::Key_Minus:
      zoom(2.0, center);
      break;
    case Qt::Key_Left:
      pan(-timeArea().width() / 8.0);
      break;
    case Qt::Key_Right:
      pan(timeArea().width() / 8.0);
      break;
    case Qt::Key_Up:
      vbar_->setValue(vbar_->value() - kRowHeight);
      break;
    case Qt::Key_Down:
      vbar_->setValue(vbar_->value() + kRowHeight);
      break;
    case Qt::Key_PageUp:
      vbar_->setValue(vbar_->value() - vbar_->pageStep());
      break;
    case Qt::Key_PageDown:
      vbar_->setValue(vbar_->value() + vbar_->pageStep());
      break;
    case Qt::Key_Home:
    case Qt::Key_0:
      zoomAll();
      break;
    case Qt::Key_Escape:
      select(nullptr);
      break;
    default:
      QWidget::keyPressEvent(e);
  }
}

}  // namespace fuselens::gui
