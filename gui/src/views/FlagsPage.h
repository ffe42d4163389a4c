#pragma once
// FlagsPage: the verdict for the window (FlagsVerdict.h), then every hit of the analyzer's flag
// rules ranked by time at stake (Flags.h, docs/rules.md), with its rule's
// title and source, what was measured and what to do. A hit that names a kernel links to it:
// "Show in timeline" selects its first instance, "Show in summary" filters the kernel table.

#include "views/Page.h"

class QTextBrowser;
class QComboBox;
class QPushButton;

namespace fuselens::gui {

class FlagsModel;

class FlagsPage : public Page {
  Q_OBJECT
 public:
  explicit FlagsPage(QWidget* parent = nullptr);
  void setCaptures(const CaptureDataPtr& current, const QList<CaptureDataPtr>& all) override;
  QAbstractItemView* currentTable() const override;
  /// The hits, and the summary and timeline their links and times refer to.
  QList<Analysis> analyses() const override {
    return {Analysis::Flags, Analysis::Summary, Analysis::Timeline};
  }
  void analysisLoaded(const CaptureDataPtr& capture, Analysis analysis) override;
  FlagsModel* model() const { return model_; }
  QString explanationText() const;
  /// The text above the table: the verdict for the window (headline, top causes, start-up),
  /// then how many findings (rich text).
  QString headerText() const;
  /// Shows only the findings of `rule` (its id; empty: every rule), as the rule filter does.
  void filterRule(const QString& rule);
  /// Rows the table shows (after the rule filter).
  int shownHits() const;
  /// Selects the hit at source row `row` (tests).
  void selectHit(int row);

 Q_SIGNALS:
  /// A hit's kernel (short name) and the start of its first instance.
  void showKernelInTimeline(const QString& shortName, qint64 fromNs);
  void showKernelInSummary(const QString& text);

 private:
  void showFlags();
  void showHit(int sourceRow);

  CaptureDataPtr data_;
  FlagsModel* model_ = nullptr;
  QSortFilterProxyModel* proxy_ = nullptr;
  QTableView* view_ = nullptr;
  QLabel* header_ = nullptr;
  QComboBox* ruleFilter_ = nullptr;  ///< "all rules", then each rule with findings
  QTextBrowser* explanation_ = nullptr;
  QPushButton* timelineButton_ = nullptr;
  QPushButton* summaryButton_ = nullptr;
  int current_ = -1;
};

}  // namespace fuselens::gui
