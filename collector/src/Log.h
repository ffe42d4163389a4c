#pragma once
// Collector logging: one line to stderr with a "[fuselens] " prefix. Never throws; never used
// on the launch path.

#include <fmt/format.h>

#include <string_view>

namespace fuselens::collector {

void log_line(std::string_view message) noexcept;

template <typename... Args>
void log(fmt::format_string<Args...> format, Args&&... args) noexcept {
  try {
    log_line(fmt::format(format, std::forward<Args>(args)...));
  } catch (...) {
  }
}

}  // namespace fuselens::collector
