#include "store/StoredJson.h"

#include <cmath>
#include <limits>

#include "fuselens/db/Printable.h"

namespace fuselens::analyzer::store {

const Json& member(const Json& j, const char* key) {
  if (!j.is_object()) throw BadStore("not an object");
  const auto it = j.find(key);
  if (it == j.end()) throw BadStore(std::string("no member ") + key);
  return *it;
}

std::int64_t int_in(const Json& j, std::int64_t lo, std::int64_t hi) {
  std::int64_t v = 0;
  if (j.is_number_unsigned()) {
    const auto u = j.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      throw BadStore("integer out of range");
    v = static_cast<std::int64_t>(u);
  } else if (j.is_number_integer()) {
    v = j.get<std::int64_t>();
  } else {
    throw BadStore("not an integer");
  }
  if (v < lo || v > hi) throw BadStore("integer out of range");
  return v;
}

std::int64_t int_member(const Json& j, const char* key, std::int64_t lo, std::int64_t hi) {
  return int_in(member(j, key), lo, hi);
}

double real_of(const Json& j) {
  if (!j.is_number()) throw BadStore("not a number");
  const double v = j.get<double>();
  if (!std::isfinite(v)) throw BadStore("not finite");
  return v;
}

double real_member(const Json& j, const char* key) { return real_of(member(j, key)); }

bool bool_member(const Json& j, const char* key) {
  const Json& v = member(j, key);
  if (!v.is_boolean()) throw BadStore(std::string("not a boolean: ") + key);
  return v.get<bool>();
}

std::string text_of(const Json& j) {
  if (!j.is_string()) throw BadStore("not a string");
  std::string s = j.get<std::string>();
  if (!db::is_printable(s)) throw BadStore("text that is not printable");
  return s;
}

std::string text_member(const Json& j, const char* key) { return text_of(member(j, key)); }

std::optional<std::uint32_t> u32_or_null(const Json& j, const char* key) {
  const Json& v = member(j, key);
  if (v.is_null()) return std::nullopt;
  return static_cast<std::uint32_t>(int_in(v, 0, std::numeric_limits<std::uint32_t>::max()));
}

const Json& array_member(const Json& j, const char* key) {
  const Json& v = member(j, key);
  if (!v.is_array()) throw BadStore(std::string("not an array: ") + key);
  return v;
}

}  // namespace fuselens::analyzer::store
