#include "fuselens/db/Strings.h"

#include <utility>

namespace fuselens::db {

const char* kernel_name_column(NameKind kind) {
  switch (kind) {
    case NameKind::Short:
      return "short_name_id";
    case NameKind::Mangled:
      return "mangled_name_id";
    case NameKind::Demangled:
      break;
  }
  return "demangled_name_id";
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
