#pragma once
// Strict reading of the stored results' JSON (AnalysisStore.h): every accessor throws BadStore
// for a missing member, a wrong type, a value out of range or text that is not printable
// (db/Printable.h), so that a damaged or hostile body is refused as a whole. Private to
// analyzer/store.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace fuselens::analyzer::store {

/// A stored body that cannot be trusted; the caller computes from the rows.
class BadStore : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using Json = nlohmann::json;

/// Member `key` of object `j`.
const Json& member(const Json& j, const char* key);
/// An integer in [lo, hi].
std::int64_t int_in(const Json& j, std::int64_t lo, std::int64_t hi);
std::int64_t int_member(const Json& j, const char* key, std::int64_t lo, std::int64_t hi);
/// A finite number.
double real_member(const Json& j, const char* key);
double real_of(const Json& j);
bool bool_member(const Json& j, const char* key);
/// Printable text (db::is_printable).
std::string text_of(const Json& j);
std::string text_member(const Json& j, const char* key);
/// null, or an integer in [0, 2^32).
std::optional<std::uint32_t> u32_or_null(const Json& j, const char* key);
/// An array.
const Json& array_member(const Json& j, const char* key);

}  // namespace fuselens::analyzer::store
