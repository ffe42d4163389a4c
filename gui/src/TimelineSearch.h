#pragma once
// TimelineSearch: finds the items of an analyzer::Timeline by name, for the Timeline page's search
// field and for the "Show in timeline" jumps of every table (TimelineTarget). Pure functions over
// the loaded timeline (no database access): the loader runs searchTimeline off the GUI thread
// (CaptureLoader::requestTimelineSearch), so a search over millions of items never blocks
// painting.
//
// Matching: each distinct name (Timeline::names) is tested once, then every item of the chosen
// kinds is checked by its name's index: O(names + items) per search. A kernel
// matches by its short name (what the timeline draws) or by its demangled name (what the Summary,
// Roofline and Calling Context tables show). Text matching is case-insensitive: a substring
// (default), the whole name, or a regular expression (QRegularExpression, Perl syntax).

#include <QMetaType>
#include <QString>

#include <cstdint>
#include <optional>
#include <vector>

#include "timeline/Timeline.h"

namespace fuselens::gui {

/// Which items a query looks at (a bit mask of these).
enum SearchKind : unsigned {
  SearchKernels = 1u << 0,
  SearchRanges = 1u << 1,  ///< NVTX ranges ("domain:text" when the domain is not empty)
  SearchApi = 1u << 2,     ///< CUDA runtime and driver calls
  SearchCopies = 1u << 3,  ///< memcpys ("Memcpy Host-to-Device") and memsets ("Memset")
  SearchNamed = SearchKernels | SearchRanges | SearchApi,  ///< the search field's default
  SearchAll = SearchNamed | SearchCopies,
};

struct TimelineQuery {
  enum class Mode { Substring, WholeName, Regex };
  QString text;  ///< empty: matches nothing
  Mode mode = Mode::Substring;
  unsigned kinds = SearchNamed;
  bool operator==(const TimelineQuery&) const = default;
};

/// One matching item: Timeline::lanes[lane].rows[row].items[index].
struct TimelineMatch {
  std::int64_t start_ns = 0, end_ns = 0;
  std::uint32_t lane = 0, row = 0, index = 0;
};

struct TimelineMatches {
  TimelineQuery query;
  /// Sorted by (start_ns, lane, row, index).
  std::vector<TimelineMatch> matches;
  /// Per index of Timeline::names: 1 when a matching item is drawn with that name (the
  /// widget outlines items with such names); empty when nothing matched.
  std::vector<char> drawnNames;
  /// Why the query matches nothing by construction ("invalid regular expression: ..."), empty
  /// otherwise.
  QString error;
};

/// Per index of `timeline.names`, whether the name matches `query`'s text (ignoring kinds); sets
/// `error` (when given) and returns all zeros for an invalid regular expression or empty text.
std::vector<char> matchingNames(const analyzer::Timeline& timeline, const TimelineQuery& query,
                                QString* error = nullptr);

/// Every item of `query.kinds` whose name matches, in time order.
TimelineMatches searchTimeline(const analyzer::Timeline& timeline, const TimelineQuery& query);

/// The item of `match` in `timeline`, or null when the indices do not address one (a match
/// of another timeline).
const analyzer::TimelineItem* itemOf(const analyzer::Timeline& timeline,
                                     const TimelineMatch& match);

/// What a table's "Show in timeline" looks for: the items named exactly (case-insensitive) as
/// the row, among the row's kinds. The Timeline page searches for them (so next / previous
/// step through every instance) and selects the first one that starts at or after fromNs
/// when given (Flags: the finding's first instance), else the first one that starts inside
/// the capture's window (the part the tables describe), else the first one in the capture.
struct TimelineTarget {
  TimelineQuery query;
  std::optional<std::int64_t> fromNs;
  bool valid() const { return !query.text.isEmpty() && query.kinds != 0; }
};

/// A target for items of `kinds` named `name` (whole name).
TimelineTarget timelineTarget(const QString& name, unsigned kinds);

/// The timeline name of a Summary memory-operation row ("[CUDA memcpy Host-to-Device]" ->
/// "Memcpy Host-to-Device", "[CUDA memset]" -> "Memset"); empty for any other text.
QString timelineCopyName(const QString& summaryName);

}  // namespace fuselens::gui

Q_DECLARE_METATYPE(fuselens::gui::TimelineTarget)
