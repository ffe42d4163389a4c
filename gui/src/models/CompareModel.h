#pragma once
// CompareModels: analyzer::CompareReport (Compare.h) as two tables.
//   CompareEntryModel  one row per paired (or unpaired) range: Op, Shape, Baseline, Candidate,
//                      baseline and candidate median GPU time per iteration, Speedup
//                      (baseline / candidate, > 1: the candidate is faster), Δ %, median GPU
//                      span per iteration of each side (first start to last end, launch gaps
//                      included) and the span speedup, kernels per iteration of each side;
//   KernelDiffModel    the two-capture kernel diff: Change, counts, medians, Δ %, Name.

#include <QPair>
#include <QStringList>

#include "models/TableModel.h"
#include "compare/Compare.h"

namespace fuselens::gui {

class CompareEntryModel : public RowsModel<analyzer::CompareEntry> {
  Q_OBJECT
 public:
  enum Column {
    Op, Shape, BaselineVariant, CandidateVariant, BaselineMedian, CandidateMedian, Speedup,
    DeltaPercent, BaselineSpan, CandidateSpan, SpanSpeedup, BaselineKernels, CandidateKernels,
    Columns
  };
  explicit CompareEntryModel(QObject* parent = nullptr);
  int nameColumn() const override { return Op; }

 protected:
  QVariant cell(int row, int column, int role) const override;
  QString headerToolTip(int column) const override;
};

class KernelDiffModel : public RowsModel<analyzer::KernelDiffRow> {
  Q_OBJECT
 public:
  enum Column {
    Change, BaselineCount, CandidateCount, BaselineMedian, CandidateMedian, DeltaPercent,
    BaselineTotal, CandidateTotal, Name
  };
  explicit KernelDiffModel(QObject* parent = nullptr);

 protected:
  QVariant cell(int row, int column, int role) const override;
};

}  // namespace fuselens::gui

namespace fuselens::gui {

/// Baseline and candidate glob patterns for analyzer::compare_ranges from range names of the
/// form "op/variant/shape": "*/unfused/*" vs "*/fused/*" when those variants exist, else the
/// first two variants in name order; empty strings when the names have no such structure.
QPair<QString, QString> suggestRangePatterns(const QStringList& rangeNames);

}  // namespace fuselens::gui
