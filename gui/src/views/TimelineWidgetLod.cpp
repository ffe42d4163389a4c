// TimelineWidget with a stored level of detail (TimelineWidget.h, "Stored level of detail"):
// choosing between the stored buckets and a loaded window, the window cache, and the coverage
// bars drawn from the buckets.

#include <QPainter>

#include <algorithm>
#include <cmath>
#include <limits>

#include "views/TimelineWidget.h"

namespace fuselens::gui {

using analyzer::LaneKind;

namespace {

/// ns as int64, clamped (a view may reach past the int64 range on a hostile capture).
std::int64_t clampNs(double ns) {
  constexpr double lo = -4.0e18, hi = 4.0e18;
  return static_cast<std::int64_t>(std::clamp(std::floor(ns), lo, hi));
}

QColor lodColor(LaneKind kind) {
  // As the merged items of TimelineWidget.cpp: the same bars whether rows or buckets drew them.
  return kind == LaneKind::Gpu ? QColor(0x4a, 0x6f, 0x96) : QColor(0x7b, 0x86, 0x92);
}

}  // namespace

std::pair<std::int64_t, std::int64_t> TimelineWidget::loadedWindow() const {
  if (!window_) return {0, 0};
  return {windowT0_, windowT1_};
}

const analyzer::LodRow* TimelineWidget::lodRow(int lane, int row) const {
  if (!data_ || !data_->timelineLod || lane < 0 || row < 0 ||
      static_cast<std::size_t>(lane) >= lodRows_.size()) {
    return nullptr;
  }
  const auto& of = lodRows_[static_cast<std::size_t>(lane)];
  if (static_cast<std::size_t>(row) >= of.size() || of[static_cast<std::size_t>(row)] < 0) {
    return nullptr;
  }
  return &data_->timelineLod->rows[static_cast<std::size_t>(of[static_cast<std::size_t>(row)])];
}

void TimelineWidget::updateWindow() {
  if (!data_ || !data_->timelineLod) return;
  const auto& lod = *data_->timelineLod;
  const std::int64_t v0 = clampNs(viewStart_), v1 = clampNs(viewEnd_) + 1;
  if (window_ && windowT0_ <= v0 && v1 <= windowT1_) {
    lodMode_ = false;
    return;
  }
  const auto itemsIn = [&](std::int64_t a, std::int64_t b) {
    std::int64_t n = 0;
    for (const auto& r : lod.rows) {
      // Saturating: a hostile capture's counts may be near 2^63.
      const std::int64_t k = analyzer::lod_items(r, a, b);
      if (k > windowItems_ - n) return std::numeric_limits<std::int64_t>::max();
      n += k;
    }
    return n;
  };
  const auto previous = window_;
  if (itemsIn(v0, v1) > windowItems_) {
    window_.reset();  // too much to load: drawn from the buckets
    lodMode_ = true;
  } else {
    auto hit = std::find_if(cache_.begin(), cache_.end(),
                            [&](const LoadedWindow& w) { return w.t0 <= v0 && v1 <= w.t1; });
    if (hit == cache_.end()) {
      // The view and as much again on each side, when that still fits (panning reads less).
      const std::int64_t span = v1 - v0;
      std::int64_t t0 = v0, t1 = v1;
      if (itemsIn(v0 - span, v1 + span) <= windowItems_) {
        t0 = v0 - span;
        t1 = v1 + span;
      }
      if (!reader_) reader_ = data_->capture->open_reader(db::TimestampCheck::DeferLargeTables);
      LoadedWindow loaded{t0, t1, nullptr};
      try {
        loaded.timeline = std::make_shared<const analyzer::Timeline>(
            analyzer::load_timeline_window(*reader_, lod, t0, t1));
      } catch (const std::exception&) {
        // A damaged row inside the window: the buckets still draw it.
        reader_.reset();
        window_.reset();
        lodMode_ = true;
        if (previous != window_) takeNames();
        return;
      }
      ++windowLoads_;
      cache_.push_back(std::move(loaded));
      if (cache_.size() > static_cast<std::size_t>(kWindowCache)) cache_.erase(cache_.begin());
      hit = cache_.end() - 1;
    } else {
      std::rotate(hit, hit + 1, cache_.end());  // most recently used last
      hit = cache_.end() - 1;
    }
    window_ = hit->timeline;
    windowT0_ = hit->t0;
    windowT1_ = hit->t1;
    lodMode_ = false;
  }
  if (previous != window_) {
    takeNames();
    highlighted_.clear();  // name indexes of another timeline
  }
}

double TimelineWidget::lodColumnCoverage(const analyzer::LodRow& row, int column, int width) const {
  const double nsPerPx = (viewEnd_ - viewStart_) / std::max(1, width);
  const double from = viewStart_ + column * nsPerPx;
  const auto t0 = static_cast<std::int64_t>(std::floor(from));
  const auto t1 = static_cast<std::int64_t>(std::floor(from + nsPerPx));
  if (t1 <= t0) return 0;
  const double busy = static_cast<double>(analyzer::lod_busy_ns(row, t0, t1, t1 - t0));
  return std::clamp(busy / static_cast<double>(t1 - t0), 0.0, 1.0);
}

void TimelineWidget::paintLodRow(QPainter& p, LaneKind kind, const analyzer::LodRow& row,
                                 const QRect& area, int y, int h) {
  const int width = area.width();
  const double nsPerPx = (viewEnd_ - viewStart_) / std::max(1, width);
  // Only the columns of the row's items: [first_ns, last_ns].
  const int c0 = std::max(
      0, static_cast<int>(std::floor((static_cast<double>(row.first_ns) - viewStart_) / nsPerPx)));
  const int c1 = std::min(
      width - 1,
      static_cast<int>(std::ceil((static_cast<double>(row.last_ns) - viewStart_) / nsPerPx)));
  if (row.item_count == 0 || c1 < c0) return;
  // Integer rectangles, one per run of columns of the same height (the raster engine fills
  // those without rasterizing a path): the bar of each column, at least a pixel where anything
  // runs.
  const QColor color = lodColor(kind);
  const int base = y + h;
  int runStart = c0, runBar = 0;
  const auto flush = [&](int end) {
    if (runBar > 0)
      p.fillRect(QRect(area.left() + runStart, base - runBar, end - runStart, runBar), color);
  };
  for (int c = c0; c <= c1; ++c) {
    const double fraction = lodColumnCoverage(row, c, width);
    const int bar = fraction > 0 ? std::max(1, static_cast<int>(std::lround(fraction * h))) : 0;
    stats_.lodColumns += bar > 0;
    if (bar != runBar) {
      flush(c);
      runStart = c;
      runBar = bar;
    }
  }
  flush(c1 + 1);
  ++stats_.blocks;
  const std::int64_t merged = analyzer::lod_items(row, clampNs(viewStart_), clampNs(viewEnd_) + 1);
  stats_.mergedItems = merged > std::numeric_limits<std::int64_t>::max() - stats_.mergedItems
                           ? std::numeric_limits<std::int64_t>::max()
                           : stats_.mergedItems + merged;
}

}  // namespace fuselens::gui
