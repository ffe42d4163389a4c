#pragma once
// CaptureLoader: the one loader of the GUI (as hotspot's parser): it opens captures and runs every
// analysis a page shows on Qt's global thread pool, handing plain results back on the GUI thread
// through queued invocations and signals. Pages never open a capture or run an analysis: they
// connect to these signals and display.
//
//   load(path)   opens the capture (analyzer::open_capture's checks only, milliseconds) and
//                emits `opened` with a CaptureData holding no analysis yet, or `failed` with the
//                db::Error text ("not a FuseLens capture", "written by a newer FuseLens", ...);
//                then queues one job per analysis (CaptureData.h's Analysis, in that order);
//   jobs         run at most maxRunning() at a time (half the cores, at least one: the timeline
//                loader itself uses two threads), so the first one is not slowed by the others;
//                each emits `analysisLoaded` once its result is in the CaptureData (or its error);
//   prioritize   moves a queued job to the front: the main window asks for what the visible page
//                needs, so a million-kernel timeline paints after its own load (about a second),
//                not after every analysis (several seconds), and a page shown later gets its
//                analysis next.
//   window       each capture has a window (CaptureData::windowSpec, steady at first): the
//                Steps job resolves it once on the whole capture, and the windowed analyses
//                (summary, range statistics, flags) run after it on readers restricted to it;
//                setWindow resolves a new one (off the GUI thread), then runs the windowed
//                analyses again (results of an older window are dropped) and emits
//                windowChanged; the requests below read the window current when they are made.
//   requests     the analyses with parameters a page asks for while it is shown: the call path
//                of the selected timeline item, the calling-context tree of a view and metric,
//                the roofline against a peak profile, the PyTorch module view, a comparison of two
//                range patterns or of two captures, the HTML report, a search of the
//                timeline by name (TimelineSearch.h). Each starts at once (the user
//                waits for it) beside the staged jobs, is numbered, and comes back by its signal
//                with that number; a page keeps the number of its latest request and ignores older
//                ones. Requests are not counted in pending() (they are not part of loading a
//                capture).
// The loader is the only writer of the CaptureData it hands out, and writes on the GUI thread.

#include <QList>
#include <QObject>
#include <QString>

#include <functional>
#include <memory>

#include "CaptureData.h"
#include "TimelineSearch.h"
#include "cct/CallPath.h"
#include "cct/CallingContext.h"
#include "compare/Compare.h"
#include "modules/Modules.h"
#include "roofline/Roofline.h"

namespace fuselens::gui {

class CaptureLoader : public QObject {
  Q_OBJECT
 public:
  explicit CaptureLoader(QObject* parent = nullptr);

  /// Starts opening `path`; returns at once.
  void load(const QString& path);
  /// Runs the job of `analysis` of `capture` next (nothing when it ran or is running); a
  /// windowed analysis whose window is not resolved yet gets the Steps job (which resolves it)
  /// ahead of it.
  void prioritize(const CaptureDataPtr& capture, Analysis analysis);
  /// Drops the queued jobs of `capture` (closed); a running one finishes and is reported.
  void forget(const CaptureDataPtr& capture);
  /// Opens and analysis jobs queued or running.
  int pending() const { return opening_ + resolving_ + running_ + static_cast<int>(queue_.size()); }
  /// Analysis jobs run at once (default: half the cores, at least 1).
  int maxRunning() const { return maxRunning_; }
  void setMaxRunning(int jobs) { maxRunning_ = std::max(1, jobs); }

  /// Sets the window of `capture` to `text` (parse_window's forms: all, steady, steps:A-B,
  /// range:GLOB, time:T0-T1): resolved off the GUI thread on the whole capture, then
  /// windowChanged and the windowed analyses again; windowFailed (the window unchanged) when
  /// `text` is malformed or selects nothing. Returns false at once for a malformed `text`.
  bool setWindow(const CaptureDataPtr& capture, const QString& text);

  /// Number of a request, unique per loader (from 1); its result signal carries it.
  using RequestId = quint64;
  /// analyzer::call_path of the record (`pid`, `correlationId`) of `capture`, through the
  /// capture's shared connection (Capture::with_shared_reader): callPathReady.
  RequestId requestCallPath(const CaptureDataPtr& capture, std::uint32_t pid,
                            std::uint32_t correlationId);
  /// analyzer::calling_context_report of `capture` with `options`: callingContextReady.
  RequestId requestCallingContext(const CaptureDataPtr& capture,
                                  const analyzer::CctOptions& options);
  /// analyzer::analyze_roofline of `capture` with `options` (its peak profile): rooflineReady.
  RequestId requestRoofline(const CaptureDataPtr& capture,
                            const analyzer::RooflineOptions& options);
  /// analyzer::module_report of `capture` (its window): modulesReady.
  RequestId requestModules(const CaptureDataPtr& capture);
  /// analyzer::compare_ranges of `capture`, ranges matching `baseline` vs `candidate` (globs):
  /// compareReady.
  RequestId requestRangeComparison(const CaptureDataPtr& capture, const QString& baseline,
                                   const QString& candidate);
  /// analyzer::compare_captures of `baseline` (A) vs `candidate` (B): compareReady.
  RequestId requestCaptureComparison(const CaptureDataPtr& baseline,
                                     const CaptureDataPtr& candidate);
  /// Writes the analyzer's HTML report of `capture` to `path` (GuiExport's exportHtmlReport):
  /// htmlReportWritten.
  RequestId requestHtmlReport(const CaptureDataPtr& capture, const QString& path);
  /// searchTimeline over the loaded timeline of `capture` (capture->has(Analysis::Timeline);
  /// without it the result is empty): timelineSearchReady. The job reads capture->timeline,
  /// which never changes once loaded (the timeline is not windowed), and keeps the capture alive.
  RequestId requestTimelineSearch(const CaptureDataPtr& capture, const TimelineQuery& query);

 Q_SIGNALS:
  void progress(const QString& path, int percent, const QString& stage);
  void opened(const fuselens::gui::CaptureDataPtr& data);
  /// `analysis` of `data` is in (data->has(analysis)); data->error(analysis) says if it failed.
  void analysisLoaded(const fuselens::gui::CaptureDataPtr& data, fuselens::gui::Analysis analysis);
  /// Every analysis of `data` is in.
  void captureLoaded(const fuselens::gui::CaptureDataPtr& data);
  void failed(const QString& path, const QString& message);
  /// The window of `data` is now data->window (its windowed analyses are queued again).
  void windowChanged(const fuselens::gui::CaptureDataPtr& data);
  /// setWindow(`data`, ...) failed: `message` is the analyzer's one line; the window is unchanged.
  void windowFailed(const fuselens::gui::CaptureDataPtr& data, const QString& message);
  /// Nothing is queued or running any more.
  void idle();

  /// Results of requests: the report, or null and the analyzer's error message.
  /// The HTML report is written to `path` (`error` empty) or not (`error` says why).
  void htmlReportWritten(quint64 request, const QString& path, const QString& error);
  void callPathReady(quint64 request, std::shared_ptr<const fuselens::analyzer::CallPath> path,
                     const QString& error);
  void callingContextReady(quint64 request,
                           std::shared_ptr<const fuselens::analyzer::CctReport> report,
                           const QString& error);
  void rooflineReady(quint64 request,
                     std::shared_ptr<const fuselens::analyzer::RooflineReport> report,
                     const QString& error);
  void modulesReady(quint64 request,
                    std::shared_ptr<const fuselens::analyzer::ModulesReport> report,
                    const QString& error);
  void compareReady(quint64 request,
                    std::shared_ptr<const fuselens::analyzer::CompareReport> report,
                    const QString& error);
  /// The matches of requestTimelineSearch (never null; an invalid regular expression is in
  /// matches->error).
  void timelineSearchReady(quint64 request,
                           std::shared_ptr<const fuselens::gui::TimelineMatches> matches);

 private:
  struct Job {
    std::shared_ptr<CaptureData> data;
    Analysis analysis;
    int generation = 0;               ///< data->windowGeneration when the job started
    analyzer::WindowSpec windowSpec;  ///< data's, when the job started
    std::shared_ptr<const analyzer::Window> window;  ///< data's, when the job started
  };
  /// A windowed job waits until the window of its capture is resolved (Steps loaded).
  static bool runnable(const Job& job);
  void dispatch();
  void run(Job job);
  void finish(const Job& job, const std::shared_ptr<CaptureData>& part);
  void reportProgress(const CaptureData& data, const QString& stage);
  /// Runs `work` on the pool (it returns what to do with its result on the GUI thread).
  void startRequest(std::function<std::function<void(CaptureLoader&)>()> work);

  QList<Job> queue_;
  int opening_ = 0;
  int resolving_ = 0;  ///< setWindow jobs running
  int running_ = 0;
  int maxRunning_ = 1;
  RequestId lastRequest_ = 0;
};

}  // namespace fuselens::gui
