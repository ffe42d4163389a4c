#pragma once
// Printable: the form in which FuseLens shows any string it read from a capture (kernel names,
// NVTX texts, frames, paths, the command line) or from a user, so that a hostile capture cannot
// drive the terminal (ESC/CSI/OSC sequences), forge rows (CR, LF) or cut a line (NUL) in a
// table, a CSV file, an HTML report, the GUI or an error line.
//
// Rule: valid UTF-8 is kept, except the C0 controls U+0000..U+001F, DEL U+007F and the C1
// controls U+0080..U+009F, which become "\xHH" (C0, DEL) or "\u00HH" (C1); a byte that is not part
// of a valid UTF-8 sequence (a stray continuation byte, an overlong form, a surrogate, a code
// point above U+10FFFF, a truncated sequence) becomes "\xHH". A backslash is kept as is, so the
// form is for reading, not a reversible encoding. Source of the rule: the terminal escape
// injection class (CWE-150) and Unicode's C0/C1 control sets (Unicode 15, chapter 23.1).
//
// Length: a text longer than kMaxTextBytes keeps its first kMaxTextBytes bytes (cut at a
// character boundary) followed by "...[truncated: N bytes]", N its whole length, so that a
// hostile capture's 90 MB kernel name cannot make an analysis copy it into every row, tree node
// and trace event (issue 22: 8.5 GB of memory and a 7.8 GB trace). The longest name in the
// committed real captures is 5,050 bytes; C++ template kernel names run to a few KB.

#include <cstddef>
#include <string>
#include <string_view>

namespace fuselens::db {

/// Longest text kept whole by printable(), bytes.
inline constexpr std::size_t kMaxTextBytes = 64 * 1024;

/// True when `text` is already printable under the rule above (no copy needed).
bool is_printable(std::string_view text);

/// `text` under the rule above, cut to `max_bytes` (see Length); `text` itself when it is
/// printable and not longer.
std::string printable(std::string_view text, std::size_t max_bytes = kMaxTextBytes);

}  // namespace fuselens::db
