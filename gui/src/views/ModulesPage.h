#pragma once
// ModulesPage: the PyTorch module view, `prof-analyze modules` as a tree (ModulesModel): GPU time
// forward and backward, inclusive and exclusive, launches, bytes and peak device memory per
// nn.Module instance path, of the capture's window. The loader computes it off the GUI thread
// (CaptureLoader::requestModules) once the window is resolved (the Steps analysis) and again when
// the window changes. A header names the window, the share of backward GPU time placed in a
// module ("Backward GPU time in modules: P %") and the work outside every module; a capture
// without module ranges (not a PyTorch program, or recorded with --torch-modules off) says how
// to record them.

#include <memory>

#include "modules/Modules.h"
#include "views/Page.h"

class QLineEdit;
class QStackedWidget;

namespace fuselens::gui {

class ModulesModel;

class ModulesPage : public Page {
  Q_OBJECT
 public:
  explicit ModulesPage(QWidget* parent = nullptr);
  void setCaptures(const CaptureDataPtr& current, const QList<CaptureDataPtr>& all) override;
  /// The window is resolved by the Steps analysis: the view waits for it.
  QList<Analysis> analyses() const override { return {Analysis::Steps}; }
  void analysisLoaded(const CaptureDataPtr& capture, Analysis analysis) override;
  QAbstractItemView* currentTable() const override;
  bool busy() const override { return running_; }

  ModulesModel* model() const { return model_; }
  /// The header: window, backward share, work outside every module (empty without a report).
  QString headerText() const;
  /// The notice shown instead of the tree (no capture, computing, no module ranges, failure).
  QString noticeText() const;
  /// True while the tree (not the notice) is shown.
  bool treeShown() const;

 Q_SIGNALS:
  /// A report (or its failure) was shown.
  void finished();

 protected:
  void runAnalysis() override;
  void connectLoader(CaptureLoader* loader) override;

 private:
  void showNotice(const QString& html);
  void showReport(quint64 request, const std::shared_ptr<const analyzer::ModulesReport>& report,
                  const QString& error);

  CaptureDataPtr data_;
  QLabel* header_ = nullptr;
  QLineEdit* search_ = nullptr;
  QStackedWidget* stack_ = nullptr;
  QLabel* notice_ = nullptr;
  QTreeView* tree_ = nullptr;
  QSortFilterProxyModel* proxy_ = nullptr;
  ModulesModel* model_ = nullptr;
  quint64 request_ = 0;  ///< the latest request; older results are dropped
  bool running_ = false;
};

/// The header of `report` for a capture whose window is described by `window`: three lines,
/// "Window: …", "Backward GPU time in modules: P % (x of y)" and "Outside every module: …", as
/// `prof-analyze modules` prints them.
QString modulesHeader(const analyzer::ModulesReport& report, const QString& window);

}  // namespace fuselens::gui
