#pragma once
// CaptureLoader: opens captures and loads their analyses in stages on Qt's global thread pool,
// reporting back on the GUI thread through queued invocations.
//
//   load(path)   opens the capture (db::Reader's checks only, milliseconds) and emits `opened`
//                with a CaptureData holding no analysis yet, or `failed` with the db::Error text
//                ("not a FuseLens capture", "written by a newer FuseLens", ...); then queues one
//                job per analysis (CaptureData.h's Analysis, in that order);
//   jobs         run at most maxRunning() at a time (half the cores, at least one: the timeline
//                loader itself uses two threads), so the first one is not slowed by the others;
//                each emits `analysisLoaded` once its result is in the CaptureData (or its error);
//   prioritize   moves a queued job to the front: the main window asks for what the visible page
//                needs, so a million-kernel timeline paints after its own load (about a second),
//                not after every analysis (several seconds), and a page shown later gets its
//                analysis next.
// The loader is the only writer of the CaptureData it hands out, and writes on the GUI thread.

#include <QList>
#include <QObject>
#include <QString>

#include <memory>

#include "CaptureData.h"

namespace fuselens::gui {

class CaptureLoader : public QObject {
  Q_OBJECT
 public:
  explicit CaptureLoader(QObject* parent = nullptr);

  /// Starts opening `path`; returns at once.
  void load(const QString& path);
  /// Runs the job of `analysis` of `capture` next (nothing when it ran or is running).
  void prioritize(const CaptureDataPtr& capture, Analysis analysis);
  /// Drops the queued jobs of `capture` (closed); a running one finishes and is reported.
  void forget(const CaptureDataPtr& capture);
  /// Opens and analysis jobs queued or running.
  int pending() const { return opening_ + running_ + static_cast<int>(queue_.size()); }
  /// Analysis jobs run at once (default: half the cores, at least 1).
  int maxRunning() const { return maxRunning_; }
  void setMaxRunning(int jobs) { maxRunning_ = std::max(1, jobs); }

 Q_SIGNALS:
  void progress(const QString& path, int percent, const QString& stage);
  void opened(const fuselens::gui::CaptureDataPtr& data);
  /// `analysis` of `data` is in (data->has(analysis)); data->error(analysis) says if it failed.
  void analysisLoaded(const fuselens::gui::CaptureDataPtr& data, fuselens::gui::Analysis analysis);
  /// Every analysis of `data` is in.
  void captureLoaded(const fuselens::gui::CaptureDataPtr& data);
  void failed(const QString& path, const QString& message);
  /// Nothing is queued or running any more.
  void idle();

 private:
  struct Job {
    std::shared_ptr<CaptureData> data;
    Analysis analysis;
  };
  void dispatch();
  void run(Job job);
  void finish(const Job& job, const std::shared_ptr<CaptureData>& part);
  void reportProgress(const CaptureData& data, const QString& stage);

  QList<Job> queue_;
  int opening_ = 0;
  int running_ = 0;
  int maxRunning_ = 1;
};

}  // namespace fuselens::gui
