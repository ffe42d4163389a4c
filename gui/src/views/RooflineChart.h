#pragma once
// RooflineChart: a log-log roofline (Williams, Waterman and Patterson, CACM 2009) drawn with Qt
// Charts: x = arithmetic intensity (FLOP per DRAM byte, QLogValueAxis), y = achieved FLOP/s
// (shown in TFLOP/s, QLogValueAxis).
//
//   ceilings  each memory level's bandwidth as a slope (y = x × bandwidth; DRAM solid, L2 dashed:
//             the points are placed by DRAM intensity) up to the highest compute roof, and each
//             compute roof (fp64, fp32, fp16, tensor) flat from its ridge point with DRAM
//             (peak / DRAM bandwidth, marked with a dot) to the right edge, each labelled on the
//             chart with its figure and ridge point;
//   points    one per plotted RooflinePoint: circles for hardware counters, diamonds for declared
//             work; area proportional to GPU time; filled with the name's colour (as on the
//             timeline and in the table); hovering shows the name and figures, a click emits
//             pointClicked; highlight() rings one and writes its name beside it. They are scene
//             items placed with QChart::mapToPosition (Qt 6.4 does not draw scatter points that
//             have a per-point size or colour on log axes), the legend explains their shapes.
// Labels are scene items of the chart, so PNG and SVG exports (GuiExport) include them.

#include <QList>
#include <QString>
#include <QtCharts/QChartView>

#include <vector>

#include "models/RooflineModel.h"

QT_BEGIN_NAMESPACE
class QGraphicsEllipseItem;
class QGraphicsItem;
class QGraphicsSimpleTextItem;
class QGraphicsTextItem;
class QLogValueAxis;
class QScatterSeries;
QT_END_NAMESPACE

namespace fuselens::gui {

class RooflineChart : public QChartView {
  Q_OBJECT
 public:
  explicit RooflineChart(QWidget* parent = nullptr);

  /// Draws `ceilings` and the plotted ones of `points` (indices of `points` are kept: signals and
  /// highlight() use them). Empty `points` and no roofs: an empty chart.
  void setData(const analyzer::Ceilings& ceilings, const std::vector<RooflinePoint>& points);
  void clear();
  /// Rings point `index` (of the points given to setData) and names it; -1 removes the ring.
  void highlight(int index);

  /// What is drawn, for tests: each plotted point's index into the points given to setData and
  /// its chart position (x FLOP/byte, y TFLOP/s), the ceiling labels, the axis ranges.
  struct Plotted {
    int index = -1;
    QPointF position;
    double markerSize = 0;
    QGraphicsItem* item = nullptr;  ///< at chart()->mapToPosition(position); its tooltip
  };
  const std::vector<Plotted>& plotted() const { return plotted_; }
  QStringList ceilingLabels() const;
  QLogValueAxis* xAxis() const { return xAxis_; }
  QLogValueAxis* yAxis() const { return yAxis_; }
  /// The tooltip text (HTML) of point `index`.
  QString tooltip(int index) const;

 Q_SIGNALS:
  void pointClicked(int index);

 private:
  struct Label {
    QGraphicsSimpleTextItem* item = nullptr;
    QPointF from, to;  ///< the line it labels, in chart values
    bool slope = false;
  };
  void placeLabels();
  QString pointTip(const RooflinePoint& p) const;

  QLogValueAxis* xAxis_ = nullptr;
  QLogValueAxis* yAxis_ = nullptr;
  QGraphicsEllipseItem* ring_ = nullptr;
  QGraphicsTextItem* ringLabel_ = nullptr;
  std::vector<Label> labels_;
  std::vector<RooflinePoint> points_;
  std::vector<Plotted> plotted_;
  int highlighted_ = -1;
};

}  // namespace fuselens::gui
