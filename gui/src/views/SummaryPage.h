#pragma once
// SummaryPage: analyzer::summarize's tables (kernels, memory operations, API calls, NVTX ranges,
// device memory) under the run's header, each sortable, all filtered by one search box.

#include "views/Page.h"

class QLineEdit;
class QTabWidget;

namespace fuselens::gui {

class KernelSummaryModel;
class MemoryOperationModel;
class ApiSummaryModel;
class NvtxSummaryModel;
class DeviceMemoryModel;

class SummaryPage : public Page {
  Q_OBJECT
 public:
  explicit SummaryPage(QWidget* parent = nullptr);

  void setCaptures(const CaptureDataPtr& current, const QList<CaptureDataPtr>& all) override;
  QList<Analysis> analyses() const override { return {Analysis::Summary}; }
  void analysisLoaded(const CaptureDataPtr& capture, Analysis analysis) override;
  QAbstractItemView* currentTable() const override;

  KernelSummaryModel* kernelModel() const { return kernels_; }
  MemoryOperationModel* memoryModel() const { return memory_; }
  ApiSummaryModel* apiModel() const { return api_; }
  NvtxSummaryModel* nvtxModel() const { return nvtx_; }
  DeviceMemoryModel* deviceMemoryModel() const { return devices_; }
  /// Shows the kernel table filtered to `text`.
  void showKernels(const QString& text);
  void setFilter(const QString& text);

 private:
  void showSummary();

  CaptureDataPtr data_;
  QLabel* header_ = nullptr;
  QLineEdit* search_ = nullptr;
  QTabWidget* tabs_ = nullptr;
  KernelSummaryModel* kernels_ = nullptr;
  MemoryOperationModel* memory_ = nullptr;
  ApiSummaryModel* api_ = nullptr;
  NvtxSummaryModel* nvtx_ = nullptr;
  DeviceMemoryModel* devices_ = nullptr;
  QList<QSortFilterProxyModel*> proxies_;
  QList<QTableView*> views_;
};

}  // namespace fuselens::gui
