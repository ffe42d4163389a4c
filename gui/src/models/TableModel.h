#pragma once
// TableModel: the one base of every table in prof-gui (as hotspot's AbstractTableModel). A
// concrete model holds a vector of plain analyzer structs and overrides only cell() and the
// column headers; setRows() swaps the data inside a model reset.
//
// Roles: DisplayRole is the formatted text with units ("12.345 µs"); SortRole the raw number
// (ns, bytes, count) or the text, so QSortFilterProxyModel sorts numerically; ToolTipRole the
// exact value; TextAlignmentRole right-aligns numbers; RawRole the unformatted value (integer
// ns, bytes, plain text), which CSV export (GuiExport.h) writes, as the analyzer's CSV does.

#include <QAbstractTableModel>
#include <QStringList>

#include <vector>

namespace fuselens::gui {

class TableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Role {
    SortRole = Qt::UserRole + 1,  ///< number or text to sort by
    RawRole,                      ///< unformatted value for CSV (ns, bytes, plain text)
  };

  explicit TableModel(QStringList headers, QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

  /// Cells with the roles above: a number (raw value, its text) or a text.
  static QVariant numberCell(double raw, const QString& text, int role);
  static QVariant textCell(const QString& text, int role);

  /// The column a search box filters (the name column).
  virtual int nameColumn() const { return columnCount() - 1; }

 protected:
  virtual int rows() const = 0;
  /// `row` and `column` are valid; return an empty QVariant for roles not handled.
  virtual QVariant cell(int row, int column, int role) const = 0;
  /// Optional tooltip of a header.
  virtual QString headerToolTip(int column) const;

  void beginReset() { beginResetModel(); }
  /// Changes the column titles; call between beginReset() and endReset().
  void setHeaders(QStringList headers) { headers_ = std::move(headers); }
  void endReset() { endResetModel(); }

 private:
  QStringList headers_;
};

/// A TableModel over std::vector<Row>.
template <typename Row>
class RowsModel : public TableModel {
 public:
  using TableModel::TableModel;

  void setRows(std::vector<Row> rows) {
    beginReset();
    rows_ = std::move(rows);
    endReset();
  }
  const std::vector<Row>& allRows() const { return rows_; }
  const Row& rowAt(int row) const { return rows_[static_cast<std::size_t>(row)]; }

 protected:
  int rows() const override { return static_cast<int>(rows_.size()); }
  std::vector<Row> rows_;
};

}  // namespace fuselens::gui
