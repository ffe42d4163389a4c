// prof-gui [FILE...] [--screenshot DIR] [--page NAME]: the FuseLens desktop program.
//   FILE...           captures to open (prof-run output)
//   --screenshot DIR  load the files, save one PNG of the window per page into DIR, and exit
//                     (non-zero when a file could not be loaded); used for the README's images
//   --page NAME       the page to show first (summary, timeline, flags, heatmap, compare, ...)

#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QTextStream>
#include <QTimer>

#include "MainWindow.h"
#include "views/Page.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("prof-gui"));
  QApplication::setOrganizationName(QStringLiteral("FuseLens"));
  QApplication::setApplicationVersion(QStringLiteral(FUSELENS_VERSION));

  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("Inspect FuseLens captures: summaries, timeline, "
                                                  "flags, heatmaps and comparisons."));
  const QCommandLineOption help = parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument(QStringLiteral("FILE"), QStringLiteral("Captures to open."),
                               QStringLiteral("[FILE...]"));
  QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                QStringLiteral("Save a PNG of every page into DIR and exit."),
                                QStringLiteral("DIR"));
  QCommandLineOption page(QStringLiteral("page"), QStringLiteral("Page to show first."),
                          QStringLiteral("NAME"));
  parser.addOption(screenshot);
  parser.addOption(page);
  // --help ends with examples, as the command-line tools' (issue 23); errors, --version and the
  // rest are process()'s.
  if (parser.parse(QApplication::arguments()) && parser.isSet(help)) {
    QTextStream(stdout) << parser.helpText()
                        << "\nExamples:\n"
                           "  prof-gui run.sqlite\n"
                           "  prof-gui before.sqlite after.sqlite --page compare\n"
                           "  prof-gui run.sqlite --page timeline\n"
                           "  prof-gui run.sqlite --screenshot shots/\n";
    return 0;
  }
  parser.process(app);

  fuselens::gui::MainWindow window;
  const QStringList files = parser.positionalArguments();
  // The page first, so that its analyses load first (staged loading: CaptureLoader).
  if (parser.isSet(page)) {
    if (auto* p = window.page(parser.value(page))) window.showPage(p);
  }
  window.show();
  window.openFiles(files);
  if (parser.isSet(screenshot)) {
    window.setErrorDialogsEnabled(false);
    const QString dir = parser.value(screenshot);
    auto take = [&] {
      // Let queued results (comparisons) arrive and the window settle before grabbing.
      QTimer::singleShot(1500, &app, [&] {
        // The first FILE, whichever finished loading first.
        const QString first = files.isEmpty() ? QString() : QFileInfo(files[0]).absoluteFilePath();
        for (int i = 0; i < window.captures().size(); ++i) {
          if (window.captures()[i]->path == first) window.setCurrentCapture(i);
        }
        const QStringList saved = window.screenshotPages(dir);
        QTextStream(stdout) << saved.join(QLatin1Char('\n')) << '\n';
        if (!window.lastError().isEmpty()) QTextStream(stderr) << window.lastError() << '\n';
        app.exit(window.lastError().isEmpty() && window.captures().size() == files.size() ? 0 : 1);
      });
    };
    if (window.pendingLoads() == 0) {
      take();
    } else {
      QObject::connect(&window, &fuselens::gui::MainWindow::loadsFinished, &app, take);
    }
  }
  return app.exec();
}
