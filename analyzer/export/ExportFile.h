#pragma once
// ExportFile: an output file that appears complete or not at all.
//
// The constructor creates "<path>.tmp" (truncating a stale one); writes go there; commit()
// flushes, closes and renames it over `path`. If commit() is never reached (an exception while
// exporting, a failed write) the destructor removes the temporary file, so an export never
// leaves a partial OUT behind. The path "-" means standard output: nothing is created or
// renamed and commit() only flushes.
//
// Errors: ExportError, with the path and the system's reason, when the temporary file cannot be
// created, a write fails, or the rename fails.

#include <fstream>
#include <ostream>
#include <stdexcept>
#include <string>

namespace fuselens::analyzer {

/// An export could not be written (the output path, not the capture, is the problem).
class ExportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ExportFile {
 public:
  explicit ExportFile(std::string path);
  ~ExportFile();
  ExportFile(const ExportFile&) = delete;
  ExportFile& operator=(const ExportFile&) = delete;

  /// Where to write; throws nothing itself (failures show in commit()).
  std::ostream& stream();
  /// Flushes, closes and renames the temporary file to the final path.
  void commit();

  const std::string& path() const { return path_; }
  /// "<path>.tmp" ("" for standard output).
  const std::string& temporary_path() const { return temporary_path_; }

 private:
  std::string path_;
  std::string temporary_path_;
  std::ofstream file_;
  bool committed_ = false;
};

}  // namespace fuselens::analyzer
