#include "export/ExportRankLanes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "export/ExportHtmlWidgets.h"
#include "fuselens/db/ActivityCursors.h"
#include "fuselens/db/Saturating.h"
#include "fuselens/db/Strings.h"
#include "fuselens/db/TraceCursors.h"
#include "ranks/Ranks.h"
#include "summary/SummaryFormat.h"

namespace fuselens::analyzer {
namespace {

constexpr std::int64_t kNoRank = std::numeric_limits<std::int64_t>::max();

/// end - start, or nothing when the row is inverted or the difference overflows.
std::optional<std::int64_t> duration(std::int64_t start, std::int64_t end) {
  std::int64_t d = 0;
  if (end < start || __builtin_sub_overflow(end, start, &d)) return std::nullopt;
  return d;
}

using db::saturating_add;

/// Sorts `bars` by start and merges neighbours of one kind closer than `resolution` ns.
std::vector<RankLaneBar> merge(std::vector<RankLaneBar> bars, std::int64_t resolution) {
  std::sort(bars.begin(), bars.end(), [](const RankLaneBar& a, const RankLaneBar& b) {
    return std::tie(a.communication, a.start_ns) < std::tie(b.communication, b.start_ns);
  });
  std::vector<RankLaneBar> out;
  for (const auto& bar : bars) {
    if (!out.empty() && out.back().communication == bar.communication) {
      const auto gap = duration(out.back().end_ns, bar.start_ns);
      if (!gap || *gap < resolution) {  // overlapping or closer than a pixel
        out.back().end_ns = std::max(out.back().end_ns, bar.end_ns);
        continue;
      }
    }
    out.push_back(bar);
  }
  std::stable_sort(out.begin(), out.end(), [](const RankLaneBar& a, const RankLaneBar& b) {
    return a.start_ns < b.start_ns;
  });
  return out;
}

/// A tick label: format_duration without trailing zeros ("500 µs", "1.5 ms").
std::string tick(double ns) {
  std::string text = format_duration(ns);
  const auto dot = text.find('.');
  const auto space = text.find(' ');
  if (dot == std::string::npos || space == std::string::npos || space < dot) return text;
  auto end = space;
  while (end > dot + 1 && text[end - 1] == '0') --end;
  if (end == dot + 1) end = dot;
  return text.substr(0, end) + text.substr(space);
}

}  // namespace

std::optional<RankLaneStrip> load_rank_lane_strip(const db::Reader& reader) {
  std::unordered_map<std::int64_t, std::int32_t> rank_of;
  for (const auto& r : reader.process_ranks()) rank_of.emplace(r.pid, r.rank);
  if (rank_of.empty()) return std::nullopt;
  const auto rank_key = [&](std::int64_t pid) -> std::int64_t {
    const auto it = rank_of.find(pid);
    return it == rank_of.end() ? kNoRank : it->second;
  };

  RankLaneStrip strip;
  strip.begin_ns = std::numeric_limits<std::int64_t>::max();
  strip.end_ns = std::numeric_limits<std::int64_t>::min();
  const auto extend = [&](std::int64_t a, std::int64_t b) {
    strip.begin_ns = std::min(strip.begin_ns, a);
    strip.end_ns = std::max(strip.end_ns, b);
  };
  // (rank or kNoRank, device, pid) -> lane
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, RankLane> lanes;
  const auto lane_of = [&](std::int64_t pid, std::int64_t device) -> RankLane& {
    auto& lane = lanes[{rank_key(pid), device, pid}];
    lane.pid = static_cast<std::uint32_t>(pid);
    lane.device_id = static_cast<std::uint32_t>(device);
    return lane;
  };

  db::StringLookup names(reader);
  std::unordered_map<std::int64_t, bool> communication_name;
  auto kernels = db::kernel_details(reader, NameKind::Short);
  while (auto k = kernels.next()) {
    const auto d = duration(k->start_ns, k->end_ns);
    if (!d) continue;
    auto known = communication_name.find(k->name_id);
    if (known == communication_name.end()) {
      bool comm = false;
      names.with(k->name_id, [&](const std::string& n) { comm = is_communication_kernel(n, n); });
      known = communication_name.emplace(k->name_id, comm).first;
    }
    RankLane& lane = lane_of(k->pid, k->device_id);
    lane.bars.push_back({k->start_ns, k->end_ns, known->second});
    ++lane.kernels;
    lane.busy_ns = saturating_add(lane.busy_ns, *d);
    if (known->second) {
      ++lane.communication_kernels;
      lane.communication_ns = saturating_add(lane.communication_ns, *d);
    }
    extend(k->start_ns, k->end_ns);
  }
  auto copies = db::copy_details(reader);
  while (auto c = copies.next()) {
    if (c->copy_kind != static_cast<std::int64_t>(db::MemcpyKind::PeerToPeer)) continue;
    if (!duration(c->start_ns, c->end_ns)) continue;
    lane_of(c->pid, c->device_id).bars.push_back({c->start_ns, c->end_ns, true});
    extend(c->start_ns, c->end_ns);
  }
  if (lanes.empty()) return std::nullopt;

  std::map<std::int64_t, RankSteps> steps;
  auto ranges = db::nvtx_ranges(reader, /*with_style=*/false);
  while (auto r = ranges.next()) {
    const auto rank = rank_key(r->pid);
    if (r->depth != 0 || !r->end_ns || rank == kNoRank || !duration(r->start_ns, *r->end_ns)) {
      continue;
    }
    auto& s = steps[rank];
    s.rank = static_cast<std::int32_t>(rank);
    s.ranges.emplace_back(r->start_ns, *r->end_ns);
    extend(r->start_ns, *r->end_ns);
  }

  const auto span = duration(strip.begin_ns, strip.end_ns).value_or(0);
  const std::int64_t resolution =
      std::max<std::int64_t>(1, span / static_cast<std::int64_t>(kMaxBarsPerLane));
  for (auto& [key, lane] : lanes) {
    const auto rank = std::get<0>(key);
    lane.rank = rank == kNoRank ? -1 : static_cast<std::int32_t>(rank);
    lane.title =
        (lane.rank >= 0 ? "rank " + std::to_string(lane.rank) : "pid " + std::to_string(lane.pid)) +
        " · GPU " + std::to_string(lane.device_id);
    lane.bars = merge(std::move(lane.bars), resolution);
    strip.lanes.push_back(std::move(lane));
  }
  for (auto& [rank, s] : steps) {
    std::sort(s.ranges.begin(), s.ranges.end());
    // Only ranges wider than the resolution keep their own box; the rest merge with neighbours.
    std::vector<std::pair<std::int64_t, std::int64_t>> kept;
    for (const auto& range : s.ranges) {
      if (!kept.empty() && duration(kept.back().first, range.second).value_or(0) < resolution) {
        kept.back().second = std::max(kept.back().second, range.second);
      } else {
        kept.push_back(range);
      }
    }
    s.ranges = std::move(kept);
    strip.steps.push_back(std::move(s));
  }
  return strip;
}

std::string svg_rank_lanes(const RankLaneStrip& strip) {
  constexpr double kWidth = 1160, kLeft = 150, kRight = kWidth - 10, kTop = 40;
  constexpr double kStepRow = 10, kHalf = 9, kLaneGap = 6, kRankGap = 8;
  constexpr const char* kCompute = "#4a6f96";
  constexpr const char* kComm = "#e8893c";
  const double span = static_cast<double>(duration(strip.begin_ns, strip.end_ns).value_or(0));
  const double scale = span > 0 ? (kRight - kLeft) / span : 0;
  const auto px = [&](std::int64_t t) {
    return kLeft + static_cast<double>(duration(strip.begin_ns, t).value_or(0)) * scale;
  };
  std::string body;
  double y = kTop;
  std::int64_t previous_rank = std::numeric_limits<std::int64_t>::min();
  for (const auto& lane : strip.lanes) {
    if (lane.rank != previous_rank) {
      if (previous_rank != std::numeric_limits<std::int64_t>::min()) y += kRankGap;
      previous_rank = lane.rank;
      const auto steps = std::find_if(strip.steps.begin(), strip.steps.end(),
                                      [&](const RankSteps& s) { return s.rank == lane.rank; });
      if (lane.rank >= 0 && steps != strip.steps.end()) {
        body += fmt::format(
            "<text class=\"tick\" x=\"{:.0f}\" y=\"{:.1f}\" text-anchor=\"end\">rank {} "
            "steps</text>",
            kLeft - 6, y + kStepRow - 1, lane.rank);
        bool odd = false;
        for (const auto& [a, b] : steps->ranges) {
          body += fmt::format(
              "<rect class=\"step\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.0f}\" "
              "fill=\"{}\" stroke=\"#6b7280\" stroke-width=\"0.5\"/>",
              px(a), y, std::max(0.5, px(b) - px(a)), kStepRow - 2, odd ? "#c9ced6" : "#e2e5ea");
          odd = !odd;
        }
        y += kStepRow;
      }
    }
    body += fmt::format(
        "<text class=\"bar-label\" x=\"{:.0f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>",
        kLeft - 6, y + kHalf + 4, html_escape(lane.title));
    body += fmt::format(
        "<rect x=\"{:.0f}\" y=\"{:.1f}\" width=\"{:.0f}\" height=\"{:.0f}\" fill=\"#f3f4f6\"/>",
        kLeft, y, kRight - kLeft, 2 * kHalf);
    for (const auto& bar : lane.bars) {
      body += fmt::format(
          "<rect class=\"{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.0f}\" "
          "fill=\"{}\"/>",
          bar.communication ? "comm" : "compute", px(bar.start_ns),
          bar.communication ? y + kHalf : y, std::max(0.5, px(bar.end_ns) - px(bar.start_ns)),
          kHalf - 1, bar.communication ? kComm : kCompute);
    }
    y += 2 * kHalf + kLaneGap;
  }
  // Time axis, relative to the strip's start.
  std::string axis =
      fmt::format("<line class=\"axis\" x1=\"{:.0f}\" x2=\"{:.0f}\" y1=\"{:.1f}\" y2=\"{:.1f}\"/>",
                  kLeft, kRight, y, y);
  if (span > 0) {
    double step = std::pow(10.0, std::floor(std::log10(span / 8)));
    for (const double m : {1.0, 2.0, 5.0, 10.0}) {
      if (span / (step * m) <= 10) {
        step *= m;
        break;
      }
    }
    for (double t = 0; t <= span * (1 + 1e-9); t += step) {
      const double x = kLeft + t * scale;
      axis += fmt::format(
          "<line class=\"axis\" x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\"/>"
          "<text class=\"tick\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>",
          x, x, y, y + 4, x, y + 17, html_escape(tick(t)));
    }
  }
  const double height = y + 26;
  std::string out = fmt::format(
      "<svg class=\"chart rank-lanes\" viewBox=\"0 0 {:.0f} {:.0f}\" width=\"100%\" role=\"img\" "
      "xmlns=\"http://www.w3.org/2000/svg\"><title>Kernels per rank and device</title>"
      "<text class=\"chart-title\" x=\"0\" y=\"16\">Kernels per rank and device</text>",
      kWidth, height);
  out += fmt::format(
      "<rect x=\"{:.0f}\" y=\"6\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{:.0f}\" "
      "y=\"16\">computation</text><rect x=\"{:.0f}\" y=\"6\" width=\"12\" height=\"12\" "
      "fill=\"{}\"/><text x=\"{:.0f}\" y=\"16\">communication (NCCL, peer copies)</text>",
      kWidth - 420, kCompute, kWidth - 402, kWidth - 300, kComm, kWidth - 282);
  return out + body + axis + "</svg>\n";
}

}  // namespace fuselens::analyzer
