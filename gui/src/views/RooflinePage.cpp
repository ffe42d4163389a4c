#include "views/RooflinePage.h"

#include <QLabel>
#include <QVBoxLayout>

namespace fuselens::gui {

RooflinePage::RooflinePage(QWidget* parent) : Page(QStringLiteral("Roofline"), parent) {
  auto* layout = new QVBoxLayout(this);
#ifdef FUSELENS_GUI_HAS_ROOFLINE
  layout->addWidget(makeNotice(
      QStringLiteral("The roofline chart is not in prof-gui yet"),
      QStringLiteral(
          "This build has the analyzer's roofline analysis (<code>analyzer/Roofline.h</code>), but "
          "prof-gui does not draw it yet. Run <code>prof-analyze roofline FILE</code> for the table "
          "of kernels and NVTX ranges against the device's ceilings. A roofline needs FLOP and byte "
          "counts: hardware counters (<code>prof-run --metrics roofline</code>) or work annotations "
          "(<code>fuselens/annotate.h</code>); captures without either have nothing to plot."),
      this));
#else
  layout->addWidget(makeNotice(
      QStringLiteral("Roofline analysis is not available in this build"),
      QStringLiteral(
          "A roofline places each kernel or NVTX range by arithmetic intensity (FLOP per byte "
          "moved) and achieved FLOP/s under the compute and memory-bandwidth ceilings of the "
          "device. Neither number is in a capture by itself: they come from the analyzer's "
          "roofline analysis (<code>analyzer/Roofline.h</code>), which this build of FuseLens does "
          "not have. Nothing is drawn rather than a chart of guessed values."),
      this));
#endif
}

void RooflinePage::setCaptures(const CaptureDataPtr&, const QList<CaptureDataPtr>&) {}

bool RooflinePage::available() { return false; }

}  // namespace fuselens::gui
