#pragma once
// FuseLens's own NVTX instrumentation: the texts its Python side emits in the default NVTX domain
// (tools/prof-run/python; docs/calling-context.md, "Modules"). User-facing NVTX views (the NVTX
// summary, steps' range patterns, compare's range globs, --window range:GLOB, the flags rules'
// enclosing range) leave them out with is_fuselens_instrumentation, the one place that says
// what they are; the module view reads them.

#include <string_view>

namespace fuselens::db {

/// Every FuseLens instrumentation text starts with this.
inline constexpr std::string_view kInstrumentationPrefix = "fuselens:";
/// Range around one nn.Module call's forward: "fuselens:module:fwd:<module path>".
inline constexpr std::string_view kModuleForwardPrefix = "fuselens:module:fwd:";
/// Range around one autograd node claimed by a module: "fuselens:module:bwd:<module path>".
inline constexpr std::string_view kModuleBackwardPrefix = "fuselens:module:bwd:";
/// Mark naming one nn.Module instance for the module frames (schema 9):
/// "fuselens:module:name:<address in hex>:<class>:<module path>".
inline constexpr std::string_view kModuleNamePrefix = "fuselens:module:name:";

/// True for a range or mark text FuseLens's instrumentation emitted (prefix "fuselens:", case
/// sensitive). Texts of the "fuselens" NVTX domain (work annotations, annotate/) are told apart
/// by their domain, not by this.
constexpr bool is_fuselens_instrumentation(std::string_view text) noexcept {
  return text.substr(0, kInstrumentationPrefix.size()) == kInstrumentationPrefix;
}

}  // namespace fuselens::db
