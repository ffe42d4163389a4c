#pragma once
// Strings: the capture's string table (`strings`: id -> value, values unique) and which kernel
// name column a kernel query groups by. Every name the analyses print comes through here.

#include <cstdint>
#include <string>
#include <unordered_map>

#include "fuselens/db/Reader.h"
#include "fuselens/db/Sqlite.h"

namespace fuselens::db {

/// Which of the three names a capture stores for each kernel is used to group kernels.
enum class NameKind {
  Demangled,  ///< "void ns::gemm<64>(float*, int)" (the default, as nsys stats)
  Short,      ///< "gemm": the bare function name (Nsight Systems' shortName); merges overloads
  Mangled,    ///< "_ZN2ns4gemmILi64EEvPfi" as the driver reports it
};

/// The kernel table's column of string ids for `kind`: demangled_name_id, short_name_id or
/// mangled_name_id.
const char* kernel_name_column(NameKind kind);

/// Looks up string ids one at a time with one prepared statement; nothing is kept.
class StringLookup {
 public:
  explicit StringLookup(const Reader& reader);
  /// Calls `found(value)` and returns true when the capture has string `id`; false otherwise.
  template <typename F>
  bool with(std::int64_t id, F&& found) {
    select_.bind(1, id);
    const bool hit = select_.step();
    if (hit) found(select_.text(0));
    select_.reset();
    return hit;
  }

 private:
  Statement select_;
};

/// The strings of a capture by id, each looked up once and kept (the analyses ask for the same
/// few hundred names many times). An id the capture lacks reads as `missing`.
class StringCache {
 public:
  explicit StringCache(const Reader& reader, std::string missing = std::string());
  /// The value of string `id`, or the `missing` text when the capture has none. The reference
  /// stays valid while the cache lives.
  const std::string& get(std::int64_t id);
  /// Every string of the capture, read in one scan (for an analysis that needs most of them).
  void load_all();

 private:
  const Reader& reader_;
  StringLookup lookup_;
  std::string missing_;
  std::unordered_map<std::int64_t, std::string> values_;
  bool all_ = false;
};

}  // namespace fuselens::db
