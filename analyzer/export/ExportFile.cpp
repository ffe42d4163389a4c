#include "export/ExportFile.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <utility>

namespace fuselens::analyzer {
namespace {

std::string reason(int error) { return error != 0 ? std::strerror(error) : "unknown error"; }

}  // namespace

ExportFile::ExportFile(std::string path) : path_(std::move(path)) {
  if (path_ == "-") return;
  temporary_path_ = path_ + ".tmp";
  errno = 0;
  file_.open(temporary_path_, std::ios::binary | std::ios::trunc);
  if (!file_) {
    throw ExportError("cannot write '" + path_ + "': cannot create '" + temporary_path_ +
                      "': " + reason(errno));
  }
}

ExportFile::~ExportFile() {
  if (committed_ || temporary_path_.empty()) return;
  file_.close();
  std::remove(temporary_path_.c_str());
}

std::ostream& ExportFile::stream() { return temporary_path_.empty() ? std::cout : file_; }

void ExportFile::commit() {
  if (temporary_path_.empty()) {
    std::cout.flush();
    if (!std::cout) throw ExportError("writing to standard output failed");
    committed_ = true;
    return;
  }
  errno = 0;
  file_.flush();
  file_.close();
  if (file_.fail()) {
    throw ExportError("cannot write '" + path_ + "': writing '" + temporary_path_ +
                      "' failed: " + reason(errno));
  }
  if (std::rename(temporary_path_.c_str(), path_.c_str()) != 0) {
    throw ExportError("cannot write '" + path_ + "': " + reason(errno));
  }
  committed_ = true;
}

}  // namespace fuselens::analyzer
