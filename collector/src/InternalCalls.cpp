#include "InternalCalls.h"

namespace fuselens::collector {
namespace {

// Set while this thread makes driver calls of its own: their callbacks are ours.
thread_local bool t_internal = false;

}  // namespace

InternalCalls::InternalCalls() noexcept { t_internal = true; }

InternalCalls::~InternalCalls() { t_internal = false; }

bool InternalCalls::active() noexcept { return t_internal; }

}  // namespace fuselens::collector
