#pragma once
// Where the tests find FuseLens's programs: $FUSELENS_BIN_DIR when set (the staged install
// carried to the GPU machine), else the build tree paths compiled in.

#include <cstdlib>
#include <filesystem>
#include <string>

namespace fuselens::test {

inline std::string binary(const std::string& name, const std::string& build_path) {
  if (const char* dir = std::getenv("FUSELENS_BIN_DIR")) return std::string(dir) + "/" + name;
  return build_path;
}

/// A file installed beside the staged programs ($FUSELENS_BIN_DIR/../RELATIVE, e.g.
/// "share/fuselens/workloads/python/x.py"), else `build_path` (the source or build tree's).
inline std::string staged(const std::string& relative, const std::string& build_path) {
  if (const char* dir = std::getenv("FUSELENS_BIN_DIR")) {
    return (std::filesystem::path(dir) / ".." / relative).lexically_normal().string();
  }
  return build_path;
}

}  // namespace fuselens::test
