#include "CaptureLoader.h"

#include <QPointer>
#include <QtConcurrent/QtConcurrentRun>

#include <exception>

namespace fuselens::gui {

CaptureLoader::CaptureLoader(QObject* parent) : QObject(parent) {
  qRegisterMetaType<CaptureDataPtr>();
}

void CaptureLoader::load(const QString& path) {
  ++pending_;
  QPointer<CaptureLoader> self(this);
  // Results come back by queued invocations on this object's (the GUI) thread.
  auto future = QtConcurrent::run([self, path] {
    auto post = [self](auto&& function) {
      if (self) QMetaObject::invokeMethod(self.data(), std::forward<decltype(function)>(function),
                                          Qt::QueuedConnection);
    };
    try {
      auto data = loadCapture(path, [&](int percent, const QString& stage) {
        post([self, path, percent, stage] {
          if (self) Q_EMIT self->progress(path, percent, stage);
        });
      });
      CaptureDataPtr result = std::move(data);
      post([self, result] {
        if (!self) return;
        --self->pending_;
        Q_EMIT self->loaded(result);
      });
    } catch (const std::exception& e) {
      const QString message = QString::fromUtf8(e.what());
      post([self, path, message] {
        if (!self) return;
        --self->pending_;
        Q_EMIT self->failed(path, message);
      });
    }
  });
  Q_UNUSED(future);
}

}  // namespace fuselens::gui
