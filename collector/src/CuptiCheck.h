#pragma once
// The collector's check of a CUPTI call whose failure degrades collection: logs
// "CUPTI error in <call text>: <CUPTI's message>" and says whether the call succeeded.
// Never throws.

#include <cupti_result.h>

namespace fuselens::collector {

/// True when `result` is CUPTI_SUCCESS; otherwise logs `call` with CUPTI's error string.
bool cupti_ok(CUptiResult result, const char* call) noexcept;

}  // namespace fuselens::collector

/// Makes a CUPTI call, logs it with its text when it fails, and yields whether it succeeded.
#define FUSELENS_CUPTI_OK(call) ::fuselens::collector::cupti_ok((call), #call)
