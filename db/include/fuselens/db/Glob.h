#pragma once
// Glob matching as the tools use it for NVTX range and kernel names (prof-analyze --step-range,
// --window range:GLOB; prof-run --steps/--step-range in the collector's NVTX callbacks).

#include <string_view>

namespace fuselens::db {

/// True when `pattern` matches the whole `text`: `*` any run of characters, `?` one character,
/// letters compared ASCII case-insensitively. Iterative (back to the last `*` on a mismatch):
/// O(|pattern| x |text|) at worst, no recursion, no allocation, so hostile patterns (60,000 stars)
/// neither overflow the stack nor allocate; safe in the collector's callbacks.
bool glob_match_nocase(std::string_view pattern, std::string_view text) noexcept;

}  // namespace fuselens::db
