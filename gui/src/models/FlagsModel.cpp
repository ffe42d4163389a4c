#include "models/FlagsModel.h"

#include "Format.h"

namespace fuselens::gui {


FlagsModel::FlagsModel(QObject* parent)
    : RowsModel({QStringLiteral("Rule"), QStringLiteral("Count"), QStringLiteral("Time at Stake"),
                 QStringLiteral("Subject"), QStringLiteral("Where")},
                parent) {}

QString FlagsModel::where(const analyzer::Hit& hit) {
  QStringList parts;
  if (hit.device_id) parts << QStringLiteral("GPU %1").arg(*hit.device_id);
  if (hit.stream_id) parts << QStringLiteral("stream %1").arg(*hit.stream_id);
  if (hit.tid) parts << QStringLiteral("thread %1").arg(*hit.tid);
  if (!hit.range.empty()) parts << QStringLiteral("in %1").arg(toQString(hit.range));
  return parts.join(QStringLiteral(" · "));
}

QVariant FlagsModel::cell(int row, int column, int role) const {
  const auto& hit = rowAt(row);
  switch (column) {
    case Rule:
      return textCell(toQString(hit.rule), role);
    case Count:
      return numberCell(static_cast<double>(hit.count), formatCount(hit.count), role);
    case TimeAtStake:
      return numberCell(static_cast<double>(hit.time_ns),
                        formatDuration(static_cast<double>(hit.time_ns)), role);
    case Subject:
      return textCell(hit.subject.empty() ? QStringLiteral("(time span)") : toQString(hit.subject), role);
    default:
      return textCell(where(hit), role);
  }
}

QString FlagsModel::headerToolTip(int column) const {
  if (column == TimeAtStake) return QStringLiteral("The time the rule says is at stake (see the rule)");
  return {};
}


}  // namespace fuselens::gui
