#include "capture/Capture.h"

#include <utility>

namespace fuselens::analyzer {

Capture::Capture(std::string path, db::TimestampCheck check) : path_(std::move(path)) {
  const db::Reader reader(path_, check);  // throws db::Error with the reason
  schema_version_ = reader.schema_version();
}

std::unique_ptr<const db::Reader> Capture::open_reader() const {
  return std::make_unique<const db::Reader>(path_);
}

std::unique_ptr<const db::Reader> Capture::open_reader(db::TimestampCheck check) const {
  return std::make_unique<const db::Reader>(path_, check);
}

std::unique_ptr<const db::Reader> Capture::open_reader(const Window& window) const {
  auto reader = std::make_unique<db::Reader>(path_);
  apply_window(*reader, window);
  return reader;
}

CapturePtr open_capture(const std::string& path, db::TimestampCheck check) {
  return std::make_shared<const Capture>(path, check);
}

}  // namespace fuselens::analyzer
