#pragma once
// RooflinePage: a log-log roofline chart (Qt Charts, QLogValueAxis) of kernels or NVTX ranges
// against the ceilings of a peak profile, from the analyzer's roofline analysis
// (analyzer/Roofline.h). Not drawn yet: the page says so (and, in builds without Roofline.h,
// that the analysis is missing) and points to `prof-analyze roofline`; it never plots guesses.

#include "views/Page.h"

namespace fuselens::gui {

class RooflinePage : public Page {
  Q_OBJECT
 public:
  explicit RooflinePage(QWidget* parent = nullptr);
  void setCaptures(const CaptureDataPtr& current, const QList<CaptureDataPtr>& all) override;
  static bool available();
};

}  // namespace fuselens::gui
