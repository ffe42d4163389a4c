#pragma once
// Colour in the command-line tools' diagnostics on standard error (issue 23, "Terminal
// manners"): "error:", "warning:" and "note:" are coloured, as compilers colour them, only when
// standard error is a terminal and the user did not ask otherwise. Analyses on standard output
// are never coloured (they are read by scripts and compared byte for byte: tests/golden).
//
// The rule (docs/terminal.md, "Colour"), for --color MODE:
//   NO_COLOR set and non-empty (https://no-color.org): no colour, whatever MODE (issue 23:
//   colour "never with NO_COLOR").  Otherwise never: no colour.  always: colour, also off a
//   terminal and with TERM=dumb.  auto (the default): colour when standard error is a terminal
//   and TERM is not "dumb".

#include <optional>
#include <string>
#include <string_view>

namespace fuselens::tools {

enum class ColorMode { Auto, Always, Never };

/// "auto", "always" or "never"; nullopt for anything else.
std::optional<ColorMode> parse_color_mode(std::string_view text);

/// The rule above. `terminal`: isatty of the stream; `no_color`, `term`: the environment
/// variables NO_COLOR and TERM (nullptr when unset).
bool use_color(ColorMode mode, bool terminal, const char* no_color, const char* term);

/// The rule for standard error in this process's environment.
bool stderr_use_color(ColorMode mode);

/// Whether diagnostics on standard error are coloured: stderr_use_color(Auto) until set.
bool diagnostics_colored();
/// Sets it (once the command line's --color is known).
void set_diagnostics_colored(bool on);

enum class Tone { Error, Warning, Note };

/// `text` in the tone's colour (SGR: bold red, bold magenta, bold cyan, as GCC's diagnostics)
/// when `on`; `text` unchanged otherwise.
std::string paint(std::string_view text, Tone tone, bool on);

/// "PROGRAM: error: " (or warning, note) for a diagnostic on standard error, the label coloured
/// when diagnostics_colored().
std::string diagnostic_prefix(std::string_view program, Tone tone);

}  // namespace fuselens::tools
