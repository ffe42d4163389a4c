#pragma once
// TimelineWidget: the zoomable, pannable timeline of one capture, drawn from analyzer::Timeline
// (lanes per device and stream, a device-memory counter track per device, NVTX and CUDA API
// lanes per thread).
//
// Level of detail (as Tracy): each row is a vector sorted by start, so a repaint visits only
// what is visible. An item at least one pixel wide is drawn (with its name when there is room);
// a run of items narrower than a pixel is merged into one block, jumping over the items of each
// pixel column with a binary search (analyzer::first_starting_at). A repaint therefore costs
// O(width x log n) per row, not O(n): a million kernels fully zoomed out draw as about a
// thousand blocks. Counters are drawn as one step polygon with each pixel column's maximum.
//
// The step lane (above the GPU lanes, once the steps are in: stepsChanged) draws one item per step
// of analyzer::analyze_steps, labelled with its index: warm-up steps grey, steady ones green,
// outliers red. Outside the capture's window (CaptureData::window) the timeline is shaded, and
// the ruler marks the window's intervals.
//
// Input: Shift+drag selects a time range (timeRangeSelected: the main window makes it the window
// of every page), a double click on a step activates it (stepActivated: that step's window); wheel
// zooms around the cursor (Shift+wheel scrolls lanes), +/- zoom around the centre, drag or
// Left/Right pan, Up/Down/PageUp/PageDown scroll lanes, Home or 0 shows everything; a click selects
// the item under the cursor (itemSelected), hovering shows its tooltip.

#include <QColor>
#include <QString>
#include <QWidget>

#include <cstdint>
#include <vector>

#include "CaptureData.h"

class QScrollBar;

namespace fuselens::gui {

class TimelineWidget : public QWidget {
  Q_OBJECT
 public:
  explicit TimelineWidget(QWidget* parent = nullptr);

  /// Shows the timeline of `data` (null: nothing), zoomed out to the whole capture.
  void setCapture(const CaptureDataPtr& capture);
  /// The text drawn when no capture is shown ("No capture open", "Loading the timeline…").
  void setEmptyText(const QString& text);
  const analyzer::Timeline* timeline() const;

  /// Visible time span, absolute ns (CUPTI clock).
  double viewStart() const { return viewStart_; }
  double viewEnd() const { return viewEnd_; }
  void setView(double startNs, double endNs);
  void zoomAll();
  /// Zooms by `factor` (< 1 zooms in) keeping the time under widget x `anchorX` in place.
  void zoom(double factor, double anchorX);
  /// Pans by `pixels` (positive: later times).
  void pan(double pixels);
  /// Widget x of time `ns` in the current view.
  double xForTime(double ns) const { return xOf(ns, timeArea()); }
  /// Shows [start, end] with a margin and selects `item` when given.
  void reveal(std::int64_t startNs, std::int64_t endNs);

  void select(const analyzer::TimelineItem* item);
  const analyzer::TimelineItem* selectedItem() const { return selected_; }
  /// The item under widget point `pos`, if any (within two pixels).
  const analyzer::TimelineItem* itemAt(const QPoint& pos) const;
  /// The first item named `name` (short kernel name) at or after `fromNs`, in any Gpu lane.
  const analyzer::TimelineItem* findKernel(const QString& name, std::int64_t fromNs) const;

  /// The steps of the capture came in or the window changed: lays the step lane out again.
  void stepsChanged();
  /// Items of the step lane (one per step; 0 without steps or before they are in).
  int stepLaneItemCount() const;
  /// The step (1-based) whose item lies under widget point `pos`, 0 when none.
  int stepAt(const QPoint& pos) const;
  /// What the gutter shows, track by track from the top: "Steps (N)", a rank group's header
  /// ("Rank 1", "Without rank": captures with ranks only), lane titles (on a lane's first row;
  /// "" on its deeper rows) and counter titles.
  QStringList trackTitles() const;
  /// Widget y of the middle of row `row` of lane `lane` at the current scroll (-1: not laid out).
  int rowCenterY(int lane, int row = 0) const;

  /// Selects the time range [startNs, endNs] as a Shift+drag does (timeRangeSelected).
  void selectTimeRange(double startNs, double endNs);

  /// Draws the timeline into `target` (what paintEvent does); benchmarks time it.
  void paintTimeline(QPainter& painter, const QRect& target);

  /// What the last paint drew: items at full size, merged blocks, and the items those blocks
  /// stand for.
  struct PaintStats {
    std::int64_t items = 0, blocks = 0, mergedItems = 0;
  };
  const PaintStats& lastPaintStats() const { return stats_; }

  static constexpr int kGutterWidth = 210;
  static constexpr int kRulerHeight = 30;
  static constexpr int kRowHeight = 20;
  static constexpr int kCounterHeight = 64;
  static constexpr int kLaneGap = 8;
  static constexpr int kGroupHeaderHeight = 18;

 Q_SIGNALS:
  void itemSelected(const fuselens::analyzer::TimelineItem* item);
  void viewChanged();
  /// Shift+drag selected [startNs, endNs] (absolute ns, CUPTI clock).
  void timeRangeSelected(qint64 startNs, qint64 endNs);
  /// A step of the step lane was double-clicked (1-based index).
  void stepActivated(int index);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  bool event(QEvent* event) override;

 private:
  /// One horizontal band: a row of a lane, or a counter track.
  struct Track {
    /// Lane index and depth; lane -1 for a counter, -2 for the steps, -3 for the header of a
    /// rank's group (rank in `counter`, -1 for processes without a rank).
    int lane = -1, row = 0;
    int counter = -1;
    int y = 0, height = 0;  ///< in content coordinates (before scrolling)
    bool firstOfLane = false;
  };

  void layoutTracks();
  void updateScrollBar();
  QRect timeArea() const;
  double xOf(double ns, const QRect& area) const;
  double nsAt(double x, const QRect& area) const;
  const Track* trackAt(int y) const;
  void paintRuler(QPainter& p, const QRect& area, int top);
  void paintRow(QPainter& p, const analyzer::TimelineLane& lane, const analyzer::TimelineRow& row,
                const QRect& area, int y, int h);
  void paintSteps(QPainter& p, const QRect& area, int y, int h);
  void paintWindow(QPainter& p, const QRect& area, int top);
  const analyzer::StepReport* steps() const;
  void paintCounter(QPainter& p, const analyzer::CounterTrack& track, const QRect& area, int y,
                    int h);
  QColor itemColor(const analyzer::TimelineItem& item) const;
  QString tooltipFor(const analyzer::TimelineItem& item) const;
  static QString groupTitle(int rank);  ///< "Rank 1", or "Without rank" for -1

  CaptureDataPtr data_;
  QString emptyText_;
  std::vector<QString> names_;  // Timeline::names as QStrings
  std::vector<QColor> colors_;  // by name
  std::vector<Track> tracks_;
  int contentHeight_ = 0;
  int scrollY_ = 0;
  QScrollBar* vbar_ = nullptr;
  double viewStart_ = 0, viewEnd_ = 1;
  const analyzer::TimelineItem* selected_ = nullptr;
  QPoint pressPos_;
  double pressViewStart_ = 0;
  bool dragging_ = false;
  bool rangeSelecting_ = false;  ///< a Shift+drag is under way
  double rangeStartNs_ = 0, rangeEndNs_ = 0;
  PaintStats stats_;
};

}  // namespace fuselens::gui
