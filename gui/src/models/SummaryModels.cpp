#include "models/SummaryModels.h"

#include "Format.h"

namespace fuselens::gui {

QStringList statsHeaders(const QString& instances) {
  return {QStringLiteral("Time (%)"), QStringLiteral("Total Time"), instances,
          QStringLiteral("Avg"),      QStringLiteral("Med"),        QStringLiteral("Min"),
          QStringLiteral("Max"),      QStringLiteral("StdDev")};
}

QString statsHeaderToolTip(int column) {
  switch (column) {
    case TimePercent:
      return QStringLiteral("Share of the summed total time of all rows of this table");
    case Total:
      return QStringLiteral("Sum of the durations (overlapping ones add up)");
    case Instances:
      return QStringLiteral("Number of records");
    case Med:
      return QStringLiteral("Median duration (mean of the two middle values for an even count)");
    case StdDev:
      return QStringLiteral("Sample standard deviation (n - 1)");
    default:
      return {};
  }
}

QVariant statsCell(const analyzer::DurationStats& s, double timePercent, int column, int role) {
  switch (column) {
    case TimePercent:
      return TableModel::numberCell(timePercent, formatPercent(timePercent), role);
    case Total:
      return TableModel::numberCell(static_cast<double>(s.total_ns),
                                          formatDuration(static_cast<double>(s.total_ns)), role);
    case Instances:
      return TableModel::numberCell(static_cast<double>(s.count), formatCount(s.count), role);
    case Avg:
      return TableModel::numberCell(s.avg_ns, formatDuration(s.avg_ns), role);
    case Med:
      return TableModel::numberCell(s.median_ns, formatDuration(s.median_ns), role);
    case Min:
      return TableModel::numberCell(static_cast<double>(s.min_ns),
                                          formatDuration(static_cast<double>(s.min_ns)), role);
    case Max:
      return TableModel::numberCell(static_cast<double>(s.max_ns),
                                          formatDuration(static_cast<double>(s.max_ns)), role);
    case StdDev:
      return TableModel::numberCell(s.stddev_ns, formatDuration(s.stddev_ns), role);
    default:
      return {};
  }
}

// --- kernels ---------------------------------------------------------------------------------

KernelSummaryModel::KernelSummaryModel(QObject* parent)
    : RowsModel(statsHeaders(QStringLiteral("Instances")) << QStringLiteral("Name"), parent) {}

QVariant KernelSummaryModel::cell(int row, int column, int role) const {
  const auto& r = rowAt(row);
  if (column < StatsColumns) return statsCell(r.stats, r.time_percent, column, role);
  return textCell(toQString(r.name), role);
}

QString KernelSummaryModel::headerToolTip(int column) const { return statsHeaderToolTip(column); }

// --- memory operations -----------------------------------------------------------------------

MemoryOperationModel::MemoryOperationModel(QObject* parent)
    : RowsModel(statsHeaders(QStringLiteral("Count"))
                    << QStringLiteral("Total Size") << QStringLiteral("Throughput")
                    << QStringLiteral("Operation"),
                parent) {}

QVariant MemoryOperationModel::cell(int row, int column, int role) const {
  const auto& r = rowAt(row);
  if (column < StatsColumns) return statsCell(r.stats, r.time_percent, column, role);
  switch (column - StatsColumns) {
    case 0:
      return numberCell(static_cast<double>(r.total_bytes),
                        formatBytes(static_cast<double>(r.total_bytes)), role);
    case 1:
      return numberCell(r.throughput_gb_per_s,
                        QString::number(r.throughput_gb_per_s, 'f', 3) + QStringLiteral(" GB/s"),
                        role);
    default:
      return textCell(toQString(r.name), role);
  }
}

QString MemoryOperationModel::headerToolTip(int column) const {
  if (column == StatsColumns + 1) return QStringLiteral("Total size / total time, 1 GB = 1e9 bytes");
  return statsHeaderToolTip(column);
}

// --- API calls -------------------------------------------------------------------------------

ApiSummaryModel::ApiSummaryModel(QObject* parent)
    : RowsModel(statsHeaders(QStringLiteral("Num Calls")) << QStringLiteral("Name"), parent) {}

QVariant ApiSummaryModel::cell(int row, int column, int role) const {
  const auto& r = rowAt(row);
  if (column < StatsColumns) return statsCell(r.stats, r.time_percent, column, role);
  return textCell(toQString(r.name), role);
}

QString ApiSummaryModel::headerToolTip(int column) const { return statsHeaderToolTip(column); }

// --- NVTX ranges -----------------------------------------------------------------------------

NvtxSummaryModel::NvtxSummaryModel(QObject* parent)
    : RowsModel(statsHeaders(QStringLiteral("Instances"))
                    << QStringLiteral("Unterminated") << QStringLiteral("Kernels")
                    << QStringLiteral("Left Out") << QStringLiteral("GPU Time")
                    << QStringLiteral("Range"),
                parent) {}

QVariant NvtxSummaryModel::cell(int row, int column, int role) const {
  const auto& r = rowAt(row);
  if (column < StatsColumns) return statsCell(r.stats, r.time_percent, column, role);
  switch (column - StatsColumns) {
    case 0:
      return numberCell(static_cast<double>(r.unterminated), formatCount(r.unterminated), role);
    case 1:
      return numberCell(static_cast<double>(r.kernel_count), formatCount(r.kernel_count), role);
    case 2:
      return numberCell(static_cast<double>(r.left_out_kernels), formatCount(r.left_out_kernels),
                        role);
    case 3:
      return numberCell(static_cast<double>(r.gpu_time_ns),
                        formatDuration(static_cast<double>(r.gpu_time_ns)), role);
    default:
      return textCell(toQString(r.name), role);
  }
}

QString NvtxSummaryModel::headerToolTip(int column) const {
  switch (column - StatsColumns) {
    case 1:
      return QStringLiteral(
          "Kernels whose launching API call started inside the range: on any thread of its "
          "process (process projection, the default) or on its own thread (thread projection)");
    case 2:
      return QStringLiteral(
          "Kernels launched inside the range by other threads of its process that the "
          "projection left out (0 under the process projection)");
    case 3:
      return QStringLiteral("Summed GPU duration of the counted kernels (GPU projection)");
    default:
      return statsHeaderToolTip(column);
  }
}

// --- device memory ---------------------------------------------------------------------------

DeviceMemoryModel::DeviceMemoryModel(QObject* parent)
    : RowsModel({QStringLiteral("Device"), QStringLiteral("Peak"), QStringLiteral("Peak At"),
                 QStringLiteral("Allocations"), QStringLiteral("Releases"),
                 QStringLiteral("In Use At End")},
                parent) {}

QVariant DeviceMemoryModel::cell(int row, int column, int role) const {
  const auto& r = rowAt(row);
  switch (column) {
    case 0:
      return textCell(QStringLiteral("GPU %1 %2").arg(r.device_id).arg(toQString(r.device_name)),
                      role);
    case 1:
      return numberCell(static_cast<double>(r.peak_bytes),
                        formatBytes(static_cast<double>(r.peak_bytes)), role);
    case 2:
      return numberCell(static_cast<double>(r.peak_time_ns),
                        QString::number(r.peak_time_ns) + QStringLiteral(" ns"), role);
    case 3:
      return numberCell(static_cast<double>(r.allocations), formatCount(r.allocations), role);
    case 4:
      return numberCell(static_cast<double>(r.releases), formatCount(r.releases), role);
    default:
      return numberCell(static_cast<double>(r.bytes_at_end),
                        formatBytes(static_cast<double>(r.bytes_at_end)), role);
  }
}

}  // namespace fuselens::gui
