#pragma once
// Symbolizer: turns return addresses of this process into frames (module path and offset,
// demangled function, source file and line) with elfutils' libdwfl, once per distinct address at
// the end of the run. A return address points after the call, so lookups use address - 1.

#include <cstdint>
#include <vector>

#include "fuselens/db/Records.h"

namespace fuselens::collector {

/// One FrameInfo per address, in order. Never throws: what cannot be resolved stays empty.
std::vector<db::FrameInfo> symbolize(const std::vector<std::uintptr_t>& return_addresses) noexcept;

}  // namespace fuselens::collector
