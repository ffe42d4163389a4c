#include "CaptureData.h"

#include <QElapsedTimer>
#include <QFileInfo>

#include <exception>

namespace fuselens::gui {

QList<Analysis> allAnalyses() {
  QList<Analysis> all = {Analysis::Timeline, Analysis::Steps, Analysis::Summary};
  all << Analysis::Ranges;
  all << Analysis::Flags;
  return all;
}

QString analysisName(Analysis analysis) {
  switch (analysis) {
    case Analysis::Timeline:
      return QStringLiteral("timeline");
    case Analysis::Steps:
      return QStringLiteral("steps");
    case Analysis::Summary:
      return QStringLiteral("summary");
    case Analysis::Ranges:
      return QStringLiteral("range statistics");
    case Analysis::Flags:
      return QStringLiteral("flag rules");
  }
  return {};
}

bool windowed(Analysis analysis) {
  return analysis == Analysis::Summary || analysis == Analysis::Ranges ||
         analysis == Analysis::Flags;
}

void CaptureData::unload(Analysis analysis) {
  const std::size_t i = index(analysis);
  loaded_[i] = false;
  errors_[i].clear();
  milliseconds[i] = -1;
}

QString CaptureData::windowDescription() const {
  return window ? QString::fromStdString(window->description) : QStringLiteral("whole capture");
}

void CaptureData::take(Analysis analysis, CaptureData&& part) {
  switch (analysis) {
    case Analysis::Timeline:
      timeline = std::move(part.timeline);
      timelineLod = std::move(part.timelineLod);
      timelineLodNote = std::move(part.timelineLodNote);
      break;
    case Analysis::Steps:
      steps = std::move(part.steps);
      window = std::move(part.window);
      break;
    case Analysis::Summary:
      summary = std::move(part.summary);
      break;
    case Analysis::Ranges:
      ranges = std::move(part.ranges);
      break;
    case Analysis::Flags:
      flags = std::move(part.flags);
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
  // A capture with a stored level of detail opens without checking every kernel's and launch
  // call's timestamps (a full scan of ten million rows); the rows read are checked as read, and
  // the other analyses' readers check everything. Any other capture is checked in full here.
  data->capture = analyzer::open_capture(path.toStdString(), db::TimestampCheck::DeferLargeTables);
  if (!analyzer::has_timeline_lod(
          *data->capture->open_reader(db::TimestampCheck::DeferLargeTables))) {
    data->capture = analyzer::open_capture(path.toStdString());  // throws db::Error with the reason
  }
  data->openMilliseconds = timer.elapsed();
  data->loadMilliseconds = data->openMilliseconds;
  return data;
}

void loadAnalysis(Analysis analysis, CaptureData& into) {
  QElapsedTimer timer;
  timer.start();
  const std::size_t i = CaptureData::index(analysis);
  try {
    if (!into.capture) into.capture = analyzer::open_capture(into.path.toStdString());
    const auto opened = analysis == Analysis::Timeline
                            ? into.capture->open_reader(db::TimestampCheck::DeferLargeTables)
                        : windowed(analysis) && into.window
                            ? into.capture->open_reader(*into.window)
                            : into.capture->open_reader();
    const auto& reader = *opened;
    switch (analysis) {
      case Analysis::Timeline: {
        std::string why;
        if (auto lod = analyzer::load_timeline_lod(reader, &why)) {
          into.timelineLod = std::make_shared<const analyzer::TimelineLod>(std::move(*lod));
          into.timeline = analyzer::load_timeline_window(reader, *into.timelineLod, 0, 0);
        } else {
          into.timelineLodNote = QString::fromStdString(why);
          reader.check_table_timestamps("kernel");  // deferred above: every row is read now
          reader.check_table_timestamps("api_call");
          into.timeline = analyzer::load_timeline(reader);
        }
        break;
      }
      case Analysis::Steps: {
        // The window's step search is the steps analysis (default methods): done once.
        into.window.reset();
        analyzer::Window window = analyzer::resolve_window(reader, into.windowSpec);
        if (window.steps) {
          into.steps = *window.steps;
        } else if (auto stored = analyzer::stored_step_report(reader)) {
          into.steps = std::move(*stored);  // found when the run ended (prof-run)
        } else {
          into.steps = analyzer::analyze_steps(reader);
        }
        into.window = std::make_shared<const analyzer::Window>(std::move(window));
        break;
      }
      case Analysis::Summary:
        into.summary = analyzer::summarize(reader);
        break;
      case Analysis::Ranges:
        into.ranges = analyzer::range_stats(reader);
        break;
      case Analysis::Flags:
        // The window's steps and start-up: time at stake per step, start-up reported once.
        into.flags = analyzer::run_flags(reader, analyzer::FlagsConfig{}, analyzer::NameKind::Short,
                                         into.window.get());
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
    part.capture = data->capture;
    part.windowSpec = data->windowSpec;
    part.window = data->window;  // resolved by the Steps analysis, which comes first
    loadAnalysis(all[n], part);
    data->take(all[n], std::move(part));
  }
  if (progress) progress(100, QStringLiteral("done"));
  return data;
}

}  // namespace fuselens::gui
