#pragma once
// Format: the analyzer's unit formatting (SummaryFormat.h) as QStrings, so every page shows
// durations and sizes exactly as `prof-analyze summary` prints them.

#include <QColor>
#include <QString>

#include <cstdint>
#include <string>

namespace fuselens::gui {

/// "12.345 µs", "1.234 ms" (analyzer::format_duration).
QString formatDuration(double ns);
/// "1.500 kB", "4.000 MB" (analyzer::format_bytes; decimal SI units).
QString formatBytes(double bytes);
/// "12.3 %".
QString formatPercent(double percent);
/// 1234567 -> "1,234,567" in the C locale.
QString formatCount(std::int64_t count);
QString toQString(const std::string& s);

/// A stable, readable colour for a name (hashed hue, fixed saturation and value), so the same
/// kernel has the same colour on every page.
QColor colorForName(const QString& name, int saturation = 150, int value = 225);

}  // namespace fuselens::gui
