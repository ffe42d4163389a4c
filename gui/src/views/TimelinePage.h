#pragma once
// TimelinePage: the TimelineWidget with zoom buttons above it and, below it, the details of the
// selected item: times, launch configuration, and its launch context (the API call that launched
// it and the NVTX ranges open on that thread, from analyzer::launch_context); beside them the
// item's calling context, the native (and Python) frames from the outermost down to the launch
// site (analyzer::call_path, one indexed lookup per selection, which the loader runs off the GUI
// thread: CaptureLoader::requestCallPath), or why there is none. The search bar above the
// timeline (TimelineSearchBar) finds items by name; the tables of the other pages send their rows
// here (showInTimeline).

#include <memory>

#include "TimelineSearch.h"
#include "cct/CallPath.h"
#include "views/Page.h"

class QLabel;
class QTableView;
class QTextBrowser;

namespace fuselens::gui {

class CallPathModel;
class TimelineSearchBar;
class TimelineWidget;

class TimelinePage : public Page {
  Q_OBJECT
 public:
  explicit TimelinePage(QWidget* parent = nullptr);
  ~TimelinePage() override;

  void setCaptures(const CaptureDataPtr& current, const QList<CaptureDataPtr>& all) override;
  /// The timeline, and the steps of its step lane.
  QList<Analysis> analyses() const override { return {Analysis::Timeline, Analysis::Steps}; }
  void analysisLoaded(const CaptureDataPtr& capture, Analysis analysis) override;
  /// Redraws the window's shading; the view stays.
  void windowChanged(const CaptureDataPtr& capture, const QList<CaptureDataPtr>& all) override;
  /// The window of the time range [startNs, endNs] (absolute ns): "time:T0-T1" in ms from the
  /// capture's first activity, as parse_window reads it.
  QString timeWindow(qint64 startNs, qint64 endNs) const;
  QWidget* imageWidget() override;
  /// True while the loader looks up the selection's call path.
  bool busy() const override { return callPathRequest_ != 0; }
  TimelineWidget* timelineWidget() const { return timeline_; }
  TimelineSearchBar* searchBar() const { return search_; }
  /// Shows and selects the first kernel named `shortName` at or after `fromNs`.
  bool revealKernel(const QString& shortName, std::int64_t fromNs);
  /// A table's "Show in timeline": searches for the target's items (the search bar shows the
  /// query and steps through them) and shows the one it chooses (TimelineTarget), once the
  /// timeline is loaded.
  void showInTimeline(const TimelineTarget& target);
  /// Zooms to the NVTX range around the longest kernel and selects that kernel (what a first
  /// look at a capture wants; also used for screenshots). False when there is no kernel.
  bool showLongestKernel();
  /// The details text shown for the selection (plain text, for tests).
  QString detailsText() const;
  /// The calling context of the selection: the frames' model and the line above it (the thread
  /// and frame count, or why there is no calling context).
  CallPathModel* callPathModel() const { return callPath_; }
  QString callPathStatus() const;

 Q_SIGNALS:
  /// A Shift+drag on the timeline chose a time range as the window, or a double click on a step
  /// of the step lane that step (parse_window's forms).
  void windowRequested(const QString& window);

 protected:
  void connectLoader(CaptureLoader* loader) override;

 private:
  void showDetails(const analyzer::TimelineItem* item);
  void showCallPath(const analyzer::TimelineItem* item);
  void takeCallPath(quint64 request, const std::shared_ptr<const analyzer::CallPath>& found,
                    const QString& error);
  void copyCallPath();
  void showTimeline();

  CaptureDataPtr data_;
  quint64 callPathRequest_ = 0;  ///< the lookup of the selection's call path, 0: none pending
  TimelineWidget* timeline_ = nullptr;
  TimelineSearchBar* search_ = nullptr;
  QTextBrowser* details_ = nullptr;
  CallPathModel* callPath_ = nullptr;
  QTableView* callPathView_ = nullptr;
  QLabel* callPathStatus_ = nullptr;
};

}  // namespace fuselens::gui
