#include "export/ExportJsonWriter.h"

#include <charconv>
#include <cmath>
#include <ostream>

namespace fuselens::analyzer {
namespace {

/// Length of the valid UTF-8 sequence at the start of `s` (RFC 3629: no overlong forms, no
/// surrogates, at most U+10FFFF), or 0 when it is not one.
std::size_t utf8_sequence_length(std::string_view s) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = byte(0);
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) {
    n = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    n = 3;
    if (lead == 0xE0) lo = 0xA0;
    if (lead == 0xED) hi = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    n = 4;
    if (lead == 0xF0) lo = 0x90;
    if (lead == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (s.size() < n || byte(1) < lo || byte(1) > hi) return 0;
  for (std::size_t i = 2; i < n; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  }
  return n;
}

}  // namespace

void append_json_escaped(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const std::size_t n = utf8_sequence_length(text.substr(i));
      if (n == 0) {
        out += "\xEF\xBF\xBD";  // U+FFFD
        ++i;
      } else {
        out.append(text.substr(i, n));
        i += n;
      }
      continue;
    }
    ++i;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 0xF];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
}

JsonWriter::JsonWriter(std::ostream& out, std::size_t buffer_bytes)
    : out_(out), limit_(buffer_bytes) {
  buffer_.reserve(buffer_bytes + 4096);
}

JsonWriter::~JsonWriter() {
  if (!buffer_.empty()) out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
}

JsonWriter& JsonWriter::raw(std::string_view text) {
  buffer_.append(text);
  maybe_drain();
  return *this;
}

JsonWriter& JsonWriter::integer(std::int64_t value) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  buffer_.append(digits, end);
  return *this;
}

JsonWriter& JsonWriter::real(double value) {
  if (!std::isfinite(value)) return raw("null");
  char digits[32];
  const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  buffer_.append(digits, end);
  return *this;
}

JsonWriter& JsonWriter::microseconds(std::int64_t ns) {
  if (ns < 0) {
    buffer_ += '-';
    // -(INT64_MIN) overflows; no timestamp difference comes near it.
    ns = -ns;
  }
  integer(ns / 1000);
  const auto fraction = static_cast<int>(ns % 1000);
  const char digits[4] = {'.', static_cast<char>('0' + fraction / 100),
                          static_cast<char>('0' + fraction / 10 % 10),
                          static_cast<char>('0' + fraction % 10)};
  buffer_.append(digits, 4);
  return *this;
}

JsonWriter& JsonWriter::string(std::string_view text) {
  buffer_ += '"';
  append_json_escaped(buffer_, text);
  buffer_ += '"';
  maybe_drain();
  return *this;
}

void JsonWriter::next_element() {
  if (!first_element_) buffer_ += ",\n";
  first_element_ = false;
}

void JsonWriter::flush() {
  out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  buffer_.clear();
  out_.flush();
}

void JsonWriter::maybe_drain() {
  if (buffer_.size() < limit_) return;
  out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  buffer_.clear();
}

}  // namespace fuselens::analyzer
