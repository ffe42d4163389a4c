#include "PythonSplice.h"

namespace fuselens::collector {

std::vector<SplicedFrame> splice_python_frames(const std::vector<bool>& native_in_interpreter,
                                               std::size_t python_count) {
  const std::size_t native = native_in_interpreter.size();
  std::vector<SplicedFrame> out;
  out.reserve(native + python_count);
  auto add_native = [&](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i) out.push_back({false, static_cast<std::uint32_t>(i)});
  };
  auto add_python = [&] {
    for (std::size_t i = 0; i < python_count; ++i)
      out.push_back({true, static_cast<std::uint32_t>(i)});
  };
  if (python_count == 0) {
    add_native(0, native);
    return out;
  }
  std::size_t first = native, last = native;
  for (std::size_t i = 0; i < native; ++i) {
    if (!native_in_interpreter[i]) continue;
    if (first == native) first = i;
    last = i;
  }
  if (first == native) {  // no interpreter frame seen: Python frames above the native path
    add_python();
    add_native(0, native);
    return out;
  }
  add_native(0, first);
  add_python();
  add_native(last + 1, native);
  return out;
}

}  // namespace fuselens::collector
