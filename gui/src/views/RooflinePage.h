#pragma once
// RooflinePage: the analyzer's roofline (analyzer/Roofline.h) of the current capture: a log-log
// chart (RooflineChart) of kernels or NVTX ranges against the ceilings of a chosen peak profile,
// and beside it a table (RooflineModel) with the same rows.
//
// Peaks: the capture's GPU (`auto`: the datasheet profile matching its device), every profile
// of peaks.json (Peaks.h's builtin_peaks: T4, A100, H100, ...), and the capture's measured
// ceilings (`prof-ceilings`) when it has them. Changing the profile re-runs analyze_roofline,
// as `prof-analyze roofline --peaks ID` would. The loader computes the report off the GUI thread
// (CaptureLoader::requestRoofline), the first time the page is shown for a capture (staged
// loading, Page.h). A capture with neither
// hardware counters nor work annotations gets a notice saying how to record them; the page
// never plots guesses.

#include <memory>
#include <vector>

#include "roofline/Roofline.h"
#include "views/Page.h"

class QComboBox;
class QStackedWidget;
class QSplitter;

namespace fuselens::gui {

class RooflineChart;
class RooflineModel;

class RooflinePage : public Page {
  Q_OBJECT
 public:
  explicit RooflinePage(QWidget* parent = nullptr);
  void setCaptures(const CaptureDataPtr& current, const QList<CaptureDataPtr>& all) override;
  QAbstractItemView* currentTable() const override;
  QWidget* imageWidget() override;
  bool busy() const override { return running_; }

  RooflineModel* model() const { return model_; }
  RooflineChart* chart() const { return chart_; }
  /// The report shown (null before the first one, or when the analysis failed).
  const analyzer::RooflineReport* report() const { return report_.get(); }
  /// Selects the peak profile by id ("auto", "measured", "t4", ...) and recomputes; false when
  /// the id is not offered.
  bool setPeaks(const QString& id);
  QString peaks() const;
  /// The ids offered, in the combo box's order.
  QStringList offeredPeaks() const;
  /// Shows NVTX ranges (true) or kernels (false).
  void setShowRanges(bool ranges);
  /// The notice shown instead of the chart (empty while the chart shows).
  QString noticeText() const;
  /// The line above the chart: the peaks chosen and the analyzer's notes.
  QString headerText() const;

 Q_SIGNALS:
  /// A report (or its error) is shown.
  void finished();

 protected:
  void runAnalysis() override;
  void connectLoader(CaptureLoader* loader) override;

 private:
  void showReport();
  void takeReport(quint64 request, const std::shared_ptr<const analyzer::RooflineReport>& report,
                  const QString& error);
  void showNotice(const QString& title, const QString& html);
  void syncSelection(int pointIndex);

  CaptureDataPtr data_;
  QComboBox* peaks_ = nullptr;
  QComboBox* what_ = nullptr;
  QLabel* header_ = nullptr;
  QStackedWidget* stack_ = nullptr;
  QLabel* notice_ = nullptr;
  QSplitter* splitter_ = nullptr;
  RooflineChart* chart_ = nullptr;
  RooflineModel* model_ = nullptr;
  QSortFilterProxyModel* proxy_ = nullptr;
  QTableView* table_ = nullptr;
  std::shared_ptr<const analyzer::RooflineReport> report_;
  QString error_;
  quint64 request_ = 0;  ///< the latest request; older results are dropped
  bool running_ = false;
};

}  // namespace fuselens::gui
