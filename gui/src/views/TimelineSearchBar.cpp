#include "views/TimelineSearchBar.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QTimer>
#include <QToolButton>

#include <algorithm>
#include <cmath>
#include <limits>

#include "CaptureLoader.h"
#include "views/TimelineWidget.h"

namespace fuselens::gui {
namespace {

/// Pause after the last key before a search starts (ms).
constexpr int kTypingDelayMs = 250;

/// Return goes to the next match, Shift+Return to the previous one.
class SearchField : public QLineEdit {
 public:
  SearchField(TimelineSearchBar* bar, QWidget* parent) : QLineEdit(parent), bar_(bar) {}

 protected:
  void keyPressEvent(QKeyEvent* e) override {
    if (e->key() == Qt::Key_Return || e->key() == Qt::Key_Enter) {
      if (e->modifiers() & Qt::ShiftModifier) {
        bar_->previous();
      } else {
        bar_->next();
      }
      e->accept();
      return;
    }
    QLineEdit::keyPressEvent(e);
  }

 private:
  TimelineSearchBar* bar_;
};

}  // namespace

TimelineSearchBar::TimelineSearchBar(TimelineWidget* widget, std::function<CaptureLoader*()> loader,
                                     QWidget* parent)
    : QWidget(parent), widget_(widget), loader_(std::move(loader)) {
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  field_ = new SearchField(this, this);
  field_->setObjectName(QStringLiteral("timelineSearch"));
  field_->setPlaceholderText(QStringLiteral("Search the timeline (Ctrl+F)…"));
  field_->setClearButtonEnabled(true);
  field_->setMinimumWidth(260);
  field_->setToolTip(
      QStringLiteral("Names of kernels (short or demangled), NVTX ranges and API calls, "
                     "case-insensitive. Return: next match · Shift+Return: previous match"));
  kinds_ = new QComboBox(this);
  kinds_->setObjectName(QStringLiteral("timelineSearchKinds"));
  kinds_->addItem(QStringLiteral("Kernels, ranges, API"), SearchNamed);
  kinds_->addItem(QStringLiteral("Kernels"), SearchKernels);
  kinds_->addItem(QStringLiteral("NVTX ranges"), SearchRanges);
  kinds_->addItem(QStringLiteral("API calls"), SearchApi);
  kinds_->addItem(QStringLiteral("Memory operations"), SearchCopies);
  kinds_->addItem(QStringLiteral("Everything"), SearchAll);
  wholeName_ = new QCheckBox(QStringLiteral("Whole name"), this);
  wholeName_->setToolTip(QStringLiteral("The name must equal the text (case-insensitive)"));
  regex_ = new QCheckBox(QStringLiteral("Regex"), this);
  regex_->setToolTip(
      QStringLiteral("The text is a regular expression (Perl syntax, case-insensitive)"));
  previous_ = new QToolButton(this);
  previous_->setText(QStringLiteral("◀"));
  previous_->setToolTip(QStringLiteral("Previous match (Shift+Return)"));
  next_ = new QToolButton(this);
  next_->setText(QStringLiteral("▶"));
  next_->setToolTip(QStringLiteral("Next match (Return)"));
  count_ = new QLabel(this);
  count_->setObjectName(QStringLiteral("timelineSearchCount"));
  count_->setMinimumWidth(110);
  layout->addWidget(field_);
  layout->addWidget(kinds_);
  layout->addWidget(wholeName_);
  layout->addWidget(regex_);
  layout->addWidget(previous_);
  layout->addWidget(next_);
  layout->addWidget(count_);

  typing_ = new QTimer(this);
  typing_->setSingleShot(true);
  typing_->setInterval(kTypingDelayMs);
  connect(typing_, &QTimer::timeout, this, [this] { run(Pick::None); });
  connect(field_, &QLineEdit::textEdited, this, &TimelineSearchBar::fieldsChanged);
  connect(kinds_, &QComboBox::activated, this, &TimelineSearchBar::fieldsChanged);
  connect(wholeName_, &QCheckBox::clicked, this, &TimelineSearchBar::fieldsChanged);
  connect(regex_, &QCheckBox::clicked, this, &TimelineSearchBar::fieldsChanged);
  connect(field_, &QLineEdit::textChanged, this, [this](const QString& text) {
    if (text.isEmpty()) fieldsChanged();  // the clear button
  });
  connect(previous_, &QToolButton::clicked, this, &TimelineSearchBar::previous);
  connect(next_, &QToolButton::clicked, this, &TimelineSearchBar::next);
  updateCount();
}

TimelineQuery TimelineSearchBar::query() const {
  TimelineQuery q;
  q.text = field_->text();
  q.mode = regex_->isChecked()       ? TimelineQuery::Mode::Regex
           : wholeName_->isChecked() ? TimelineQuery::Mode::WholeName
                                     : TimelineQuery::Mode::Substring;
  q.kinds = kinds_->currentData().toUInt();
  return q;
}

bool TimelineSearchBar::timelineReady() const {
  return data_ && data_->has(Analysis::Timeline) && data_->error(Analysis::Timeline).isEmpty();
}

void TimelineSearchBar::setCapture(const CaptureDataPtr& capture) {
  const bool changed = capture != data_;
  data_ = capture;
  if (changed) {
    matches_.reset();
    current_ = -1;
    request_ = 0;
    if (pick_ == Pick::Target) pick_ = Pick::None;  // it named an item of the other capture
  }
  if (changed || waiting_) {
    if (!query().text.isEmpty()) {
      run(pick_);
    } else {
      updateCount();
    }
  }
}

void TimelineSearchBar::fieldsChanged() {
  pick_ = Pick::None;
  typing_->start();
}

void TimelineSearchBar::search(const TimelineQuery& q) {
  {
    const QSignalBlocker blockField(field_), blockRegex(regex_), blockWhole(wholeName_);
    field_->setText(q.text);
    regex_->setChecked(q.mode == TimelineQuery::Mode::Regex);
    wholeName_->setChecked(q.mode == TimelineQuery::Mode::WholeName);
    int kind = kinds_->findData(q.kinds);
    if (kind < 0) {
      kinds_->addItem(QStringLiteral("Custom"), q.kinds);
      kind = kinds_->count() - 1;
    }
    kinds_->setCurrentIndex(kind);
  }
  run(Pick::None);
}

void TimelineSearchBar::showTarget(const TimelineTarget& target) {
  search(target.query);
  target_ = target;
  pick_ = Pick::Target;  // the search just sent picks the target's match
}

void TimelineSearchBar::run(Pick pick) {
  typing_->stop();
  pick_ = pick;
  current_ = -1;
  targetMissing_ = false;
  const TimelineQuery q = query();
  if (q.text.isEmpty() || !data_) {
    request_ = 0;
    waiting_ = false;
    matches_.reset();
    widget_->setHighlightedNames({});
    updateCount();
    return;
  }
  if (!timelineReady()) {
    request_ = 0;
    waiting_ = data_ && !data_->has(Analysis::Timeline);  // searched once it is in
    matches_.reset();
    updateCount();
    return;
  }
  waiting_ = false;
  CaptureLoader* loader = loader_();
  if (loader != connected_) {
    if (connected_) disconnect(connected_, nullptr, this, nullptr);
    connected_ = loader;
    connect(loader, &CaptureLoader::timelineSearchReady, this, &TimelineSearchBar::take);
    connect(loader, &QObject::destroyed, this, [this] { connected_ = nullptr; });
  }
  request_ = loader->requestTimelineSearch(data_, q);
  updateCount();
}

void TimelineSearchBar::take(quint64 request, const std::shared_ptr<const TimelineMatches>& found) {
  if (request != request_ || !found) return;  // an older search, or another page's
  request_ = 0;
  matches_ = found;
  current_ = -1;
  widget_->setHighlightedNames(found->drawnNames);
  const Pick pick = pick_;
  pick_ = Pick::None;
  const auto& m = found->matches;
  if (pick == Pick::Next) {
    step(1);
  } else if (pick == Pick::Previous) {
    step(-1);
  } else if (pick == Pick::Target && m.empty()) {
    targetMissing_ = true;
  } else if (pick == Pick::Target) {
    int chosen = -1;
    for (std::size_t i = 0; i < m.size() && chosen < 0; ++i) {
      const bool fits = target_.fromNs ? m[i].start_ns >= *target_.fromNs
                                       : (!data_->window || data_->window->contains(m[i].start_ns));
      if (fits) chosen = static_cast<int>(i);
    }
    go(chosen >= 0 ? chosen : 0);
  }
  updateCount();
  Q_EMIT finished();
}

void TimelineSearchBar::next() { step(1); }

void TimelineSearchBar::previous() { step(-1); }

void TimelineSearchBar::step(int direction) {
  // Fields changed since the last search (or it is still running): search, then step.
  if (!matches_ || !(matches_->query == query()) || request_ != 0 || typing_->isActive()) {
    run(direction > 0 ? Pick::Next : Pick::Previous);
    return;
  }
  const auto& m = matches_->matches;
  if (m.empty()) return;
  const int n = static_cast<int>(m.size());
  int index = 0;
  if (current_ >= 0) {
    index = ((current_ + direction) % n + n) % n;
  } else {
    // The first step starts from the view: the first match at or after its start (next), the
    // last one before it (previous), wrapping round.
    const double start = widget_->viewStart();
    const auto from = std::isfinite(start) && std::abs(start) < 9.2e18
                          ? static_cast<std::int64_t>(start)
                          : std::numeric_limits<std::int64_t>::min();
    const auto at = std::lower_bound(
        m.begin(), m.end(), from,
        [](const TimelineMatch& match, std::int64_t t) { return match.start_ns < t; });
    const int first = static_cast<int>(at - m.begin());
    index = direction > 0 ? (first < n ? first : 0) : (first > 0 ? first - 1 : n - 1);
  }
  go(index);
}

void TimelineSearchBar::go(int index) {
  if (!matches_ || index < 0 || index >= static_cast<int>(matches_->matches.size()) ||
      !timelineReady()) {
    return;
  }
  const TimelineMatch& match = matches_->matches[static_cast<std::size_t>(index)];
  const analyzer::TimelineItem* item = itemOf(data_->timeline, match);
  if (!item) return;
  current_ = index;
  widget_->revealItem(item, static_cast<int>(match.lane), static_cast<int>(match.row));
  updateCount();
  Q_EMIT matchShown(index);
}

QString TimelineSearchBar::countText() const { return count_->text(); }

void TimelineSearchBar::updateCount() {
  const bool any = matches_ && !matches_->matches.empty();
  previous_->setEnabled(any || request_ != 0);
  next_->setEnabled(any || request_ != 0);
  count_->setStyleSheet(QString());
  if (request_ != 0) {
    count_->setText(QStringLiteral("searching…"));
  } else if (waiting_) {
    count_->setText(QStringLiteral("waiting for the timeline…"));
  } else if (!matches_) {
    count_->clear();
  } else if (!matches_->error.isEmpty()) {
    count_->setStyleSheet(QStringLiteral("color: #b00020"));
    count_->setText(matches_->error);
  } else if (!any) {
    count_->setText(targetMissing_ ? QStringLiteral("not on the timeline")
                                   : QStringLiteral("no match"));
  } else {
    const auto n = static_cast<qlonglong>(matches_->matches.size());
    count_->setText(
        current_ >= 0
            ? QStringLiteral("%1 of %2").arg(current_ + 1).arg(n)
            : QStringLiteral("%1 match%2").arg(n).arg(n == 1 ? QString() : QStringLiteral("es")));
  }
}

}  // namespace fuselens::gui
