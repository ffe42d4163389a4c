#include "CaptureData.h"

#include <QElapsedTimer>
#include <QFileInfo>

#include <exception>

#include "fuselens/db/Reader.h"

namespace fuselens::gui {

std::shared_ptr<CaptureData> loadCapture(const QString& path, const ProgressCallback& progress) {
  auto report = [&](int percent, const QString& stage) {
    if (progress) progress(percent, stage);
  };
  QElapsedTimer timer;
  timer.start();
  auto data = std::make_shared<CaptureData>();
  data->path = path;
  data->displayName = QFileInfo(path).fileName();

  report(0, QStringLiteral("Opening"));
  const db::Reader reader(path.toStdString());
  report(10, QStringLiteral("Summarizing"));
  data->summary = analyzer::summarize(reader);
  report(35, QStringLiteral("Building the timeline"));
  data->timeline = analyzer::load_timeline(reader);
#ifdef FUSELENS_GUI_HAS_FLAGS
  report(65, QStringLiteral("Running the flag rules"));
  try {
    data->flags = analyzer::run_flags(reader, analyzer::FlagsConfig{});
  } catch (const std::exception& e) {
    data->analysisErrors += QStringLiteral("Flags: %1\n").arg(QString::fromUtf8(e.what()));
  }
#endif
#ifdef FUSELENS_GUI_HAS_COMPARE
  report(85, QStringLiteral("Range statistics"));
  try {
    data->ranges = analyzer::range_stats(reader);
  } catch (const std::exception& e) {
    data->analysisErrors += QStringLiteral("Ranges: %1\n").arg(QString::fromUtf8(e.what()));
  }
#endif
  report(100, QStringLiteral("Done"));
  data->loadMilliseconds = timer.elapsed();
  return data;
}

}  // namespace fuselens::gui
