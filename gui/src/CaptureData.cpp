#include "CaptureData.h"

#include <QElapsedTimer>
#include <QFileInfo>

#include <exception>

#include "fuselens/db/Reader.h"

namespace fuselens::gui {

QList<Analysis> allAnalyses() {
  QList<Analysis> all = {Analysis::Timeline, Analysis::Summary};
#ifdef FUSELENS_GUI_HAS_COMPARE
  all << Analysis::Ranges;
#endif
#ifdef FUSELENS_GUI_HAS_FLAGS
  all << Analysis::Flags;
#endif
  return all;
}

QString analysisName(Analysis analysis) {
  switch (analysis) {
    case Analysis::Timeline:
      return QStringLiteral("timeline");
    case Analysis::Summary:
      return QStringLiteral("summary");
    case Analysis::Ranges:
      return QStringLiteral("range statistics");
    case Analysis::Flags:
      return QStringLiteral("flag rules");
  }
  return {};
}

void CaptureData::take(Analysis analysis, CaptureData&& part) {
  switch (analysis) {
    case Analysis::Timeline:
      timeline = std::move(part.timeline);
      break;
    case Analysis::Summary:
      summary = std::move(part.summary);
      break;
    case Analysis::Ranges:
#ifdef FUSELENS_GUI_HAS_COMPARE
      ranges = std::move(part.ranges);
#endif
      break;
    case Analysis::Flags:
#ifdef FUSELENS_GUI_HAS_FLAGS
      flags = std::move(part.flags);
#endif
      break;
  }
  const std::size_t i = index(analysis);
  loaded_[i] = true;
  errors_[i] = part.errors_[i];
  milliseconds[i] = part.milliseconds[i];
  if (!errors_[i].isEmpty()) {
    analysisErrors += QStringLiteral("%1: %2\n").arg(analysisName(analysis), errors_[i]);
  }
  loadMilliseconds += std::max<qint64>(0, milliseconds[i]);
}

std::shared_ptr<CaptureData> openCapture(const QString& path) {
  QElapsedTimer timer;
  timer.start();
  auto data = std::make_shared<CaptureData>();
  data->path = path;
  data->displayName = QFileInfo(path).fileName();
  const db::Reader reader(path.toStdString());  // throws db::Error with the reason
  data->openMilliseconds = timer.elapsed();
  data->loadMilliseconds = data->openMilliseconds;
  return data;
}

void loadAnalysis(Analysis analysis, CaptureData& into) {
  QElapsedTimer timer;
  timer.start();
  const std::size_t i = CaptureData::index(analysis);
  try {
    const db::Reader reader(into.path.toStdString());
    switch (analysis) {
      case Analysis::Timeline:
        into.timeline = analyzer::load_timeline(reader);
        break;
      case Analysis::Summary:
        into.summary = analyzer::summarize(reader);
        break;
      case Analysis::Ranges:
#ifdef FUSELENS_GUI_HAS_COMPARE
        into.ranges = analyzer::range_stats(reader);
#endif
        break;
      case Analysis::Flags:
#ifdef FUSELENS_GUI_HAS_FLAGS
        into.flags = analyzer::run_flags(reader, analyzer::FlagsConfig{});
#endif
        break;
    }
  } catch (const std::exception& e) {
    into.errors_[i] = QString::fromUtf8(e.what());
  }
  into.loaded_[i] = true;
  into.milliseconds[i] = timer.elapsed();
}

std::shared_ptr<CaptureData> loadCapture(const QString& path, const ProgressCallback& progress) {
  auto data = openCapture(path);
  const QList<Analysis> all = allAnalyses();
  for (int n = 0; n < all.size(); ++n) {
    if (progress) progress(100 * n / static_cast<int>(all.size()), analysisName(all[n]));
    CaptureData part;
    part.path = data->path;
    loadAnalysis(all[n], part);
    data->take(all[n], std::move(part));
  }
  if (progress) progress(100, QStringLiteral("done"));
  return data;
}

}  // namespace fuselens::gui
