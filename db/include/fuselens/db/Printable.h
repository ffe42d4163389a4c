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

#include <string>
#include <string_view>

namespace fuselens::db {

/// True when `text` is already printable under the rule above (no copy needed).
bool is_printable(std::string_view text);

/// `text` under the rule above; `text` itself when it is printable.
std::string printable(std::string_view text);

}  // namespace fuselens::db
