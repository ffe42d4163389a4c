#pragma once
// ModulesModel: the PyTorch module view (analyzer::module_report, modules/Modules.h) as a tree,
// one node per nn.Module instance path prefix, as `prof-analyze modules` prints it. Columns:
// Module (the path's last segment; tooltip and RawRole: the full path), Calls, Fwd GPU (incl),
// Fwd GPU (excl), Bwd GPU (incl), Bwd GPU (excl), Launches and Bytes (forward + backward,
// inclusive), Peak fwd and Peak bwd (device memory; "-" without memory events, sorted as -1).
// Roles as TableModel (SortRole: ns, count, bytes; RawRole: the unformatted value for CSV).
//
// There is no common tree base in gui/ (TableModel is for tables): this model derives from
// QAbstractItemModel as CallingContextModel does and shares TableModel's cell helpers.

#include <QAbstractItemModel>

#include <vector>

#include "modules/Modules.h"

namespace fuselens::gui {

class ModulesModel : public QAbstractItemModel {
  Q_OBJECT
 public:
  enum Column {
    Module,
    Calls,
    ForwardInclusive,
    ForwardExclusive,
    BackwardInclusive,
    BackwardExclusive,
    Launches,
    Bytes,
    PeakForward,
    PeakBackward,
    Columns
  };
  explicit ModulesModel(QObject* parent = nullptr);

  /// Shows `report`'s rows (none when it is not available), inside a model reset.
  void setReport(analyzer::ModulesReport report);
  const analyzer::ModulesReport& report() const { return report_; }
  /// The index (column 0) of the module `path`, invalid when it is not in the report.
  QModelIndex indexOfPath(const QString& path) const;

  QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
  QModelIndex parent(const QModelIndex& child) const override;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  const std::vector<int>& childrenOf(const QModelIndex& parent) const;

  analyzer::ModulesReport report_;
  std::vector<int> roots_;                  ///< report rows with parent -1, in report order
  std::vector<std::vector<int>> children_;  ///< per report row: its children, in report order
  std::vector<int> rowInParent_;            ///< per report row: its position among its siblings
};

}  // namespace fuselens::gui
