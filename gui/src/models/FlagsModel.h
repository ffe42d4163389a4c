#pragma once
// FlagsModel: the hits of analyzer::run_flags (Flags.h), one row each, in the report's order
// (by rule, then time at stake). Columns: Rule, Count, Time at Stake, Subject (the kernel,
// chain, copy kind or API call it names), Where (device/stream, thread, innermost NVTX range).

#include <vector>

#include "models/TableModel.h"
#include "flags/Flags.h"

namespace fuselens::gui {

class FlagsModel : public RowsModel<analyzer::Hit> {
  Q_OBJECT
 public:
  enum Column { Rule, Count, TimeAtStake, Subject, Where };
  int nameColumn() const override { return Subject; }
  explicit FlagsModel(QObject* parent = nullptr);

  /// "GPU 0 · stream 7 · thread 12 · in mlp/step3"
  static QString where(const analyzer::Hit& hit);

 protected:
  QVariant cell(int row, int column, int role) const override;
  QString headerToolTip(int column) const override;
};

}  // namespace fuselens::gui
