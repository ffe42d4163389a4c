// Opening captures from File → Open Recent (a QSettings list, kept in a temporary directory
// under a test organization name, never the user's) and by drag and drop onto the main window
// (QDragEnterEvent / QDropEvent with file URLs). A dropped file that is not a capture takes the
// error-dialog path: the dialog is window-modal and opened with open(), so it does not block the
// test, which reads and closes it.

#include <QAction>
#include <QFile>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QUrl>
#include <QtTest>

#include "MainWindow.h"
#include "fuselens/db/Reader.h"

using namespace fuselens;
using namespace fuselens::gui;

namespace {

QString capture(const char* name) {
  return QStringLiteral(FUSELENS_TEST_DATA_DIR "/") + QString::fromLatin1(name);
}

/// The message db::Reader gives for `path`.
QString readerError(const QString& path) {
  try {
    db::Reader reader(path.toStdString());
  } catch (const db::Error& e) {
    return QString::fromUtf8(e.what());
  }
  return {};
}

bool waitForLoads(MainWindow& window) {
  if (window.pendingLoads() == 0) return true;
  QSignalSpy spy(&window, &MainWindow::loadsFinished);
  return spy.wait(120000) || window.pendingLoads() == 0;
}

QMenu* recentMenu(MainWindow& window) {
  for (QAction* top : window.menuBar()->actions()) {
    if (!top->menu()) continue;
    for (QAction* a : top->menu()->actions()) {
      if (a->menu() && a->text().remove(QLatin1Char('&')) == QLatin1String("Open Recent"))
        return a->menu();
    }
  }
  return nullptr;
}

QStringList texts(const QMenu* menu) {
  QStringList out;
  for (const QAction* a : menu->actions()) out << a->text();
  return out;
}

void setRecent(const QStringList& files) {
  QSettings().setValue(QStringLiteral("recentFiles"), files);
}

/// Sends a drag entering the window and, when accepted, the drop; returns whether the drop was
/// accepted.
bool dropOn(MainWindow& window, QMimeData& mime, bool* entered = nullptr) {
  const QPoint at = window.rect().center();
  QDragEnterEvent enter(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(&window, &enter);
  if (entered) *entered = enter.isAccepted();
  if (!enter.isAccepted()) return false;
  QDropEvent drop(QPointF(at), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(&window, &drop);
  return drop.isAccepted();
}

}  // namespace

class TestOpenFiles : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir settingsDir_;

 private Q_SLOTS:
  void initTestCase() {
    // Before the first QSettings: the recent list goes to a temporary file.
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("FuseLensTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_openfiles"));
    QSettings::setDefaultFormat(QSettings::IniFormat);
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, settingsDir_.path());
    QVERIFY(QSettings().fileName().startsWith(settingsDir_.path()));
  }

  void init() { QSettings().clear(); }

  void recentFilesAreNewestFirstUniqueAndCapped() {
    QStringList old;
    for (int i = 0; i < 12; ++i) old << QStringLiteral("/old/capture%1.sqlite").arg(i);
    old.insert(3, capture("fusion_bench.sqlite"));
    setRecent(old);
    MainWindow window;
    window.setErrorDialogsEnabled(false);
    QCOMPARE(texts(recentMenu(window)), old);
    window.openFiles({capture("fusion_bench.sqlite")});
    QVERIFY(waitForLoads(window));
    window.openFiles({capture("pytorch_mlp.sqlite")});
    QVERIFY(waitForLoads(window));
    const QStringList recent = MainWindow::recentFiles();
    QCOMPARE(recent.size(), 10);
    QCOMPARE(recent[0], capture("pytorch_mlp.sqlite"));
    QCOMPARE(recent[1], capture("fusion_bench.sqlite"));
    QCOMPARE(recent.count(capture("fusion_bench.sqlite")), 1);
    QCOMPARE(recent[2], old[0]);
    QCOMPARE(texts(recentMenu(window)), recent);  // the menu follows at once
    // Kept for the next session.
    MainWindow next;
    QCOMPARE(texts(recentMenu(next)), recent);
  }

  void openRecentOpensTheCapture() {
    setRecent({capture("pytorch_mlp.sqlite"), QStringLiteral("/nonexistent/gone.sqlite")});
    MainWindow window;
    window.setErrorDialogsEnabled(false);
    QMenu* menu = recentMenu(window);
    QVERIFY(menu && menu->isEnabled());
    QCOMPARE(menu->actions().size(), 2);
    menu->actions()[0]->trigger();
    QVERIFY(waitForLoads(window));
    QCOMPARE(window.captures().size(), 1);
    QCOMPARE(window.currentCapture()->path, capture("pytorch_mlp.sqlite"));
    QVERIFY(window.lastError().isEmpty());
    // A recent file that has gone: the reader's message, the open capture stays.
    recentMenu(window)->actions().last()->trigger();
    QVERIFY(waitForLoads(window));
    QVERIFY2(window.lastError().contains(readerError(QStringLiteral("/nonexistent/gone.sqlite"))),
             qPrintable(window.lastError()));
    QCOMPARE(window.captures().size(), 1);
  }

  void openRecentIsDisabledWhenEmpty() {
    MainWindow window;
    QMenu* menu = recentMenu(window);
    QVERIFY(menu);
    QVERIFY(!menu->isEnabled());
    QVERIFY(menu->actions().isEmpty());
  }

  void droppingCapturesOpensThem() {
    MainWindow window;
    window.setErrorDialogsEnabled(false);
    window.show();
    QVERIFY(window.acceptDrops());
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(capture("fusion_bench.sqlite")),
                  QUrl::fromLocalFile(capture("pytorch_mlp.sqlite"))});
    QVERIFY(dropOn(window, mime));
    QVERIFY(waitForLoads(window));
    QCOMPARE(window.captures().size(), 2);
    QVERIFY(window.lastError().isEmpty());
    QVERIFY(MainWindow::recentFiles().contains(capture("fusion_bench.sqlite")));
    // The same file again only switches to it.
    QMimeData again;
    again.setUrls({QUrl::fromLocalFile(capture("fusion_bench.sqlite"))});
    QVERIFY(dropOn(window, again));
    QVERIFY(waitForLoads(window));
    QCOMPARE(window.captures().size(), 2);
    QCOMPARE(window.currentCapture()->path, capture("fusion_bench.sqlite"));
  }

  void dragsOfNoLocalFileAreRefused() {
    MainWindow window;
    window.setErrorDialogsEnabled(false);
    QMimeData text;
    text.setText(QStringLiteral("/some/path.sqlite"));
    bool entered = true;
    QVERIFY(!dropOn(window, text, &entered));
    QVERIFY(!entered);
    QMimeData web;
    web.setUrls({QUrl(QStringLiteral("https://example.com/capture.sqlite"))});
    QVERIFY(!dropOn(window, web, &entered));
    QVERIFY(!entered);
    QCOMPARE(window.pendingLoads(), 0);
    QCOMPARE(window.captures().size(), 0);
  }

  void droppingANonCaptureShowsTheErrorDialog() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("notes.txt"));
    {
      QFile f(path);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("not a capture\n");
    }
    MainWindow window;  // error dialogs on, as for a user
    window.show();
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(path)});
    QVERIFY(dropOn(window, mime));
    QVERIFY(waitForLoads(window));
    QCOMPARE(window.captures().size(), 0);
    QVERIFY(window.lastError().contains(readerError(path)));
    // The dialog is open (window-modal, not blocking) with the reader's message.
    QMessageBox* box = nullptr;
    QTRY_VERIFY((box = window.findChild<QMessageBox*>()) != nullptr && box->isVisible());
    QCOMPARE(box->icon(), QMessageBox::Critical);
    QVERIFY(box->text().contains(readerError(path)));
    box->accept();  // deletes itself (WA_DeleteOnClose)
    QTRY_VERIFY(window.findChild<QMessageBox*>() == nullptr);
    // And the window still opens captures.
    QMimeData good;
    good.setUrls({QUrl::fromLocalFile(capture("pytorch_mlp.sqlite"))});
    QVERIFY(dropOn(window, good));
    QVERIFY(waitForLoads(window));
    QCOMPARE(window.captures().size(), 1);
  }
};

QTEST_MAIN(TestOpenFiles)
#include "tst_openfiles.moc"
