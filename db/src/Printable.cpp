#include "fuselens/db/Printable.h"

#include <cstdint>

namespace fuselens::db {
namespace {

/// Length of the valid UTF-8 sequence that starts at text[i] (1..4), or 0 when the bytes there
/// are not one (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF). `code`
/// receives the code point.
std::size_t utf8_sequence(std::string_view text, std::size_t i, std::uint32_t& code) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b0 = byte(i);
  std::size_t n = 0;
  std::uint32_t min = 0;
  if (b0 < 0x80) {
    code = b0;
    return 1;
  }
  if ((b0 & 0xE0) == 0xC0) {
    n = 2, code = b0 & 0x1Fu, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    n = 3, code = b0 & 0x0Fu, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    n = 4, code = b0 & 0x07u, min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3Fu);
  }
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return n;
}

bool is_control(std::uint32_t code) {
  return code < 0x20 || code == 0x7F || (code >= 0x80 && code <= 0x9F);
}

constexpr char kHex[] = "0123456789abcdef";

}  // namespace

bool is_printable(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b >= 0x20 && b < 0x7F) {
      ++i;
      continue;
    }
    std::uint32_t code = 0;
    const std::size_t n = utf8_sequence(text, i, code);
    if (n == 0 || is_control(code)) return false;
    i += n;
  }
  return true;
}

std::string printable(std::string_view text, std::size_t max_bytes) {
  if (text.size() > max_bytes) {
    std::size_t cut = max_bytes;  // back off to the start of a character
    for (std::size_t k = 0;
         k < 3 && cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80; ++k)
      --cut;
    return printable(text.substr(0, cut), max_bytes) +
           "...[truncated: " + std::to_string(text.size()) + " bytes]";
  }
  if (is_printable(text)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 16);
  for (std::size_t i = 0; i < text.size();) {
    std::uint32_t code = 0;
    const std::size_t n = utf8_sequence(text, i, code);
    if (n == 0 || code < 0x20 || code == 0x7F) {
      const auto b = static_cast<unsigned char>(text[i]);
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 0xF];
      ++i;
    } else if (is_control(code)) {
      out += "\\u00";
      out += kHex[code >> 4];
      out += kHex[code & 0xF];
      i += n;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace fuselens::db
