#include "fuselens/db/Strings.h"

#include <iterator>
#include <utility>

namespace fuselens::db {

const char* kernel_name_column(NameKind kind) {
  // In NameKind's order; a value outside it reads as Demangled.
  constexpr const char* kColumns[] = {"demangled_name_id", "short_name_id", "mangled_name_id"};
  const auto i = static_cast<std::size_t>(kind);
  return i < std::size(kColumns) ? kColumns[i] : kColumns[0];
}

StringLookup::StringLookup(const Reader& reader)
    : select_(reader.prepare("SELECT value FROM strings WHERE id = ?")) {}

StringCache::StringCache(const Reader& reader, std::string missing)
    : reader_(reader), lookup_(reader), missing_(std::move(missing)) {}

const std::string& StringCache::get(std::int64_t id) {
  if (auto it = values_.find(id); it != values_.end()) return it->second;
  if (all_) return missing_;
  std::string value = missing_;
  lookup_.with(id, [&](std::string text) { value = std::move(text); });
  return values_.emplace(id, std::move(value)).first->second;
}

void StringCache::load_all() {
  auto s = reader_.prepare("SELECT id, value FROM strings");
  while (s.step()) values_.emplace(s.int64(0), s.text(1));
  all_ = true;
}

}  // namespace fuselens::db
