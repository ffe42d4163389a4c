#include "CaptureLoader.h"

#include <QPointer>
#include <QThread>
#include <QtConcurrent/QtConcurrentRun>

#include <exception>

#include "GuiExport.h"

namespace fuselens::gui {

CaptureLoader::CaptureLoader(QObject* parent)
    : QObject(parent), maxRunning_(std::max(1, QThread::idealThreadCount() / 2)) {
  qRegisterMetaType<CaptureDataPtr>();
  qRegisterMetaType<Analysis>();
}

void CaptureLoader::load(const QString& path) {
  ++opening_;
  QPointer<CaptureLoader> self(this);
  Q_EMIT progress(path, 0, QStringLiteral("opening"));
  // Results come back by queued invocations on this object's (the GUI) thread.
  auto future = QtConcurrent::run([self, path] {
    std::shared_ptr<CaptureData> data;
    QString message;
    try {
      data = openCapture(path);
    } catch (const std::exception& e) {
      message = QString::fromUtf8(e.what());
    }
    if (!self) return;
    QMetaObject::invokeMethod(
        self.data(),
        [self, path, data, message] {
          if (!self) return;
          --self->opening_;
          if (!data) {
            Q_EMIT self->failed(path, message);
            if (self->pending() == 0) Q_EMIT self->idle();
            return;
          }
          for (Analysis a : allAnalyses()) self->queue_.append({data, a, 0, {}, {}});
          Q_EMIT self->opened(data);  // the window may prioritize what its visible page needs
          self->dispatch();
        },
        Qt::QueuedConnection);
  });
  Q_UNUSED(future);
}

void CaptureLoader::prioritize(const CaptureDataPtr& capture, Analysis analysis) {
  for (qsizetype i = 0; i < queue_.size(); ++i) {
    if (queue_[i].data == capture && queue_[i].analysis == analysis) {
      queue_.move(i, 0);
      break;
    }
  }
  // A windowed analysis waits for its window: resolving it comes first.
  if (windowed(analysis) && !capture->has(Analysis::Steps)) prioritize(capture, Analysis::Steps);
}

void CaptureLoader::forget(const CaptureDataPtr& capture) {
  queue_.removeIf([&](const Job& job) { return job.data == capture; });
  if (pending() == 0) Q_EMIT idle();
}

bool CaptureLoader::runnable(const Job& job) {
  return !windowed(job.analysis) || job.data->has(Analysis::Steps);
}

void CaptureLoader::dispatch() {
  while (running_ < maxRunning_) {
    qsizetype next = 0;
    while (next < queue_.size() && !runnable(queue_[next])) ++next;
    if (next == queue_.size()) return;
    run(queue_.takeAt(next));
  }
}

bool CaptureLoader::setWindow(const CaptureDataPtr& capture, const QString& text) {
  if (!capture) return false;
  // The loader is the one writer of the captures it opened (they are shared read-only).
  const auto data = std::const_pointer_cast<CaptureData>(capture);
  analyzer::WindowSpec spec;
  try {
    spec = analyzer::parse_window(text.trimmed().toStdString());
  } catch (const std::exception& e) {
    Q_EMIT windowFailed(capture, QString::fromUtf8(e.what()));
    return false;
  }
  ++resolving_;
  QPointer<CaptureLoader> self(this);
  const analyzer::CapturePtr c = data->capture;
  auto future = QtConcurrent::run([self, data, c, spec] {
    std::shared_ptr<const analyzer::Window> window;
    QString message;
    try {
      window = std::make_shared<const analyzer::Window>(
          analyzer::resolve_window(*c->open_reader(), spec));
    } catch (const std::exception& e) {
      message = QString::fromUtf8(e.what());
    }
    if (!self) return;
    QMetaObject::invokeMethod(
        self.data(),
        [self, data, spec, window, message] {
          if (!self) return;
          --self->resolving_;
          if (!window) {
            Q_EMIT self->windowFailed(data, message);
          } else {
            data->windowSpec = spec;
            data->window = window;
            ++data->windowGeneration;
            self->queue_.removeIf(
                [&](const Job& job) { return job.data == data && windowed(job.analysis); });
            for (Analysis a : allAnalyses()) {
              if (!windowed(a)) continue;
              data->unload(a);
              self->queue_.append({data, a, 0, {}, {}});
            }
            Q_EMIT self->windowChanged(data);  // the window may prioritize its visible page
            self->dispatch();
          }
          if (self->pending() == 0) Q_EMIT self->idle();
        },
        Qt::QueuedConnection);
  });
  Q_UNUSED(future);
  return true;
}

void CaptureLoader::reportProgress(const CaptureData& data, const QString& stage) {
  const QList<Analysis> all = allAnalyses();
  int done = 0;
  for (Analysis a : all) done += data.has(a) ? 1 : 0;
  Q_EMIT progress(data.path, 100 * done / static_cast<int>(all.size()), stage);
}

void CaptureLoader::run(Job job) {
  ++running_;
  job.generation = job.data->windowGeneration;
  reportProgress(*job.data, QStringLiteral("loading the %1").arg(analysisName(job.analysis)));
  // Read here, on the GUI thread, the only one that writes them.
  job.windowSpec = job.data->windowSpec;
  job.window = job.data->window;
  QPointer<CaptureLoader> self(this);
  auto future = QtConcurrent::run([self, job] {
    // The job fills a CaptureData of its own; the GUI thread moves the result into the shared
    // one, so pages never see a half-written field.
    auto part = std::make_shared<CaptureData>();
    part->path = job.data->path;
    part->capture = job.data->capture;
    part->windowSpec = job.windowSpec;
    part->window = job.window;
    loadAnalysis(job.analysis, *part);
    if (!self) return;
    QMetaObject::invokeMethod(
        self.data(),
        [self, job, part] {
          if (self) self->finish(job, part);
        },
        Qt::QueuedConnection);
  });
  Q_UNUSED(future);
}

void CaptureLoader::finish(const Job& job, const std::shared_ptr<CaptureData>& part) {
  --running_;
  if (windowed(job.analysis) && job.generation != job.data->windowGeneration) {
    dispatch();  // computed for an older window: its job for the new one is queued
    if (pending() == 0) Q_EMIT idle();
    return;
  }
  if (job.analysis == Analysis::Steps && job.generation != job.data->windowGeneration) {
    part->window = job.data->window;  // setWindow changed the window meanwhile: it stays
  }
  job.data->take(job.analysis, std::move(*part));
  Q_EMIT analysisLoaded(job.data, job.analysis);
  bool complete = true;
  for (Analysis a : allAnalyses()) complete = complete && job.data->has(a);
  if (complete) {
    reportProgress(*job.data, QStringLiteral("done"));
    Q_EMIT captureLoaded(job.data);
  }
  dispatch();
  if (pending() == 0) Q_EMIT idle();
}

void CaptureLoader::startRequest(std::function<std::function<void(CaptureLoader&)>()> work) {
  QPointer<CaptureLoader> self(this);
  auto future = QtConcurrent::run([self, work = std::move(work)] {
    std::function<void(CaptureLoader&)> deliver = work();
    if (!self) return;
    QMetaObject::invokeMethod(
        self.data(),
        [self, deliver] {
          if (self) deliver(*self);
        },
        Qt::QueuedConnection);
  });
  Q_UNUSED(future);
}

namespace {

/// A reader of `capture` restricted to `window` (whole capture when null).
std::unique_ptr<const db::Reader> windowReader(
    const analyzer::CapturePtr& capture, const std::shared_ptr<const analyzer::Window>& window) {
  return window ? capture->open_reader(*window) : capture->open_reader();
}

/// Runs `analysis` (which returns a report), catching the analyzer's exceptions, and returns
/// what emits `ready` on the GUI thread.
template <typename Report, typename Fn, typename Signal>
std::function<void(CaptureLoader&)> runReport(CaptureLoader::RequestId id, Fn analysis,
                                              Signal ready) {
  std::shared_ptr<const Report> report;
  QString error;
  try {
    report = std::make_shared<const Report>(analysis());
  } catch (const std::exception& e) {
    error = QString::fromUtf8(e.what());
  }
  return [id, report, error, ready](CaptureLoader& loader) {
    Q_EMIT(loader.*ready)(id, report, error);
  };
}

}  // namespace

CaptureLoader::RequestId CaptureLoader::requestCallPath(const CaptureDataPtr& capture,
                                                        std::uint32_t pid,
                                                        std::uint32_t correlationId) {
  const RequestId id = ++lastRequest_;
  const analyzer::CapturePtr c = capture->capture;
  const std::string path = capture->path.toStdString();
  startRequest([id, c, path, pid, correlationId] {
    return runReport<analyzer::CallPath>(
        id,
        [&] {
          const analyzer::CapturePtr opened = c ? c : analyzer::open_capture(path);
          return opened->with_shared_reader(
              [&](const auto& reader) { return analyzer::call_path(reader, pid, correlationId); });
        },
        &CaptureLoader::callPathReady);
  });
  return id;
}

CaptureLoader::RequestId CaptureLoader::requestCallingContext(const CaptureDataPtr& capture,
                                                              const analyzer::CctOptions& options) {
  const RequestId id = ++lastRequest_;
  const analyzer::CapturePtr c = capture->capture;
  const std::string path = capture->path.toStdString();
  const auto w = capture->window;
  startRequest([id, c, path, options, w] {
    return runReport<analyzer::CctReport>(
        id,
        [&] {
          const analyzer::CapturePtr opened = c ? c : analyzer::open_capture(path);
          return analyzer::calling_context_report(*windowReader(opened, w), options);
        },
        &CaptureLoader::callingContextReady);
  });
  return id;
}

CaptureLoader::RequestId CaptureLoader::requestRoofline(const CaptureDataPtr& capture,
                                                        const analyzer::RooflineOptions& options) {
  const RequestId id = ++lastRequest_;
  const analyzer::CapturePtr c = capture->capture;
  const std::string path = capture->path.toStdString();
  const auto w = capture->window;
  startRequest([id, c, path, options, w] {
    return runReport<analyzer::RooflineReport>(
        id,
        [&] {
          const analyzer::CapturePtr opened = c ? c : analyzer::open_capture(path);
          return analyzer::analyze_roofline(*windowReader(opened, w), options);
        },
        &CaptureLoader::rooflineReady);
  });
  return id;
}

CaptureLoader::RequestId CaptureLoader::requestModules(const CaptureDataPtr& capture) {
  const RequestId id = ++lastRequest_;
  const analyzer::CapturePtr c = capture->capture;
  const std::string path = capture->path.toStdString();
  const auto w = capture->window;
  startRequest([id, c, path, w] {
    return runReport<analyzer::ModulesReport>(
        id,
        [&] {
          const analyzer::CapturePtr opened = c ? c : analyzer::open_capture(path);
          return analyzer::module_report(*windowReader(opened, w));
        },
        &CaptureLoader::modulesReady);
  });
  return id;
}

CaptureLoader::RequestId CaptureLoader::requestRangeComparison(const CaptureDataPtr& capture,
                                                               const QString& baseline,
                                                               const QString& candidate) {
  const RequestId id = ++lastRequest_;
  const analyzer::CapturePtr c = capture->capture;
  const std::string path = capture->path.toStdString();
  const std::string b = baseline.toStdString(), d = candidate.toStdString();
  const auto w = capture->window;
  startRequest([id, c, path, b, d, w] {
    return runReport<analyzer::CompareReport>(
        id,
        [&] {
          const analyzer::CapturePtr opened = c ? c : analyzer::open_capture(path);
          return analyzer::compare_ranges(*windowReader(opened, w), b, d);
        },
        &CaptureLoader::compareReady);
  });
  return id;
}

CaptureLoader::RequestId CaptureLoader::requestCaptureComparison(const CaptureDataPtr& baseline,
                                                                 const CaptureDataPtr& candidate) {
  const RequestId id = ++lastRequest_;
  const analyzer::CapturePtr a = baseline->capture, b = candidate->capture;
  const std::string pa = baseline->path.toStdString(), pb = candidate->path.toStdString();
  const auto wa = baseline->window, wb = candidate->window;
  startRequest([id, a, b, pa, pb, wa, wb] {
    return runReport<analyzer::CompareReport>(
        id,
        [&] {
          const analyzer::CapturePtr ca = a ? a : analyzer::open_capture(pa);
          const analyzer::CapturePtr cb = b ? b : analyzer::open_capture(pb);
          const auto ra = windowReader(ca, wa);  // A first: its error is the one reported
          const auto rb = windowReader(cb, wb);
          return analyzer::compare_captures(*ra, *rb);
        },
        &CaptureLoader::compareReady);
  });
  return id;
}

CaptureLoader::RequestId CaptureLoader::requestHtmlReport(const CaptureDataPtr& capture,
                                                          const QString& path) {
  const RequestId id = ++lastRequest_;
  // What the report reads, copied here on the GUI thread (setWindow changes the window here).
  auto reading = std::make_shared<CaptureData>();
  reading->path = capture->path;
  reading->displayName = capture->displayName;
  reading->capture = capture->capture;
  reading->window = capture->window;
  startRequest([id, reading, path]() -> std::function<void(CaptureLoader&)> {
    QString error;
    if (exportHtmlReport(*reading, nullptr, path, &error)) error.clear();
    return [id, path, error](CaptureLoader& loader) {
      Q_EMIT loader.htmlReportWritten(id, path, error);
    };
  });
  return id;
}

CaptureLoader::RequestId CaptureLoader::requestTimelineSearch(const CaptureDataPtr& capture,
                                                              const TimelineQuery& query) {
  const RequestId id = ++lastRequest_;
  const bool loaded = capture && capture->has(Analysis::Timeline);
  startRequest([id, capture, query, loaded]() -> std::function<void(CaptureLoader&)> {
    auto found = std::make_shared<TimelineMatches>();
    if (loaded) {
      *found = searchTimeline(capture->timeline, query);
    } else {
      found->query = query;
    }
    std::shared_ptr<const TimelineMatches> matches = std::move(found);
    return [id, matches](CaptureLoader& loader) { Q_EMIT loader.timelineSearchReady(id, matches); };
  });
  return id;
}

}  // namespace fuselens::gui
