#include "TimelineSearch.h"

#include <QRegularExpression>

#include <algorithm>
#include <tuple>

#include "Format.h"

namespace fuselens::gui {

using analyzer::TimelineItem;
using analyzer::TimelineItemKind;

namespace {

unsigned kindBit(TimelineItemKind kind) {
  switch (kind) {
    case TimelineItemKind::Kernel:
      return SearchKernels;
    case TimelineItemKind::Nvtx:
      return SearchRanges;
    case TimelineItemKind::Api:
      return SearchApi;
    case TimelineItemKind::Memcpy:
    case TimelineItemKind::Memset:
      return SearchCopies;
  }
  return 0;
}

}  // namespace

std::vector<char> matchingNames(const analyzer::Timeline& timeline, const TimelineQuery& query,
                                QString* error) {
  std::vector<char> out(timeline.names.size(), 0);
  if (error) error->clear();
  if (query.text.isEmpty()) return out;
  QRegularExpression regex;
  if (query.mode == TimelineQuery::Mode::Regex) {
    regex = QRegularExpression(query.text, QRegularExpression::CaseInsensitiveOption);
    if (!regex.isValid()) {
      if (error) *error = QStringLiteral("invalid regular expression: %1").arg(regex.errorString());
      return out;
    }
  }
  for (std::size_t i = 0; i < timeline.names.size(); ++i) {
    const QString name = toQString(timeline.names[i]);
    switch (query.mode) {
      case TimelineQuery::Mode::Substring:
        out[i] = name.contains(query.text, Qt::CaseInsensitive) ? 1 : 0;
        break;
      case TimelineQuery::Mode::WholeName:
        out[i] = name.compare(query.text, Qt::CaseInsensitive) == 0 ? 1 : 0;
        break;
      case TimelineQuery::Mode::Regex:
        out[i] = regex.match(name).hasMatch() ? 1 : 0;
        break;
    }
  }
  return out;
}

TimelineMatches searchTimeline(const analyzer::Timeline& timeline, const TimelineQuery& query) {
  TimelineMatches result;
  result.query = query;
  const std::vector<char> names = matchingNames(timeline, query, &result.error);
  if (std::find(names.begin(), names.end(), 1) == names.end()) return result;
  const auto named = [&](std::uint32_t index) { return index < names.size() && names[index]; };
  // Each row is sorted by start: its matches form a sorted run, and the runs are merged pairwise
  // (O(n log runs)), cheaper than sorting a million matches.
  std::vector<std::size_t> runs = {0};
  for (std::size_t l = 0; l < timeline.lanes.size(); ++l) {
    const auto& lane = timeline.lanes[l];
    for (std::size_t r = 0; r < lane.rows.size(); ++r) {
      const auto& items = lane.rows[r].items;
      for (std::size_t i = 0; i < items.size(); ++i) {
        const TimelineItem& item = items[i];
        if ((kindBit(item.kind) & query.kinds) == 0) continue;
        bool hit = named(item.name);
        if (!hit && item.kind == TimelineItemKind::Kernel && item.detail < timeline.kernels.size())
          hit = named(timeline.kernels[item.detail].demangled_name);
        if (!hit) continue;
        result.matches.push_back({item.start_ns, item.end_ns, static_cast<std::uint32_t>(l),
                                  static_cast<std::uint32_t>(r), static_cast<std::uint32_t>(i)});
        if (result.drawnNames.empty()) result.drawnNames.assign(timeline.names.size(), 0);
        if (item.name < result.drawnNames.size()) result.drawnNames[item.name] = 1;
      }
      if (result.matches.size() > runs.back()) runs.push_back(result.matches.size());
    }
  }
  const auto before = [](const TimelineMatch& a, const TimelineMatch& b) {
    return std::tie(a.start_ns, a.lane, a.row, a.index) <
           std::tie(b.start_ns, b.lane, b.row, b.index);
  };
  auto& m = result.matches;
  while (runs.size() > 2) {
    std::vector<std::size_t> merged = {0};
    for (std::size_t k = 0; k + 1 < runs.size(); k += 2) {
      const std::size_t end = k + 2 < runs.size() ? runs[k + 2] : runs[k + 1];
      if (k + 2 < runs.size()) {
        std::inplace_merge(m.begin() + static_cast<std::ptrdiff_t>(runs[k]),
                           m.begin() + static_cast<std::ptrdiff_t>(runs[k + 1]),
                           m.begin() + static_cast<std::ptrdiff_t>(end), before);
      }
      merged.push_back(end);
    }
    runs = std::move(merged);
  }
  return result;
}

const TimelineItem* itemOf(const analyzer::Timeline& timeline, const TimelineMatch& match) {
  if (match.lane >= timeline.lanes.size()) return nullptr;
  const auto& lane = timeline.lanes[match.lane];
  if (match.row >= lane.rows.size()) return nullptr;
  const auto& items = lane.rows[match.row].items;
  if (match.index >= items.size()) return nullptr;
  return &items[match.index];
}

TimelineTarget timelineTarget(const QString& name, unsigned kinds) {
  TimelineTarget target;
  target.query.text = name;
  target.query.mode = TimelineQuery::Mode::WholeName;
  target.query.kinds = kinds;
  return target;
}

QString timelineCopyName(const QString& summaryName) {
  static const QString memcpy = QStringLiteral("[CUDA memcpy ");
  if (summaryName == QStringLiteral("[CUDA memset]")) return QStringLiteral("Memset");
  if (summaryName.startsWith(memcpy) && summaryName.endsWith(QLatin1Char(']'))) {
    return QStringLiteral("Memcpy ") +
           summaryName.mid(memcpy.size(), summaryName.size() - memcpy.size() - 1);
  }
  return {};
}

}  // namespace fuselens::gui
