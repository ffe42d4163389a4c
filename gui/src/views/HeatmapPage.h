#pragma once
// HeatmapPage: HeatmapModel (rows op · shape, columns variant) with a metric selector, the
// baseline variant for speedups, a colour legend and the value in each cell.

#include "views/Page.h"

class QComboBox;

namespace fuselens::gui {

class HeatmapModel;
class HeatmapLegend;

class HeatmapPage : public Page {
  Q_OBJECT
 public:
  explicit HeatmapPage(QWidget* parent = nullptr);
  void setCaptures(const CaptureDataPtr& current, const QList<CaptureDataPtr>& all) override;
  QAbstractItemView* currentTable() const override;
  QWidget* imageWidget() override { return chartArea_; }
  QList<Analysis> analyses() const override { return {Analysis::Ranges}; }
  void analysisLoaded(const CaptureDataPtr& capture, Analysis analysis) override;

  HeatmapModel* model() const { return model_; }
  /// Selects the metric by its index in heatmapMetrics() and the speedup baseline variant.
  void setMetric(int metricIndex, const QString& baselineVariant = {});

 private:
  void showRanges();
  void rebuild();

  CaptureDataPtr data_;
  QComboBox* metric_ = nullptr;
  QComboBox* baseline_ = nullptr;
  QLabel* note_ = nullptr;
  HeatmapModel* model_ = nullptr;
  QTableView* view_ = nullptr;
  HeatmapLegend* legend_ = nullptr;
  QWidget* chartArea_ = nullptr;
};

}  // namespace fuselens::gui
