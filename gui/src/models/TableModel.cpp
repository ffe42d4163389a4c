#include "models/TableModel.h"

namespace fuselens::gui {

TableModel::TableModel(QStringList headers, QObject* parent)
    : QAbstractTableModel(parent), headers_(std::move(headers)) {}

int TableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : rows();
}

int TableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(headers_.size());
}

QVariant TableModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
    return {};
  }
  return cell(index.row(), index.column(), role);
}

QVariant TableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= headers_.size()) return {};
  if (role == Qt::DisplayRole) return headers_[section];
  if (role == Qt::ToolTipRole) {
    const QString tip = headerToolTip(section);
    return tip.isEmpty() ? QVariant() : QVariant(tip);
  }
  return {};
}

QString TableModel::headerToolTip(int) const { return {}; }

QVariant TableModel::numberCell(double raw, const QString& text, int role) {
  switch (role) {
    case Qt::DisplayRole:
      return text;
    case SortRole:
    case RawRole:
      return raw;
    case Qt::TextAlignmentRole:
      return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
    case Qt::ToolTipRole:
      return QString::number(raw, 'f', raw == static_cast<double>(static_cast<qint64>(raw)) ? 0 : 3);
    default:
      return {};
  }
}

QVariant TableModel::textCell(const QString& text, int role) {
  switch (role) {
    case Qt::DisplayRole:
    case Qt::ToolTipRole:
    case SortRole:
    case RawRole:
      return text;
    default:
      return {};
  }
}

}  // namespace fuselens::gui
