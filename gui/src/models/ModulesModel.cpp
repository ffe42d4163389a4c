#include "models/ModulesModel.h"

#include "Format.h"
#include "models/TableModel.h"

namespace fuselens::gui {
namespace {

QVariant durationCell(std::int64_t ns, int role) {
  return TableModel::numberCell(static_cast<double>(ns), formatDuration(static_cast<double>(ns)),
                                role);
}

QVariant bytesCell(std::int64_t bytes, int role) {
  if (bytes < 0) return TableModel::numberCell(-1.0, QStringLiteral("-"), role);  // no events
  return TableModel::numberCell(static_cast<double>(bytes), formatBytes(static_cast<double>(bytes)),
                                role);
}

}  // namespace

ModulesModel::ModulesModel(QObject* parent) : QAbstractItemModel(parent) {}

void ModulesModel::setReport(analyzer::ModulesReport report) {
  beginResetModel();
  report_ = std::move(report);
  if (!report_.available) report_.rows.clear();
  const std::size_t n = report_.rows.size();
  roots_.clear();
  children_.assign(n, {});
  rowInParent_.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const int parent = report_.rows[i].parent;
    auto& siblings = parent < 0 ? roots_ : children_[static_cast<std::size_t>(parent)];
    rowInParent_[i] = static_cast<int>(siblings.size());
    siblings.push_back(static_cast<int>(i));
  }
  endResetModel();
}

QModelIndex ModulesModel::indexOfPath(const QString& path) const {
  const std::string wanted = path.toStdString();
  for (std::size_t i = 0; i < report_.rows.size(); ++i) {
    if (report_.rows[i].path == wanted) {
      return createIndex(rowInParent_[i], 0, static_cast<quintptr>(i));
    }
  }
  return {};
}

const std::vector<int>& ModulesModel::childrenOf(const QModelIndex& parent) const {
  if (!parent.isValid()) return roots_;
  return children_[static_cast<std::size_t>(parent.internalId())];
}

QModelIndex ModulesModel::index(int row, int column, const QModelIndex& parent) const {
  if (column < 0 || column >= Columns || (parent.isValid() && parent.column() != 0)) return {};
  const auto& children = childrenOf(parent);
  if (row < 0 || row >= static_cast<int>(children.size())) return {};
  return createIndex(row, column, static_cast<quintptr>(children[static_cast<std::size_t>(row)]));
}

QModelIndex ModulesModel::parent(const QModelIndex& child) const {
  if (!child.isValid()) return {};
  const int parentRow = report_.rows[static_cast<std::size_t>(child.internalId())].parent;
  if (parentRow < 0) return {};
  return createIndex(rowInParent_[static_cast<std::size_t>(parentRow)], 0,
                     static_cast<quintptr>(parentRow));
}

int ModulesModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() && parent.column() != 0) return 0;
  return static_cast<int>(childrenOf(parent).size());
}

int ModulesModel::columnCount(const QModelIndex&) const { return Columns; }

QVariant ModulesModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const auto& row = report_.rows[static_cast<std::size_t>(index.internalId())];
  switch (index.column()) {
    case Module:
      if (role == Qt::ToolTipRole || role == TableModel::RawRole) return toQString(row.path);
      return TableModel::textCell(toQString(row.name), role);
    case Calls:
      return TableModel::numberCell(static_cast<double>(row.calls), formatCount(row.calls), role);
    case ForwardInclusive:
      return durationCell(row.forward_inclusive.gpu_ns, role);
    case ForwardExclusive:
      return durationCell(row.forward_exclusive.gpu_ns, role);
    case BackwardInclusive:
      return durationCell(row.backward_inclusive.gpu_ns, role);
    case BackwardExclusive:
      return durationCell(row.backward_exclusive.gpu_ns, role);
    case Launches: {
      const std::int64_t launches =
          row.forward_inclusive.launches + row.backward_inclusive.launches;
      return TableModel::numberCell(static_cast<double>(launches), formatCount(launches), role);
    }
    case Bytes:
      return bytesCell(row.forward_inclusive.bytes + row.backward_inclusive.bytes, role);
    case PeakForward:
      return bytesCell(row.peak_forward_bytes, role);
    default:
      return bytesCell(row.peak_backward_bytes, role);
  }
}

QVariant ModulesModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= Columns) return {};
  // The column titles of `prof-analyze modules` (ModulesFormat.cpp).
  static const char* const names[] = {
      "Module",         "Calls",    "Fwd GPU (incl)", "Fwd GPU (excl)", "Bwd GPU (incl)",
      "Bwd GPU (excl)", "Launches", "Bytes",          "Peak fwd",       "Peak bwd"};
  static const char* const tips[] = {
      "nn.Module instance path (tooltip: the full path)",
      "Forward calls of exactly this module",
      "Forward GPU time of the module and its descendants",
      "Forward GPU time in the module's own ranges",
      "Backward GPU time of the autograd nodes the module and its descendants created",
      "Backward GPU time of the autograd nodes the module itself created",
      "GPU operations (kernels, copies, memsets), forward and backward, inclusive",
      "Bytes copied or set, forward and backward, inclusive",
      "Most device memory the process held during the module's forward ranges",
      "Most device memory the process held during the module's backward ranges"};
  if (role == Qt::DisplayRole) return QString::fromLatin1(names[section]);
  if (role == Qt::ToolTipRole) return QString::fromLatin1(tips[section]);
  return {};
}

}  // namespace fuselens::gui
