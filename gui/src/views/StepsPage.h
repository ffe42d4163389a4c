#pragma once
// StepsPage: the steps of the capture (analyzer::analyze_steps, docs/steps.md): how they were
// found, the steady window and the distribution of step times above a chart of the step times
// (StepChart) and the per-step table (StepsModel). Selecting a range of rows sets the window of
// every page to those steps (windowRequested "steps:A-B", after the selection rests for a moment,
// or at once with the button).

#include <memory>

#include "steps/Steps.h"
#include "views/Page.h"

class QPushButton;
class QTimer;

namespace fuselens::gui {

class StepChart;
class StepsModel;

class StepsPage : public Page {
  Q_OBJECT
 public:
  explicit StepsPage(QWidget* parent = nullptr);

  void setCaptures(const CaptureDataPtr& current, const QList<CaptureDataPtr>& all) override;
  QList<Analysis> analyses() const override { return {Analysis::Steps}; }
  void analysisLoaded(const CaptureDataPtr& capture, Analysis analysis) override;
  void windowChanged(const CaptureDataPtr& capture, const QList<CaptureDataPtr>& all) override;
  QAbstractItemView* currentTable() const override;
  QWidget* imageWidget() override;

  StepsModel* model() const { return model_; }
  StepChart* chart() const { return chart_; }
  /// The text above the chart (method, steady window, distribution, outliers, window).
  QString headerText() const;
  /// Selects the rows of steps `first` to `last` (1-based) and asks for that window at once.
  void selectSteps(int first, int last);
  /// The window of the selected rows ("steps:A-B"), empty without a selection.
  QString selectionWindow() const;

 Q_SIGNALS:
  /// The user chose a window (parse_window's forms).
  void windowRequested(const QString& window);

 private:
  void showSteps();

  CaptureDataPtr data_;
  QLabel* header_ = nullptr;
  StepChart* chart_ = nullptr;
  StepsModel* model_ = nullptr;
  QSortFilterProxyModel* proxy_ = nullptr;
  QTableView* view_ = nullptr;
  QPushButton* apply_ = nullptr;
  QPushButton* steady_ = nullptr;
  QTimer* settle_ = nullptr;
  const analyzer::StepReport* shown_ = nullptr;  ///< the report in the model (data_'s steps)
};

}  // namespace fuselens::gui
