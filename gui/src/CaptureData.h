#pragma once
// CaptureData: everything the pages show about one capture, computed by the analyzer off the GUI
// thread and shared read-only by every page.
//
// Staged loading: opening a capture only checks it (analyzer::open_capture); each analysis
// (Analysis) is then loaded by its own job, the one the visible page needs first (CaptureLoader),
// so the timeline of a million-kernel capture paints without waiting for the summary, the flags or
// the range statistics. A field is empty until has() says its analysis is in; CaptureLoader fills
// it on the GUI thread (pages and the main window read these fields only there; jobs on other
// threads read only path, displayName and capture, which never change, and the timeline search
// reads timeline, which never changes once has(Analysis::Timeline)).

#include <QList>
#include <QMetaType>
#include <QString>

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "capture/Capture.h"
#include "compare/Compare.h"
#include "flags/Flags.h"
#include "steps/Steps.h"
#include "summary/Summary.h"
#include "timeline/Timeline.h"
#include "timeline/TimelineLod.h"
#include "window/Window.h"

namespace fuselens::gui {

/// The analyses loaded per capture, in the order they load when no page asks for one first.
/// Steps also resolves the capture's window (windowSpec); the windowed analyses (windowed())
/// read only the window and run after it.
enum class Analysis { Timeline = 0, Steps, Summary, Ranges, Flags };
inline constexpr int kAnalyses = 5;
/// Every analysis loaded per capture, in Analysis order.
QList<Analysis> allAnalyses();
/// "timeline", "steps", "summary", "range statistics", "flag rules": for status messages.
QString analysisName(Analysis analysis);
/// True for the analyses that describe the window (summary, range statistics, flags); the
/// timeline and the steps show the whole capture, with the window marked.
bool windowed(Analysis analysis);
/// The window every capture opens with: steady, as on the command line (docs/windows.md).
inline constexpr const char* kDefaultWindow = "steady";

struct CaptureData {
  QString path;
  QString displayName;  ///< file name
  /// The opened capture every analysis of it reads (set by openCapture; never changes).
  analyzer::CapturePtr capture;
  /// Analysis::Summary: kernel names demangled, as `prof-analyze summary`.
  analyzer::Summary summary;
  /// Analysis::Timeline: kernel names short, as Nsight Systems' timeline. With a stored level of
  /// detail (timelineLod), the lanes, NVTX ranges and counters only: TimelineWidget loads the
  /// kernels and API calls of the visible window itself (analyzer::load_timeline_window).
  analyzer::Timeline timeline;
  /// Analysis::Timeline: the capture's stored level of detail when it is trusted
  /// (analyzer/timeline/TimelineLod.h); null: `timeline` holds every item (captures before
  /// schema 10, or whose stored one is stale or damaged: timelineLodNote says why in one line).
  std::shared_ptr<const analyzer::TimelineLod> timelineLod;
  QString timelineLodNote;
  std::optional<analyzer::FlagsReport> flags;  ///< Analysis::Flags: default rules and thresholds
  std::vector<analyzer::RangeStats> ranges;    ///< Analysis::Ranges: analyzer::range_stats
  /// Analysis::Steps: analyzer::analyze_steps (default methods) of the whole capture.
  std::optional<analyzer::StepReport> steps;
  /// The window the windowed analyses describe, as given (parse_window's input).
  analyzer::WindowSpec windowSpec = analyzer::default_window(kDefaultWindow);
  /// windowSpec resolved on the whole capture (by the Steps job, then by each window change);
  /// null until then, or when it failed (the windowed analyses then read the whole capture).
  std::shared_ptr<const analyzer::Window> window;
  /// Counts window changes: a windowed result computed for an older window is dropped.
  int windowGeneration = 0;
  /// Analyses that failed on this capture, one line each ("flag rules: message"); the others
  /// still show.
  QString analysisErrors;
  /// Wall time of each analysis's job (ms, -1: not finished), and of opening the capture.
  std::array<qint64, kAnalyses> milliseconds{-1, -1, -1, -1, -1};
  qint64 openMilliseconds = 0;
  /// Sum of the above: the time every analysis took.
  qint64 loadMilliseconds = 0;

  /// True once `analysis` finished, successfully or not (failures are in analysisErrors).
  bool has(Analysis analysis) const { return loaded_[index(analysis)]; }
  /// The error `analysis` failed with, empty when it succeeded or has not run.
  const QString& error(Analysis analysis) const { return errors_[index(analysis)]; }

  /// Moves the result of `analysis` from `part` (filled by loadAnalysis) into this capture.
  void take(Analysis analysis, CaptureData&& part);
  /// Marks `analysis` as not loaded (its window changed; CaptureLoader runs it again).
  void unload(Analysis analysis);
  /// The window's description for status bars ("steps 6-65 of 65 (steady), 0.82 s of 8.38 s
  /// captured; start-up 7.5 s excluded"), "whole capture" without a window.
  QString windowDescription() const;

 private:
  static std::size_t index(Analysis a) { return static_cast<std::size_t>(a); }
  friend void loadAnalysis(Analysis analysis, CaptureData& into);
  std::array<bool, kAnalyses> loaded_{};
  std::array<QString, kAnalyses> errors_{};
};

using CaptureDataPtr = std::shared_ptr<const CaptureData>;

/// Called with a percentage (0..100) and the stage about to run.
using ProgressCallback = std::function<void(int percent, const QString& stage)>;

/// A CaptureData for `path` with no analysis yet, after analyzer::open_capture checked it.
/// Throws db::Error (its message: missing, not a capture, corrupt, newer schema).
std::shared_ptr<CaptureData> openCapture(const QString& path);

/// Runs `analysis` on `into.capture` (opened from `into.path` when null) and stores its result in
/// `into` (marking it loaded); an exception of the analyzer is caught and recorded as the
/// analysis's error. Steps also resolves `into.windowSpec` into `into.window`; a windowed analysis
/// reads through a reader restricted to `into.window` (whole capture when null). Safe to call
/// from any thread on a CaptureData no other thread uses.
void loadAnalysis(Analysis analysis, CaptureData& into);

/// openCapture and every analysis, in order, on the calling thread (tests, benchmarks, the
/// command line). Throws what openCapture throws; analysis failures are in analysisErrors.
std::shared_ptr<CaptureData> loadCapture(const QString& path,
                                         const ProgressCallback& progress = {});

}  // namespace fuselens::gui

Q_DECLARE_METATYPE(fuselens::gui::CaptureDataPtr)
Q_DECLARE_METATYPE(fuselens::gui::Analysis)
