#pragma once
// GuiExport: what File → Export writes.
//   CSV   any table as shown (sorted and filtered), RFC 4180 (analyzer::csv_field), a header row
//         of the column titles, raw values (integer ns, bytes) as the analyzer's CSV export;
//   PNG   any page, chart or the timeline, grabbed at the screen's resolution;
//   SVG   the same rendered as vectors through QSvgGenerator;
//   HTML  the analyzer's self-contained report (ExportHtml.h);
//   PDF   a report of the summary tables, flags and page images through QTextDocument and
//         QPdfWriter.
// Every function returns false and sets *error (with the path and the reason) when it fails.

#include <QImage>
#include <QList>
#include <QPair>
#include <QString>

#include <iosfwd>

#include "CaptureData.h"

class QAbstractItemModel;
class QWidget;

namespace fuselens::gui {

/// Writes `model` (DisplayRole headers, TableModel::RawRole cells falling back to DisplayRole)
/// as CSV: a table's rows; a tree's rows depth-first, each parent before its children.
void writeCsv(const QAbstractItemModel& model, std::ostream& out);
bool exportCsv(const QAbstractItemModel& model, const QString& path, QString* error);

/// PNG (or any raster format Qt knows by the suffix) or SVG (by the ".svg" suffix).
bool exportImage(QWidget* widget, const QString& path, QString* error);

/// True: every build has the analyzer's HTML report (kept for callers that ask).
bool htmlReportAvailable();
/// The analyzer's HTML report of `data` (and of `other`, side by side, when given). Reads the
/// captures again, each restricted to its window (CaptureData::window, named in the report):
/// call it off the GUI thread.
bool exportHtmlReport(const CaptureData& data, const CaptureData* other, const QString& path,
                      QString* error);

/// A PDF report: the summary header (with the window it describes) and tables, the flags, and
/// `images` (title, page image).
/// Uses QTextDocument: call it on the GUI thread (it is quick).
bool exportPdfReport(const CaptureData& data, const QList<QPair<QString, QImage>>& images,
                     const QString& path, QString* error);

}  // namespace fuselens::gui
