#pragma once
// Where the tests find FuseLens's programs: $FUSELENS_BIN_DIR when set (the staged install
// carried to the GPU machine), else the build tree paths compiled in.

#include <cstdlib>
#include <string>

namespace fuselens::test {

inline std::string binary(const std::string& name, const std::string& build_path) {
  if (const char* dir = std::getenv("FUSELENS_BIN_DIR")) return std::string(dir) + "/" + name;
  return build_path;
}

}  // namespace fuselens::test
