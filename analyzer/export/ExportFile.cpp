#include "export/ExportFile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <utility>

namespace fuselens::analyzer {
namespace {

std::string reason(int error) { return error != 0 ? std::strerror(error) : "unknown error"; }

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

/// The directory part of `path` ("." when it has none) and the file name.
std::pair<std::string, std::string> split(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

}  // namespace

void check_output_path(const std::string& path, const std::vector<std::string>& inputs) {
  struct stat out {};
  if (::lstat(path.c_str(), &out) != 0) return;  // absent: created by the rename
  if (!S_ISREG(out.st_mode)) {
    throw ExportError("cannot write '" + path + "': it exists and is " + kind_of(out.st_mode) +
                      "; refusing to replace it (write to a new path, or '-' for standard output)");
  }
  for (const std::string& input : inputs) {
    struct stat in {};
    if (::stat(input.c_str(), &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
      throw ExportError("cannot write '" + path + "': it is the capture '" + input +
                        "' being read; refusing to replace it");
    }
  }
}

ExportFile::ExportFile(std::string path, const std::vector<std::string>& inputs)
    : path_(std::move(path)) {
  if (path_ == "-") return;
  if (path_.empty() || path_.back() == '/') {
    throw ExportError("cannot write '" + path_ + "': not a file name");
  }
  check_output_path(path_, inputs);
  const auto [directory, name] = split(path_);
  std::string temporary = directory + "/." + name + ".XXXXXX";
  errno = 0;
  const int fd = ::mkostemp(temporary.data(), O_CLOEXEC);
  if (fd < 0) {
    throw ExportError("cannot write '" + path_ + "': cannot create a temporary file in '" +
                      directory + "': " + reason(errno));
  }
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);  // what a plain create gives; mkstemp makes 0600
  temporary_path_ = temporary;
  buffer_ = std::make_unique<__gnu_cxx::stdio_filebuf<char>>(fd, std::ios::out, 1 << 16);
  file_ = std::make_unique<std::ostream>(buffer_.get());
  if (path_.size() > 3 && path_.compare(path_.size() - 3, 3, ".gz") == 0) {
    gzip_buffer_ = std::make_unique<GzipStreamBuf>(*file_);
    gzip_ = std::make_unique<std::ostream>(gzip_buffer_.get());
  }
}

ExportFile::~ExportFile() {
  if (committed_ || temporary_path_.empty()) return;
  gzip_.reset();
  gzip_buffer_.reset();
  buffer_.reset();  // closes the descriptor
  std::remove(temporary_path_.c_str());
}

std::ostream& ExportFile::stream() {
  if (temporary_path_.empty()) return std::cout;
  return gzip_ ? *gzip_ : *file_;
}

void ExportFile::commit() {
  if (temporary_path_.empty()) {
    std::cout.flush();
    if (!std::cout) throw ExportError("writing to standard output failed");
    committed_ = true;
    return;
  }
  errno = 0;
  if (gzip_) {
    gzip_->flush();
    if (!*gzip_ || !gzip_buffer_->finish()) {
      throw ExportError("cannot write '" + path_ + "': compressing to '" + temporary_path_ +
                        "' failed: " + reason(errno));
    }
  }
  file_->flush();
  const bool written = static_cast<bool>(*file_) && buffer_->close() != nullptr;
  if (!written) {
    throw ExportError("cannot write '" + path_ + "': writing '" + temporary_path_ +
                      "' failed: " + reason(errno));
  }
  check_output_path(path_, {});  // a non-regular file that appeared meanwhile is not replaced
  if (std::rename(temporary_path_.c_str(), path_.c_str()) != 0) {
    throw ExportError("cannot write '" + path_ + "': " + reason(errno));
  }
  committed_ = true;
}

}  // namespace fuselens::analyzer
