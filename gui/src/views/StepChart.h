#pragma once
// StepChart: the step times of a StepReport (Steps.h) as a chart drawn with QPainter: per step its
// wall time and its GPU busy time (two lines over the step index), the steady window shaded,
// the steps of the current window marked below the axis, and the outlier steps circled in red.

#include <QWidget>

#include <memory>

#include "steps/Steps.h"
#include "window/Window.h"

namespace fuselens::gui {

class StepChart : public QWidget {
  Q_OBJECT
 public:
  explicit StepChart(QWidget* parent = nullptr);
  /// Shows `report` (null: nothing) and marks the steps of `window` (null or whole: none).
  void setReport(std::shared_ptr<const analyzer::StepReport> report,
                 std::shared_ptr<const analyzer::Window> window);
  QSize sizeHint() const override { return {900, 260}; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  std::shared_ptr<const analyzer::StepReport> report_;
  std::shared_ptr<const analyzer::Window> window_;
};

}  // namespace fuselens::gui
