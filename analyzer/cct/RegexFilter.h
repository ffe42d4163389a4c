#pragma once
// RegexFilter: a regular expression that rows of a report are kept by (cct --filter), matched in
// time linear in the text with RE2 (github.com/google/re2, syntax: RE2's, close to POSIX ERE and
// Perl without backreferences or lookaround). std::regex, used before, recursed once per
// character and crashed on a 30 KB kernel name (issue 22).

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace re2 {
class RE2;
}

namespace fuselens::analyzer {

/// A pattern RegexFilter cannot compile: bad syntax, or a program over kMaxProgramBytes.
class RegexError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class RegexFilter {
 public:
  /// Memory RE2 may use to compile and run one pattern (its program and DFA caches), bytes: a
  /// pattern such as "(a{1000}){1000}" is refused instead of growing without bound.
  static constexpr std::int64_t kMaxProgramBytes = 8 << 20;
  /// Longest pattern accepted, bytes.
  static constexpr std::size_t kMaxPatternBytes = 4096;

  /// Compiles `pattern`. Throws RegexError, whose text says why (RE2's message), when the pattern
  /// is empty, too long, malformed or compiles to a program over kMaxProgramBytes.
  explicit RegexFilter(const std::string& pattern);
  ~RegexFilter();
  RegexFilter(RegexFilter&&) noexcept;
  RegexFilter& operator=(RegexFilter&&) noexcept;

  /// True when the pattern matches somewhere in `text` (a search, not a whole-text match).
  [[nodiscard]] bool search(std::string_view text) const;
  [[nodiscard]] const std::string& pattern() const { return pattern_; }

 private:
  std::string pattern_;
  std::unique_ptr<re2::RE2> re_;
};

}  // namespace fuselens::analyzer
