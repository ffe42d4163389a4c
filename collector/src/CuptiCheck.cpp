#include "CuptiCheck.h"

#include "Log.h"

namespace fuselens::collector {

bool cupti_ok(CUptiResult result, const char* call) noexcept {
  if (result == CUPTI_SUCCESS) return true;
  const char* message = nullptr;
  cuptiGetResultString(result, &message);
  log("CUPTI error in {}: {}", call, message ? message : "unknown");
  return false;
}

}  // namespace fuselens::collector
