#pragma once
// ExportJsonWriter: hand-rolled JSON output for exports too large to build as one
// nlohmann::json value (ExportChromeTrace writes millions of events through it). The caller
// writes structure with raw(); values go through the typed members, which always produce valid
// JSON: strings escaped per RFC 8259 with invalid UTF-8 replaced by U+FFFD, non-finite reals as
// null, integers exact.
//
// Output is buffered and handed to the stream in chunks of `buffer_bytes`; memory is bounded by
// that buffer. Errors: none of its own; stream errors are left in the stream's state.

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

namespace fuselens::analyzer {

/// Appends `text` to `out` escaped for the inside of a JSON string (no quotes added): `"` `\`
/// and control characters escaped (\n, \t, ... or \u00XX), bytes that are not valid UTF-8
/// replaced by U+FFFD, everything else copied.
void append_json_escaped(std::string& out, std::string_view text);

class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& out, std::size_t buffer_bytes = 1 << 16);
  /// Flushes what is left.
  ~JsonWriter();
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  /// Appends `text` unchanged (structure: braces, keys, separators).
  JsonWriter& raw(std::string_view text);
  JsonWriter& integer(std::int64_t value);
  /// Shortest round-trip decimal form; NaN and infinities as null.
  JsonWriter& real(double value);
  /// A nanosecond count as microseconds with exactly three decimals ("-1.005", "12.000").
  JsonWriter& microseconds(std::int64_t ns);
  /// A quoted, escaped string.
  JsonWriter& string(std::string_view text);
  /// "," + newline before every element of an array but the first.
  void next_element();
  /// Hands the buffer to the stream and flushes the stream.
  void flush();

 private:
  void maybe_drain();

  std::ostream& out_;
  std::string buffer_;
  std::size_t limit_;
  bool first_element_ = true;
};

}  // namespace fuselens::analyzer
