#pragma once
// Capture: one capture file opened for analysis, the handle a program that shows analyses (the
// GUI) holds instead of the database layer. open_capture checks the file once, as db::Reader
// does; each analysis then reads it through a connection of its own (open_reader), so analyses
// of one capture can run on several threads at once (an SQLite connection serves one thread at
// a time). The handle is immutable and shared: copy the shared_ptr to every job.

#include <memory>
#include <mutex>
#include <string>

#include "fuselens/db/Reader.h"
#include "window/Window.h"

namespace fuselens::analyzer {

class Capture {
 public:
  /// Opens and checks `path` (db::Reader's checks: missing file, not an SQLite database, not a
  /// FuseLens capture, newer schema, implausible timestamps). Throws db::Error with the reason.
  /// `check` DeferLargeTables leaves the kernel and api_call timestamps unchecked here (each row
  /// a cursor reads is still checked): prof-gui's first paint from a stored level of detail.
  explicit Capture(std::string path, db::TimestampCheck check = db::TimestampCheck::All);

  /// The path the capture was opened with.
  const std::string& path() const { return path_; }
  /// The capture's schema version (PRAGMA user_version) when it was opened.
  int schema_version() const { return schema_version_; }

  /// A new read-only connection to the capture for one analysis on the calling thread, checked
  /// again as db::Reader checks it (the file may have changed since open_capture). Throws
  /// db::Error.
  std::unique_ptr<const db::Reader> open_reader() const;
  /// open_reader() with the timestamp check `check` (DeferLargeTables: see the constructor).
  std::unique_ptr<const db::Reader> open_reader(db::TimestampCheck check) const;
  /// open_reader(), restricted to `window` (apply_window): every analysis through it reads only
  /// the window's rows; unrestricted for a whole window. Throws db::Error, and WindowError when
  /// nothing of the capture lies inside the window.
  std::unique_ptr<const db::Reader> open_reader(const Window& window) const;

  /// Runs `lookup(const db::Reader&)` on the capture's one shared connection (opened by the
  /// first call, reopened after a failure), one caller at a time, and returns its result: for
  /// quick indexed lookups (analyzer::call_path of one selection) that should not pay
  /// open_reader's checks every time. Throws what opening or `lookup` throws.
  template <typename Lookup>
  auto with_shared_reader(Lookup&& lookup) const {
    const std::lock_guard<std::mutex> lock(shared_mutex_);
    try {
      if (!shared_) shared_ = open_reader();
      return lookup(*shared_);
    } catch (...) {
      shared_.reset();
      throw;
    }
  }

 private:
  std::string path_;
  int schema_version_ = 0;
  mutable std::mutex shared_mutex_;
  mutable std::unique_ptr<const db::Reader> shared_;  ///< with_shared_reader's connection
};

using CapturePtr = std::shared_ptr<const Capture>;

/// Opens the capture at `path` for analysis (Capture's constructor). Throws db::Error.
CapturePtr open_capture(const std::string& path,
                        db::TimestampCheck check = db::TimestampCheck::All);

}  // namespace fuselens::analyzer
