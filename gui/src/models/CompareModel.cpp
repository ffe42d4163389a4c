#include "models/CompareModel.h"

#include <QBrush>
#include <QColor>

#include "Format.h"

namespace fuselens::gui {


namespace {

QVariant optionalNumber(const std::optional<double>& value, const QString& text, int role) {
  if (!value) return role == Qt::DisplayRole ? QVariant(QStringLiteral("–")) : QVariant();
  return TableModel::numberCell(*value, text, role);
}

/// Green when better, red when worse.
QVariant changeColor(const std::optional<double>& deltaPercent, int role) {
  if (role != Qt::ForegroundRole || !deltaPercent) return {};
  if (*deltaPercent < -1) return QBrush(QColor(0x1b, 0x7f, 0x2a));
  if (*deltaPercent > 1) return QBrush(QColor(0xb7, 0x1c, 0x1c));
  return {};
}

}  // namespace

CompareEntryModel::CompareEntryModel(QObject* parent)
    : RowsModel({QStringLiteral("Op"), QStringLiteral("Shape"), QStringLiteral("Baseline"),
                 QStringLiteral("Candidate"), QStringLiteral("Baseline / iter"),
                 QStringLiteral("Candidate / iter"), QStringLiteral("Speedup"),
                 QStringLiteral("Δ time"), QStringLiteral("Baseline span / iter"),
                 QStringLiteral("Candidate span / iter"), QStringLiteral("Span speedup"),
                 QStringLiteral("Kernels / iter (B)"),
                 QStringLiteral("Kernels / iter (C)")},
                parent) {}

QVariant CompareEntryModel::cell(int row, int column, int role) const {
  const auto& e = rowAt(row);
  const auto median = [](const std::optional<analyzer::RangeStats>& s) -> std::optional<double> {
    if (!s) return std::nullopt;
    return s->median_gpu_ns_per_iter;
  };
  const auto span = [](const std::optional<analyzer::RangeStats>& s) -> std::optional<double> {
    if (!s) return std::nullopt;
    return s->median_span_ns_per_iter;
  };
  const auto kernels = [](const std::optional<analyzer::RangeStats>& s) -> std::optional<double> {
    if (!s) return std::nullopt;
    return s->kernels_per_iter;
  };
  switch (column) {
    case Op:
      return textCell(toQString(e.op), role);
    case Shape:
      return textCell(toQString(e.shape), role);
    case BaselineVariant:
      return textCell(toQString(e.baseline_variant), role);
    case CandidateVariant:
      return textCell(toQString(e.candidate_variant), role);
    case BaselineMedian: {
      const auto m = median(e.baseline);
      return optionalNumber(m, m ? formatDuration(*m) : QString(), role);
    }
    case CandidateMedian: {
      const auto m = median(e.candidate);
      return optionalNumber(m, m ? formatDuration(*m) : QString(), role);
    }
    case Speedup: {
      if (role == Qt::ForegroundRole) {
        const auto d = e.slowdown_percent();
        return changeColor(d, role);
      }
      return optionalNumber(e.speedup, e.speedup ? QString::number(*e.speedup, 'f', 2) + QStringLiteral("×") : QString(),
                            role);
    }
    case DeltaPercent: {
      const auto d = e.slowdown_percent();
      if (role == Qt::ForegroundRole) return changeColor(d, role);
      return optionalNumber(d, d ? QString::asprintf("%+.1f %%", *d) : QString(), role);
    }
    case BaselineSpan: {
      const auto m = span(e.baseline);
      return optionalNumber(m, m ? formatDuration(*m) : QString(), role);
    }
    case CandidateSpan: {
      const auto m = span(e.candidate);
      return optionalNumber(m, m ? formatDuration(*m) : QString(), role);
    }
    case SpanSpeedup: {
      if (role == Qt::ForegroundRole) return changeColor(e.slowdown_percent(analyzer::TimeBasis::Span), role);
      return optionalNumber(e.span_speedup,
                            e.span_speedup ? QString::number(*e.span_speedup, 'f', 2) + QStringLiteral("×") : QString(),
                            role);
    }
    case BaselineKernels: {
      const auto k = kernels(e.baseline);
      return optionalNumber(k, k ? QString::number(*k, 'f', 2) : QString(), role);
    }
    case CandidateKernels: {
      const auto k = kernels(e.candidate);
      return optionalNumber(k, k ? QString::number(*k, 'f', 2) : QString(), role);
    }
    default:
      return {};
  }
}

QString CompareEntryModel::headerToolTip(int column) const {
  switch (column) {
    case BaselineMedian:
    case CandidateMedian:
      return QStringLiteral("Median over range instances of the GPU time of the kernels launched "
                            "inside, divided by the range's iterations (its NVTX payload)");
    case Speedup:
      return QStringLiteral("Baseline / candidate median per iteration; above 1: the candidate is faster");
    case DeltaPercent:
      return QStringLiteral("(candidate / baseline - 1) × 100 of the median per iteration");
    case BaselineSpan:
    case CandidateSpan:
      return QStringLiteral("Median over range instances of the GPU span, from the earliest start to the latest "
                            "end of the kernels, copies and memsets launched inside (launch gaps included, what "
                            "CUDA events around the loop measure), divided by the range's iterations");
    case SpanSpeedup:
      return QStringLiteral("Baseline / candidate median span per iteration; above 1: the candidate is faster");
    default:
      return {};
  }
}

KernelDiffModel::KernelDiffModel(QObject* parent)
    : RowsModel({QStringLiteral("Change"), QStringLiteral("Count (A)"), QStringLiteral("Count (B)"),
                 QStringLiteral("Median (A)"), QStringLiteral("Median (B)"), QStringLiteral("Δ median"),
                 QStringLiteral("Total (A)"), QStringLiteral("Total (B)"), QStringLiteral("Kernel")},
                parent) {}

QVariant KernelDiffModel::cell(int row, int column, int role) const {
  const auto& k = rowAt(row);
  switch (column) {
    case Change:
      if (role == Qt::ForegroundRole) return changeColor(k.change_percent, role);
      return textCell(QString::fromUtf8(analyzer::to_string(k.change)), role);
    case BaselineCount:
      return numberCell(static_cast<double>(k.baseline_count), formatCount(k.baseline_count), role);
    case CandidateCount:
      return numberCell(static_cast<double>(k.candidate_count), formatCount(k.candidate_count), role);
    case BaselineMedian:
      return numberCell(k.baseline_median_ns, formatDuration(k.baseline_median_ns), role);
    case CandidateMedian:
      return numberCell(k.candidate_median_ns, formatDuration(k.candidate_median_ns), role);
    case DeltaPercent:
      if (role == Qt::ForegroundRole) return changeColor(k.change_percent, role);
      return optionalNumber(k.change_percent,
                            k.change_percent ? QString::asprintf("%+.1f %%", *k.change_percent) : QString(),
                            role);
    case BaselineTotal:
      return numberCell(static_cast<double>(k.baseline_total_ns),
                        formatDuration(static_cast<double>(k.baseline_total_ns)), role);
    case CandidateTotal:
      return numberCell(static_cast<double>(k.candidate_total_ns),
                        formatDuration(static_cast<double>(k.candidate_total_ns)), role);
    default:
      return textCell(toQString(k.name), role);
  }
}


}  // namespace fuselens::gui

namespace fuselens::gui {

QPair<QString, QString> suggestRangePatterns(const QStringList& rangeNames) {
  QStringList variants;
  for (const auto& name : rangeNames) {
    const QStringList parts = name.split(QLatin1Char('/'));
    if (parts.size() >= 3 && !variants.contains(parts[1])) variants << parts[1];
  }
  if (variants.size() < 2) return {};
  variants.sort();
  QString baseline = variants.contains(QStringLiteral("unfused")) ? QStringLiteral("unfused")
                     : variants.contains(QStringLiteral("baseline")) ? QStringLiteral("baseline")
                                                                       : variants[0];
  QString candidate;
  for (const auto& v : {QStringLiteral("fused"), QStringLiteral("candidate")}) {
    if (variants.contains(v) && v != baseline) {
      candidate = v;
      break;
    }
  }
  if (candidate.isEmpty()) {
    for (const auto& v : variants) {
      if (v != baseline) {
        candidate = v;
        break;
      }
    }
  }
  return {QStringLiteral("*/%1/*").arg(baseline), QStringLiteral("*/%1/*").arg(candidate)};
}

}  // namespace fuselens::gui
