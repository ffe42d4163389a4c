#pragma once
// CaptureData: everything the pages show about one capture, computed once by the analyzer off
// the GUI thread (loadCapture) and then shared read-only by every page.
//
// Which analyses are present depends on the build (FUSELENS_GUI_HAS_* from gui/CMakeLists.txt):
// pages whose analysis is missing say so instead of showing anything.

#include <QMetaType>
#include <QString>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fuselens/analyzer/Summary.h"
#include "fuselens/analyzer/Timeline.h"
#ifdef FUSELENS_GUI_HAS_FLAGS
#include "fuselens/analyzer/Flags.h"
#endif
#ifdef FUSELENS_GUI_HAS_COMPARE
#include "fuselens/analyzer/Compare.h"
#endif

namespace fuselens::gui {

struct CaptureData {
  QString path;
  QString displayName;  ///< file name
  analyzer::Summary summary;    ///< kernel names demangled, as `prof-analyze summary`
  analyzer::Timeline timeline;  ///< kernel names short, as Nsight Systems' timeline
#ifdef FUSELENS_GUI_HAS_FLAGS
  std::optional<analyzer::FlagsReport> flags;  ///< default rules and thresholds
#endif
#ifdef FUSELENS_GUI_HAS_COMPARE
  std::vector<analyzer::RangeStats> ranges;  ///< analyzer::range_stats
#endif
  QString analysisErrors;  ///< analyses that failed on this capture (the others still show)
  qint64 loadMilliseconds = 0;
};

using CaptureDataPtr = std::shared_ptr<const CaptureData>;

/// Called with a percentage (0..100) and the stage about to run.
using ProgressCallback = std::function<void(int percent, const QString& stage)>;

/// Opens `path` with db::Reader and runs every analysis of this build. Throws db::Error (the
/// Reader's message: missing, not a capture, corrupt, newer schema) and std::exception from the
/// summary or timeline; a failing optional analysis (flags, ranges) is recorded in
/// analysisErrors instead. Safe to call from any thread.
std::shared_ptr<CaptureData> loadCapture(const QString& path, const ProgressCallback& progress = {});

}  // namespace fuselens::gui

Q_DECLARE_METATYPE(fuselens::gui::CaptureDataPtr)
