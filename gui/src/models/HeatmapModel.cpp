#include "models/HeatmapModel.h"

#include <QBrush>

#include <algorithm>
#include <cmath>
#include <map>

#include "Format.h"

namespace fuselens::gui {

const std::vector<HeatmapMetricInfo>& heatmapMetrics() {
  static const std::vector<HeatmapMetricInfo> metrics = {
      {HeatmapMetric::Latency, QStringLiteral("Latency (median GPU time per iteration)"), false},
      {HeatmapMetric::Speedup, QStringLiteral("Speedup over the baseline variant"), true},
      {HeatmapMetric::PeakMemory, QStringLiteral("Peak device memory"), false},
      {HeatmapMetric::Throughput, QStringLiteral("Throughput (items or iterations per second)"), true},
      {HeatmapMetric::Kernels, QStringLiteral("Kernels per iteration"), false},
      {HeatmapMetric::Launches, QStringLiteral("Launches per iteration"), false},
      {HeatmapMetric::SpanLatency, QStringLiteral("Span (median GPU span per iteration, launch gaps included)"),
       false},
      {HeatmapMetric::SpanSpeedup, QStringLiteral("Span speedup over the baseline variant"), true},
  };
  return metrics;
}

QString formatHeatmapValue(HeatmapMetric metric, double value) {
  switch (metric) {
    case HeatmapMetric::Latency:
    case HeatmapMetric::SpanLatency:
      return formatDuration(value);
    case HeatmapMetric::Speedup:
    case HeatmapMetric::SpanSpeedup:
      return QString::number(value, 'f', 2) + QStringLiteral("×");
    case HeatmapMetric::PeakMemory:
      return formatBytes(value);
    case HeatmapMetric::Throughput:
      if (value >= 1e9) return QString::number(value / 1e9, 'f', 2) + QStringLiteral(" G/s");
      if (value >= 1e6) return QString::number(value / 1e6, 'f', 2) + QStringLiteral(" M/s");
      if (value >= 1e3) return QString::number(value / 1e3, 'f', 2) + QStringLiteral(" k/s");
      return QString::number(value, 'f', 1) + QStringLiteral(" /s");
    case HeatmapMetric::Kernels:
    case HeatmapMetric::Launches:
      return QString::number(value, 'f', 2);
  }
  return QString::number(value);
}

namespace {

std::optional<double> figure(const analyzer::RangeStats& r, HeatmapMetric metric) {
  switch (metric) {
    case HeatmapMetric::Latency:
    case HeatmapMetric::Speedup:
      return r.median_gpu_ns_per_iter;
    case HeatmapMetric::SpanLatency:
    case HeatmapMetric::SpanSpeedup:
      return r.median_span_ns_per_iter;
    case HeatmapMetric::PeakMemory:
      return static_cast<double>(r.max_peak_bytes());
    case HeatmapMetric::Throughput:
      return r.items_per_s ? *r.items_per_s : r.iterations_per_s;
    case HeatmapMetric::Kernels:
      return r.kernels_per_iter;
    case HeatmapMetric::Launches:
      return r.launches_per_iter;
  }
  return std::nullopt;
}

}  // namespace

Heatmap buildHeatmap(const std::vector<analyzer::RangeStats>& ranges, HeatmapMetric metric,
                     const QString& baselineVariant) {
  struct Parsed {
    QString row, variant;
    const analyzer::RangeStats* stats;
  };
  std::vector<Parsed> parsed, twoSegments;
  for (const auto& r : ranges) {
    const QStringList parts = toQString(r.name).split(QLatin1Char('/'));
    if (parts.size() >= 3) {
      parsed.push_back({parts[0] + QStringLiteral(" · ") + parts.mid(2).join(QLatin1Char('/')), parts[1], &r});
    } else if (parts.size() == 2) {
      twoSegments.push_back({parts[0] + QStringLiteral(" · –"), parts[1], &r});
    }
  }
  if (parsed.empty()) parsed = std::move(twoSegments);

  Heatmap h;
  h.metric = metric;
  for (const auto& info : heatmapMetrics()) {
    if (info.metric == metric) h.higherIsBetter = info.higherIsBetter;
  }
  std::map<QString, int> rowIndex, columnIndex;
  for (const auto& p : parsed) {
    rowIndex.emplace(p.row, 0);
    columnIndex.emplace(p.variant, 0);
  }
  for (auto& [name, index] : rowIndex) {
    index = static_cast<int>(h.rows.size());
    h.rows << name;
  }
  for (auto& [name, index] : columnIndex) {
    index = static_cast<int>(h.columns.size());
    h.columns << name;
  }
  const auto cells = static_cast<std::size_t>(h.rows.size() * h.columns.size());
  h.values.assign(cells, std::nullopt);
  h.rangeNames.assign(cells, QString());
  for (const auto& p : parsed) {
    const auto i = static_cast<std::size_t>(rowIndex[p.row] * h.columns.size() + columnIndex[p.variant]);
    h.values[i] = figure(*p.stats, metric);
    h.rangeNames[i] = toQString(p.stats->name);
  }
  if (isSpeedup(metric) && !h.columns.isEmpty()) {
    const int base = std::max(0, static_cast<int>(h.columns.indexOf(baselineVariant)));
    for (int r = 0; r < h.rows.size(); ++r) {
      const auto baseline = h.at(r, base);
      for (int c = 0; c < h.columns.size(); ++c) {
        auto& v = h.values[static_cast<std::size_t>(r * h.columns.size() + c)];
        if (v && baseline && *v > 0) {
          v = *baseline / *v;
        } else {
          v.reset();
        }
      }
    }
  }
  bool first = true;
  for (const auto& v : h.values) {
    if (!v) continue;
    h.min = first ? *v : std::min(h.min, *v);
    h.max = first ? *v : std::max(h.max, *v);
    first = false;
  }
  return h;
}

QColor heatmapColor(const Heatmap& h, double value) {
  const QColor good(0x2e, 0x9e, 0x5b), mid(0xf7, 0xf4, 0xe8), bad(0xd7, 0x4b, 0x3c);
  auto mix = [](const QColor& a, const QColor& b, double t) {
    t = std::clamp(t, 0.0, 1.0);
    return QColor::fromRgbF(static_cast<float>(a.redF() + (b.redF() - a.redF()) * t),
                            static_cast<float>(a.greenF() + (b.greenF() - a.greenF()) * t),
                            static_cast<float>(a.blueF() + (b.blueF() - a.blueF()) * t));
  };
  if (isSpeedup(h.metric)) {
    // Log scale centred on 1: white at 1, green for speedups, red for slowdowns.
    const double extent = std::max({std::abs(std::log(std::max(h.max, 1e-9))),
                                    std::abs(std::log(std::max(h.min, 1e-9))), 1e-9});
    const double t = std::log(std::max(value, 1e-9)) / extent;
    return t >= 0 ? mix(mid, good, t) : mix(mid, bad, -t);
  }
  // Log scale when the values span more than a decade (latencies across shapes).
  double t = 0.5;
  if (h.max > h.min) {
    const bool log = h.min > 0 && h.max / h.min > 10;
    t = log ? (std::log(value) - std::log(h.min)) / (std::log(h.max) - std::log(h.min))
            : (value - h.min) / (h.max - h.min);
  }
  if (h.higherIsBetter) t = 1 - t;  // t = 0: best
  return t < 0.5 ? mix(good, mid, t * 2) : mix(mid, bad, (t - 0.5) * 2);
}

HeatmapModel::HeatmapModel(QObject* parent) : TableModel({}, parent) {}

void HeatmapModel::setHeatmap(Heatmap heatmap) {
  beginReset();
  heatmap_ = std::move(heatmap);
  setHeaders(QStringList{QStringLiteral("Op · shape")} + heatmap_.columns);
  endReset();
}

QVariant HeatmapModel::headerData(int section, Qt::Orientation orientation, int role) const {
  return TableModel::headerData(section, orientation, role);
}

QVariant HeatmapModel::cell(int row, int column, int role) const {
  if (column == 0) {
    if (role == Qt::FontRole) return {};
    return textCell(heatmap_.rows[row], role);
  }
  const auto value = heatmap_.at(row, column - 1);
  const QString& range = heatmap_.rangeNames[static_cast<std::size_t>(row * heatmap_.columns.size() + column - 1)];
  if (!value) {
    if (role == Qt::DisplayRole) return QStringLiteral("–");
    if (role == Qt::TextAlignmentRole) return QVariant::fromValue(Qt::Alignment(Qt::AlignCenter));
    if (role == Qt::ToolTipRole) return QStringLiteral("No range for this variant and shape");
    return {};
  }
  const QString text = formatHeatmapValue(heatmap_.metric, *value);
  switch (role) {
    case Qt::BackgroundRole:
      return QBrush(heatmapColor(heatmap_, *value));
    case Qt::ForegroundRole:
      return QBrush(QColor(0x10, 0x10, 0x10));
    case Qt::TextAlignmentRole:
      return QVariant::fromValue(Qt::Alignment(Qt::AlignCenter));
    case Qt::ToolTipRole:
      return QStringLiteral("%1\n%2 = %3").arg(range, heatmapMetrics()[static_cast<std::size_t>(heatmap_.metric)].name, text);
    default:
      return numberCell(*value, text, role);
  }
}

}  // namespace fuselens::gui
