#include "models/CallPathModel.h"

#include <QFileInfo>

#include "Format.h"

namespace fuselens::gui {
namespace {

QString baseName(const std::string& path) { return QFileInfo(toQString(path)).fileName(); }

QString functionOf(const analyzer::CallPathEntry& f) {
  if (!f.function.empty()) return toQString(f.function);
  // No symbol: the analyzer's label starts with "module+0xoffset".
  const QString label = toQString(f.label);
  const auto bracket = label.indexOf(QStringLiteral(" ["));
  return bracket < 0 ? label : label.left(bracket);
}

QString sourceOf(const analyzer::CallPathEntry& f) {
  if (f.file.empty() || f.line == 0) return {};
  return QStringLiteral("%1:%2").arg(baseName(f.file)).arg(f.line);
}

QString moduleOf(const analyzer::CallPathEntry& f) {
  return f.python ? QStringLiteral("Python") : baseName(f.module);
}

}  // namespace

CallPathModel::CallPathModel(QObject* parent)
    : RowsModel({QStringLiteral("#"), QStringLiteral("Function"), QStringLiteral("Source"),
                 QStringLiteral("Module")},
                parent) {}

QString CallPathModel::frameText(const analyzer::CallPathEntry& frame) {
  const QString module = moduleOf(frame);
  return module.isEmpty() ? toQString(frame.label)
                          : QStringLiteral("%1  (%2)").arg(toQString(frame.label), module);
}

QString CallPathModel::pathText() const {
  QStringList lines;
  for (const auto& f : allRows()) lines << frameText(f);
  return lines.join(QLatin1Char('\n'));
}

QVariant CallPathModel::cell(int row, int column, int role) const {
  const auto& f = rowAt(row);
  switch (column) {
    case Depth:
      return numberCell(static_cast<double>(row + 1), QString::number(row + 1), role);
    case Function:
      if (role == Qt::ToolTipRole) return frameText(f);
      return textCell(functionOf(f), role);
    case Source:
      if (role == Qt::ToolTipRole) {
        return f.file.empty()
                   ? QVariant()
                   : QVariant(QStringLiteral("%1:%2").arg(toQString(f.file)).arg(f.line));
      }
      return textCell(sourceOf(f), role);
    default:
      if (role == Qt::ToolTipRole)
        return f.module.empty() ? QVariant() : QVariant(toQString(f.module));
      return textCell(moduleOf(f), role);
  }
}

}  // namespace fuselens::gui
