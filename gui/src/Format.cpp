#include "Format.h"

#include <QLocale>

#include "summary/SummaryFormat.h"

namespace fuselens::gui {

QString formatDuration(double ns) { return toQString(analyzer::format_duration(ns)); }

QString formatBytes(double bytes) { return toQString(analyzer::format_bytes(bytes)); }

QString formatPercent(double percent) { return QString::number(percent, 'f', 1) + QStringLiteral(" %"); }

QString formatCount(std::int64_t count) {
  static const QLocale c = [] {
    QLocale l(QLocale::English, QLocale::UnitedStates);
    return l;
  }();
  return c.toString(static_cast<qlonglong>(count));
}

QString toQString(const std::string& s) {
  return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

QColor colorForName(const QString& name, int saturation, int value) {
  // FNV-1a over the UTF-16 code units: stable across runs (qHash is seeded).
  std::uint32_t h = 2166136261u;
  for (const QChar c : name) {
    h ^= c.unicode();
    h *= 16777619u;
  }
  return QColor::fromHsv(static_cast<int>(h % 360u), saturation, value);
}

}  // namespace fuselens::gui
