#pragma once
// TimelineSearchBar: the Timeline page's search: a field (Ctrl+F), what to look at (kernels, NVTX
// ranges, API calls, memory operations), "Whole name" and "Regex" options, previous / next
// buttons and the match count ("3 of 120"). Typing searches after a short pause, through the
// loader off the GUI thread (CaptureLoader::requestTimelineSearch, TimelineSearch.h), so a capture
// of millions of items stays responsive; the timeline then outlines every match drawn at full
// size. Return (or the next button) goes to the next match: the first one at or after the
// view's start the first time, then each in time order, wrapping round at the end; Shift+Return
// (or the previous button) goes back. Going to a match zooms to it, scrolls its row into view and
// selects it (TimelineWidget::revealItem), so the details below the timeline show it.
//
// showTarget (the tables' "Show in timeline") fills the field with the item's whole name and
// kinds, searches, and goes to the match TimelineTarget chooses (the first in the window).

#include <QWidget>

#include <functional>
#include <memory>

#include "CaptureData.h"
#include "TimelineSearch.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QTimer;
class QToolButton;

namespace fuselens::gui {

class CaptureLoader;
class TimelineWidget;

class TimelineSearchBar : public QWidget {
  Q_OBJECT
 public:
  /// Searches the timeline `widget` shows and moves it to the matches (not owned); `loader`
  /// gives the loader to send searches to (called when one is sent).
  TimelineSearchBar(TimelineWidget* widget, std::function<CaptureLoader*()> loader,
                    QWidget* parent = nullptr);

  /// Searches `capture` from now on (null: none). Its timeline is searched once it is loaded
  /// (call again then); the text stays when the capture changes, and is searched again.
  void setCapture(const CaptureDataPtr& capture);

  /// The query the fields describe.
  TimelineQuery query() const;
  /// Sets the fields to `query` and searches now (no match chosen).
  void search(const TimelineQuery& query);
  /// Sets the fields to `target.query`, searches, and goes to the match the target chooses
  /// (TimelineTarget); the count says so when there is none.
  void showTarget(const TimelineTarget& target);

  /// The matches of the last finished search (null before any, or after the capture changed).
  const TimelineMatches* matches() const { return matches_.get(); }
  /// Index of the match shown in matches(), -1 when none.
  int currentMatch() const { return current_; }
  /// True while a search runs or waits for the timeline.
  bool busy() const { return request_ != 0 || waiting_; }
  /// "3 of 120", "120 matches", "no match", "searching…", or the regular expression's error.
  QString countText() const;
  QLineEdit* field() const { return field_; }

 public Q_SLOTS:
  /// Goes to the next match (see the top of this header); runs the query first when the
  /// fields changed since the last search.
  void next();
  void previous();

 Q_SIGNALS:
  /// A search finished (matches() holds it).
  void finished();
  /// The timeline now shows match `index` of matches().
  void matchShown(int index);

 private:
  enum class Pick { None, Next, Previous, Target };
  void run(Pick pick);
  void take(quint64 request, const std::shared_ptr<const TimelineMatches>& found);
  void step(int direction);
  void go(int index);
  void updateCount();
  bool timelineReady() const;
  void fieldsChanged();

  TimelineWidget* widget_ = nullptr;
  std::function<CaptureLoader*()> loader_;
  CaptureLoader* connected_ = nullptr;  ///< the loader whose results this bar receives
  CaptureDataPtr data_;
  QLineEdit* field_ = nullptr;
  QComboBox* kinds_ = nullptr;
  QCheckBox* wholeName_ = nullptr;
  QCheckBox* regex_ = nullptr;
  QToolButton* previous_ = nullptr;
  QToolButton* next_ = nullptr;
  QLabel* count_ = nullptr;
  QTimer* typing_ = nullptr;  ///< searches a moment after the last key
  std::shared_ptr<const TimelineMatches> matches_;
  int current_ = -1;
  quint64 request_ = 0;   ///< the search under way, 0: none
  bool waiting_ = false;  ///< a search waits for the timeline to load
  Pick pick_ = Pick::None;
  TimelineTarget target_;       ///< what Pick::Target looks for
  bool targetMissing_ = false;  ///< the last target has no item on the timeline
};

}  // namespace fuselens::gui
