// The collector library's only exported symbol. The CUDA driver calls it during cuInit when
// CUDA_INJECTION64_PATH names this library (CUDA injection interface).

#include "Collector.h"

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  // Returning 1 tells the driver the injection succeeded; collection failures are logged and
  // must never fail the host program's cuInit.
  fuselens::collector::Collector::start();
  return 1;
}
