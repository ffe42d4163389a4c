#pragma once
// ComparePage: baseline vs candidate side by side with their differences (analyzer Compare.h):
// two sets of NVTX ranges of the current capture chosen by glob patterns (paired by what the
// wildcards matched, e.g. "*/unfused/*" vs "*/fused/*"), or the current capture against another
// open one (ranges paired by name, plus the kernel diff: added, removed, faster, slower). The
// loader runs the comparison off the GUI thread (CaptureLoader::requestRangeComparison,
// requestCaptureComparison); a pattern that matches nothing is reported, not shown.

#include <memory>

#include "compare/Compare.h"
#include "views/Page.h"

class QComboBox;
class QLineEdit;
class QPushButton;
class QRadioButton;

namespace fuselens::gui {

class CompareEntryModel;
class KernelDiffModel;

class ComparePage : public Page {
  Q_OBJECT
 public:
  explicit ComparePage(QWidget* parent = nullptr);
  void setCaptures(const CaptureDataPtr& current, const QList<CaptureDataPtr>& all) override;
  QAbstractItemView* currentTable() const override;
  QList<Analysis> analyses() const override { return {Analysis::Ranges}; }
  void analysisLoaded(const CaptureDataPtr& capture, Analysis analysis) override;
  bool busy() const override { return running_; }

  CompareEntryModel* entryModel() const { return entries_; }
  KernelDiffModel* kernelDiffModel() const { return kernels_; }
  /// Compares ranges of the current capture (asynchronously; `finished` when done).
  void compareRanges(const QString& baselinePattern, const QString& candidatePattern);
  /// Compares the current capture (baseline) with `candidate` (asynchronously).
  void compareWith(const CaptureDataPtr& candidate);
  QString statusText() const;
  QTableView* entryView() const { return entryView_; }
  QTableView* kernelView() const { return kernelView_; }

 Q_SIGNALS:
  void finished();

 protected:
  void connectLoader(CaptureLoader* loader) override;

 private:
  void showResult(quint64 request, const std::shared_ptr<const analyzer::CompareReport>& report,
                  const QString& error);
  /// Suggests patterns from the range names and compares them (once the ranges are in).
  void suggest();
  /// The comparison shown has the current capture as its baseline (or compares its ranges).
  bool inCurrentCapture() const;

  CaptureDataPtr data_;
  QList<CaptureDataPtr> all_;
  QRadioButton* rangesMode_ = nullptr;
  QRadioButton* capturesMode_ = nullptr;
  QLineEdit* baseline_ = nullptr;
  QLineEdit* candidate_ = nullptr;
  QComboBox* other_ = nullptr;
  QPushButton* go_ = nullptr;
  QLabel* status_ = nullptr;
  CompareEntryModel* entries_ = nullptr;
  KernelDiffModel* kernels_ = nullptr;
  QTableView* entryView_ = nullptr;
  QTableView* kernelView_ = nullptr;
  QWidget* kernelBox_ = nullptr;
  std::shared_ptr<const analyzer::CompareReport> report_;  ///< the comparison shown, if any
  std::weak_ptr<const CaptureData> requestedFor_;          ///< the baseline of the latest request
  std::weak_ptr<const CaptureData> shownFor_;              ///< the baseline of report_
  quint64 request_ = 0;  ///< the latest request: a newer request discards older results
  bool running_ = false;
};

}  // namespace fuselens::gui
