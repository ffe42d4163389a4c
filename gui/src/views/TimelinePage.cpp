#include "views/TimelinePage.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QShortcut>
#include <QSplitter>
#include <QTableView>
#include <QTextBrowser>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>

#include <exception>

#include "CaptureLoader.h"
#include "Format.h"
#include "cct/CallPath.h"
#include "models/CallPathModel.h"
#include "views/TimelineSearchBar.h"
#include "views/TimelineWidget.h"

namespace fuselens::gui {

using analyzer::TimelineItem;
using analyzer::TimelineItemKind;

TimelinePage::TimelinePage(QWidget* parent) : Page(QStringLiteral("Timeline"), parent) {
  auto* layout = new QVBoxLayout(this);
  auto* bar = new QHBoxLayout;
  auto button = [&](const QString& text, const QString& tip) {
    auto* b = new QToolButton(this);
    b->setText(text);
    b->setToolTip(tip);
    bar->addWidget(b);
    return b;
  };
  auto* zoomIn = button(QStringLiteral("Zoom in"), QStringLiteral("+ or mouse wheel"));
  auto* zoomOut = button(QStringLiteral("Zoom out"), QStringLiteral("- or mouse wheel"));
  auto* zoomAll = button(QStringLiteral("Show all"), QStringLiteral("Home or 0"));
  auto* hint = new QLabel(QStringLiteral("Wheel: zoom · drag on the ruler: zoom to a span · drag "
                                         "or ←/→: pan · Shift+wheel or ↑/↓: scroll lanes · "
                                         "click: select"),
                          this);
  hint->setStyleSheet(QStringLiteral("color: #555"));
  // The search bar beside it keeps its room: the hint shrinks (cut) in a narrow window and its
  // tooltip has it whole.
  hint->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  hint->setToolTip(hint->text());
  bar->addSpacing(12);
  bar->addWidget(hint, 1);
  layout->addLayout(bar);

  auto* splitter = new QSplitter(Qt::Vertical, this);
  timeline_ = new TimelineWidget(splitter);
  search_ = new TimelineSearchBar(
      timeline_, [this] { return loader(); }, this);
  bar->addWidget(search_);
  auto* find = new QShortcut(QKeySequence::Find, this);
  find->setContext(Qt::WidgetWithChildrenShortcut);
  connect(find, &QShortcut::activated, this, [this] {
    search_->field()->setFocus(Qt::ShortcutFocusReason);
    search_->field()->selectAll();
  });
  auto* bottom = new QSplitter(Qt::Horizontal, splitter);
  details_ = new QTextBrowser(bottom);
  details_->setObjectName(QStringLiteral("timelineDetails"));
  details_->setPlaceholderText(
      QStringLiteral("Click an item to see its details and launch context."));

  // The calling context: a line saying what is shown (or why nothing is), then the frames.
  auto* pathPanel = new QWidget(bottom);
  auto* pathLayout = new QVBoxLayout(pathPanel);
  pathLayout->setContentsMargins(0, 0, 0, 0);
  pathLayout->setSpacing(2);
  callPathStatus_ = new QLabel(pathPanel);
  callPathStatus_->setObjectName(QStringLiteral("callPathStatus"));
  callPathStatus_->setWordWrap(true);
  callPathStatus_->setTextFormat(Qt::RichText);
  callPathStatus_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  callPath_ = new CallPathModel(this);
  callPathView_ = new QTableView(pathPanel);
  callPathView_->setObjectName(QStringLiteral("callPathView"));
  callPathView_->setModel(callPath_);
  callPathView_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  callPathView_->setSelectionBehavior(QAbstractItemView::SelectRows);
  callPathView_->setAlternatingRowColors(true);
  callPathView_->setWordWrap(false);
  callPathView_->setTextElideMode(Qt::ElideRight);  // keep the name, cut the parameter list
  callPathView_->verticalHeader()->hide();
  callPathView_->verticalHeader()->setDefaultSectionSize(callPathView_->fontMetrics().height() + 4);
  // The function takes the room left by the short columns; the tooltip has it whole.
  auto* header = callPathView_->horizontalHeader();
  header->setStretchLastSection(false);
  for (int c : {CallPathModel::Depth, CallPathModel::Source, CallPathModel::Module}) {
    header->setSectionResizeMode(c, QHeaderView::ResizeToContents);
  }
  header->setSectionResizeMode(CallPathModel::Function, QHeaderView::Stretch);
  callPathView_->setToolTip(
      QStringLiteral("Outermost frame first, the launch site last. "
                     "Ctrl+C or the context menu copies the call path."));
  auto* copy = new QAction(QStringLiteral("Copy call path"), callPathView_);
  copy->setShortcut(QKeySequence::Copy);
  copy->setShortcutContext(Qt::WidgetShortcut);
  callPathView_->addAction(copy);
  callPathView_->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(copy, &QAction::triggered, this, &TimelinePage::copyCallPath);
  connect(
      callPathView_, &QWidget::customContextMenuRequested, this, [this, copy](const QPoint& at) {
        QMenu menu(callPathView_);
        menu.addAction(copy);
        const QModelIndex index = callPathView_->indexAt(at);
        QAction* frame = index.isValid() ? menu.addAction(QStringLiteral("Copy frame")) : nullptr;
        QAction* chosen = menu.exec(callPathView_->viewport()->mapToGlobal(at));
        if (chosen && chosen == frame) {
          QApplication::clipboard()->setText(
              CallPathModel::frameText(callPath_->rowAt(index.row())));
        }
      });
  pathLayout->addWidget(callPathStatus_);
  pathLayout->addWidget(callPathView_, 1);

  bottom->addWidget(details_);
  bottom->addWidget(pathPanel);
  bottom->setStretchFactor(0, 2);
  bottom->setStretchFactor(1, 3);
  bottom->setSizes({560, 840});
  splitter->addWidget(timeline_);
  splitter->addWidget(bottom);
  splitter->setStretchFactor(0, 4);
  splitter->setStretchFactor(1, 1);
  splitter->setSizes({580, 300});  // room for a dozen frames
  layout->addWidget(splitter, 1);

  connect(zoomIn, &QToolButton::clicked, timeline_,
          [this] { timeline_->zoom(0.5, timeline_->width() / 2.0); });
  connect(zoomOut, &QToolButton::clicked, timeline_,
          [this] { timeline_->zoom(2.0, timeline_->width() / 2.0); });
  connect(zoomAll, &QToolButton::clicked, timeline_, &TimelineWidget::zoomAll);
  connect(timeline_, &TimelineWidget::itemSelected, this, &TimelinePage::showDetails);
  connect(timeline_, &TimelineWidget::stepActivated, this,
          [this](int index) { Q_EMIT windowRequested(QStringLiteral("steps:%1").arg(index)); });
  connect(timeline_, &TimelineWidget::timeRangeSelected, this,
          [this](qint64 startNs, qint64 endNs) {
            if (data_) Q_EMIT windowRequested(timeWindow(startNs, endNs));
          });
}

QString TimelinePage::timeWindow(qint64 startNs, qint64 endNs) const {
  // Offsets from the capture's first activity (Window::capture_start_ns; the timeline's first
  // item before the window is resolved), clamped at 0.
  const qint64 origin = data_ && data_->window ? data_->window->capture_start_ns
                        : data_                ? data_->timeline.begin_ns
                                               : 0;
  const auto ms = [origin](qint64 ns) {
    return QString::number(static_cast<double>(std::max<qint64>(0, ns - origin)) / 1e6, 'f', 3) +
           QStringLiteral("ms");
  };
  return QStringLiteral("time:%1-%2").arg(ms(startNs), ms(endNs));
}

void TimelinePage::windowChanged(const CaptureDataPtr& capture, const QList<CaptureDataPtr>&) {
  if (capture == data_) timeline_->stepsChanged();
}

TimelinePage::~TimelinePage() = default;

void TimelinePage::setCaptures(const CaptureDataPtr& current, const QList<CaptureDataPtr>&) {
  if (current == data_) return;
  data_ = current;
  showTimeline();
}

void TimelinePage::analysisLoaded(const CaptureDataPtr& capture, Analysis analysis) {
  if (capture != data_) return;
  if (analysis == Analysis::Timeline) showTimeline();
  if (analysis == Analysis::Steps) timeline_->stepsChanged();
}

void TimelinePage::showTimeline() {
  const bool ready = data_ && data_->has(Analysis::Timeline);
  timeline_->setCapture(ready ? data_ : nullptr);
  if (!data_) {
    timeline_->setEmptyText(QStringLiteral("No capture open"));
  } else if (!ready) {
    timeline_->setEmptyText(QStringLiteral("Loading the timeline of %1…").arg(data_->displayName));
  } else if (!data_->error(Analysis::Timeline).isEmpty()) {
    timeline_->setCapture(nullptr);
    timeline_->setEmptyText(QStringLiteral("The timeline of %1 could not be loaded: %2")
                                .arg(data_->displayName, data_->error(Analysis::Timeline)));
  }
  showDetails(nullptr);
  search_->setCapture(data_);  // searched again (or once the timeline is in)
}

void TimelinePage::showInTimeline(const TimelineTarget& target) {
  if (target.valid()) search_->showTarget(target);
}

QWidget* TimelinePage::imageWidget() { return timeline_; }

bool TimelinePage::revealKernel(const QString& shortName, std::int64_t fromNs) {
  const TimelineItem* item = timeline_->findKernel(shortName, fromNs);
  if (!item) return false;
  timeline_->reveal(item->start_ns, item->end_ns);
  timeline_->select(item);
  return true;
}

bool TimelinePage::showLongestKernel() {
  if (!data_ || !data_->has(Analysis::Timeline)) return false;
  const auto& t = data_->timeline;
  // The longest kernel launched inside an NVTX range (checking at most 100k kernels), else the
  // longest kernel.
  const TimelineItem* longest = nullptr;
  const TimelineItem* longestInRange = nullptr;
  std::size_t checked = 0;
  const auto duration = [](const TimelineItem* i) { return i ? i->end_ns - i->start_ns : -1; };
  for (const auto& lane : t.lanes) {
    if (lane.kind != analyzer::LaneKind::Gpu) continue;
    for (const auto& item : lane.rows[0].items) {
      if (item.kind != TimelineItemKind::Kernel) continue;
      if (duration(&item) > duration(longest)) longest = &item;
      if (checked++ < 100000 && duration(&item) > duration(longestInRange) &&
          !analyzer::launch_context(t, item).ranges.empty()) {
        longestInRange = &item;
      }
    }
  }
  const TimelineItem* kernel = longestInRange ? longestInRange : longest;
  if (!kernel) return false;
  const auto context = analyzer::launch_context(t, *kernel);
  if (!context.ranges.empty()) {
    const auto* range = context.ranges.back();
    const double margin = static_cast<double>(range->end_ns - range->start_ns) * 0.02;
    timeline_->setView(static_cast<double>(range->start_ns) - margin,
                       static_cast<double>(range->end_ns) + margin);
  } else {
    timeline_->reveal(kernel->start_ns, kernel->end_ns);
  }
  timeline_->select(kernel);
  return true;
}

QString TimelinePage::detailsText() const { return details_->toPlainText(); }

QString TimelinePage::callPathStatus() const { return callPathStatus_->text(); }

void TimelinePage::copyCallPath() {
  if (callPath_->rowCount() > 0) QApplication::clipboard()->setText(callPath_->pathText());
}

void TimelinePage::showCallPath(const TimelineItem* item) {
  callPathRequest_ = 0;  // a lookup still running for the previous selection is dropped
  callPath_->setRows({});
  if (!item || !data_) {
    callPathStatus_->setText(
        QStringLiteral("<b>Calling context</b> · select a kernel, copy, memset "
                       "or API call to see the frames that launched it."));
    return;
  }
  const auto& t = *timeline_->timeline();  // the timeline (or loaded window) holding `item`
  std::uint32_t pid = 0, correlation = 0;
  switch (item->kind) {
    case TimelineItemKind::Kernel:
      pid = t.kernels[item->detail].pid;
      correlation = t.kernels[item->detail].correlation_id;
      break;
    case TimelineItemKind::Memcpy:
    case TimelineItemKind::Memset:
      pid = t.copies[item->detail].pid;
      correlation = t.copies[item->detail].correlation_id;
      break;
    case TimelineItemKind::Api:
      pid = t.api_calls[item->detail].pid;
      correlation = t.api_calls[item->detail].correlation_id;
      break;
    case TimelineItemKind::Nvtx:
      callPathStatus_->setText(
          QStringLiteral("<b>Calling context</b> · NVTX ranges have none: "
                         "select a kernel, copy, memset or API call."));
      return;
  }
  callPathStatus_->setText(QStringLiteral("<b>Calling context</b> · reading…"));
  callPathRequest_ = loader()->requestCallPath(data_, pid, correlation);
}

void TimelinePage::connectLoader(CaptureLoader* loader) {
  connect(loader, &CaptureLoader::callPathReady, this, &TimelinePage::takeCallPath);
}

void TimelinePage::takeCallPath(quint64 request,
                                const std::shared_ptr<const analyzer::CallPath>& found,
                                const QString& error) {
  if (request != callPathRequest_) return;  // the selection changed since
  callPathRequest_ = 0;
  if (!found) {
    callPathStatus_->setText(
        QStringLiteral("<b>Calling context</b> could not be read: %1").arg(error.toHtmlEscaped()));
    return;
  }
  const analyzer::CallPath& path = *found;
  if (path.status != analyzer::CallPath::Status::Found) {
    callPathStatus_->setText(QStringLiteral("<b>No calling context recorded</b> · %1")
                                 .arg(toQString(path.reason).toHtmlEscaped()));
    return;
  }
  const auto frames = path.frames.size();
  QString status = QStringLiteral(
                       "<b>Calling context</b> · thread %1 · %2 frame%3, outermost first, "
                       "launch site last")
                       .arg(path.tid)
                       .arg(frames)
                       .arg(frames == 1 ? QString() : QStringLiteral("s"));
  if (path.hidden_frames > 0) {
    status += QStringLiteral(" · %1 CUDA/collector frame%2 hidden")
                  .arg(path.hidden_frames)
                  .arg(path.hidden_frames == 1 ? QString() : QStringLiteral("s"));
  }
  callPathStatus_->setText(status);
  callPath_->setRows(path.frames);
  callPathView_->scrollToBottom();  // the launch site
}

void TimelinePage::showDetails(const TimelineItem* item) {
  showCallPath(item);
  if (!item || !data_) {
    details_->clear();
    return;
  }
  const auto& t = *timeline_->timeline();  // the timeline (or loaded window) holding `item`
  const auto name = [&](std::uint32_t i) { return toQString(t.names[i]).toHtmlEscaped(); };
  const double origin = static_cast<double>(t.begin_ns);
  QString html = QStringLiteral("<b>%1</b> &nbsp; <i>%2</i><br>")
                     .arg(name(item->name), QString::fromUtf8(analyzer::to_string(item->kind)));
  html += QStringLiteral("start %1 after the first record · duration %2 · end %3<br>")
              .arg(formatDuration(static_cast<double>(item->start_ns) - origin),
                   formatDuration(static_cast<double>(item->end_ns - item->start_ns)),
                   formatDuration(static_cast<double>(item->end_ns) - origin));
  switch (item->kind) {
    case TimelineItemKind::Kernel: {
      const auto& k = t.kernels[item->detail];
      html += QStringLiteral(
                  "%1<br>grid (%2, %3, %4) · block (%5, %6, %7) · %8 registers/thread · "
                  "shared %9 static + %10 dynamic · correlation id %11<br>")
                  .arg(name(k.demangled_name))
                  .arg(k.grid[0])
                  .arg(k.grid[1])
                  .arg(k.grid[2])
                  .arg(k.block[0])
                  .arg(k.block[1])
                  .arg(k.block[2])
                  .arg(k.registers_per_thread)
                  .arg(formatBytes(k.static_shared_bytes), formatBytes(k.dynamic_shared_bytes))
                  .arg(k.correlation_id);
      break;
    }
    case TimelineItemKind::Memcpy:
    case TimelineItemKind::Memset: {
      const auto& c = t.copies[item->detail];
      const double ns = static_cast<double>(item->end_ns - item->start_ns);
      html += QStringLiteral("%1 · %2 · %3 GB/s · correlation id %4<br>")
                  .arg(formatBytes(static_cast<double>(c.bytes)),
                       c.is_async ? QStringLiteral("asynchronous") : QStringLiteral("synchronous"))
                  .arg(ns > 0 ? static_cast<double>(c.bytes) / ns : 0.0, 0, 'f', 2)
                  .arg(c.correlation_id);
      break;
    }
    case TimelineItemKind::Api: {
      const auto& a = t.api_calls[item->detail];
      html += QStringLiteral("%1 API · thread %2 · correlation id %3 · return code %4<br>")
                  .arg(a.driver ? QStringLiteral("driver") : QStringLiteral("runtime"))
                  .arg(a.tid)
                  .arg(a.correlation_id)
                  .arg(a.return_code);
      break;
    }
    case TimelineItemKind::Nvtx: {
      const auto& r = t.nvtx_ranges[item->detail];
      html += QStringLiteral("thread %1 · depth %2%3%4<br>")
                  .arg(r.tid)
                  .arg(r.depth)
                  .arg(r.unterminated ? QStringLiteral(" · never ended") : QString())
                  .arg(r.payload ? QStringLiteral(" · payload %1").arg(*r.payload) : QString());
      break;
    }
  }
  const auto context = analyzer::launch_context(t, *item);
  if (context.call) {
    QStringList ranges;
    for (const auto* range : context.ranges) ranges << name(range->name);
    html += QStringLiteral("<b>Launched by</b> %1 on thread %2, %3 before the GPU started it")
                .arg(name(context.call->name))
                .arg(context.tid)
                .arg(formatDuration(static_cast<double>(item->start_ns - context.call->start_ns)));
    html += ranges.isEmpty()
                ? QStringLiteral(" · outside any NVTX range")
                : QStringLiteral(" · inside NVTX ") + ranges.join(QStringLiteral(" › "));
  } else if (item->kind != TimelineItemKind::Api && item->kind != TimelineItemKind::Nvtx) {
    html += QStringLiteral("<i>No launching API call in this capture (API tracing off?).</i>");
  }
  details_->setHtml(html);
}

}  // namespace fuselens::gui
