#pragma once
// CallingContextPage: top-down, bottom-up and flat trees of the CPU calling contexts that
// launched GPU work, with inclusive and exclusive GPU time (or launches, or bytes), from the
// analyzer's calling_context_report (CallingContext.h), which the loader computes off the GUI
// thread (CaptureLoader::requestCallingContext) whenever the view or metric changes. A capture
// without calling contexts (recorded before stacks were collected, or with stack collection off)
// shows the analyzer's reason. Frames (auto, user, python, native, all: analyzer::FramesMode)
// choose which frames the paths show; "Flame graph" shows the same tree as a flame graph
// (FlameGraphWidget) instead of the tree view.

#include <memory>

#include <QAbstractItemModel>

#include "cct/CallingContext.h"
#include "views/Page.h"

class QCheckBox;
class QComboBox;
class QScrollArea;
class QLineEdit;
class QStackedWidget;

namespace fuselens::gui {

class FlameGraphWidget;

/// CctReport rows as a tree: Name, Inclusive, Exclusive, Inclusive %, Module. The root row is
/// not shown; its children are the top level. SortRole / RawRole as TableModel.
class CallingContextModel : public QAbstractItemModel {
  Q_OBJECT
 public:
  enum Column { Name, Inclusive, Exclusive, InclusivePercent, Module, Columns };
  explicit CallingContextModel(QObject* parent = nullptr);

  void setReport(analyzer::CctReport report);
  const analyzer::CctReport& report() const { return report_; }

  QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
  QModelIndex parent(const QModelIndex& child) const override;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  const std::vector<int>& childrenOf(const QModelIndex& parent) const;
  QString valueText(std::int64_t value) const;

  analyzer::CctReport report_;
  std::vector<int> rowInParent_;  // per report row: its position among its parent's children
  static const std::vector<int> kNone;
};

/// What "Show in timeline" on row `row` of `report` looks for: a GPU operation row's kernel
/// ("<gpu kernel> NAME", demangled), memcpy ("<gpu copy> KIND") or memset; any other row the
/// operation with the largest inclusive cost (report.metric) below it. Its first instance in
/// the window is shown: the first launch of that kernel, which may come from another calling
/// context (the timeline does not keep call paths). Invalid when no operation lies below (flat
/// view rows, the root).
TimelineTarget cctTimelineTarget(const analyzer::CctReport& report, int row);

class CallingContextPage : public Page {
  Q_OBJECT
 public:
  explicit CallingContextPage(QWidget* parent = nullptr);
  void setCaptures(const CaptureDataPtr& current, const QList<CaptureDataPtr>& all) override;
  QAbstractItemView* currentTable() const override;
  bool busy() const override { return running_; }
  CallingContextModel* model() const { return model_; }
  FlameGraphWidget* flameGraph() const { return flame_; }
  QTreeView* tree() const { return tree_; }
  /// Shows the flame graph (true) or the tree (false) of the current report.
  void setFlameGraphShown(bool shown);
  /// Selects the frames mode (the index of analyzer::FramesMode) and recomputes.
  void setFramesMode(analyzer::FramesMode mode);
  QString noticeText() const;

 Q_SIGNALS:
  void finished();

 protected:
  /// Asks the loader for the report (the first time the page is shown for a capture).
  void runAnalysis() override { recompute(); }
  void connectLoader(CaptureLoader* loader) override;

 private:
  void recompute();
  void expandHotPath();
  void showReport(quint64 request, const std::shared_ptr<const analyzer::CctReport>& report,
                  const QString& error);

  CaptureDataPtr data_;
  QComboBox* view_ = nullptr;
  QComboBox* metric_ = nullptr;
  QComboBox* frames_ = nullptr;
  QCheckBox* flameToggle_ = nullptr;
  QScrollArea* flameScroll_ = nullptr;
  FlameGraphWidget* flame_ = nullptr;
  QLineEdit* search_ = nullptr;
  QStackedWidget* stack_ = nullptr;
  QLabel* notice_ = nullptr;
  QTreeView* tree_ = nullptr;
  QSortFilterProxyModel* proxy_ = nullptr;
  CallingContextModel* model_ = nullptr;
  quint64 request_ = 0;  ///< the latest request; older results are dropped
  bool running_ = false;
};

}  // namespace fuselens::gui
