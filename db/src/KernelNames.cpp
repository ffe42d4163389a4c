#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "fuselens/db/Writer.h"

namespace fuselens::db {

std::string demangle(const std::string& mangled) {
  if (mangled.rfind("_Z", 0) != 0) return mangled;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), std::free);
  return (status == 0 && out) ? std::string(out.get()) : mangled;
}

namespace {

constexpr std::string_view kAnonymous = "(anonymous namespace)";

// Index of the '(' that opens the parameter list: the first '(' outside template brackets
// that does not start "(anonymous namespace)".
std::size_t parameter_list_start(const std::string& s) {
  int angle = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '<') {
      ++angle;
    } else if (c == '>') {
      if (angle > 0) --angle;
    } else if (c == '(' && angle == 0) {
      if (s.compare(i, kAnonymous.size(), kAnonymous) == 0) {
        i += kAnonymous.size() - 1;
        continue;
      }
      return i;
    }
  }
  return std::string::npos;
}

}  // namespace

std::string short_kernel_name(const std::string& demangled) {
  std::string name = demangled.substr(0, parameter_list_start(demangled));
  // Drop a trailing template argument list.
  while (!name.empty() && name.back() == ' ') name.pop_back();
  if (!name.empty() && name.back() == '>') {
    int depth = 0;
    for (std::size_t i = name.size(); i-- > 0;) {
      if (name[i] == '>') ++depth;
      if (name[i] == '<' && --depth == 0) {
        name.erase(i);
        break;
      }
    }
  }
  // Drop the return type and the qualifying scopes: keep what follows the last top-level
  // space or "::".
  int angle = 0;
  std::size_t cut = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '<')
      ++angle;
    else if (c == '>' && angle > 0)
      --angle;
    else if (angle == 0 && c == ' ' && name.compare(i + 1, 9, "namespace") != 0)
      cut = i + 1;
    else if (angle == 0 && c == ':' && i + 1 < name.size() && name[i + 1] == ':')
      cut = i + 2;
  }
  std::string result = name.substr(cut);
  return result.empty() ? demangled : result;
}

}  // namespace fuselens::db
