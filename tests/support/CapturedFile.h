#pragma once
// A temporary FILE* for a printer under test (a progress line, a report), and what was written
// to it, read back. The file is removed when the object goes.

#include <cstdio>
#include <stdexcept>
#include <string>

namespace fuselens::test {

class CapturedFile {
 public:
  CapturedFile() : file_(std::tmpfile()) {
    if (file_ == nullptr) throw std::runtime_error("tmpfile failed");
  }
  ~CapturedFile() { std::fclose(file_); }
  CapturedFile(const CapturedFile&) = delete;
  CapturedFile& operator=(const CapturedFile&) = delete;

  std::FILE* file() { return file_; }
  /// Everything written so far (flushes first).
  std::string text() {
    std::fflush(file_);
    std::rewind(file_);
    std::string out;
    for (int c; (c = std::fgetc(file_)) != EOF;) out += static_cast<char>(c);
    return out;
  }

 private:
  std::FILE* file_;
};

}  // namespace fuselens::test
