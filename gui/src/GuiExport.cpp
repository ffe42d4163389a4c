#include "GuiExport.h"

#include <QAbstractItemModel>
#include <QFile>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSvgGenerator>
#include <QTextDocument>
#include <QUrl>
#include <QWidget>

#include <exception>
#include <fstream>
#include <sstream>

#include "Format.h"
#include "capture/Capture.h"
#include "export/Export.h"
#include "export/ExportFile.h"
#include "export/ExportHtml.h"
#include "models/TableModel.h"
#include "summary/SummaryFormat.h"

namespace fuselens::gui {
namespace {

std::string csvValue(const QVariant& value) {
  if (value.typeId() == QMetaType::Double) {
    const double d = value.toDouble();
    if (d == static_cast<double>(static_cast<qint64>(d)))
      return std::to_string(static_cast<qint64>(d));
    std::ostringstream s;
    s.precision(17);
    s << d;
    return s.str();
  }
  return value.toString().toStdString();
}

/// The rows under `parent`, each followed by its own children (trees: the whole tree).
void writeCsvRows(const QAbstractItemModel& model, const QModelIndex& parent, int columns,
                  std::ostream& out) {
  for (int r = 0; r < model.rowCount(parent); ++r) {
    for (int c = 0; c < columns; ++c) {
      if (c) out << ',';
      const QModelIndex index = model.index(r, c, parent);
      QVariant value = model.data(index, TableModel::RawRole);
      if (!value.isValid()) value = model.data(index, Qt::DisplayRole);
      out << analyzer::csv_field(csvValue(value));
    }
    out << "\r\n";
    const QModelIndex row = model.index(r, 0, parent);
    if (model.hasChildren(row)) writeCsvRows(model, row, columns, out);
  }
}

}  // namespace

void writeCsv(const QAbstractItemModel& model, std::ostream& out) {
  const int columns = model.columnCount();
  for (int c = 0; c < columns; ++c) {
    if (c) out << ',';
    out << analyzer::csv_field(model.headerData(c, Qt::Horizontal).toString().toStdString());
  }
  out << "\r\n";
  writeCsvRows(model, {}, columns, out);
}

bool exportCsv(const QAbstractItemModel& model, const QString& path, QString* error) {
  try {  // complete or not at all, never over a directory, device or link (ExportFile.h)
    analyzer::ExportFile file(path.toStdString());
    writeCsv(model, file.stream());
    file.commit();
    return true;
  } catch (const std::exception& e) {
    if (error) *error = QString::fromUtf8(e.what());
    return false;
  }
}

bool exportImage(QWidget* widget, const QString& path, QString* error) {
  if (path.endsWith(QStringLiteral(".svg"), Qt::CaseInsensitive)) {
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(widget->size());
    svg.setViewBox(QRect(QPoint(0, 0), widget->size()));
    svg.setTitle(widget->windowTitle());
    svg.setDescription(QStringLiteral("FuseLens prof-gui"));
    QPainter painter;
    if (!painter.begin(&svg)) {
      if (error) *error = QStringLiteral("Cannot write %1").arg(path);
      return false;
    }
    widget->render(&painter);
    painter.end();
    if (!QFile::exists(path)) {
      if (error) *error = QStringLiteral("Cannot write %1").arg(path);
      return false;
    }
    return true;
  }
  if (!widget->grab().save(path)) {
    if (error)
      *error = QStringLiteral("Cannot write %1 (unknown image format or no access)").arg(path);
    return false;
  }
  return true;
}

bool htmlReportAvailable() { return true; }

bool exportHtmlReport(const CaptureData& data, const CaptureData* other, const QString& path,
                      QString* error) {
  try {
    std::vector<analyzer::ExportRun> runs;
    // Each capture's report describes its window, as `prof-analyze export --window` does.
    const auto runOf = [](const CaptureData& d, const std::string& label) {
      const auto c = d.capture ? d.capture : analyzer::open_capture(d.path.toStdString());
      auto run = analyzer::load_export_run(
          *(d.window ? c->open_reader(*d.window) : c->open_reader()), label,
          analyzer::NameKind::Demangled, true, nullptr, d.window.get());
      if (d.window) run.window = d.window->description;
      return run;
    };
    runs.push_back(runOf(data, "A"));
    if (other) runs.push_back(runOf(*other, "B"));
    std::vector<std::string> inputs{data.path.toStdString()};
    if (other) inputs.push_back(other->path.toStdString());
    analyzer::ExportFile file(path.toStdString(), inputs);
    analyzer::make_html_report(runs).write(file.stream());
    file.commit();
    return true;
  } catch (const std::exception& e) {
    if (error) *error = QString::fromUtf8(e.what());
    return false;
  }
}

namespace {

template <typename Rows, typename Cells>
QString htmlTable(const QStringList& headers, const Rows& rows, Cells cells,
                  std::size_t limit = 40) {
  QString html =
      QStringLiteral("<table border='1' cellspacing='0' cellpadding='3' width='100%'><tr>");
  for (const auto& h : headers)
    html += QStringLiteral("<th bgcolor='#dde4ee'>%1</th>").arg(h.toHtmlEscaped());
  html += QStringLiteral("</tr>");
  std::size_t n = 0;
  for (const auto& row : rows) {
    if (n++ == limit) break;
    html += QStringLiteral("<tr>");
    const QStringList values = cells(row);
    for (int i = 0; i < values.size(); ++i) {
      html += QStringLiteral("<td%1>%2</td>")
                  .arg(i + 1 == values.size() ? QString() : QStringLiteral(" align='right'"),
                       values[i].toHtmlEscaped());
    }
    html += QStringLiteral("</tr>");
  }
  html += QStringLiteral("</table>");
  if (rows.size() > limit) {
    html += QStringLiteral("<p><i>%1 more rows: export the table as CSV.</i></p>")
                .arg(rows.size() - limit);
  }
  return html;
}

QStringList stats(const analyzer::DurationStats& s, double percent) {
  return {formatPercent(percent),
          formatDuration(static_cast<double>(s.total_ns)),
          formatCount(s.count),
          formatDuration(s.avg_ns),
          formatDuration(s.median_ns),
          formatDuration(static_cast<double>(s.min_ns)),
          formatDuration(static_cast<double>(s.max_ns))};
}

}  // namespace

bool exportPdfReport(const CaptureData& data, const QList<QPair<QString, QImage>>& images,
                     const QString& path, QString* error) {
  const auto& s = data.summary;
  const QStringList head = {QStringLiteral("Time %"), QStringLiteral("Total"),
                            QStringLiteral("Count"),  QStringLiteral("Avg"),
                            QStringLiteral("Med"),    QStringLiteral("Min"),
                            QStringLiteral("Max"),    QStringLiteral("Name")};
  QTextDocument doc;
  QString html =
      QStringLiteral("<h1>FuseLens report: %1</h1>").arg(data.displayName.toHtmlEscaped());
  QStringList argv;
  for (const auto& a : s.run.info.command_line) argv << toQString(a);
  html +=
      QStringLiteral(
          "<p><b>Command:</b> %1<br><b>Host:</b> %2<br><b>Window:</b> %3<br><b>Kernels:</b> %4, "
          "GPU time %5</p>")
          .arg(argv.join(QLatin1Char(' ')).toHtmlEscaped(),
               toQString(s.run.info.host_name).toHtmlEscaped(),
               data.windowDescription().toHtmlEscaped(), formatCount(s.totals.kernel_count),
               formatDuration(static_cast<double>(s.totals.kernel_time_ns)));
  html += QStringLiteral("<h2>CUDA GPU kernels</h2>") +
          htmlTable(head, s.kernels, [](const analyzer::KernelRow& r) {
            return stats(r.stats, r.time_percent) << toQString(r.name);
          });
  html += QStringLiteral("<h2>Memory operations</h2>") +
          htmlTable(head, s.memory_operations, [](const analyzer::MemoryOperationRow& r) {
            return stats(r.stats, r.time_percent) << toQString(r.name);
          });
  html +=
      QStringLiteral("<h2>CUDA API</h2>") + htmlTable(head, s.api, [](const analyzer::ApiRow& r) {
        return stats(r.stats, r.time_percent) << toQString(r.name);
      });
  html += QStringLiteral("<h2>NVTX ranges</h2>") +
          htmlTable(head, s.nvtx, [](const analyzer::NvtxRow& r) {
            return stats(r.stats, r.time_percent) << toQString(r.name);
          });
  if (data.flags) {
    html += QStringLiteral("<h2>Flags</h2>") +
            htmlTable({QStringLiteral("Rule"), QStringLiteral("Count"),
                       QStringLiteral("Time at stake"), QStringLiteral("Subject and advice")},
                      data.flags->hits, [](const analyzer::Hit& h) {
                        return QStringList{
                            toQString(h.rule), formatCount(h.count),
                            formatDuration(static_cast<double>(h.time_ns)),
                            toQString(h.subject) + QStringLiteral(": ") + toQString(h.advice)};
                      });
  }
  int n = 0;
  for (const auto& [title, image] : images) {
    const QString name = QStringLiteral("page%1.png").arg(n++);
    doc.addResource(QTextDocument::ImageResource, QUrl(name), image);
    html += QStringLiteral("<h2>%1</h2><p><img src='%2' width='640'></p>")
                .arg(title.toHtmlEscaped(), name);
  }
  doc.setHtml(html);

  QPdfWriter pdf(path);
  pdf.setPageSize(QPageSize(QPageSize::A4));
  pdf.setTitle(QStringLiteral("FuseLens report: %1").arg(data.displayName));
  pdf.setCreator(QStringLiteral("FuseLens prof-gui"));
  pdf.setResolution(96);
  doc.setPageSize(QSizeF(pdf.width(), pdf.height()));
  doc.print(&pdf);  // opens and closes its own painter on `pdf`
  if (!QFile::exists(path) || QFile(path).size() == 0) {
    if (error) *error = QStringLiteral("Cannot write %1").arg(path);
    return false;
  }
  return true;
}

}  // namespace fuselens::gui
