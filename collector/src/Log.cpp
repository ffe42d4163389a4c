#include "Log.h"

#include <unistd.h>

#include <string>

namespace fuselens::collector {

void log_line(std::string_view message) noexcept {
  try {
    std::string line = "[fuselens] ";
    line.append(message);
    line += '\n';
    // One write(2) per line keeps lines whole when several processes share stderr.
    [[maybe_unused]] const auto n = ::write(STDERR_FILENO, line.data(), line.size());
  } catch (...) {
  }
}

}  // namespace fuselens::collector
