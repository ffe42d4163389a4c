// TimelineWidget's lookups for the Timeline page's search and the tables' jumps: finding a kernel
// by name, showing an item (zoom, scroll, select) and outlining the search's matches. Drawing
// and layout are in TimelineWidget.cpp, input in TimelineWidgetInput.cpp.

#include <QScrollBar>

#include <algorithm>

#include "views/TimelineWidget.h"

namespace fuselens::gui {

using analyzer::LaneKind;
using analyzer::TimelineItem;
using analyzer::TimelineItemKind;

const TimelineItem* TimelineWidget::findKernel(const QString& name, std::int64_t fromNs) const {
  const auto* t = timeline();
  if (!t) return nullptr;
  const TimelineItem* best = nullptr;
  for (const auto& lane : t->lanes) {
    if (lane.kind != LaneKind::Gpu) continue;
    for (const auto& row : lane.rows) {
      for (std::size_t i = analyzer::first_starting_at(row, 0, fromNs); i < row.items.size(); ++i) {
        const auto& item = row.items[i];
        if (item.kind != TimelineItemKind::Kernel || names_[item.name] != name) continue;
        if (!best || item.start_ns < best->start_ns) best = &item;
        break;
      }
    }
  }
  return best;
}

void TimelineWidget::scrollToRow(int lane, int row) {
  for (const auto& track : tracks_) {
    if (track.lane != lane || track.row != row) continue;
    const int visible = std::max(0, height() - kRulerHeight);
    if (track.y >= scrollY_ && track.y + track.height <= scrollY_ + visible) return;
    // Centre the row (the scroll bar clamps at the ends).
    vbar_->setValue(track.y + track.height / 2 - visible / 2);
    return;
  }
}

void TimelineWidget::revealItem(const TimelineItem* item, int lane, int row) {
  if (!item) return;
  reveal(item->start_ns, item->end_ns);
  scrollToRow(lane, row);
  select(item);
}

void TimelineWidget::setHighlightedNames(std::vector<char> names) {
  highlighted_ = std::move(names);
  update();
}

}  // namespace fuselens::gui
