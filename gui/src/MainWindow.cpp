#include "MainWindow.h"

#include <QAbstractItemView>
#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDir>
#include <QDragEnterEvent>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>

#include "CaptureLoader.h"
#include "Format.h"
#include "GuiExport.h"
#include "views/CallingContextPage.h"
#include "views/ComparePage.h"
#include "views/FlagsPage.h"
#include "views/HeatmapPage.h"
#include "views/ModulesPage.h"
#include "views/RooflinePage.h"
#include "views/StepsPage.h"
#include "views/SummaryPage.h"
#include "views/TimelinePage.h"
#include "views/TimelineSearchBar.h"
#include "views/TimelineWidget.h"

namespace fuselens::gui {
namespace {

constexpr int kMaxRecentFiles = 10;
const char* const kRecentKey = "recentFiles";

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle(QStringLiteral("FuseLens"));
  setAcceptDrops(true);
  resize(1500, 940);

  loader_ = new CaptureLoader(this);
  connect(loader_, &CaptureLoader::opened, this, &MainWindow::onOpened);
  connect(loader_, &CaptureLoader::analysisLoaded, this, &MainWindow::onAnalysisLoaded);
  connect(loader_, &CaptureLoader::captureLoaded, this, &MainWindow::onCaptureLoaded);
  connect(loader_, &CaptureLoader::failed, this, &MainWindow::onFailed);
  connect(loader_, &CaptureLoader::windowChanged, this, &MainWindow::onWindowChanged);
  connect(loader_, &CaptureLoader::windowFailed, this,
          [this](const CaptureDataPtr& capture, const QString& message) {
            lastError_ = QStringLiteral("%1: %2").arg(capture->path, message);
            status_->setText(QStringLiteral("Window not changed: %1").arg(message));
            showWindow();  // the control shows the window still in force
          });
  connect(loader_, &CaptureLoader::htmlReportWritten, this,
          [this](quint64, const QString& path, const QString& error) {
            if (error.isEmpty()) {
              status_->setText(QStringLiteral("Wrote %1").arg(path));
            } else {
              QMessageBox::warning(this, QStringLiteral("Export failed"), error);
            }
          });
  connect(loader_, &CaptureLoader::progress, this,
          [this](const QString& path, int percent, const QString& stage) {
            progress_->setVisible(true);
            progress_->setValue(percent);
            status_->setText(QStringLiteral("%1: %2…").arg(QFileInfo(path).fileName(), stage));
          });
  connect(loader_, &CaptureLoader::idle, this, [this] {
    progress_->setVisible(false);
    Q_EMIT loadsFinished();
  });

  tabs_ = new QTabWidget(this);
  tabs_->setDocumentMode(true);
  setCentralWidget(tabs_);
  summary_ = new SummaryPage(tabs_);
  timeline_ = new TimelinePage(tabs_);
  flags_ = new FlagsPage(tabs_);
  heatmap_ = new HeatmapPage(tabs_);
  compare_ = new ComparePage(tabs_);
  steps_ = new StepsPage(tabs_);
  auto* contexts = new CallingContextPage(tabs_);
  auto* modules = new ModulesPage(tabs_);
  auto* roofline = new RooflinePage(tabs_);
  pages_ = {summary_, timeline_, steps_, contexts, modules, roofline, heatmap_, compare_, flags_};
  for (Page* p : pages_) p->setLoader(loader_);  // one loader runs every page's analyses
  for (auto* p : pages_) tabs_->addTab(p, p->title());
  connect(tabs_, &QTabWidget::currentChanged, this, &MainWindow::requestVisibleAnalyses);

  connect(steps_, &StepsPage::windowRequested, this, &MainWindow::setWindow);
  connect(timeline_, &TimelinePage::windowRequested, this, &MainWindow::setWindow);
  // Every table's "Show in timeline" (Page::addTimelineJump), and the Flags page's button:
  // the Timeline page searches for the row's items and shows the chosen one.
  for (Page* p : pages_) {
    connect(p, &Page::timelineRequested, this, [this](const TimelineTarget& target) {
      showPage(timeline_);
      timeline_->showInTimeline(target);
    });
  }
  connect(flags_, &FlagsPage::showKernelInTimeline, this,
          [this](const QString& name, qint64 fromNs) {
            TimelineTarget target = timelineTarget(name, SearchKernels);
            target.fromNs = fromNs;
            showPage(timeline_);
            timeline_->showInTimeline(target);
          });
  connect(flags_, &FlagsPage::showKernelInSummary, this, [this](const QString& text) {
    showPage(summary_);
    summary_->showKernels(text);
  });

  auto* toolbar = addToolBar(QStringLiteral("Capture"));
  toolbar->setObjectName(QStringLiteral("captureToolbar"));
  toolbar->setMovable(false);
  toolbar->addWidget(new QLabel(QStringLiteral(" Capture: "), toolbar));
  captureBox_ = new QComboBox(toolbar);
  captureBox_->setMinimumContentsLength(40);
  captureBox_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  toolbar->addWidget(captureBox_);
  connect(captureBox_, &QComboBox::currentIndexChanged, this, &MainWindow::setCurrentCapture);
  toolbar->addSeparator();
  toolbar->addWidget(new QLabel(QStringLiteral(" Window: "), toolbar));
  windowBox_ = new QComboBox(toolbar);
  windowBox_->setObjectName(QStringLiteral("windowBox"));
  windowBox_->setEditable(true);
  windowBox_->setInsertPolicy(QComboBox::NoInsert);
  windowBox_->setMinimumContentsLength(22);
  windowBox_->addItems({QStringLiteral("steady"), QStringLiteral("all"), QStringLiteral("steps:1-"),
                        QStringLiteral("time:0s-1s"), QStringLiteral("range:*")});
  windowBox_->setToolTip(QStringLiteral(
      "The part of the capture every page describes: all, steady (the steps after warm-up), "
      "steps:A-B, range:GLOB (NVTX ranges) or time:T0-T1 (seconds from the capture's start; "
      "suffix ms, us, ns allowed). Select steps on the Steps page or Shift+drag on the timeline "
      "to set it too."));
  // An item chosen from the list, or a window typed and entered (Return with a text that is not
  // an item emits no activated): both once per text until the loader answers.
  const auto fromBox = [this] {
    const QString text = windowBox_->currentText().trimmed();
    if (text == requestedWindow_) return;
    requestedWindow_ = text;
    if (!setWindow(text)) requestedWindow_.clear();
  };
  connect(windowBox_, &QComboBox::activated, this, fromBox);
  connect(windowBox_->lineEdit(), &QLineEdit::returnPressed, this, fromBox);
  toolbar->addWidget(windowBox_);

  status_ = new QLabel(this);
  progress_ = new QProgressBar(this);
  progress_->setRange(0, 100);
  progress_->setMaximumWidth(220);
  progress_->setVisible(false);
  statusBar()->addWidget(status_, 1);
  windowLabel_ = new QLabel(this);
  windowLabel_->setObjectName(QStringLiteral("windowLabel"));
  statusBar()->addPermanentWidget(windowLabel_);
  statusBar()->addPermanentWidget(progress_);

  createMenus();
  refreshPages();
}

MainWindow::~MainWindow() = default;

void MainWindow::createMenus() {
  QMenu* file = menuBar()->addMenu(QStringLiteral("&File"));
  file->addAction(QStringLiteral("&Open…"), QKeySequence::Open, this, &MainWindow::openDialog);
  recentMenu_ = file->addMenu(QStringLiteral("Open &Recent"));
  rebuildRecentMenu();
  file->addAction(QStringLiteral("&Close Capture"), QKeySequence::Close, this,
                  &MainWindow::closeCurrent);
  file->addSeparator();
  QAction* html =
      file->addAction(QStringLiteral("Export Report as &HTML…"), this, &MainWindow::exportHtml);
  html->setEnabled(htmlReportAvailable());
  if (!htmlReportAvailable())
    html->setToolTip(QStringLiteral("The analyzer's HTML export is not in this build"));
  file->addAction(QStringLiteral("Export Report as &PDF…"), this, &MainWindow::exportPdf);
  file->addAction(QStringLiteral("Export View as &Image (PNG, SVG)…"),
                  QKeySequence(QStringLiteral("Ctrl+Shift+S")), this, &MainWindow::exportImage);
  file->addAction(QStringLiteral("Export &Table as CSV…"),
                  QKeySequence(QStringLiteral("Ctrl+Shift+E")), this, &MainWindow::exportCsv);
  file->addSeparator();
  file->addAction(QStringLiteral("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  QMenu* view = menuBar()->addMenu(QStringLiteral("&View"));
  for (int i = 0; i < pages_.size(); ++i) {
    Page* p = pages_[i];
    view->addAction(p->title(), QKeySequence(QStringLiteral("Ctrl+%1").arg(i + 1)), this,
                    [this, p] { showPage(p); });
  }
  QMenu* help = menuBar()->addMenu(QStringLiteral("&Help"));
  help->addAction(QStringLiteral("&About FuseLens"), this, &MainWindow::showAbout);
}

void MainWindow::openFiles(const QStringList& paths) {
  for (const auto& path : paths) {
    const QString absolute = QFileInfo(path).absoluteFilePath();
    bool open = false;
    for (int i = 0; i < captures_.size(); ++i) {
      if (captures_[i]->path == absolute) {
        setCurrentCapture(i);
        open = true;
      }
    }
    if (!open) loader_->load(absolute);
  }
}

int MainWindow::pendingLoads() const { return loader_->pending(); }

CaptureDataPtr MainWindow::currentCapture() const {
  return current_ >= 0 && current_ < captures_.size() ? captures_[current_] : nullptr;
}

void MainWindow::onOpened(const CaptureDataPtr& capture) {
  captures_ << capture;
  addRecentFile(capture->path);
  {
    QSignalBlocker block(captureBox_);
    captureBox_->addItem(capture->displayName, capture->path);
  }
  if (current_ < 0) {
    setCurrentCapture(static_cast<int>(captures_.size()) -
                      1);  // asks for the visible page's analyses
  } else {
    refreshPages();  // other pages may offer the new capture (Compare)
  }
}

void MainWindow::onAnalysisLoaded(const CaptureDataPtr& capture, Analysis analysis) {
  if (!captures_.contains(capture)) return;  // closed meanwhile
  for (auto* p : pages_) p->analysisLoaded(capture, analysis);
  if (analysis == Analysis::Steps) showWindow();
  Q_EMIT analysisLoaded(capture, analysis);
  const QString& error = capture->error(analysis);
  if (error.isEmpty()) return;
  status_->setText(QStringLiteral("%1: the %2 failed: %3")
                       .arg(capture->displayName, analysisName(analysis), error));
  if (analysis == Analysis::Timeline || analysis == Analysis::Summary) {
    // What every capture has: its failure means the file is damaged; the other pages still show.
    showError(capture->path,
              QStringLiteral("The %1 could not be loaded: %2").arg(analysisName(analysis), error));
  }
}

bool MainWindow::setWindow(const QString& window) {
  const CaptureDataPtr capture = currentCapture();
  if (!capture) return false;
  status_->setText(QStringLiteral("Setting the window to %1…").arg(window));
  return loader_->setWindow(capture, window);
}

QString MainWindow::windowText() const { return windowLabel_->text(); }

void MainWindow::onWindowChanged(const CaptureDataPtr& capture) {
  if (!captures_.contains(capture)) return;
  if (capture == currentCapture()) {
    for (auto* p : pages_) p->windowChanged(capture, captures_);
    requestVisibleAnalyses();
    status_->setText(QStringLiteral("Window: %1").arg(capture->windowDescription()));
  }
  showWindow();
}

void MainWindow::showWindow() {
  requestedWindow_.clear();  // the loader answered (or the capture changed)
  const CaptureDataPtr capture = currentCapture();
  if (!capture || !capture->has(Analysis::Steps)) {
    windowLabel_->setText(capture ? QStringLiteral("Window: finding the steps…") : QString());
    return;
  }
  windowLabel_->setText(QStringLiteral("Window: %1").arg(capture->windowDescription()));
  windowLabel_->setToolTip(capture->window ? QString::fromStdString(capture->window->label)
                                           : QString());
  const QString spec = QString::fromStdString(capture->windowSpec.text);
  if (windowBox_->currentText() != spec) windowBox_->setEditText(spec);
}

void MainWindow::onCaptureLoaded(const CaptureDataPtr& capture) {
  if (!captures_.contains(capture)) return;
  QString text = QStringLiteral("Loaded %1 in %2 ms: %3 kernels, %4 timeline items")
                     .arg(capture->displayName)
                     .arg(capture->loadMilliseconds)
                     .arg(capture->summary.totals.kernel_count)
                     .arg(capture->timeline.item_count());
  if (!capture->analysisErrors.isEmpty())
    text += QStringLiteral(" · ") + capture->analysisErrors.trimmed();
  status_->setText(text);
}

void MainWindow::onFailed(const QString& path, const QString& message) {
  status_->setText(QStringLiteral("Could not open %1").arg(QFileInfo(path).fileName()));
  showError(path, message);
}

void MainWindow::showError(const QString& path, const QString& message) {
  lastError_ = QStringLiteral("%1: %2").arg(path, message);
  if (errorDialogs_) {
    auto* box = new QMessageBox(QMessageBox::Critical, QStringLiteral("Cannot open capture"),
                                QStringLiteral("FuseLens cannot open\n%1\n\n%2").arg(path, message),
                                QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();  // window-modal, does not block the event loop
  }
}

void MainWindow::requestVisibleAnalyses() {
  const CaptureDataPtr current = currentCapture();
  Page* p = currentPage();
  if (!current || !p) return;
  const QList<Analysis> wanted = p->analyses();
  for (auto it = wanted.rbegin(); it != wanted.rend(); ++it) loader_->prioritize(current, *it);
}

void MainWindow::setCurrentCapture(int index) {
  if (index < 0 || index >= captures_.size()) index = captures_.isEmpty() ? -1 : 0;
  current_ = index;
  if (captureBox_->currentIndex() != index) {
    QSignalBlocker block(captureBox_);
    captureBox_->setCurrentIndex(index);
  }
  refreshPages();
  requestVisibleAnalyses();
}

void MainWindow::refreshPages() {
  const CaptureDataPtr current = currentCapture();
  for (auto* p : pages_) p->setCaptures(current, captures_);
  showWindow();
  setWindowTitle(current ? QStringLiteral("%1 — FuseLens").arg(current->displayName)
                         : QStringLiteral("FuseLens"));
}

Page* MainWindow::page(const QString& slug) const {
  for (auto* p : pages_) {
    if (p->slug() == slug.toLower()) return p;
  }
  return nullptr;
}

void MainWindow::showPage(Page* p) { tabs_->setCurrentWidget(p); }

Page* MainWindow::currentPage() const { return qobject_cast<Page*>(tabs_->currentWidget()); }

bool MainWindow::pageReady(Page* p) const {
  const CaptureDataPtr current = currentCapture();
  if (p->busy()) return false;
  for (Analysis a : p->analyses()) {
    if (current && !current->has(a)) return false;
  }
  return true;
}

QStringList MainWindow::screenshotPages(const QString& directory) {
  QDir().mkpath(directory);
  QStringList saved;
  timeline_->showLongestKernel();
  for (auto* p : pages_) {
    showPage(p);
    // Pages that run their analysis when shown (calling context, roofline) get up to a minute.
    QElapsedTimer waited;
    waited.start();
    do {
      QApplication::processEvents(QEventLoop::AllEvents, 50);
    } while (!pageReady(p) && waited.elapsed() < 60000);
    for (int i = 0; i < 5; ++i) QApplication::processEvents();
    const QString path = QDir(directory).filePath(p->slug() + QStringLiteral(".png"));
    if (grab().save(path)) saved << path;
    // The calling-context tree as a flame graph too.
    if (auto* contexts = qobject_cast<CallingContextPage*>(p); contexts && !contexts->busy()) {
      contexts->setFlameGraphShown(true);
      for (int i = 0; i < 5; ++i) QApplication::processEvents();
      const QString flame = QDir(directory).filePath(QStringLiteral("flamegraph.png"));
      if (grab().save(flame)) saved << flame;
      contexts->setFlameGraphShown(false);
    }
  }
  // The step lane: the timeline over the steps around the start of the steady window.
  const CaptureDataPtr current = currentCapture();
  if (current && current->steps && !current->steps->steps.empty()) {
    const auto& steps = current->steps->steps;
    const int first = std::max(1, current->steps->steady_first - 4);
    const int last = std::min(static_cast<int>(steps.size()), first + 10);
    showPage(timeline_);
    timeline_->timelineWidget()->setView(
        static_cast<double>(steps[static_cast<std::size_t>(first - 1)].start_ns),
        static_cast<double>(steps[static_cast<std::size_t>(last - 1)].end_ns));
    for (int i = 0; i < 5; ++i) QApplication::processEvents();
    const QString path = QDir(directory).filePath(QStringLiteral("timeline-steps.png"));
    if (grab().save(path)) saved << path;
  }
  // The search: the longest kernel's name, its instances outlined around the longest one.
  if (current && timeline_->showLongestKernel()) {
    const analyzer::TimelineItem* longest = timeline_->timelineWidget()->selectedItem();
    showPage(timeline_);
    timeline_->searchBar()->search(
        timelineTarget(toQString(current->timeline.names[longest->name]), SearchKernels).query);
    QElapsedTimer waited;
    waited.start();
    while (timeline_->searchBar()->busy() && waited.elapsed() < 30000) {
      QApplication::processEvents(QEventLoop::AllEvents, 50);
    }
    timeline_->showLongestKernel();
    for (int i = 0; i < 5; ++i) QApplication::processEvents();
    const QString path = QDir(directory).filePath(QStringLiteral("timeline-search.png"));
    if (grab().save(path)) saved << path;
    timeline_->searchBar()->search({});
  }
  // The whole capture zoomed out: merged items drawn by coverage, lanes grouped by process.
  if (current) {
    showPage(timeline_);
    timeline_->timelineWidget()->zoomAll();
    for (int i = 0; i < 5; ++i) QApplication::processEvents();
    const QString path = QDir(directory).filePath(QStringLiteral("timeline-overview.png"));
    if (grab().save(path)) saved << path;
  }
  return saved;
}

QStringList MainWindow::recentFiles() {
  return QSettings().value(QString::fromLatin1(kRecentKey)).toStringList();
}

void MainWindow::addRecentFile(const QString& path) {
  QSettings settings;
  QStringList files = settings.value(QString::fromLatin1(kRecentKey)).toStringList();
  files.removeAll(path);
  files.prepend(path);
  while (files.size() > kMaxRecentFiles) files.removeLast();
  settings.setValue(QString::fromLatin1(kRecentKey), files);
  rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
  recentMenu_->clear();
  const QStringList files = recentFiles();
  for (const auto& f : files) {
    recentMenu_->addAction(f, this, [this, f] { openFiles({f}); });
  }
  recentMenu_->setEnabled(!files.isEmpty());
}

void MainWindow::openDialog() {
  const QStringList files = QFileDialog::getOpenFileNames(
      this, QStringLiteral("Open captures"), QString(),
      QStringLiteral("FuseLens captures (*.sqlite *.db);;All files (*)"));
  openFiles(files);
}

void MainWindow::closeCurrent() {
  if (current_ < 0) return;
  loader_->forget(captures_[current_]);
  captures_.removeAt(current_);
  {
    QSignalBlocker block(captureBox_);
    captureBox_->removeItem(current_);
  }
  current_ = -1;
  setCurrentCapture(0);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  // Only local files can be opened: anything else is refused at once (no drop cursor).
  for (const auto& url : event->mimeData()->urls()) {
    if (url.isLocalFile()) {
      event->acceptProposedAction();
      return;
    }
  }
  event->ignore();
}

void MainWindow::dropEvent(QDropEvent* event) {
  QStringList files;
  for (const auto& url : event->mimeData()->urls()) {
    if (url.isLocalFile()) files << url.toLocalFile();
  }
  if (files.isEmpty()) {
    event->ignore();
    return;
  }
  openFiles(files);  // a file that is not a capture gets the error dialog, as File → Open
  event->acceptProposedAction();
}

void MainWindow::closeEvent(QCloseEvent* event) { event->accept(); }

void MainWindow::exportHtml() {
  const CaptureDataPtr capture = currentCapture();
  if (!capture) return;
  const QString path = QFileDialog::getSaveFileName(
      this, QStringLiteral("Export report as HTML"),
      QFileInfo(capture->path).completeBaseName() + QStringLiteral(".html"),
      QStringLiteral("HTML (*.html)"));
  if (path.isEmpty()) return;
  status_->setText(QStringLiteral("Writing %1…").arg(path));
  loader_->requestHtmlReport(capture, path);  // htmlReportWritten: connected in the constructor
}

void MainWindow::exportPdf() {
  const CaptureDataPtr capture = currentCapture();
  if (!capture) return;
  // The report holds the summary and the flags: wait for them (and ask for them first).
  QList<Analysis> needed = {Analysis::Summary};
  needed << Analysis::Flags;
  bool ready = true;
  for (Analysis a : needed) ready = ready && capture->has(a);
  if (!ready) {
    for (auto it = needed.rbegin(); it != needed.rend(); ++it) loader_->prioritize(capture, *it);
    QMessageBox::information(
        this, QStringLiteral("Export report as PDF"),
        QStringLiteral("The summary and the flags of %1 are still loading; export again "
                       "when the status bar says the capture is loaded.")
            .arg(capture->displayName));
    return;
  }
  const QString path = QFileDialog::getSaveFileName(
      this, QStringLiteral("Export report as PDF"),
      QFileInfo(capture->path).completeBaseName() + QStringLiteral(".pdf"),
      QStringLiteral("PDF (*.pdf)"));
  if (path.isEmpty()) return;
  QList<QPair<QString, QImage>> images;
  images << qMakePair(QStringLiteral("Timeline"), timeline_->timelineWidget()->grab().toImage());
  images << qMakePair(QStringLiteral("Heatmap"), heatmap_->imageWidget()->grab().toImage());
  QString error;
  if (!exportPdfReport(*capture, images, path, &error)) {
    QMessageBox::warning(this, QStringLiteral("Export failed"), error);
  } else {
    status_->setText(QStringLiteral("Wrote %1").arg(path));
  }
}

void MainWindow::exportImage() {
  Page* p = currentPage();
  if (!p) return;
  const QString path = QFileDialog::getSaveFileName(
      this, QStringLiteral("Export view as image"), p->slug() + QStringLiteral(".png"),
      QStringLiteral("PNG image (*.png);;SVG drawing (*.svg)"));
  QString error;
  if (!path.isEmpty() && !gui::exportImage(p->imageWidget(), path, &error)) {
    QMessageBox::warning(this, QStringLiteral("Export failed"), error);
  }
}

void MainWindow::exportCsv() {
  Page* p = currentPage();
  QAbstractItemView* table = p ? p->currentTable() : nullptr;
  if (!table) {
    QMessageBox::information(this, QStringLiteral("Export table"),
                             QStringLiteral("This page has no table."));
    return;
  }
  const QString path = QFileDialog::getSaveFileName(this, QStringLiteral("Export table as CSV"),
                                                    p->slug() + QStringLiteral(".csv"),
                                                    QStringLiteral("CSV (*.csv)"));
  QString error;
  if (!path.isEmpty() && !gui::exportCsv(*table->model(), path, &error)) {
    QMessageBox::warning(this, QStringLiteral("Export failed"), error);
  }
}

void MainWindow::showAbout() {
  QMessageBox::about(
      this, QStringLiteral("About FuseLens"),
      QStringLiteral("<b>FuseLens %1</b><br>Profiles GPU workloads and shows what kernel "
                     "fusion buys.<br>Qt %2")
          .arg(QStringLiteral(FUSELENS_VERSION), QString::fromLatin1(qVersion())));
}

}  // namespace fuselens::gui
