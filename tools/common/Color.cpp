#include "Color.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace fuselens::tools {

namespace {
int g_colored = -1;  // -1: not decided yet (stderr_use_color(Auto) on first use)
}  // namespace

std::optional<ColorMode> parse_color_mode(std::string_view text) {
  if (text == "auto") return ColorMode::Auto;
  if (text == "always") return ColorMode::Always;
  if (text == "never") return ColorMode::Never;
  return std::nullopt;
}

bool use_color(ColorMode mode, bool terminal, const char* no_color, const char* term) {
  if (no_color != nullptr && no_color[0] != '\0') return false;  // no-color.org: any non-empty
  switch (mode) {
    case ColorMode::Never:
      return false;
    case ColorMode::Always:
      return true;
    case ColorMode::Auto:
      break;
  }
  if (!terminal) return false;
  if (term != nullptr && std::strcmp(term, "dumb") == 0) return false;
  return true;
}

bool stderr_use_color(ColorMode mode) {
  return use_color(mode, ::isatty(STDERR_FILENO) != 0, std::getenv("NO_COLOR"),
                   std::getenv("TERM"));
}

bool diagnostics_colored() {
  if (g_colored < 0) g_colored = stderr_use_color(ColorMode::Auto) ? 1 : 0;
  return g_colored == 1;
}

void set_diagnostics_colored(bool on) { g_colored = on ? 1 : 0; }

std::string paint(std::string_view text, Tone tone, bool on) {
  if (!on) return std::string(text);
  const char* sgr = tone == Tone::Error     ? "\033[1;31m"
                    : tone == Tone::Warning ? "\033[1;35m"
                                            : "\033[1;36m";
  return sgr + std::string(text) + "\033[0m";
}

std::string diagnostic_prefix(std::string_view program, Tone tone) {
  const char* label = tone == Tone::Error ? "error:" : tone == Tone::Warning ? "warning:" : "note:";
  return std::string(program) + ": " + paint(label, tone, diagnostics_colored()) + " ";
}

}  // namespace fuselens::tools
