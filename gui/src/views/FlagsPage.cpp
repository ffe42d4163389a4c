#include "views/FlagsPage.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QPushButton>
#include <QRegularExpression>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "Format.h"
#include "models/FlagsModel.h"

namespace fuselens::gui {

namespace {

/// The first kernel a hit names: the subject, or the first of a "a -> b" chain.
QString kernelOf(const analyzer::Hit& hit) {
  QString subject = toQString(hit.subject);
  const qsizetype arrow = subject.indexOf(QStringLiteral(" -> "));
  if (arrow > 0) subject = subject.left(arrow);
  return subject;
}

const analyzer::RuleInfo* ruleInfo(const std::string& id) {
  for (const auto& rule : analyzer::flag_rules()) {
    if (rule.id == id) return &rule;
  }
  return nullptr;
}

}  // namespace

FlagsPage::FlagsPage(QWidget* parent) : Page(QStringLiteral("Flags"), parent) {
  auto* layout = new QVBoxLayout(this);
  header_ = new QLabel(this);
  header_->setWordWrap(true);
  header_->setTextFormat(Qt::RichText);
  layout->addWidget(header_);
  auto* filterRow = new QHBoxLayout;
  filterRow->addWidget(new QLabel(QStringLiteral("Rule:"), this));
  ruleFilter_ = new QComboBox(this);
  ruleFilter_->setObjectName(QStringLiteral("ruleFilter"));
  ruleFilter_->setMinimumContentsLength(24);
  filterRow->addWidget(ruleFilter_);
  filterRow->addStretch(1);
  layout->addLayout(filterRow);
  model_ = new FlagsModel(this);
  auto* splitter = new QSplitter(Qt::Vertical, this);
  view_ = makeTableView(model_, &proxy_, splitter);
  // The rule filter: the findings of one rule (the table's search filters this column).
  proxy_->setFilterKeyColumn(FlagsModel::Rule);
  connect(ruleFilter_, &QComboBox::currentIndexChanged, this, [this](int index) {
    const QString rule = index > 0 ? ruleFilter_->itemData(index).toString() : QString();
    proxy_->setFilterRegularExpression(
        rule.isEmpty()
            ? QRegularExpression()
            : QRegularExpression(QStringLiteral("^%1$").arg(QRegularExpression::escape(rule))));
  });
  view_->setObjectName(QStringLiteral("flagsTable"));
  view_->setSelectionMode(QAbstractItemView::SingleSelection);
  auto* bottom = new QWidget(splitter);
  auto* bottomLayout = new QVBoxLayout(bottom);
  bottomLayout->setContentsMargins(0, 0, 0, 0);
  explanation_ = new QTextBrowser(bottom);
  explanation_->setPlaceholderText(
      QStringLiteral("Select a finding to see what was measured and what to do."));
  bottomLayout->addWidget(explanation_);
  auto* buttons = new QHBoxLayout;
  timelineButton_ = new QPushButton(QStringLiteral("Show kernel in timeline"), bottom);
  summaryButton_ = new QPushButton(QStringLiteral("Show kernel in summary"), bottom);
  timelineButton_->setEnabled(false);
  summaryButton_->setEnabled(false);
  buttons->addWidget(timelineButton_);
  buttons->addWidget(summaryButton_);
  buttons->addStretch(1);
  bottomLayout->addLayout(buttons);
  splitter->addWidget(view_);
  splitter->addWidget(bottom);
  splitter->setSizes({520, 300});
  layout->addWidget(splitter, 1);

  connect(view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& index) {
            showHit(index.isValid() ? proxy_->mapToSource(index).row() : -1);
          });
  // The table's "Show in timeline": the item named as the finding's subject (a kernel, a range
  // or an API call), from the finding's first instance, as the button does for kernels.
  addTimelineJump(view_, [this](const QModelIndex& index) {
    const QModelIndex source = proxy_->mapToSource(index);
    if (!source.isValid() || source.row() >= model_->rowCount()) return TimelineTarget{};
    const auto& hit = model_->rowAt(source.row());
    TimelineTarget target = timelineTarget(kernelOf(hit), SearchNamed);
    target.fromNs = hit.first_ns;
    return target;
  });
  connect(timelineButton_, &QPushButton::clicked, this, [this] {
    if (current_ < 0) return;
    const auto& hit = model_->rowAt(current_);
    Q_EMIT showKernelInTimeline(kernelOf(hit), hit.first_ns);
  });
  connect(summaryButton_, &QPushButton::clicked, this, [this] {
    if (current_ >= 0) Q_EMIT showKernelInSummary(kernelOf(model_->rowAt(current_)));
  });
}

void FlagsPage::setCaptures(const CaptureDataPtr& current, const QList<CaptureDataPtr>&) {
  if (current == data_) return;
  data_ = current;
  showFlags();
}

void FlagsPage::analysisLoaded(const CaptureDataPtr& capture, Analysis analysis) {
  if (capture != data_) return;
  if (analysis == Analysis::Flags) {
    showFlags();
  } else if (current_ >= 0) {
    showHit(current_);  // the kernel links and times of the hit shown
  }
}

void FlagsPage::showFlags() {
  const CaptureDataPtr& current = data_;
  current_ = -1;
  explanation_->clear();
  timelineButton_->setEnabled(false);
  summaryButton_->setEnabled(false);
  if (!current || !current->has(Analysis::Flags) || !current->flags) {
    model_->setRows({});
    if (!current) {
      header_->setText(QString());
    } else if (!current->has(Analysis::Flags)) {
      header_->setText(QStringLiteral("Running the flag rules on %1…").arg(current->displayName));
    } else {
      header_->setText(QStringLiteral("The flag rules failed on this capture: %1")
                           .arg(current->error(Analysis::Flags)));
    }
    return;
  }
  const auto& report = *current->flags;
  {
    // The rules with findings, in rank order of their first finding.
    const QSignalBlocker block(ruleFilter_);
    ruleFilter_->clear();
    ruleFilter_->addItem(QStringLiteral("all rules"));
    for (const auto& hit : report.hits) {
      const QString rule = toQString(hit.rule);
      if (ruleFilter_->findData(rule) < 0) ruleFilter_->addItem(rule, rule);
    }
    proxy_->setFilterRegularExpression(QRegularExpression());
  }
  model_->setRows(report.hits);
  fitColumns(view_, 420);
  if (!report.hits.empty()) selectHit(0);  // the costliest finding of the first rule
  std::int64_t stake = 0;
  for (const auto& hit : report.hits) stake += hit.time_ns;
  // The verdict first (FlagsVerdict.h), then the findings ranked by time at stake per step.
  QString text;
  const auto& verdict = report.verdict;
  if (!verdict.headline.empty()) {
    text += QStringLiteral("<b>%1</b>").arg(toQString(verdict.headline).toHtmlEscaped());
    if (!verdict.causes.empty()) {
      QStringList causes;
      for (const auto& c : verdict.causes) causes << toQString(c).toHtmlEscaped();
      text += QStringLiteral("<br>Top causes: ") + causes.join(QStringLiteral("; "));
    }
    if (!verdict.startup.empty()) {
      text += QStringLiteral("<br>") + toQString(verdict.startup).toHtmlEscaped();
    }
    text += QStringLiteral("<br>");
  }
  text += QStringLiteral(
              "%1 findings from %2 rules (default thresholds, docs/rules.md), ranked by "
              "time at stake. Findings overlap, so their times at stake do not add up.")
              .arg(report.hits.size())
              .arg(report.rules_run.size())
              .toHtmlEscaped();
  header_->setText(text);
  Q_UNUSED(stake);
}

QAbstractItemView* FlagsPage::currentTable() const { return view_; }

QString FlagsPage::headerText() const { return header_->text(); }

void FlagsPage::filterRule(const QString& rule) {
  const int index = rule.isEmpty() ? 0 : ruleFilter_->findData(rule);
  ruleFilter_->setCurrentIndex(std::max(0, index));
}

int FlagsPage::shownHits() const { return proxy_->rowCount(); }

QString FlagsPage::explanationText() const {
  return explanation_ ? explanation_->toPlainText() : QString();
}

void FlagsPage::selectHit(int row) {
  if (!view_ || !proxy_) return;
  const QModelIndex index = proxy_->mapFromSource(model_->index(row, 0));
  view_->setCurrentIndex(index);
}

void FlagsPage::showHit(int row) {
  current_ = row;
  if (row < 0 || !data_) {
    explanation_->clear();
    return;
  }
  const auto& hit = model_->rowAt(row);
  const auto* rule = ruleInfo(hit.rule);
  QString html =
      QStringLiteral("<h3>%1</h3>")
          .arg(rule ? toQString(std::string(rule->title)).toHtmlEscaped() : toQString(hit.rule));
  html += QStringLiteral(
              "<p><b>Subject:</b> %1<br><b>Where:</b> %2<br><b>Instances:</b> %3 · "
              "<b>time at stake:</b> %4%5</p>")
              .arg(toQString(hit.subject).toHtmlEscaped(), FlagsModel::where(hit).toHtmlEscaped(),
                   formatCount(hit.count), formatDuration(static_cast<double>(hit.time_ns)),
                   data_->has(Analysis::Timeline)
                       ? QStringLiteral(" · first at %1 after the first record")
                             .arg(formatDuration(
                                 static_cast<double>(hit.first_ns - data_->timeline.begin_ns)))
                       : QString());
  if (!hit.context.empty()) {
    html +=
        QStringLiteral("<p><b>Called from:</b> %1</p>").arg(toQString(hit.context).toHtmlEscaped());
  }
  html += QStringLiteral("<p><b>Measured:</b> %1</p><p><b>What to do:</b> %2</p>")
              .arg(toQString(hit.detail).toHtmlEscaped(), toQString(hit.advice).toHtmlEscaped());
  if (!hit.metrics.empty()) {
    QStringList metrics;
    for (const auto& [key, value] : hit.metrics) {
      metrics << QStringLiteral("%1 = %2").arg(toQString(key)).arg(value, 0, 'g', 10);
    }
    html += QStringLiteral("<p><b>Metrics:</b> %1</p>")
                .arg(metrics.join(QStringLiteral(", ")).toHtmlEscaped());
  }
  if (rule) {
    html += QStringLiteral("<p><i>Rule <code>%1</code>; source: %2</i></p>")
                .arg(toQString(hit.rule), toQString(std::string(rule->source)).toHtmlEscaped());
  }
  explanation_->setHtml(html);
  // Link to the kernel when the subject is one (timeline names are short, as the rules').
  const QString kernel = kernelOf(hit);
  bool isKernel = false;
  for (const auto& k : data_->summary.kernels) {
    if (toQString(k.name).contains(kernel)) {
      isKernel = !kernel.isEmpty();
      break;
    }
  }
  timelineButton_->setEnabled(isKernel);
  summaryButton_->setEnabled(isKernel);
}

}  // namespace fuselens::gui
