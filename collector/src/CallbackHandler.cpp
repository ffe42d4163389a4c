#include "CallbackHandler.h"

namespace fuselens::collector {

CallbackHandler::~CallbackHandler() = default;

void CallbackHandler::write_final(CaptureSink&) noexcept {}

}  // namespace fuselens::collector
