#pragma once
// CaptureLoader: runs loadCapture on Qt's global thread pool and reports back on the GUI thread
// through queued signals: progress while it works, then loaded or failed (with the db::Error
// text, e.g. "not a FuseLens capture" or "written by a newer FuseLens"). Several loads may run
// at once; each signal names its path.

#include <QObject>
#include <QString>

#include "CaptureData.h"

namespace fuselens::gui {

class CaptureLoader : public QObject {
  Q_OBJECT
 public:
  explicit CaptureLoader(QObject* parent = nullptr);

  /// Starts loading `path`; returns at once.
  void load(const QString& path);
  /// Loads in progress.
  int pending() const { return pending_; }

 Q_SIGNALS:
  void progress(const QString& path, int percent, const QString& stage);
  void loaded(const fuselens::gui::CaptureDataPtr& data);
  void failed(const QString& path, const QString& message);

 private:
  int pending_ = 0;
};

}  // namespace fuselens::gui
