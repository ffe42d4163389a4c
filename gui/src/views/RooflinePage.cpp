#include "views/RooflinePage.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QVBoxLayout>

#include <exception>

#include "CaptureLoader.h"
#include "Format.h"
#include "roofline/Peaks.h"
#include "models/RooflineModel.h"
#include "views/RooflineChart.h"

namespace fuselens::gui {

namespace {
const QString kAuto = QStringLiteral("auto");
const QString kMeasured = QStringLiteral("measured");

const QString kHowToRecord = QStringLiteral(
    "A roofline needs the FLOPs and bytes of each kernel or NVTX range, which a trace alone does "
    "not "
    "have. Record them in one of two ways:<ul>"
    "<li><b>hardware counters</b> per kernel launch: <code>prof-run --metrics roofline -o "
    "run.sqlite -- "
    "PROGRAM</code> (kernels are replayed, so the run is slower; see docs/BENCHMARKS.md);</li>"
    "<li><b>declared work</b> of NVTX ranges: include <code>fuselens/annotate.h</code> and call "
    "<code>fuselens::annotate::declare_work(flops, bytes)</code> inside a range, or open one with "
    "<code>fuselens::annotate::ScopedWork w(\"gemm\", flops, bytes)</code>.</li></ul>"
    "Then open the new capture here, or run <code>prof-analyze roofline run.sqlite</code>.");
}  // namespace

RooflinePage::RooflinePage(QWidget* parent) : Page(QStringLiteral("Roofline"), parent) {
  auto* layout = new QVBoxLayout(this);
  auto* bar = new QHBoxLayout;
  peaks_ = new QComboBox(this);
  peaks_->setObjectName(QStringLiteral("rooflinePeaks"));
  peaks_->addItem(QStringLiteral("The capture's GPU (auto)"), kAuto);
  for (const auto& profile : analyzer::builtin_peaks()) {
    peaks_->addItem(QStringLiteral("%1 (datasheet)").arg(toQString(profile.name)),
                    toQString(profile.id));
  }
  peaks_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  peaks_->setToolTip(QStringLiteral(
      "The ceilings efficiency is measured against (prof-analyze roofline --peaks)"));
  what_ = new QComboBox(this);
  what_->setObjectName(QStringLiteral("rooflineRows"));
  what_->addItems({QStringLiteral("Kernels"), QStringLiteral("NVTX ranges")});
  bar->addWidget(new QLabel(QStringLiteral("Peaks:"), this));
  bar->addWidget(peaks_);
  bar->addSpacing(12);
  bar->addWidget(new QLabel(QStringLiteral("Show:"), this));
  bar->addWidget(what_);
  bar->addStretch(1);
  layout->addLayout(bar);
  header_ = new QLabel(this);
  header_->setWordWrap(true);
  header_->setTextFormat(Qt::RichText);
  header_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(header_);

  stack_ = new QStackedWidget(this);
  notice_ = makeNotice(QString(), QString(), stack_);
  splitter_ = new QSplitter(Qt::Horizontal, stack_);
  chart_ = new RooflineChart(splitter_);
  chart_->setObjectName(QStringLiteral("rooflineChart"));
  model_ = new RooflineModel(this);
  table_ = makeTableView(model_, &proxy_, splitter_);
  table_->setObjectName(QStringLiteral("rooflineTable"));
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  addTimelineJump(table_, [this](const QModelIndex& index) {
    const QModelIndex source = proxy_->mapToSource(index);
    if (!source.isValid() || source.row() >= model_->rowCount()) return TimelineTarget{};
    const RooflinePoint& point = model_->rowAt(source.row());
    return timelineTarget(toQString(point.name), point.isRange ? SearchRanges : SearchKernels);
  });
  splitter_->addWidget(chart_);
  splitter_->addWidget(table_);
  splitter_->setStretchFactor(0, 3);
  splitter_->setStretchFactor(1, 2);
  splitter_->setSizes({760, 740});  // the chart gets most of the width
  stack_->addWidget(notice_);
  stack_->addWidget(splitter_);
  layout->addWidget(stack_, 1);

  connect(peaks_, &QComboBox::currentIndexChanged, this, [this] { invalidate(); });
  connect(what_, &QComboBox::currentIndexChanged, this, [this] { showReport(); });
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& index) {
            chart_->highlight(index.isValid() ? proxy_->mapToSource(index).row() : -1);
          });
  connect(chart_, &RooflineChart::pointClicked, this, &RooflinePage::syncSelection);
}

void RooflinePage::setCaptures(const CaptureDataPtr& current, const QList<CaptureDataPtr>&) {
  if (current == data_) return;
  data_ = current;
  request_ = 0;  // a report still coming for the previous capture is dropped
  running_ = false;
  report_.reset();
  error_.clear();
  model_->setRows({});
  chart_->clear();
  header_->clear();
  if (!data_) {
    showNotice(QStringLiteral("No capture open"),
               QStringLiteral("Open a capture with File → Open."));
    return;
  }
  showNotice(QStringLiteral("Computing the roofline…"), data_->displayName.toHtmlEscaped());
  invalidate();  // computed when the page is shown
}

void RooflinePage::runAnalysis() {
  if (!data_) return;
  running_ = true;
  header_->setText(
      QStringLiteral("Computing the roofline of %1 against %2…")
          .arg(data_->displayName.toHtmlEscaped(), peaks_->currentText().toHtmlEscaped()));
  analyzer::RooflineOptions options;
  options.peaks = peaks().toStdString();
  request_ = loader()->requestRoofline(data_, options);
}

void RooflinePage::connectLoader(CaptureLoader* loader) {
  connect(loader, &CaptureLoader::rooflineReady, this, &RooflinePage::takeReport);
}

void RooflinePage::takeReport(quint64 request,
                              const std::shared_ptr<const analyzer::RooflineReport>& report,
                              const QString& error) {
  if (request != request_) return;
  running_ = false;
  report_ = report;
  error_ = error;
  // Offer the capture's measured ceilings only when it has some.
  const int measured = peaks_->findData(kMeasured);
  if (report_ && !report_->measured.empty() && measured < 0) {
    QSignalBlocker block(peaks_);
    peaks_->insertItem(1, QStringLiteral("Measured ceilings of this capture (prof-ceilings)"),
                       kMeasured);
  } else if (report_ && report_->measured.empty() && measured >= 0 &&
             peaks_->currentIndex() != measured) {
    QSignalBlocker block(peaks_);
    peaks_->removeItem(measured);
  }
  if (report_ && what_->currentIndex() == 0 && report_->kernels.empty() &&
      !report_->ranges.empty()) {
    QSignalBlocker block(what_);
    what_->setCurrentIndex(1);  // only ranges have work (declared): show them
  }
  showReport();
  Q_EMIT finished();
}

void RooflinePage::showNotice(const QString& title, const QString& html) {
  if (!notice_) return;
  notice_->setText(QStringLiteral("<h2>%1</h2><div style='max-width:640px'>%2</div>")
                       .arg(title.toHtmlEscaped(), html));
  notice_->setAlignment(Qt::AlignCenter);
  stack_->setCurrentWidget(notice_);
}

void RooflinePage::showReport() {
  model_->setRows({});
  chart_->clear();
  if (!data_) return;
  if (!report_) {
    header_->clear();
    if (running_) return;
    showNotice(
        QStringLiteral("No roofline against these peaks"),
        QStringLiteral(
            "<p>%1</p><p>Choose a peak profile above: the datasheet of the GPU the capture ran on, "
            "or another GPU to see where the same work would sit on it.</p>")
            .arg(error_.toHtmlEscaped()));
    return;
  }
  const auto& r = *report_;
  QStringList notes;
  if (r.device_ceilings && r.device_ceilings->id != r.peaks.ceilings.id) {
    const analyzer::PeakProfile* sheet =
        r.devices.empty()
            ? nullptr
            : analyzer::match_device(analyzer::builtin_peaks(), r.devices.front().name,
                                     r.devices.front().sm_count);
    if (sheet && sheet->id == r.peaks.ceilings.id) {
      notes << QStringLiteral(
          "Efficiency against the datasheet; this capture also has the ceilings measured on its "
          "GPU "
          "(Peaks: Measured), which is what the GPU actually reaches.");
    } else {
      notes << QStringLiteral(
                   "These are another GPU's ceilings: the points are what the capture achieved on "
                   "its own GPU; "
                   "<i>Projected</i> is the time the same work would take at these peaks at the "
                   "efficiency it "
                   "reached against its own GPU's ceilings (%1).")
                   .arg(toQString(r.device_ceilings->label).toHtmlEscaped());
    }
  }
  for (const auto& n : r.notes) notes << toQString(n).toHtmlEscaped();
  header_->setText(QStringLiteral("<b>Peaks:</b> %1 — %2%3")
                       .arg(toQString(r.peaks.ceilings.label).toHtmlEscaped(),
                            toQString(r.peaks.reason).toHtmlEscaped(),
                            notes.isEmpty()
                                ? QString()
                                : QStringLiteral("<br><span style='color:#555'>%1</span>")
                                      .arg(notes.join(QStringLiteral("<br>")))));
  if (!r.has_counters && !r.has_annotations) {
    showNotice(QStringLiteral("No FLOP or byte counts in this capture"), kHowToRecord);
    return;
  }
  const bool ranges = what_->currentIndex() == 1;
  std::vector<RooflinePoint> points = rooflinePoints(r, ranges);
  if (points.empty()) {
    showNotice(
        ranges ? QStringLiteral("No NVTX range has counted or declared work")
               : QStringLiteral("No kernel has hardware counters in this capture"),
        ranges
            ? QStringLiteral(
                  "Ranges get work from the counters of the kernels launched inside them, or from "
                  "declarations. ") +
                  kHowToRecord
            : QStringLiteral(
                  "<p>Its NVTX ranges have declared work: choose <b>Show: NVTX ranges</b>.</p>") +
                  kHowToRecord);
    return;
  }
  model_->setRows(points);
  chart_->setData(r.peaks.ceilings, points);
  fitColumns(table_, 320);
  stack_->setCurrentWidget(splitter_);
  int plotted = 0;
  for (const auto& p : points) plotted += p.plotted() ? 1 : 0;
  QString help = QStringLiteral(
      "Point area ∝ GPU time, colour as on the timeline; hover a point for its figures, click "
      "it (or a row) to find it in the other.");
  if (plotted < static_cast<int>(points.size())) {
    help += QStringLiteral(
                " %1 of %2 rows are on the chart; the others have no DRAM bytes or no "
                "floating-point work.")
                .arg(plotted)
                .arg(points.size());
  }
  header_->setText(header_->text() +
                   QStringLiteral("<br><span style='color:#555'>%1</span>").arg(help));
}

void RooflinePage::syncSelection(int pointIndex) {
  const QModelIndex index = proxy_->mapFromSource(model_->index(pointIndex, 0));
  table_->setCurrentIndex(index);
  table_->scrollTo(index);
}

bool RooflinePage::setPeaks(const QString& id) {
  const int i = peaks_ ? peaks_->findData(id) : -1;
  if (i < 0) return false;
  if (i == peaks_->currentIndex()) {
    invalidate();
  } else {
    peaks_->setCurrentIndex(i);  // recomputes
  }
  return true;
}

QString RooflinePage::peaks() const {
  return peaks_ ? peaks_->currentData().toString() : QString();
}

QStringList RooflinePage::offeredPeaks() const {
  QStringList ids;
  for (int i = 0; peaks_ && i < peaks_->count(); ++i) ids << peaks_->itemData(i).toString();
  return ids;
}

void RooflinePage::setShowRanges(bool ranges) {
  if (what_) what_->setCurrentIndex(ranges ? 1 : 0);
}

QString RooflinePage::noticeText() const {
  return stack_ && stack_->currentWidget() == notice_ ? notice_->text() : QString();
}

QString RooflinePage::headerText() const { return header_ ? header_->text() : QString(); }

QAbstractItemView* RooflinePage::currentTable() const { return table_; }

QWidget* RooflinePage::imageWidget() { return chart_; }

}  // namespace fuselens::gui
