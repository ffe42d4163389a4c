#pragma once
// The stored form of a flags report (AnalysisStore.h): every field of FlagsReport but its path
// and its window's steps (which the reader takes from the window it resolves), as JSON. Private
// to analyzer/store.

#include "flags/Flags.h"
#include "store/StoredJson.h"

namespace fuselens::analyzer::store {

/// `report` as JSON; NaN or infinite metrics become null (and are refused when read back).
Json flags_to_json(const FlagsReport& report);
/// The report stored as `j`, with `steps` as its window's steps (their count must be the stored
/// one). Throws BadStore for anything a stored report cannot hold.
FlagsReport flags_from_json(const Json& j, const std::vector<Step>& steps);

}  // namespace fuselens::analyzer::store
