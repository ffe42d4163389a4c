#include "models/StepsModel.h"

#include "Format.h"

namespace fuselens::gui {

StepsModel::StepsModel(QObject* parent)
    : RowsModel(
          {QStringLiteral("Step"), QStringLiteral("Wall"), QStringLiteral("GPU Busy"),
           QStringLiteral("Busy %"), QStringLiteral("Compute"), QStringLiteral("Non-compute"),
           QStringLiteral("Idle"), QStringLiteral("Host Wait"), QStringLiteral("Kernel Wait"),
           QStringLiteral("Other Wait"), QStringLiteral("Launches"), QStringLiteral("Copies"),
           QStringLiteral("Peak Memory"), QStringLiteral("State"), QStringLiteral("Top Kernel")},
          parent) {}

void StepsModel::setReport(const analyzer::StepReport* report) {
  steadyFirst_ = report ? report->steady_first : 0;
  outliers_ = report ? report->outliers : std::vector<analyzer::StepOutlier>{};
  setRows(report ? report->steps : std::vector<analyzer::Step>{});
}

QString StepsModel::state(int index) const {
  for (const auto& o : outliers_) {
    if (o.index == index) return QStringLiteral("outlier: ") + toQString(o.reason);
  }
  return steadyFirst_ > 0 && index >= steadyFirst_ ? QStringLiteral("steady")
                                                   : QStringLiteral("warm-up");
}

QVariant StepsModel::cell(int row, int column, int role) const {
  const analyzer::Step& s = rowAt(row);
  const auto duration = [role](std::int64_t ns) {
    return numberCell(static_cast<double>(ns), formatDuration(static_cast<double>(ns)), role);
  };
  const auto count = [role](std::int64_t n) {
    return numberCell(static_cast<double>(n), formatCount(n), role);
  };
  switch (column) {
    case Index:
      return count(s.index);
    case Wall:
      return duration(s.wall_ns());
    case GpuBusy:
      return duration(s.gpu_busy_ns);
    case BusyShare:
      return numberCell(100.0 * s.busy_share(), formatPercent(100.0 * s.busy_share()), role);
    case Compute:
      return duration(s.compute_ns);
    case NonCompute:
      return duration(s.non_compute_ns);
    case Idle:
      return duration(s.idle_ns);
    case HostWait:
      return duration(s.host_wait_ns);
    case KernelWait:
      return duration(s.kernel_wait_ns);
    case OtherWait:
      return duration(s.other_wait_ns);
    case Launches:
      return count(s.launches);
    case Copies:
      return count(s.copies);
    case PeakMemory:
      return numberCell(static_cast<double>(s.peak_memory_bytes),
                        formatBytes(static_cast<double>(s.peak_memory_bytes)), role);
    case State:
      return textCell(state(s.index), role);
    default:
      return textCell(toQString(s.top_kernel), role);
  }
}

QString StepsModel::headerToolTip(int column) const {
  switch (column) {
    case Wall:
      return QStringLiteral(
          "The step's CPU-side window (its NVTX range, step-function call or "
          "detected period)");
    case GpuBusy:
      return QStringLiteral("Union of the kernels, copies and memsets launched inside the step");
    case BusyShare:
      return QStringLiteral(
          "GPU busy time over the step's span (the window widened to its GPU "
          "work)");
    case Compute:
    case NonCompute:
    case Idle:
      return QStringLiteral(
          "Holistic Trace Analysis's temporal breakdown: kernels, copies and "
          "memsets outside kernels, the rest of the span");
    case HostWait:
    case KernelWait:
    case OtherWait:
      return QStringLiteral(
          "Holistic Trace Analysis's idle breakdown of the stream gaps: waiting "
          "for the next launch call, short gaps between kernels (<= 30 ns), "
          "the others");
    case State:
      return QStringLiteral(
          "warm-up: before the steady window (docs/windows.md); outlier: a "
          "steady step whose time is far from the median (docs/steps.md)");
    default:
      return {};
  }
}

}  // namespace fuselens::gui
