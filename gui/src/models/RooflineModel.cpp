#include "models/RooflineModel.h"

#include <cmath>

#include "Format.h"

namespace fuselens::gui {


using analyzer::MemoryLevel;
using analyzer::WorkSource;

std::optional<double> RooflinePoint::intensity() const {
  return result.intensity[static_cast<std::size_t>(MemoryLevel::Dram)];
}

std::vector<RooflinePoint> rooflinePoints(const analyzer::RooflineReport& report, bool ranges) {
  std::vector<RooflinePoint> points;
  for (const auto& row : ranges ? report.ranges : report.kernels) {
    for (const auto* entry :
         {row.counters ? &*row.counters : nullptr, row.annotation ? &*row.annotation : nullptr}) {
      if (!entry) continue;
      RooflinePoint p;
      p.name = row.name;
      p.isRange = ranges;
      p.source = entry->source;
      p.gpuTimeNs = row.gpu_time_ns;
      p.instances = row.instances;
      p.work = entry->work;
      p.result = entry->result;
      p.projectedNs = entry->projected_ns;
      points.push_back(std::move(p));
    }
  }
  return points;
}

QString shortName(const RooflinePoint& p) {
  const QString name = toQString(p.name);
  if (p.isRange) return name;
  int depth = 0;
  qsizetype end = name.size(), start = 0;
  for (qsizetype i = 0; i < name.size(); ++i) {
    const QChar c = name[i];
    if (c == QLatin1Char('<')) ++depth;
    if (c == QLatin1Char('>')) --depth;
    if (depth == 0 && c == QLatin1Char('(')) {
      end = i;
      break;
    }
    if (depth == 0 && c == QLatin1Char(':') && i + 1 < name.size() &&
        name[i + 1] == QLatin1Char(':'))
      start = i + 2;
  }
  return end > start ? name.mid(start, end - start) : name;
}

namespace {

/// `value` scaled to the largest SI prefix (up to tera) that keeps it at 1 or more.
QString withPrefix(double value, const QString& unit) {
  static const char* const prefixes[] = {"", "k", "M", "G", "T", "P"};
  int i = 0;
  while (std::abs(value) >= 1000 && i < 5) {
    value /= 1000;
    ++i;
  }
  const int decimals = std::abs(value) >= 100 ? 1 : 2;
  return QStringLiteral("%1 %2%3")
      .arg(value, 0, 'f', i == 0 ? 0 : decimals)
      .arg(QLatin1String(prefixes[i]), unit);
}

}  // namespace

QString formatFlopRate(double flopsPerSecond) {
  return withPrefix(flopsPerSecond, QStringLiteral("FLOP/s"));
}

QString formatFlops(double flops) { return withPrefix(flops, QStringLiteral("FLOP")); }

QString formatIntensity(double flopPerByte) {
  if (flopPerByte >= 100) return QString::number(flopPerByte, 'f', 0);
  return QString::number(flopPerByte, 'g', 3);
}

QString formatBound(const std::string& bound) {
  const auto colon = bound.find(':');
  if (colon == std::string::npos) return toQString(bound);
  QString level = toQString(bound.substr(colon + 1));
  if (bound.compare(0, colon, "memory") == 0) level = level.toUpper();  // DRAM, L2, L1
  return QStringLiteral("%1: %2").arg(toQString(bound.substr(0, colon)), level);
}

QString formatSource(WorkSource source) {
  return source == WorkSource::Counters ? QStringLiteral("hardware counters")
                                        : QStringLiteral("declared work");
}

QString formatTera(double value) {
  return value >= 1000 ? QString::number(value, 'f', 0) : QString::number(value, 'g', 3);
}

RooflineModel::RooflineModel(QObject* parent)
    : RowsModel(
          {QStringLiteral("Name"), QStringLiteral("Source"), QStringLiteral("GPU Time"),
           QStringLiteral("Efficiency"), QStringLiteral("Bound"), QStringLiteral("FLOP/B"),
           QStringLiteral("Achieved"), QStringLiteral("Projected"), QStringLiteral("Instances"),
           QStringLiteral("FLOPs"), QStringLiteral("DRAM Bytes"), QStringLiteral("Attainable")},
          parent) {}

QVariant RooflineModel::cell(int row, int column, int role) const {
  const RooflinePoint& p = rowAt(row);
  const auto& r = p.result;
  switch (column) {
    case Name:
      if (role == Qt::DecorationRole) {
        return p.plotted() ? QVariant(colorForName(toQString(p.name))) : QVariant();
      }
      if (role == Qt::ToolTipRole) {
        if (p.plotted()) return toQString(p.name);
        return QStringLiteral("%1\n(not on the chart: %2)")
            .arg(toQString(p.name), p.intensity()
                                        ? QStringLiteral("no floating-point work")
                                        : QStringLiteral("no DRAM bytes, so no DRAM intensity"));
      }
      if (role == RawRole) return toQString(p.name);
      return textCell(shortName(p), role);
    case GpuTime:
      return numberCell(p.gpuTimeNs, formatDuration(p.gpuTimeNs), role);
    case Intensity: {
      const auto i = p.intensity();
      if (!i) return role == Qt::DisplayRole ? QVariant(QStringLiteral("—")) : QVariant();
      return numberCell(*i, formatIntensity(*i), role);
    }
    case Achieved:
      return numberCell(r.achieved_flops_per_s, formatFlopRate(r.achieved_flops_per_s), role);
    case Bound:
      return textCell(formatBound(r.bound) + (r.complete ? QString() : QStringLiteral("*")), role);
    case Efficiency:
      return numberCell(r.efficiency, formatPercent(r.efficiency * 100), role);
    case Source:
      if (role == RawRole) return QString::fromLatin1(analyzer::to_string(p.source));
      if (role == Qt::ToolTipRole) return formatSource(p.source);
      return textCell(p.source == WorkSource::Counters ? QStringLiteral("counters")
                                                       : QStringLiteral("declared"),
                      role);
    case Projected:
      if (!p.projectedNs)
        return role == Qt::DisplayRole ? QVariant(QStringLiteral("—")) : QVariant();
      return numberCell(*p.projectedNs, formatDuration(*p.projectedNs), role);
    case Instances:
      return numberCell(static_cast<double>(p.instances), formatCount(p.instances), role);
    case Flops:
      return numberCell(r.flops, formatFlops(r.flops), role);
    case DramBytes: {
      const auto b = p.work.bytes_at(MemoryLevel::Dram);
      if (!b) return role == Qt::DisplayRole ? QVariant(QStringLiteral("—")) : QVariant();
      return numberCell(*b, formatBytes(*b), role);
    }
    default:
      return numberCell(r.attainable_flops_per_s, formatFlopRate(r.attainable_flops_per_s), role);
  }
}

QString RooflineModel::headerToolTip(int column) const {
  switch (column) {
    case GpuTime:
      return QStringLiteral("Sum of the durations of the kernels (of a range: launched inside it)");
    case Intensity:
      return QStringLiteral("Arithmetic intensity: FLOPs per byte moved to or from DRAM");
    case Achieved:
      return QStringLiteral("FLOPs / GPU time");
    case Bound:
      return QStringLiteral("The ceiling that sets the floor time (* : some work has no ceiling)");
    case Efficiency:
      return QStringLiteral("Floor time at the chosen peaks / GPU time = achieved / attainable");
    case Attainable:
      return QStringLiteral("FLOPs / floor time: min(peak, intensity × bandwidth) for one class");
    case Projected:
      return QStringLiteral(
          "When the peaks are another GPU's: the floor time there divided by the efficiency "
          "reached "
          "on the capture's own GPU");
    case Source:
      return QStringLiteral(
          "counters: hardware counters (prof-run --metrics roofline); declared: "
          "fuselens/annotate.h");
    default:
      return {};
  }
}


}  // namespace fuselens::gui
