#include "views/TimelineWidget.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QPainter>
#include <QPainterPath>
#include <QRegularExpression>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "Format.h"

namespace fuselens::gui {

using analyzer::LaneKind;
using analyzer::TimelineItem;
using analyzer::TimelineItemKind;

namespace {

const QColor kBackground(0xfb, 0xfb, 0xfc);
const QColor kGutter(0xee, 0xf0, 0xf3);
const QColor kGrid(0xdd, 0xe0, 0xe5);
const QColor kSelection(0x10, 0x10, 0x10);
const QColor kHighlight(0xf5, 0xa6, 0x23);  // the search's matches (amber)

QColor mergedColor(LaneKind kind) {
  switch (kind) {
    case LaneKind::Gpu:
      return QColor(0x4a, 0x6f, 0x96);
    case LaneKind::Nvtx:
      return QColor(0x8a, 0x72, 0xb8);
    case LaneKind::Api:
      return QColor(0x7b, 0x86, 0x92);
  }
  return Qt::gray;
}

/// A ruler label: the duration with trailing zeros removed ("200 ms", "1.5 s").
QString rulerLabel(double ns) {
  QString text = formatDuration(ns);
  static const QRegularExpression zeros(QStringLiteral("\\.?0+(?= )"));
  if (text.contains(QLatin1Char('.'))) text.replace(zeros, QString());
  return text;
}

/// 1-2-5 steps: the smallest at least `minimum` ns.
double niceStep(double minimum) {
  double step = 1;
  while (step * 10 <= minimum) step *= 10;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (step * m >= minimum) return step * m;
  }
  return step * 10;
}

}  // namespace

TimelineWidget::TimelineWidget(QWidget* parent) : QWidget(parent) {
  setFocusPolicy(Qt::StrongFocus);
  setMouseTracking(true);
  setAttribute(Qt::WA_OpaquePaintEvent);
  setMinimumSize(400, 200);
  vbar_ = new QScrollBar(Qt::Vertical, this);
  connect(vbar_, &QScrollBar::valueChanged, this, [this](int value) {
    scrollY_ = value;
    update();
  });
}

const analyzer::Timeline* TimelineWidget::timeline() const { return data_ ? &tl() : nullptr; }

void TimelineWidget::setCapture(const CaptureDataPtr& capture) {
  data_ = capture;
  selected_ = nullptr;
  selectedOwner_.reset();
  highlighted_.clear();
  cache_.clear();
  window_.reset();
  reader_.reset();
  lodRows_.clear();
  lodMode_ = false;
  if (data_ && data_->timelineLod) {
    // Each Gpu and Api row's stored level of detail, by lane and depth.
    const auto& rows = data_->timelineLod->rows;
    for (const auto& lane : data_->timeline.lanes) {
      auto& of = lodRows_.emplace_back(lane.rows.size(), -1);
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto& r = rows[i];
        const bool match = lane.kind == LaneKind::Gpu
                               ? r.kind == LaneKind::Gpu && r.device_id == lane.device_id &&
                                     r.stream_id == lane.stream_id && r.pid == lane.pid
                               : lane.kind == LaneKind::Api && r.kind == LaneKind::Api &&
                                     r.pid == lane.pid && r.tid == lane.tid;
        if (match && r.depth < of.size()) of[r.depth] = static_cast<int>(i);
      }
    }
    lodMode_ = true;
  }
  takeNames();
  layoutTracks();
  zoomAll();
}

void TimelineWidget::takeNames() {
  names_.clear();
  colors_.clear();
  if (!data_) return;
  const auto& t = tl();
  names_.reserve(t.names.size());
  colors_.reserve(t.names.size());
  for (const auto& n : t.names) {
    names_.push_back(toQString(n));
    colors_.push_back(colorForName(names_.back()));
  }
}

void TimelineWidget::setEmptyText(const QString& text) {
  emptyText_ = text;
  if (!data_) update();
}

void TimelineWidget::layoutTracks() {
  tracks_.clear();
  int y = 0;
  if (data_) {
    const auto& t = tl();
    auto addLane = [&](int laneIndex) {
      const auto& lane = t.lanes[static_cast<std::size_t>(laneIndex)];
      for (std::size_t r = 0; r < lane.rows.size(); ++r) {
        tracks_.push_back({laneIndex, static_cast<int>(r), -1, y, kRowHeight, r == 0});
        y += kRowHeight;
      }
      y += kLaneGap;
    };
    if (stepLaneItemCount() > 0) {
      tracks_.push_back({-2, 0, -1, y, kRowHeight, true});
      y += kRowHeight + kLaneGap;
    }
    const int lanes = static_cast<int>(t.lanes.size());
    const auto addCounters = [&] {
      for (std::size_t c = 0; c < t.counters.size(); ++c) {
        tracks_.push_back({-1, 0, static_cast<int>(c), y, kCounterHeight, true});
        y += kCounterHeight + kLaneGap;
      }
    };
    if (t.has_ranks || t.several_processes) {
      // The analyzer orders lanes by process (rank first): a header above each group, the
      // device-memory counters (per device, summed over processes) after the groups.
      for (int l = 0; l < lanes; ++l) {
        if (l == 0 || groupKey(l) != groupKey(l - 1)) {
          tracks_.push_back({-3, 0, l, y, kGroupHeaderHeight, true});
          y += kGroupHeaderHeight + kLaneGap / 2;
        }
        addLane(l);
      }
      addCounters();
    } else {
      for (int l = 0; l < lanes; ++l) {
        if (t.lanes[static_cast<std::size_t>(l)].kind == LaneKind::Gpu) addLane(l);
      }
      addCounters();
      for (int l = 0; l < lanes; ++l) {
        if (t.lanes[static_cast<std::size_t>(l)].kind != LaneKind::Gpu) addLane(l);
      }
    }
  }
  contentHeight_ = y;
  updateScrollBar();
}

QStringList TimelineWidget::trackTitles() const {
  QStringList out;
  if (!data_) return out;
  const auto& t = tl();
  for (const auto& track : tracks_) {
    if (track.lane == -2) {
      out << QStringLiteral("Steps (%1)").arg(stepLaneItemCount());
    } else if (track.lane == -3) {
      out << groupTitle(track.counter);  // the group's first lane
    } else if (track.lane >= 0) {
      out << (track.firstOfLane ? toQString(t.lanes[static_cast<std::size_t>(track.lane)].title)
                                : QString());
    } else {
      out << toQString(t.counters[static_cast<std::size_t>(track.counter)].title);
    }
  }
  return out;
}

int TimelineWidget::rowCenterY(int lane, int row) const {
  for (const auto& track : tracks_) {
    if (track.lane == lane && track.row == row) {
      return kRulerHeight + track.y - scrollY_ + track.height / 2;
    }
  }
  return -1;
}

std::int64_t TimelineWidget::groupKey(int lane) const {
  const auto& l = tl().lanes[static_cast<std::size_t>(lane)];
  if (tl().has_ranks && l.rank >= 0) return l.rank;
  if (tl().has_ranks) return -1;  // processes without a rank: one group
  return -2 - static_cast<std::int64_t>(l.pid);
}

QString TimelineWidget::groupTitle(int lane) const {
  const auto& t = tl();
  const auto& l = t.lanes[static_cast<std::size_t>(lane)];
  if (t.has_ranks) {
    return l.rank >= 0 ? QStringLiteral("Rank %1").arg(l.rank) : QStringLiteral("Without rank");
  }
  return QStringLiteral("Process %1").arg(l.pid);
}

const analyzer::StepReport* TimelineWidget::steps() const {
  return data_ && data_->has(Analysis::Steps) && data_->steps ? &*data_->steps : nullptr;
}

int TimelineWidget::stepLaneItemCount() const {
  const auto* s = steps();
  return s ? static_cast<int>(s->steps.size()) : 0;
}

void TimelineWidget::stepsChanged() {
  layoutTracks();
  update();
}

int TimelineWidget::stepAt(const QPoint& pos) const {
  const Track* track = trackAt(pos.y());
  const QRect area = timeArea();
  if (!track || track->lane != -2 || !area.contains(pos)) return 0;
  const double t = nsAt(pos.x(), area);
  for (const auto& step : steps()->steps) {
    if (t >= static_cast<double>(step.start_ns) && t < static_cast<double>(step.end_ns)) {
      return step.index;
    }
  }
  return 0;
}

void TimelineWidget::selectTimeRange(double startNs, double endNs) {
  if (endNs < startNs) std::swap(startNs, endNs);
  rangeStartNs_ = startNs;
  rangeEndNs_ = endNs;
  update();
  Q_EMIT timeRangeSelected(static_cast<qint64>(std::floor(startNs)),
                           static_cast<qint64>(std::ceil(endNs)));
}

void TimelineWidget::updateScrollBar() {
  const int visible = height() - kRulerHeight;
  vbar_->setRange(0, std::max(0, contentHeight_ - visible));
  vbar_->setPageStep(std::max(1, visible));
  vbar_->setSingleStep(kRowHeight);
  vbar_->setVisible(contentHeight_ > visible);
}

QRect TimelineWidget::timeArea() const {
  const int right = vbar_->isVisible() ? vbar_->width() : 0;
  return QRect(kGutterWidth, kRulerHeight, std::max(1, width() - kGutterWidth - right),
               std::max(1, height() - kRulerHeight));
}

double TimelineWidget::xOf(double ns, const QRect& area) const {
  return area.left() + (ns - viewStart_) * area.width() / (viewEnd_ - viewStart_);
}

double TimelineWidget::nsAt(double x, const QRect& area) const {
  return viewStart_ + (x - area.left()) * (viewEnd_ - viewStart_) / area.width();
}

void TimelineWidget::setView(double startNs, double endNs) {
  if (!(endNs > startNs)) endNs = startNs + 1;
  const double minSpan = 10;  // 10 ns across the widget is as deep as it goes
  if (endNs - startNs < minSpan) {
    const double mid = (startNs + endNs) / 2;
    startNs = mid - minSpan / 2;
    endNs = mid + minSpan / 2;
  }
  viewStart_ = startNs;
  viewEnd_ = endNs;
  updateWindow();
  update();
  Q_EMIT viewChanged();
}

void TimelineWidget::zoomAll() {
  const auto* t = timeline();
  if (!t || t->end_ns <= t->begin_ns) {
    setView(0, 1000);
    return;
  }
  const double margin = static_cast<double>(t->end_ns - t->begin_ns) * 0.01;
  setView(static_cast<double>(t->begin_ns) - margin, static_cast<double>(t->end_ns) + margin);
}

void TimelineWidget::zoom(double factor, double anchorX) {
  const QRect area = timeArea();
  const double anchor = nsAt(anchorX, area);
  setView(anchor - (anchor - viewStart_) * factor, anchor + (viewEnd_ - anchor) * factor);
}

void TimelineWidget::pan(double pixels) {
  const double ns = pixels * (viewEnd_ - viewStart_) / timeArea().width();
  setView(viewStart_ + ns, viewEnd_ + ns);
}

void TimelineWidget::reveal(std::int64_t startNs, std::int64_t endNs) {
  // In double: a hostile capture's times may be far apart (no int64 overflow).
  const double span = std::max(static_cast<double>(endNs) - static_cast<double>(startNs), 1000.0);
  setView(static_cast<double>(startNs) - span, static_cast<double>(endNs) + span);
}

void TimelineWidget::select(const TimelineItem* item) {
  selected_ = item;
  selectedOwner_ = item ? window_ : nullptr;
  update();
  Q_EMIT itemSelected(item);
}

const TimelineWidget::Track* TimelineWidget::trackAt(int y) const {
  const int content = y - kRulerHeight + scrollY_;
  for (const auto& track : tracks_) {
    if (content >= track.y && content < track.y + track.height) return &track;
  }
  return nullptr;
}

const TimelineItem* TimelineWidget::itemAt(const QPoint& pos) const {
  const Track* track = trackAt(pos.y());
  const QRect area = timeArea();
  if (!track || track->lane < 0 || !area.contains(pos)) return nullptr;
  const auto& row = timeline()
                        ->lanes[static_cast<std::size_t>(track->lane)]
                        .rows[static_cast<std::size_t>(track->row)];
  const double t = nsAt(pos.x(), area);
  const double tolerance = 2.0 * (viewEnd_ - viewStart_) / area.width();
  std::size_t i = analyzer::first_visible(row, static_cast<std::int64_t>(t - tolerance));
  const TimelineItem* best = nullptr;
  double bestDistance = tolerance;
  for (; i < row.items.size() && static_cast<double>(row.items[i].start_ns) <= t + tolerance; ++i) {
    const auto& item = row.items[i];
    const double distance = t < static_cast<double>(item.start_ns)
                                ? static_cast<double>(item.start_ns) - t
                                : std::max(0.0, t - static_cast<double>(item.end_ns));
    if (distance <= bestDistance) {
      best = &item;
      bestDistance = distance;
      if (distance == 0) break;
    }
  }
  return best;
}

QColor TimelineWidget::itemColor(const TimelineItem& item) const {
  switch (item.kind) {
    case TimelineItemKind::Memcpy:
      return QColor(0xe8, 0x8a, 0x3c);
    case TimelineItemKind::Memset:
      return QColor(0xd4, 0xb1, 0x2f);
    case TimelineItemKind::Api:
      return tl().api_calls[item.detail].driver ? QColor(0xb8, 0xc4, 0xa8)
                                                : QColor(0xa9, 0xbc, 0xd6);
    case TimelineItemKind::Nvtx:
      return colors_[item.name].lighter(118);
    case TimelineItemKind::Kernel:
      break;
  }
  return colors_[item.name];
}

void TimelineWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  paintTimeline(p, rect());
}

void TimelineWidget::paintTimeline(QPainter& p, const QRect& target) {
  stats_ = {};
  p.fillRect(target, kBackground);
  const QRect area = timeArea().translated(target.topLeft());
  p.fillRect(QRect(target.left(), target.top(), kGutterWidth, target.height()), kGutter);
  if (!data_) {
    p.setPen(Qt::darkGray);
    p.drawText(target.adjusted(kGutterWidth, 0, 0, 0), Qt::AlignCenter | Qt::TextWordWrap,
               emptyText_.isEmpty() ? QStringLiteral("No capture open") : emptyText_);
    return;
  }
  updateWindow();
  const auto& t = tl();
  QFont small = font();
  small.setPointSizeF(std::max(7.0, small.pointSizeF() - 1));
  p.setFont(small);

  // Tracks, clipped below the ruler.
  p.save();
  p.setClipRect(QRect(target.left(), area.top(), target.width(), area.height()));
  for (const auto& track : tracks_) {
    const int y = area.top() + track.y - scrollY_;
    if (y + track.height < area.top() || y > area.bottom()) continue;
    QString title;
    if (track.lane == -2) {
      title = QStringLiteral("Steps (%1)").arg(stepLaneItemCount());
      p.save();
      p.setClipRect(area.intersected(QRect(area.left(), y, area.width(), track.height)));
      paintSteps(p, area, y + 1, track.height - 2);
      p.restore();
    } else if (track.lane == -3) {
      // A rank's group: a band across the widget with its name.
      p.fillRect(QRect(target.left(), y, target.width(), track.height), QColor(0xe3, 0xe8, 0xef));
      p.setPen(QColor(0x9a, 0xa5, 0xb4));
      p.drawLine(target.left(), y, target.right(), y);
      QFont bold = p.font();
      bold.setBold(true);
      p.save();
      p.setFont(bold);
      p.setPen(QColor(0x22, 0x2a, 0x36));
      p.drawText(QRect(target.left() + 6, y, target.width() - 12, track.height),
                 Qt::AlignLeft | Qt::AlignVCenter, groupTitle(track.counter));
      p.restore();
    } else if (track.lane >= 0) {
      const auto& lane = t.lanes[static_cast<std::size_t>(track.lane)];
      if (track.firstOfLane) {
        title = toQString(lane.title);
        p.setPen(kGrid);
        p.drawLine(target.left(), y - kLaneGap / 2, target.right(), y - kLaneGap / 2);
      }
      p.save();
      p.setClipRect(area.intersected(QRect(area.left(), y, area.width(), track.height)));
      if (const auto* stored = lodMode_ ? lodRow(track.lane, track.row) : nullptr) {
        paintLodRow(p, lane.kind, *stored, area, y + 1, track.height - 2);
      } else {
        paintRow(p, lane, lane.rows[static_cast<std::size_t>(track.row)], area, y + 1,
                 track.height - 2);
      }
      p.restore();
    } else {
      const auto& counter = t.counters[static_cast<std::size_t>(track.counter)];
      title = toQString(counter.title) + QStringLiteral("\nmax ") +
              formatBytes(static_cast<double>(counter.max_value));
      p.setPen(kGrid);
      p.drawLine(target.left(), y - kLaneGap / 2, target.right(), y - kLaneGap / 2);
      p.save();
      p.setClipRect(area.intersected(QRect(area.left(), y, area.width(), track.height)));
      paintCounter(p, counter, area, y + 2, track.height - 4);
      p.restore();
    }
    if (!title.isEmpty()) {
      p.setPen(QColor(0x30, 0x34, 0x3a));
      p.drawText(QRect(target.left() + 6, y, kGutterWidth - 10,
                       track.lane >= 0 ? kRowHeight : track.height),
                 Qt::AlignLeft | Qt::AlignVCenter, title);
    }
  }
  p.restore();
  paintRuler(p, area, target.top());
  paintWindow(p, area, target.top());
}

void TimelineWidget::paintSteps(QPainter& p, const QRect& area, int y, int h) {
  const auto* report = steps();
  if (!report) return;
  std::vector<bool> outlier(report->steps.size() + 1, false);
  for (const auto& o : report->outliers) {
    if (o.index >= 1 && o.index < static_cast<int>(outlier.size()))
      outlier[static_cast<std::size_t>(o.index)] = true;
  }
  const QFontMetrics metrics = p.fontMetrics();
  for (const auto& step : report->steps) {
    const double a = xOf(static_cast<double>(step.start_ns), area);
    const double b = xOf(static_cast<double>(step.end_ns), area);
    if (b < area.left() || a > area.right()) continue;
    const QColor color = outlier[static_cast<std::size_t>(step.index)] ? QColor(0xe5, 0x73, 0x73)
                         : report->steady_first > 0 && step.index >= report->steady_first
                             ? QColor(0x81, 0xc7, 0x84)
                             : QColor(0xbd, 0xbd, 0xbd);
    const QRectF r(
        std::max(a, area.left() - 2.0), y,
        std::max(1.0, std::min(b, area.right() + 2.0) - std::max(a, area.left() - 2.0) - 1), h);
    p.fillRect(r, color);
    const QString label = QString::number(step.index);
    if (r.width() > metrics.horizontalAdvance(label) + 4) {
      p.setPen(QColor(0x1c, 0x1e, 0x22));
      p.drawText(r, Qt::AlignCenter, label);
    }
    ++stats_.items;
  }
}

void TimelineWidget::paintWindow(QPainter& p, const QRect& area, int top) {
  const QColor band(0x4a, 0x6f, 0x96);
  if (data_->window && !data_->window->whole) {
    // Shade what lies outside the window; mark its intervals on the ruler.
    const QColor outside(0x60, 0x64, 0x6a, 46);
    double from = area.left();
    for (const auto& i : data_->window->intervals) {
      const double a = std::clamp(xOf(static_cast<double>(i.start_ns), area), double(area.left()),
                                  double(area.right()));
      const double b = std::clamp(xOf(static_cast<double>(i.end_ns), area), double(area.left()),
                                  double(area.right()));
      if (a > from) p.fillRect(QRectF(from, area.top(), a - from, area.height()), outside);
      p.fillRect(QRectF(a, top + kRulerHeight - 4, std::max(1.0, b - a), 4), band);
      from = std::max(from, b);
    }
    if (from < area.right())
      p.fillRect(QRectF(from, area.top(), area.right() - from, area.height()), outside);
  }
  if (zoomSelecting_) {  // the rubber band of a drag-to-zoom, across ruler and lanes
    const double a = xOf(std::min(zoomStartNs_, zoomEndNs_), area);
    const double b = xOf(std::max(zoomStartNs_, zoomEndNs_), area);
    p.fillRect(QRectF(a, top, std::max(1.0, b - a), area.bottom() - top),
               QColor(0xe8, 0x8a, 0x3c, 50));
    p.setPen(QColor(0xc0, 0x60, 0x10));
    p.drawLine(QPointF(a, top), QPointF(a, area.bottom()));
    p.drawLine(QPointF(b, top), QPointF(b, area.bottom()));
    p.drawText(QRectF(a + 4, top + 2, 200, 16), Qt::AlignLeft | Qt::AlignVCenter,
               QStringLiteral("zoom to ") + formatDuration(std::abs(zoomEndNs_ - zoomStartNs_)));
  }
  if (rangeSelecting_) {
    const double a = xOf(std::min(rangeStartNs_, rangeEndNs_), area);
    const double b = xOf(std::max(rangeStartNs_, rangeEndNs_), area);
    p.fillRect(QRectF(a, area.top(), std::max(1.0, b - a), area.height()),
               QColor(0x4a, 0x6f, 0x96, 60));
    p.setPen(band);
    p.drawText(QRectF(a + 4, area.top() + 2, 200, 16), Qt::AlignLeft | Qt::AlignVCenter,
               formatDuration(std::abs(rangeEndNs_ - rangeStartNs_)));
  }
}

void TimelineWidget::paintRuler(QPainter& p, const QRect& area, int top) {
  const QRect ruler(area.left(), top, area.width(), kRulerHeight);
  p.fillRect(QRect(0, top, width(), kRulerHeight), kGutter);
  const double nsPerPx = (viewEnd_ - viewStart_) / area.width();
  const double step = niceStep(nsPerPx * 110);
  const double origin = static_cast<double>(tl().begin_ns);
  const double first = std::ceil((viewStart_ - origin) / step) * step + origin;
  p.setPen(QColor(0x55, 0x5b, 0x63));
  // When the label of the first tick cannot tell ticks apart (deep zoom far into the capture),
  // the others are labelled by their offset from it.
  const bool relative = step < 2e-3 * std::abs(first - origin);
  for (int k = 0; first + k * step <= viewEnd_ && k < 1000; ++k) {
    const double tick = first + k * step;
    const int x = static_cast<int>(std::lround(xOf(tick, area)));
    p.setPen(kGrid);
    p.drawLine(x, ruler.bottom(), x, area.bottom());
    p.setPen(QColor(0x55, 0x5b, 0x63));
    p.drawLine(x, ruler.bottom() - 6, x, ruler.bottom());
    p.drawText(
        QRect(x + 3, top, 120, kRulerHeight - 6), Qt::AlignLeft | Qt::AlignVCenter,
        relative && k > 0 ? QStringLiteral("+") + rulerLabel(k * step) : rulerLabel(tick - origin));
  }
  p.drawText(QRect(6, top, kGutterWidth - 10, kRulerHeight), Qt::AlignLeft | Qt::AlignVCenter,
             QStringLiteral("span %1").arg(formatDuration(viewEnd_ - viewStart_)));
}

void TimelineWidget::paintRow(QPainter& p, const analyzer::TimelineLane& lane,
                              const analyzer::TimelineRow& row, const QRect& area, int y, int h) {
  const auto& items = row.items;
  const std::size_t n = items.size();
  const double nsPerPx = (viewEnd_ - viewStart_) / area.width();
  const double left = area.left();
  auto toX = [&](std::int64_t ns) {
    return left + (static_cast<double>(ns) - viewStart_) / nsPerPx;
  };
  const QColor merged = mergedColor(lane.kind);
  const QFontMetrics metrics = p.fontMetrics();
  p.setPen(Qt::NoPen);

  std::size_t i = analyzer::first_visible(row, static_cast<std::int64_t>(std::floor(viewStart_)));
  const double viewEnd = viewEnd_;
  while (i < n && static_cast<double>(items[i].start_ns) <= viewEnd) {
    const TimelineItem& item = items[i];
    const double a = toX(item.start_ns), b = toX(item.end_ns);
    if (b < left) {
      ++i;
      continue;
    }
    if (b - a >= 1.0) {  // wide enough to draw on its own
      const QRectF r(std::max(a, left - 2), y,
                     std::min(b, left + area.width() + 2) - std::max(a, left - 2), h);
      p.fillRect(r, itemColor(item));
      if (r.width() > 36) {
        p.setPen(QColor(0x1c, 0x1e, 0x22));
        p.drawText(
            r.adjusted(3, 0, -2, 0), Qt::AlignLeft | Qt::AlignVCenter,
            metrics.elidedText(names_[item.name], Qt::ElideRight, static_cast<int>(r.width()) - 5));
        p.setPen(Qt::NoPen);
      }
      if (item.name < highlighted_.size() && highlighted_[item.name] && &item != selected_) {
        p.setPen(QPen(kHighlight, 2));
        p.setBrush(Qt::NoBrush);
        p.drawRect(r.adjusted(1, 1, -1, -2));
        p.setPen(Qt::NoPen);
      }
      if (&item == selected_) {
        p.setPen(QPen(kSelection, 2));
        p.setBrush(Qt::NoBrush);
        p.drawRect(r.adjusted(0, 0, 0, -1));
        p.setPen(Qt::NoPen);
      }
      ++stats_.items;
      ++i;
      continue;
    }
    // A run of items narrower than a pixel: per pixel column, a bar as high as the share of the
    // column's time the row's items cover (busy fraction, as Nsight Systems draws a zoomed-out
    // timeline), so an idle GPU does not look busy. One binary search per column jumps over the
    // items starting in it; the run ends at a gap of more than a pixel or a wide item.
    double blockEnd = a;
    std::size_t count = 0;
    const TimelineItem* only = &item;
    int lastColumn = std::numeric_limits<int>::min();
    const auto drawColumn = [&](int column) {
      if (column <= lastColumn || column >= area.width()) return;
      lastColumn = column;
      const double fraction = columnCoverage(row, column, area.width());
      if (fraction <= 0) return;
      const double bar = std::max(1.0, fraction * h);
      p.fillRect(QRectF(left + column, y + h - bar, 1.0, bar), merged);
    };
    std::vector<int> columns;
    while (i < n) {
      const TimelineItem& m = items[i];
      const double ma = toX(m.start_ns);
      if (ma > blockEnd + 1.0 || ma > left + area.width()) break;
      if (toX(m.end_ns) - ma >= 1.0) break;
      const double nextPixel = std::floor(ma) + 1.0;
      const auto nextNs =
          static_cast<std::int64_t>(std::ceil(viewStart_ + (nextPixel - left) * nsPerPx));
      const std::size_t j = std::max(i + 1, analyzer::first_starting_at(row, i + 1, nextNs));
      const double endX = std::max({blockEnd, ma, toX(items[j - 1].end_ns)});
      for (int c = static_cast<int>(std::floor(ma - left));
           c <= static_cast<int>(std::floor(endX - left)); ++c) {
        if (columns.empty() || columns.back() < c) columns.push_back(c);
      }
      blockEnd = endX;
      count += j - i;
      i = j;
    }
    if (count == 1) {
      p.fillRect(QRectF(a, y, std::max(1.0, blockEnd - a), h), itemColor(*only));
      ++stats_.items;
    } else {
      for (const int c : columns) drawColumn(std::max(c, 0));
      ++stats_.blocks;
      stats_.mergedItems += static_cast<std::int64_t>(count);
    }
  }
  // The selection stays visible however narrow it is.
  if (selected_ && selected_ >= items.data() && selected_ < items.data() + n) {
    const double a = toX(selected_->start_ns), b = toX(selected_->end_ns);
    if (b - a < 1.0) {
      p.setPen(QPen(kSelection, 2));
      p.setBrush(Qt::NoBrush);
      p.drawRect(QRectF(a - 2, y, std::max(4.0, b - a + 4), h - 1));
      p.setPen(Qt::NoPen);
    }
  }
}

double TimelineWidget::columnCoverage(const analyzer::TimelineRow& row, int column,
                                      int width) const {
  const double nsPerPx = (viewEnd_ - viewStart_) / std::max(1, width);
  const double from = viewStart_ + column * nsPerPx;
  const auto t0 = static_cast<std::int64_t>(std::floor(from));
  const auto t1 = static_cast<std::int64_t>(std::floor(from + nsPerPx));
  if (t1 <= t0) return 0;
  const double busy = static_cast<double>(analyzer::busy_ns(row, t0, t1));
  return std::clamp(busy / static_cast<double>(t1 - t0), 0.0, 1.0);
}

std::vector<double> TimelineWidget::coverage(int lane, int row) const {
  std::vector<double> out;
  const auto* t = timeline();
  if (!t || lane < 0 || static_cast<std::size_t>(lane) >= t->lanes.size()) return out;
  const auto& l = t->lanes[static_cast<std::size_t>(lane)];
  if (row < 0 || static_cast<std::size_t>(row) >= l.rows.size()) return out;
  const int width = timeArea().width();
  out.reserve(static_cast<std::size_t>(width));
  if (const auto* stored = lodMode_ ? lodRow(lane, row) : nullptr) {
    for (int c = 0; c < width; ++c) out.push_back(lodColumnCoverage(*stored, c, width));
    return out;
  }
  for (int c = 0; c < width; ++c) {
    out.push_back(columnCoverage(l.rows[static_cast<std::size_t>(row)], c, width));
  }
  return out;
}

void TimelineWidget::paintCounter(QPainter& p, const analyzer::CounterTrack& track,
                                  const QRect& area, int y, int h) {
  const auto& points = track.points;
  if (points.empty() || track.max_value <= 0) return;
  const double scale = static_cast<double>(h) / static_cast<double>(track.max_value);
  const int width = area.width();
  const double nsPerPx = (viewEnd_ - viewStart_) / width;
  // Value in force at the view's start.
  auto it = std::upper_bound(
      points.begin(), points.end(), static_cast<std::int64_t>(viewStart_),
      [](std::int64_t t, const analyzer::CounterPoint& pt) { return t < pt.time_ns; });
  std::size_t i = static_cast<std::size_t>(it - points.begin());
  std::int64_t current = i > 0 ? points[i - 1].value : 0;
  QPainterPath path;
  const double base = y + h;
  path.moveTo(area.left(), base);
  for (int column = 0; column < width; ++column) {
    const double columnEnd = viewStart_ + (column + 1) * nsPerPx;
    std::int64_t highest = current;
    while (i < points.size() && static_cast<double>(points[i].time_ns) < columnEnd) {
      current = points[i].value;
      highest = std::max(highest, current);
      ++i;
    }
    const double top = base - static_cast<double>(std::max<std::int64_t>(highest, 0)) * scale;
    path.lineTo(area.left() + column, top);
    path.lineTo(area.left() + column + 1, top);
    if (i >= points.size() && static_cast<double>(points.back().time_ns) < columnEnd - nsPerPx) {
      // past the last event: the value stays; finish in one segment
      path.lineTo(area.left() + width,
                  base - static_cast<double>(std::max<std::int64_t>(current, 0)) * scale);
      break;
    }
  }
  path.lineTo(area.left() + width, base);
  path.closeSubpath();
  QPen outline(QColor(0x2e, 0x7d, 0x32), 0);  // cosmetic: no stroker for thousands of segments
  outline.setCosmetic(true);
  p.setPen(outline);
  p.setBrush(QColor(0x66, 0xbb, 0x6a, 150));
  p.drawPath(path);
  stats_.items += 1;
}

QString TimelineWidget::tooltipFor(const TimelineItem& item) const {
  const auto& t = tl();
  return QStringLiteral("<b>%1</b><br>%2, %3<br>starts at %4")
      .arg(names_[item.name].toHtmlEscaped(), QString::fromUtf8(analyzer::to_string(item.kind)),
           formatDuration(static_cast<double>(item.end_ns - item.start_ns)),
           formatDuration(static_cast<double>(item.start_ns - t.begin_ns)));
}

bool TimelineWidget::event(QEvent* e) {
  if (e->type() == QEvent::ToolTip && data_) {
    auto* help = static_cast<QHelpEvent*>(e);
    if (const int index = stepAt(help->pos())) {
      const auto& step = steps()->steps[static_cast<std::size_t>(index - 1)];
      QToolTip::showText(
          help->globalPos(),
          QStringLiteral("<b>step %1</b><br>wall %2, GPU busy %3 (%4)<br>%5 launches")
              .arg(index)
              .arg(formatDuration(static_cast<double>(step.wall_ns())),
                   formatDuration(static_cast<double>(step.gpu_busy_ns)),
                   formatPercent(100.0 * step.busy_share()), formatCount(step.launches)),
          this);
    } else if (const auto* item = itemAt(help->pos())) {
      QToolTip::showText(help->globalPos(), tooltipFor(*item), this);
    } else {
      QToolTip::hideText();
    }
    return true;
  }
  return QWidget::event(e);
}

}  // namespace fuselens::gui
