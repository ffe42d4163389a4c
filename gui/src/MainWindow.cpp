#include "MainWindow.h"

#include <QAbstractItemView>
#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDir>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>
#include <QtConcurrent/QtConcurrentRun>

#include "CaptureLoader.h"
#include "GuiExport.h"
#include "views/CallingContextPage.h"
#include "views/ComparePage.h"
#include "views/FlagsPage.h"
#include "views/HeatmapPage.h"
#include "views/RooflinePage.h"
#include "views/SummaryPage.h"
#include "views/TimelinePage.h"
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
  connect(loader_, &CaptureLoader::loaded, this, &MainWindow::onLoaded);
  connect(loader_, &CaptureLoader::failed, this, &MainWindow::onFailed);
  connect(loader_, &CaptureLoader::progress, this, [this](const QString& path, int percent, const QString& stage) {
    progress_->setVisible(true);
    progress_->setValue(percent);
    status_->setText(QStringLiteral("%1: %2…").arg(QFileInfo(path).fileName(), stage));
  });

  tabs_ = new QTabWidget(this);
  tabs_->setDocumentMode(true);
  setCentralWidget(tabs_);
  summary_ = new SummaryPage(tabs_);
  timeline_ = new TimelinePage(tabs_);
  flags_ = new FlagsPage(tabs_);
  heatmap_ = new HeatmapPage(tabs_);
  compare_ = new ComparePage(tabs_);
  pages_ = {summary_, timeline_, new CallingContextPage(tabs_), new RooflinePage(tabs_), heatmap_, compare_, flags_};
  for (auto* p : pages_) tabs_->addTab(p, p->title());

  connect(flags_, &FlagsPage::showKernelInTimeline, this, [this](const QString& name, qint64 fromNs) {
    showPage(timeline_);
    timeline_->revealKernel(name, fromNs);
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

  status_ = new QLabel(this);
  progress_ = new QProgressBar(this);
  progress_->setRange(0, 100);
  progress_->setMaximumWidth(220);
  progress_->setVisible(false);
  statusBar()->addWidget(status_, 1);
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
  file->addAction(QStringLiteral("&Close Capture"), QKeySequence::Close, this, &MainWindow::closeCurrent);
  file->addSeparator();
  QAction* html = file->addAction(QStringLiteral("Export Report as &HTML…"), this, &MainWindow::exportHtml);
  html->setEnabled(htmlReportAvailable());
  if (!htmlReportAvailable()) html->setToolTip(QStringLiteral("The analyzer's HTML export is not in this build"));
  file->addAction(QStringLiteral("Export Report as &PDF…"), this, &MainWindow::exportPdf);
  file->addAction(QStringLiteral("Export View as &Image (PNG, SVG)…"), QKeySequence(QStringLiteral("Ctrl+Shift+S")),
                  this, &MainWindow::exportImage);
  file->addAction(QStringLiteral("Export &Table as CSV…"), QKeySequence(QStringLiteral("Ctrl+Shift+E")), this,
                  &MainWindow::exportCsv);
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

void MainWindow::onLoaded(const CaptureDataPtr& capture) {
  captures_ << capture;
  addRecentFile(capture->path);
  {
    QSignalBlocker block(captureBox_);
    captureBox_->addItem(capture->displayName, capture->path);
  }
  status_->setText(QStringLiteral("Loaded %1 in %2 ms: %3 kernels, %4 timeline items")
                       .arg(capture->displayName)
                       .arg(capture->loadMilliseconds)
                       .arg(capture->summary.totals.kernel_count)
                       .arg(capture->timeline.item_count()));
  if (!capture->analysisErrors.isEmpty()) status_->setText(status_->text() + QStringLiteral(" · ") + capture->analysisErrors.trimmed());
  if (current_ < 0) {
    setCurrentCapture(static_cast<int>(captures_.size()) - 1);
  } else {
    refreshPages();  // other pages may offer the new capture (Compare)
  }
  if (loader_->pending() == 0) {
    progress_->setVisible(false);
    Q_EMIT loadsFinished();
  }
}

void MainWindow::onFailed(const QString& path, const QString& message) {
  lastError_ = QStringLiteral("%1: %2").arg(path, message);
  status_->setText(QStringLiteral("Could not open %1").arg(QFileInfo(path).fileName()));
  if (loader_->pending() == 0) progress_->setVisible(false);
  if (errorDialogs_) {
    auto* box = new QMessageBox(QMessageBox::Critical, QStringLiteral("Cannot open capture"),
                                QStringLiteral("FuseLens cannot open\n%1\n\n%2").arg(path, message),
                                QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();  // window-modal, does not block the event loop
  }
  if (loader_->pending() == 0) Q_EMIT loadsFinished();
}

void MainWindow::setCurrentCapture(int index) {
  if (index < 0 || index >= captures_.size()) index = captures_.isEmpty() ? -1 : 0;
  current_ = index;
  if (captureBox_->currentIndex() != index) {
    QSignalBlocker block(captureBox_);
    captureBox_->setCurrentIndex(index);
  }
  refreshPages();
}

void MainWindow::refreshPages() {
  const CaptureDataPtr current = currentCapture();
  for (auto* p : pages_) p->setCaptures(current, captures_);
  setWindowTitle(current ? QStringLiteral("%1 — FuseLens").arg(current->displayName) : QStringLiteral("FuseLens"));
}

Page* MainWindow::page(const QString& slug) const {
  for (auto* p : pages_) {
    if (p->slug() == slug.toLower()) return p;
  }
  return nullptr;
}

void MainWindow::showPage(Page* p) { tabs_->setCurrentWidget(p); }

Page* MainWindow::currentPage() const { return qobject_cast<Page*>(tabs_->currentWidget()); }

QStringList MainWindow::screenshotPages(const QString& directory) {
  QDir().mkpath(directory);
  QStringList saved;
  timeline_->showLongestKernel();
  for (auto* p : pages_) {
    showPage(p);
    for (int i = 0; i < 5; ++i) QApplication::processEvents();
    const QString path = QDir(directory).filePath(p->slug() + QStringLiteral(".png"));
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
  captures_.removeAt(current_);
  {
    QSignalBlocker block(captureBox_);
    captureBox_->removeItem(current_);
  }
  current_ = -1;
  setCurrentCapture(0);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (event->mimeData()->hasUrls()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  QStringList files;
  for (const auto& url : event->mimeData()->urls()) {
    if (url.isLocalFile()) files << url.toLocalFile();
  }
  openFiles(files);
  event->acceptProposedAction();
}

void MainWindow::closeEvent(QCloseEvent* event) { event->accept(); }

void MainWindow::exportHtml() {
  const CaptureDataPtr capture = currentCapture();
  if (!capture) return;
  const QString path = QFileDialog::getSaveFileName(this, QStringLiteral("Export report as HTML"),
                                                    QFileInfo(capture->path).completeBaseName() + QStringLiteral(".html"),
                                                    QStringLiteral("HTML (*.html)"));
  if (path.isEmpty()) return;
  status_->setText(QStringLiteral("Writing %1…").arg(path));
  auto* watcher = new QFutureWatcher<QString>(this);
  connect(watcher, &QFutureWatcher<QString>::finished, this, [this, watcher, path] {
    const QString error = watcher->result();
    watcher->deleteLater();
    if (error.isEmpty()) {
      status_->setText(QStringLiteral("Wrote %1").arg(path));
    } else {
      QMessageBox::warning(this, QStringLiteral("Export failed"), error);
    }
  });
  watcher->setFuture(QtConcurrent::run([capture, path] {
    QString error;
    return exportHtmlReport(*capture, nullptr, path, &error) ? QString() : error;
  }));
}

void MainWindow::exportPdf() {
  const CaptureDataPtr capture = currentCapture();
  if (!capture) return;
  const QString path = QFileDialog::getSaveFileName(this, QStringLiteral("Export report as PDF"),
                                                    QFileInfo(capture->path).completeBaseName() + QStringLiteral(".pdf"),
                                                    QStringLiteral("PDF (*.pdf)"));
  if (path.isEmpty()) return;
  QList<QPair<QString, QImage>> images;
  images << qMakePair(QStringLiteral("Timeline"), timeline_->timelineWidget()->grab().toImage());
  if (HeatmapPage::available()) images << qMakePair(QStringLiteral("Heatmap"), heatmap_->imageWidget()->grab().toImage());
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
  const QString path = QFileDialog::getSaveFileName(this, QStringLiteral("Export view as image"),
                                                    p->slug() + QStringLiteral(".png"),
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
    QMessageBox::information(this, QStringLiteral("Export table"), QStringLiteral("This page has no table."));
    return;
  }
  const QString path = QFileDialog::getSaveFileName(this, QStringLiteral("Export table as CSV"),
                                                    p->slug() + QStringLiteral(".csv"), QStringLiteral("CSV (*.csv)"));
  QString error;
  if (!path.isEmpty() && !gui::exportCsv(*table->model(), path, &error)) {
    QMessageBox::warning(this, QStringLiteral("Export failed"), error);
  }
}

void MainWindow::showAbout() {
  QMessageBox::about(this, QStringLiteral("About FuseLens"),
                     QStringLiteral("<b>FuseLens %1</b><br>Profiles GPU workloads and shows what kernel "
                                    "fusion buys.<br>Qt %2")
                         .arg(QStringLiteral(FUSELENS_VERSION), QString::fromLatin1(qVersion())));
}

}  // namespace fuselens::gui
