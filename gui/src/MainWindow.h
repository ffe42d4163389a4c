#pragma once
// MainWindow: prof-gui's window. Open captures (File → Open, recent files in QSettings, drag and
// drop, command line); each loads off the GUI thread (CaptureLoader) in stages with progress in
// the status bar, the analyses of the visible page first (the timeline of a million kernels
// paints after its own load, the rest follows in the background); a file that cannot be read
// gets a dialog with the analyzer's message and the program carries on. The capture selector in the
// tool bar picks which capture the pages show; every page is a tab (View → page, Ctrl+1…). File →
// Export writes the report (HTML, PDF), the current view as an image (PNG, SVG) or its table as
// CSV. The window control in the tool bar (and selecting steps on the Steps page, or Shift+dragging
// a time range on the timeline) sets the window every page describes; the status bar names it and
// what lies outside it.

#include <QList>
#include <QMainWindow>
#include <QStringList>

#include "CaptureData.h"

class QComboBox;
class QLabel;
class QMenu;
class QProgressBar;
class QTabWidget;

namespace fuselens::gui {

class CaptureLoader;
class Page;
class SummaryPage;
class TimelinePage;
class FlagsPage;
class ComparePage;
class HeatmapPage;
class StepsPage;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  /// Starts loading each file (asynchronously).
  void openFiles(const QStringList& paths);
  const QList<CaptureDataPtr>& captures() const { return captures_; }
  CaptureDataPtr currentCapture() const;
  void setCurrentCapture(int index);
  /// Opens and analyses still queued or running.
  int pendingLoads() const;
  /// The staged loader (tests and the benchmark set how many analyses run at once).
  CaptureLoader* loader() const { return loader_; }
  /// The message of the last load that failed (also shown in a dialog).
  const QString& lastError() const { return lastError_; }
  /// Show error dialogs (default); tests turn them off and read lastError().
  void setErrorDialogsEnabled(bool enabled) { errorDialogs_ = enabled; }

  QList<Page*> pages() const { return pages_; }
  Page* page(const QString& slug) const;
  void showPage(Page* page);
  SummaryPage* summaryPage() const { return summary_; }
  TimelinePage* timelinePage() const { return timeline_; }
  FlagsPage* flagsPage() const { return flags_; }
  ComparePage* comparePage() const { return compare_; }
  HeatmapPage* heatmapPage() const { return heatmap_; }
  StepsPage* stepsPage() const { return steps_; }

  /// Sets the window of the current capture (parse_window's forms: all, steady, steps:A-B,
  /// range:GLOB, time:T0-T1); every page then shows it. False for a malformed window (the
  /// status bar says why).
  bool setWindow(const QString& window);
  /// The status bar's window text: "Window: <Window::description>".
  QString windowText() const;

  /// Saves a PNG of the whole window per page into `directory` (<slug>.png), and with steps the
  /// timeline over ten steps around the start of the steady window (timeline-steps.png), and
  /// the whole capture's timeline zoomed out (timeline-overview.png: coverage drawing, process
  /// groups), and the timeline's search for the longest kernel's name (timeline-search.png);
  /// returns the files.
  QStringList screenshotPages(const QString& directory);

  static QStringList recentFiles();

 Q_SIGNALS:
  /// Every open and analysis finished (successfully or not): nothing is pending.
  void loadsFinished();
  /// `analysis` of the open `capture` is in (staged loading), after the pages were told.
  void analysisLoaded(const fuselens::gui::CaptureDataPtr& capture,
                      fuselens::gui::Analysis analysis);

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;
  void closeEvent(QCloseEvent* event) override;

 private:
  void createMenus();
  void onOpened(const CaptureDataPtr& capture);
  void onAnalysisLoaded(const CaptureDataPtr& capture, Analysis analysis);
  void onCaptureLoaded(const CaptureDataPtr& capture);
  void onFailed(const QString& path, const QString& message);
  void showError(const QString& path, const QString& message);
  /// Moves the analyses the visible page needs to the front of the loader's queue.
  void requestVisibleAnalyses();
  /// The page shows all it can: its analyses of the current capture are in, it runs none.
  bool pageReady(Page* page) const;
  void refreshPages();
  void onWindowChanged(const CaptureDataPtr& capture);
  /// Shows the current capture's window in the tool bar and the status bar.
  void showWindow();
  void addRecentFile(const QString& path);
  void rebuildRecentMenu();
  void openDialog();
  void closeCurrent();
  void exportHtml();
  void exportPdf();
  void exportImage();
  void exportCsv();
  void showAbout();
  Page* currentPage() const;

  CaptureLoader* loader_ = nullptr;
  QList<CaptureDataPtr> captures_;
  int current_ = -1;
  QTabWidget* tabs_ = nullptr;
  QList<Page*> pages_;
  SummaryPage* summary_ = nullptr;
  TimelinePage* timeline_ = nullptr;
  FlagsPage* flags_ = nullptr;
  ComparePage* compare_ = nullptr;
  HeatmapPage* heatmap_ = nullptr;
  StepsPage* steps_ = nullptr;
  QComboBox* captureBox_ = nullptr;
  QComboBox* windowBox_ = nullptr;  ///< editable: all, steady, steps:A-B, time:T0-T1, range:GLOB
  QLabel* windowLabel_ = nullptr;   ///< the status bar's window
  QString requestedWindow_;         ///< the window the control asked for, until the loader answers
  QProgressBar* progress_ = nullptr;
  QLabel* status_ = nullptr;
  QMenu* recentMenu_ = nullptr;
  QString lastError_;
  bool errorDialogs_ = true;
};

}  // namespace fuselens::gui
