#pragma once
// ExportFile: an output file that appears complete or not at all, and never at the cost of a file
// it must not replace.
//
// The constructor checks the output path: it may not be an existing non-regular file (a
// directory, a device such as /dev/null, a FIFO, a socket, a symbolic link: replacing one would
// destroy it or what it stands for) nor the same file as one of the inputs (compared by device and
// inode, so "cap.sqlite", "./cap.sqlite" and a hard link are all caught). It then creates a new
// temporary file ".<name>.XXXXXX" in the output's directory with mkstemp (O_CREAT | O_EXCL: a
// planted file or symbolic link of that name is never opened or followed), with the permissions
// 0666 less the umask that a plain create would give. Writes go there; commit() flushes, closes
// and renames it over `path` (atomic within one file system). If commit() is never reached (an
// exception while exporting, a failed write) the destructor removes the temporary file, so an
// export never leaves a partial OUT behind. The path "-" means standard output: nothing is
// created or renamed and commit() only flushes. A path ending in ".gz" ("trace.json.gz") is
// written gzip-compressed (GzipStreamBuf: zlib's deflate, RFC 1952) as it is written, so what
// stream() receives is never stored uncompressed; commit() completes the gzip stream first.
//
// Errors: ExportError, with the path and the reason, for a refused output path, when the
// temporary file cannot be created, a write fails, or the rename fails.

#include <ext/stdio_filebuf.h>

#include "export/GzipStreamBuf.h"

#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace fuselens::analyzer {

/// An export could not be written (the output path, not the capture, is the problem).
class ExportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ExportFile {
 public:
  /// `inputs`: the files the export reads (captures); the output may be none of them.
  explicit ExportFile(std::string path, const std::vector<std::string>& inputs = {});
  ~ExportFile();
  ExportFile(const ExportFile&) = delete;
  ExportFile& operator=(const ExportFile&) = delete;

  /// Where to write (through the gzip layer for ".gz" paths); throws nothing itself (failures
  /// show in commit()).
  std::ostream& stream();
  /// Flushes, closes and renames the temporary file to the final path.
  void commit();

  const std::string& path() const { return path_; }
  /// The temporary file ("" for standard output).
  const std::string& temporary_path() const { return temporary_path_; }

 private:
  std::string path_;
  std::string temporary_path_;
  std::unique_ptr<__gnu_cxx::stdio_filebuf<char>> buffer_;
  std::unique_ptr<std::ostream> file_;
  std::unique_ptr<GzipStreamBuf> gzip_buffer_;  // ".gz" outputs: compresses into file_
  std::unique_ptr<std::ostream> gzip_;
  bool committed_ = false;
};

/// Throws ExportError when `path` may not be replaced by an export reading `inputs` (see
/// ExportFile); nothing when it does not exist yet.
void check_output_path(const std::string& path, const std::vector<std::string>& inputs);

}  // namespace fuselens::analyzer
