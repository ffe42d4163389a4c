#pragma once
// TimelineWidget: the zoomable, pannable timeline of one capture, drawn from analyzer::Timeline
// (lanes per device and stream, a device-memory counter track per device, NVTX and CUDA API
// lanes per thread).
//
// Level of detail (as Tracy): each row is a vector sorted by start, so a repaint visits only
// what is visible. An item at least one pixel wide is drawn (with its name when there is room);
// a run of items narrower than a pixel is drawn by coverage, as Nsight Systems does: each pixel
// column of the run gets a bar as high as the fraction of the column's time the row's items
// cover (analyzer::busy_ns / column width; at least one pixel when anything runs), so a GPU busy
// 15 % of a zoomed-out step shows 15 %-high bars, not a solid block. Columns are found by
// jumping over the items of each with a binary search (analyzer::first_starting_at) and their
// coverage costs two more, so a repaint costs O(width x log n) per row, not O(n). Counters are
// drawn as one step polygon with each pixel column's maximum.
//
// Stored level of detail (CaptureData::timelineLod, analyzer/timeline/TimelineLod.h; captures of
// schema 10 with it): the capture's timeline then holds no kernels or API calls. While the visible
// window holds more than kWindowItems of them (by the stored counts), each Gpu and Api row is
// drawn from the stored buckets by the same coverage bars (one O(1) lookup per pixel column:
// the coarsest level not wider than a column); once it holds fewer, the items of the view (and
// as much again on each side) are loaded through the start-time indexes
// (analyzer::load_timeline_window) and drawn as above, every kernel at full size. The last
// kWindowCache windows are kept, so zooming and panning back do not read again. Selection,
// tooltips and the details pane work on the loaded window's items.
//
// Captures of several processes (or ranks) show a header above each process's group of lanes
// ("Process 810", or "Rank 1" / "Without rank" with ranks) and lane titles that name the
// process and the thread (analyzer/timeline/Timeline.h).
//
// The step lane (above the GPU lanes, once the steps are in: stepsChanged) draws one item per step
// of analyzer::analyze_steps, labelled with its index: warm-up steps grey, steady ones green,
// outliers red. Outside the capture's window (CaptureData::window) the timeline is shaded, and
// the ruler marks the window's intervals.
//
// Input: Shift+drag selects a time range (timeRangeSelected: the main window makes it the window
// of every page), a double click on a step activates it (stepActivated: that step's window); a
// drag on the ruler (or Ctrl+drag over the lanes) draws a rubber band and zooms to it; wheel
// zooms around the cursor by kWheelZoom per notch (kFineWheelZoom with Ctrl; Shift+wheel scrolls
// lanes), +/- zoom around the centre, drag or
// Left/Right pan, Up/Down/PageUp/PageDown scroll lanes, Home or 0 shows everything; a click selects
// the item under the cursor (itemSelected), hovering shows its tooltip. Items whose names the
// Timeline page's search matched are outlined in amber (setHighlightedNames), the current match
// is the selection.

#include <QColor>
#include <QString>
#include <QWidget>

#include <cstdint>
#include <memory>
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
  /// The timeline drawn: the capture's, or with a stored level of detail the loaded window's
  /// (whose items are the ones selection and itemAt return) while one covers the view.
  const analyzer::Timeline* timeline() const;
  /// True while the Gpu and Api rows are drawn from the stored level of detail (the view holds
  /// more than kWindowItems items, or nothing is loaded yet).
  bool drawsLevelOfDetail() const { return lodMode_; }
  /// [t0, t1) of the loaded window in use; t1 <= t0 when none.
  std::pair<std::int64_t, std::int64_t> loadedWindow() const;
  /// Windows read through load_timeline_window so far (benchmarks, tests of the cache).
  int windowLoads() const { return windowLoads_; }
  /// Sets the most items a view may hold for them to be loaded (kWindowItems by default; 0:
  /// always draw the stored level of detail) and applies it to the current view.
  void setWindowItemLimit(std::int64_t items) {
    windowItems_ = items;
    if (window_) {  // chosen under the old limit
      window_.reset();
      takeNames();
    }
    updateWindow();
    update();
  }

  /// Visible time span, absolute ns (CUPTI clock).
  double viewStart() const { return viewStart_; }
  double viewEnd() const { return viewEnd_; }
  void setView(double startNs, double endNs);
  void zoomAll();
  /// Zooms by `factor` (< 1 zooms in) keeping the time under widget x `anchorX` in place.
  void zoom(double factor, double anchorX);
  /// Shows [startNs, endNs] (either order), as a drag-to-zoom on the ruler does.
  void zoomToRange(double startNs, double endNs);
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
  /// Shows `item` (row `row` of lane `lane`): zooms to it as reveal does, scrolls its row into
  /// view and selects it (TimelineWidgetSearch.cpp).
  void revealItem(const analyzer::TimelineItem* item, int lane, int row);
  /// Scrolls the lanes so that row `row` of lane `lane` is visible (nothing when it is).
  void scrollToRow(int lane, int row);
  /// Outlines the items drawn at full size whose name index (Timeline::names) is set in `names`:
  /// the search's matches (TimelineMatches::drawnNames); empty: none.
  void setHighlightedNames(std::vector<char> names);
  const std::vector<char>& highlightedNames() const { return highlighted_; }

  /// The steps of the capture came in or the window changed: lays the step lane out again.
  void stepsChanged();
  /// Items of the step lane (one per step; 0 without steps or before they are in).
  int stepLaneItemCount() const;
  /// The step (1-based) whose item lies under widget point `pos`, 0 when none.
  int stepAt(const QPoint& pos) const;
  /// What the gutter shows, track by track from the top: "Steps (N)", a process group's header
  /// ("Rank 1", "Without rank" with ranks; "Process 810" for captures of several processes
  /// without ranks), lane titles (on a lane's first row; "" on its deeper rows) and counter
  /// titles.
  QStringList trackTitles() const;
  /// Widget y of the middle of row `row` of lane `lane` at the current scroll (-1: not laid out).
  int rowCenterY(int lane, int row = 0) const;

  /// Selects the time range [startNs, endNs] as a Shift+drag does (timeRangeSelected).
  void selectTimeRange(double startNs, double endNs);

  /// Per pixel column of the time area, the fraction of the column's time in the current view
  /// that the items of row `row` of lane `lane` cover (0 to 1): the height, relative to the row,
  /// of the bar drawn where items are narrower than a pixel. Empty for a lane or row that does
  /// not exist.
  std::vector<double> coverage(int lane, int row = 0) const;

  /// Draws the timeline into `target` (what paintEvent does); benchmarks time it.
  void paintTimeline(QPainter& painter, const QRect& target);

  /// What the last paint drew: items at full size, merged blocks, and the items those blocks
  /// stand for.
  struct PaintStats {
    std::int64_t items = 0, blocks = 0, mergedItems = 0;
    std::int64_t lodColumns = 0;  ///< pixel columns drawn from the stored level of detail
  };
  const PaintStats& lastPaintStats() const { return stats_; }

  static constexpr int kGutterWidth = 210;
  static constexpr int kRulerHeight = 30;
  static constexpr int kRowHeight = 20;
  static constexpr int kCounterHeight = 64;
  static constexpr int kLaneGap = 8;
  static constexpr int kGroupHeaderHeight = 18;
  /// Span factor per wheel notch: 0.5 halves the span, so 5 notches go from a 376 ms capture to
  /// a 12 ms step (0.8, the fine step with Ctrl, takes 16).
  static constexpr double kWheelZoom = 0.5;
  static constexpr double kFineWheelZoom = 0.8;
  /// With a stored level of detail: items (by its counts) a view may hold for its items to be
  /// loaded and drawn one by one (about 10 MB and 0.1-0.3 s of reading on the 2-core machine).
  static constexpr std::int64_t kWindowItems = 200'000;
  static constexpr int kWindowCache = 4;  ///< loaded windows kept

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
    /// process's (or rank's) group (the group's first lane in `counter`).
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
  /// "Rank 1", "Without rank" (captures with ranks) or "Process 810", of the group of `lane`.
  QString groupTitle(int lane) const;
  /// Lanes of one group share the key: the rank, -1 for processes without one (captures with
  /// ranks), else -2 - pid.
  std::int64_t groupKey(int lane) const;
  double columnCoverage(const analyzer::TimelineRow& row, int column, int width) const;
  /// The current timeline (see timeline()).
  const analyzer::Timeline& tl() const { return window_ ? *window_ : data_->timeline; }
  /// Rebuilds names_ and colors_ from tl().
  void takeNames();
  /// With a stored level of detail: picks (loading when needed) the window the view needs, or
  /// the level of detail (TimelineWidgetLod.cpp).
  void updateWindow();
  /// The stored row of lane `lane`, row `row` (nullptr: none, or no level of detail).
  const analyzer::LodRow* lodRow(int lane, int row) const;
  void paintLodRow(QPainter& p, analyzer::LaneKind kind, const analyzer::LodRow& row,
                   const QRect& area, int y, int h);
  double lodColumnCoverage(const analyzer::LodRow& row, int column, int width) const;

  struct LoadedWindow {
    std::int64_t t0 = 0, t1 = 0;
    std::shared_ptr<const analyzer::Timeline> timeline;
  };
  std::vector<LoadedWindow> cache_;                   ///< most recently used last
  std::shared_ptr<const analyzer::Timeline> window_;  ///< in use; null: data_->timeline
  std::int64_t windowT0_ = 0, windowT1_ = 0;
  std::shared_ptr<const analyzer::Timeline> selectedOwner_;  ///< keeps selected_ alive
  std::unique_ptr<const fuselens::db::Reader> reader_;       ///< window loads, GUI thread only
  std::vector<std::vector<int>> lodRows_;                    ///< per lane and row: index or -1
  bool lodMode_ = false;
  int windowLoads_ = 0;
  std::int64_t windowItems_ = kWindowItems;

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
  bool zoomSelecting_ = false;   ///< a drag-to-zoom is under way
  double zoomStartNs_ = 0, zoomEndNs_ = 0;
  double rangeStartNs_ = 0, rangeEndNs_ = 0;
  PaintStats stats_;
  std::vector<char> highlighted_;  ///< per name index: outline items of that name
};

}  // namespace fuselens::gui
