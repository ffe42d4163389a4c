#pragma once
// Page: one tab of the main window (as Tracy's View_*.cpp, one file per view). A page shows the
// current capture (and may offer the other open ones, e.g. for comparing); it says plainly when
// its analysis is not in this capture, and never shows invented data.
//
// Staged loading (CaptureData.h): a page names the analyses it shows (analyses()); the main window
// has them loaded first while the page is visible and tells it when each one is in
// (analysisLoaded). Pages that show an analysis with parameters (calling context, roofline,
// compare) ask the loader for it (CaptureLoader's requests) and display what its signal brings;
// they call invalidate() when their input changes: the request is made then if the page is
// visible, else the next time it is shown (runAnalysis), so hidden pages cost nothing while a
// capture loads. Pages never open a capture themselves.
//
// Jumps to the timeline: a table whose rows name timeline items (kernels, NVTX ranges, API calls,
// memory operations) offers "Show in timeline" in its context menu and on a double click
// (addTimelineJump); the page emits timelineRequested and the main window shows the Timeline
// page, which searches for the row's items and selects the first in the window (TimelineTarget).

#include <QList>
#include <QString>
#include <QWidget>

#include <functional>

#include "CaptureData.h"
#include "TimelineSearch.h"

class QAbstractItemView;
class QAbstractItemModel;
class QAction;
class QModelIndex;
class QSortFilterProxyModel;
class QTableView;
class QTreeView;
class QLabel;

namespace fuselens::gui {

class CaptureLoader;

class Page : public QWidget {
  Q_OBJECT
 public:
  Page(QString title, QWidget* parent = nullptr);

  const QString& title() const { return title_; }
  /// A file-name-friendly name: "summary", "calling-context", ...
  QString slug() const;

  /// Shows `current` (may be null: no capture open). `all` holds every open capture.
  virtual void setCaptures(const CaptureDataPtr& current, const QList<CaptureDataPtr>& all) = 0;
  /// The window of `capture` changed (CaptureData::window): its windowed analyses load again.
  /// By default the page shows `capture` afresh (setCaptures with none, then with it), so a page
  /// that requests its own analysis asks again for the new window.
  virtual void windowChanged(const CaptureDataPtr& capture, const QList<CaptureDataPtr>& all);
  /// The table "Export table as CSV" writes: the one shown, or null when the page has none.
  virtual QAbstractItemView* currentTable() const { return nullptr; }
  /// The widget "Export view as image" saves (a chart, the timeline); the page by default.
  virtual QWidget* imageWidget() { return this; }

  /// The analyses of CaptureData this page shows (none: it shows none, or runs its own).
  virtual QList<Analysis> analyses() const { return {}; }
  /// `analysis` of `capture` is in (or failed): a page showing `capture` updates itself.
  virtual void analysisLoaded(const CaptureDataPtr& capture, Analysis analysis) {
    Q_UNUSED(capture);
    Q_UNUSED(analysis);
  }
  /// True while the page's own analysis runs (screenshots wait for it).
  virtual bool busy() const { return false; }

  /// The loader this page sends its requests to (the main window's, set by setLoader; a page
  /// used on its own, as in the tests, makes one of its own on first use).
  CaptureLoader* loader();
  /// Sends this page's requests to `loader` from now on (not owned).
  void setLoader(CaptureLoader* loader);

  /// What "Show in timeline" on `index` (an index of `view`'s model) of a table of this page
  /// looks for; an invalid target when the row names no timeline item (the action is then
  /// disabled).
  using TargetOf = std::function<TimelineTarget(const QModelIndex& index)>;

 Q_SIGNALS:
  /// "Show in timeline" on a row: the main window shows the Timeline page with `target`.
  void timelineRequested(const fuselens::gui::TimelineTarget& target);

 public:
  /// Adds "Show in timeline" to the context menu of `view` (first; the menu of makeTableView
  /// keeps its entries) and on a double click (in a tree, on rows without children only: a
  /// double click expands the others), for the current row: emits timelineRequested with
  /// targetOf(current index) when it is valid; the action is enabled only then. Call after the
  /// view's model is set. Returns the action (tests trigger it).
  QAction* addTimelineJump(QAbstractItemView* view, TargetOf targetOf);

 protected:
  /// Input of the page's own analysis changed: runAnalysis() now if visible, else on next show.
  void invalidate();
  /// Runs the page's own analysis (off the GUI thread); called by invalidate() and showEvent().
  virtual void runAnalysis() {}
  void showEvent(QShowEvent* event) override;
  /// Connects the page to the result signals of `loader` it needs (called when it changes).
  virtual void connectLoader(CaptureLoader* loader) { Q_UNUSED(loader); }

 private:
  CaptureLoader* loader_ = nullptr;
  bool ownsLoader_ = false;
  QString title_;
  bool stale_ = false;
};

/// A centred notice: a bold title and an explanation (rich text allowed).
QLabel* makeNotice(const QString& title, const QString& explanation, QWidget* parent);

/// A sortable table view over `source` through a new QSortFilterProxyModel (returned in
/// `proxy`): sorts by TableModel::SortRole, filters the source's name column case-insensitively,
/// and offers "Export as CSV…" and "Copy" in its context menu.
QTableView* makeTableView(QAbstractItemModel* source, QSortFilterProxyModel** proxy,
                          QWidget* parent);

/// Sizes the columns of `view` to their contents (capped), leaving the last one stretched.
void fitColumns(QTableView* view, int maxWidth = 260);

}  // namespace fuselens::gui
