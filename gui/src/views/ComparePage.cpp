#include "views/ComparePage.h"

#include <QComboBox>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include "CaptureLoader.h"
#include "Format.h"
#include "models/CompareModel.h"

namespace fuselens::gui {

ComparePage::ComparePage(QWidget* parent) : Page(QStringLiteral("Compare"), parent) {
  auto* layout = new QVBoxLayout(this);
  auto* form = new QGroupBox(QStringLiteral("Baseline vs candidate"), this);
  auto* formLayout = new QVBoxLayout(form);
  auto* row1 = new QHBoxLayout;
  rangesMode_ = new QRadioButton(QStringLiteral("NVTX ranges of this capture:"), form);
  baseline_ = new QLineEdit(form);
  candidate_ = new QLineEdit(form);
  baseline_->setPlaceholderText(QStringLiteral("baseline pattern, e.g. */unfused/*"));
  candidate_->setPlaceholderText(QStringLiteral("candidate pattern, e.g. */fused/*"));
  row1->addWidget(rangesMode_);
  row1->addWidget(baseline_, 1);
  row1->addWidget(new QLabel(QStringLiteral("vs"), form));
  row1->addWidget(candidate_, 1);
  auto* row2 = new QHBoxLayout;
  capturesMode_ =
      new QRadioButton(QStringLiteral("This capture (A) vs another open capture (B):"), form);
  other_ = new QComboBox(form);
  other_->setMinimumContentsLength(30);
  row2->addWidget(capturesMode_);
  row2->addWidget(other_, 1);
  go_ = new QPushButton(QStringLiteral("Compare"), form);
  row2->addWidget(go_);
  formLayout->addLayout(row1);
  formLayout->addLayout(row2);
  rangesMode_->setChecked(true);
  layout->addWidget(form);

  status_ = new QLabel(this);
  status_->setWordWrap(true);
  layout->addWidget(status_);

  auto* splitter = new QSplitter(Qt::Vertical, this);
  entries_ = new CompareEntryModel(this);
  kernels_ = new KernelDiffModel(this);
  entryView_ = makeTableView(entries_, nullptr, splitter);
  entryView_->setObjectName(QStringLiteral("compareEntries"));
  kernelBox_ = new QWidget(splitter);
  auto* kernelLayout = new QVBoxLayout(kernelBox_);
  kernelLayout->setContentsMargins(0, 0, 0, 0);
  kernelLayout->addWidget(
      new QLabel(QStringLiteral("<b>Kernel diff</b> (A = baseline, B = candidate; "
                                "faster or slower beyond ±5 % of the median)"),
                 kernelBox_));
  kernelView_ = makeTableView(kernels_, nullptr, kernelBox_);
  kernelLayout->addWidget(kernelView_);
  // "Show in timeline": the rows' ranges and kernels as they are in the current capture (the
  // baseline of a two-capture comparison; a range comparison's both sides).
  addTimelineJump(entryView_, [this](const QModelIndex& index) {
    const auto* proxy = qobject_cast<const QSortFilterProxyModel*>(entryView_->model());
    const QModelIndex source = proxy ? proxy->mapToSource(index) : QModelIndex();
    if (!source.isValid() || !inCurrentCapture()) return TimelineTarget{};
    const analyzer::CompareEntry& entry = entries_->rowAt(source.row());
    if (entry.baseline) return timelineTarget(toQString(entry.baseline->name), SearchRanges);
    if (entry.candidate && !report_->two_captures) {
      return timelineTarget(toQString(entry.candidate->name), SearchRanges);
    }
    return TimelineTarget{};
  });
  addTimelineJump(kernelView_, [this](const QModelIndex& index) {
    const auto* proxy = qobject_cast<const QSortFilterProxyModel*>(kernelView_->model());
    const QModelIndex source = proxy ? proxy->mapToSource(index) : QModelIndex();
    if (!source.isValid() || !inCurrentCapture()) return TimelineTarget{};
    const analyzer::KernelDiffRow& row = kernels_->rowAt(source.row());
    if (row.baseline_count == 0) return TimelineTarget{};  // only in the candidate capture
    return timelineTarget(toQString(row.name), SearchKernels);
  });
  splitter->addWidget(entryView_);
  splitter->addWidget(kernelBox_);
  kernelBox_->hide();
  layout->addWidget(splitter, 1);

  connect(go_, &QPushButton::clicked, this, [this] {
    if (capturesMode_->isChecked()) {
      const int i = other_->currentIndex();
      if (i >= 0 && i < all_.size()) compareWith(all_[i]);
    } else {
      compareRanges(baseline_->text(), candidate_->text());
    }
  });
  connect(baseline_, &QLineEdit::returnPressed, go_, &QPushButton::click);
  connect(candidate_, &QLineEdit::returnPressed, go_, &QPushButton::click);
  connect(other_, &QComboBox::activated, this, [this] { capturesMode_->setChecked(true); });
  connect(baseline_, &QLineEdit::textEdited, this, [this] { rangesMode_->setChecked(true); });
}

void ComparePage::setCaptures(const CaptureDataPtr& current, const QList<CaptureDataPtr>& all) {
  const bool changed = current != data_;
  data_ = current;
  all_.clear();
  other_->clear();
  for (const auto& c : all) {
    if (c == current) continue;
    all_ << c;
    other_->addItem(c->displayName, c->path);
  }
  capturesMode_->setEnabled(!all_.isEmpty());
  if (!changed) return;
  entries_->setRows({});
  kernels_->setRows({});
  kernelBox_->hide();
  suggest();
}

void ComparePage::analysisLoaded(const CaptureDataPtr& capture, Analysis analysis) {
  if (capture == data_ && analysis == Analysis::Ranges) suggest();
}

void ComparePage::suggest() {
  const CaptureDataPtr& current = data_;
  if (!current) {
    status_->setText(QStringLiteral("No capture open."));
    return;
  }
  if (!current->has(Analysis::Ranges)) {
    status_->setText(
        QStringLiteral("Computing the range statistics of %1…").arg(current->displayName));
    return;
  }
  QStringList names;
  for (const auto& r : current->ranges) names << toQString(r.name);
  const auto [b, c] = suggestRangePatterns(names);
  baseline_->setText(b);
  candidate_->setText(c);
  if (!b.isEmpty()) {
    compareRanges(b, c);
  } else if (!all_.isEmpty()) {
    capturesMode_->setChecked(true);
    status_->setText(
        QStringLiteral("Range names are not of the form op/variant/shape: give two "
                       "patterns, or compare with another open capture."));
  } else {
    status_->setText(
        QStringLiteral("Range names of this capture are not of the form op/variant/shape: "
                       "give two glob patterns (e.g. mlp/step* vs other/*), or open a second "
                       "capture to compare with."));
  }
}

void ComparePage::compareRanges(const QString& baselinePattern, const QString& candidatePattern) {
  if (!data_) return;
  status_->setText(QStringLiteral("Comparing %1 with %2…").arg(baselinePattern, candidatePattern));
  running_ = true;
  requestedFor_ = data_;
  request_ = loader()->requestRangeComparison(data_, baselinePattern, candidatePattern);
}

void ComparePage::compareWith(const CaptureDataPtr& candidate) {
  if (!data_ || !candidate) return;
  status_->setText(
      QStringLiteral("Comparing %1 with %2…").arg(data_->displayName, candidate->displayName));
  running_ = true;
  requestedFor_ = data_;
  request_ = loader()->requestCaptureComparison(data_, candidate);
}

bool ComparePage::inCurrentCapture() const { return report_ && data_ && shownFor_.lock() == data_; }

void ComparePage::connectLoader(CaptureLoader* loader) {
  connect(loader, &CaptureLoader::compareReady, this, &ComparePage::showResult);
}

void ComparePage::showResult(quint64 request,
                             const std::shared_ptr<const analyzer::CompareReport>& result,
                             const QString& error) {
  if (request != request_) return;
  running_ = false;
  report_ = result;
  shownFor_ = requestedFor_;
  if (!result) {
    entries_->setRows({});
    kernels_->setRows({});
    kernelBox_->hide();
    status_->setText(QStringLiteral("<b>Cannot compare:</b> %1").arg(error.toHtmlEscaped()));
    Q_EMIT finished();
    return;
  }
  const auto& report = *result;
  entries_->setRows(report.entries);
  kernels_->setRows(report.kernel_diff);
  kernelBox_->setVisible(report.two_captures);
  fitColumns(entryView_, 220);
  fitColumns(kernelView_, 160);
  int paired = 0, faster = 0, slower = 0;
  for (const auto& e : report.entries) {
    if (!e.speedup) continue;
    ++paired;
    faster += *e.speedup > 1.0 ? 1 : 0;
    slower += *e.speedup < 1.0 ? 1 : 0;
  }
  const QString what =
      report.two_captures
          ? QStringLiteral("%1 (A) vs %2 (B)")
                .arg(toQString(report.baseline_path), toQString(report.candidate_path))
          : QStringLiteral("<code>%1</code> vs <code>%2</code>")
                .arg(toQString(report.baseline_pattern).toHtmlEscaped(),
                     toQString(report.candidate_pattern).toHtmlEscaped());
  status_->setText(
      QStringLiteral("%1: %2 paired rows, candidate faster in %3, slower in %4. Times are "
                     "the median GPU time per iteration of the kernels launched in each range.")
          .arg(what)
          .arg(paired)
          .arg(faster)
          .arg(slower));
  Q_EMIT finished();
}

QAbstractItemView* ComparePage::currentTable() const { return entryView_; }

QString ComparePage::statusText() const { return status_ ? status_->text() : QString(); }

}  // namespace fuselens::gui
