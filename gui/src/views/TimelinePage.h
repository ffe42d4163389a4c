#pragma once
// TimelinePage: the TimelineWidget with zoom buttons above it and, below it, the details of the
// selected item: times, launch configuration, and its launch context (the API call that launched
// it and the NVTX ranges open on that thread, from analyzer::launch_context).

#include "views/Page.h"

class QTextBrowser;

namespace fuselens::gui {

class TimelineWidget;

class TimelinePage : public Page {
  Q_OBJECT
 public:
  explicit TimelinePage(QWidget* parent = nullptr);

  void setCaptures(const CaptureDataPtr& current, const QList<CaptureDataPtr>& all) override;
  QList<Analysis> analyses() const override { return {Analysis::Timeline}; }
  void analysisLoaded(const CaptureDataPtr& capture, Analysis analysis) override;
  QWidget* imageWidget() override;
  TimelineWidget* timelineWidget() const { return timeline_; }
  /// Shows and selects the first kernel named `shortName` at or after `fromNs`.
  bool revealKernel(const QString& shortName, std::int64_t fromNs);
  /// Zooms to the NVTX range around the longest kernel and selects that kernel (what a first
  /// look at a capture wants; also used for screenshots). False when there is no kernel.
  bool showLongestKernel();
  /// The details text shown for the selection (plain text, for tests).
  QString detailsText() const;

 private:
  void showDetails(const analyzer::TimelineItem* item);
  void showTimeline();

  CaptureDataPtr data_;
  TimelineWidget* timeline_ = nullptr;
  QTextBrowser* details_ = nullptr;
};

}  // namespace fuselens::gui
