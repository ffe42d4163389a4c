#pragma once
// FlameGraphWidget: the calling-context tree of a CctReport as a flame graph (icicle): the root
// on top, each row's children below it, each box as wide as its share of the zoom root's metric
// (analyzer::flame_layout, cct/FlameGraph.h), drawn with QPainter. Clicking a box zooms into it
// (it fills the width); clicking the top box, a right click or Escape zooms back out one level.
// Hovering a box shows its label and its inclusive value and share of the whole (tooltip).

#include <QWidget>

#include <vector>

#include "cct/CallingContext.h"
#include "cct/FlameGraph.h"

namespace fuselens::gui {

class FlameGraphWidget : public QWidget {
  Q_OBJECT
 public:
  explicit FlameGraphWidget(QWidget* parent = nullptr);

  /// Shows `report` (its top-down, bottom-up or flat tree), zoomed out.
  void setReport(const analyzer::CctReport& report);
  const analyzer::CctReport& report() const { return report_; }

  /// The row of report().rows the graph is zoomed into (0: the whole tree).
  int zoomRoot() const { return root_; }
  /// Zooms into `row` (an index into report().rows); an invalid row zooms out fully.
  void zoomTo(int row);
  /// The report row under the widget position `pos`; -1 for none.
  int rowAt(const QPoint& pos) const;
  /// The tooltip text of a row: its label, its inclusive value and its share of the whole.
  QString toolTipFor(int row) const;
  /// The boxes drawn (widths as fractions of the widget's width).
  const std::vector<analyzer::FlameBox>& boxes() const { return boxes_; }

  QSize sizeHint() const override;

 Q_SIGNALS:
  void zoomChanged(int row);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  bool event(QEvent* event) override;

 private:
  void layoutBoxes();
  QString valueText(std::int64_t value) const;

  analyzer::CctReport report_;
  int root_ = 0;
  std::vector<analyzer::FlameBox> boxes_;
  int levels_ = 0;
  static constexpr int kBoxHeight = 20;
};

}  // namespace fuselens::gui
