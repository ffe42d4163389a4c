#include "CaptureSink.h"

namespace fuselens::collector {

CaptureSink::~CaptureSink() = default;

}  // namespace fuselens::collector
