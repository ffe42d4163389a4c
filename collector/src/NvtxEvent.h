#pragma once
// The NVTX calls that CUPTI's NVTX callback domain reports, decoded into what the collector's
// range tracking needs: CaptureControl's windows and steps, CounterFilter's --nvtx-include.
// ASCII messages only (nvtxRangePushA/StartA and the Ex forms with NVTX_MESSAGE_TYPE_ASCII);
// registered and wide-character messages decode with a null text.

#include <cupti.h>

#include <cstdint>

namespace fuselens::collector {

struct NvtxEvent {
  enum class Kind { kNone, kPush, kPop, kStart, kEnd, kDomainCreate };
  Kind kind = Kind::kNone;
  /// The nvtxDomainHandle_t of a Domain* call; null for the calls of the default domain.
  const void* domain = nullptr;
  /// True for the Domain* calls.
  bool named_domain = false;
  /// Push and Start: the ASCII message (null when it is not ASCII); DomainCreate: the name.
  const char* text = nullptr;
  /// Start: the id nvtxRangeStart* returned (0 when it has not returned); End: the id it ends.
  std::uint64_t range_id = 0;
  /// DomainCreate: the handle nvtxDomainCreateA returned.
  const void* created = nullptr;
};

/// Decodes CUPTI's NVTX callback data (`data`, a CUpti_NvtxData) of callback `id`. kNone for a
/// null `data` or parameters, a domain creation without a name or a returned handle, and the
/// calls no range tracking needs (marks, categories, wide-character forms, ...).
NvtxEvent decode_nvtx(CUpti_CallbackId id, const void* data) noexcept;

}  // namespace fuselens::collector
