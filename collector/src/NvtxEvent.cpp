#include "NvtxEvent.h"

#include <generated_nvtx_meta.h>
#include <nvtx3/nvToolsExt.h>

namespace fuselens::collector {
namespace {

const char* ascii_message(const nvtxEventAttributes_t* a) {
  if (!a || a->messageType != NVTX_MESSAGE_TYPE_ASCII) return nullptr;
  return a->message.ascii;
}

}  // namespace

NvtxEvent decode_nvtx(CUpti_CallbackId id, const void* data) noexcept {
  NvtxEvent e;
  if (!data) return e;
  const auto& nvtx = *static_cast<const CUpti_NvtxData*>(data);
  const void* p = nvtx.functionParams;
  if (!p) return e;
  const auto returned_id = [&] {
    return nvtx.functionReturnValue ? static_cast<std::uint64_t>(*static_cast<const nvtxRangeId_t*>(
                                          nvtx.functionReturnValue))
                                    : 0;
  };
  using K = NvtxEvent::Kind;
  switch (id) {
    case CUPTI_CBID_NVTX_nvtxRangePushA:
      e.kind = K::kPush;
      e.text = static_cast<const nvtxRangePushA_params*>(p)->message;
      break;
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
      e.kind = K::kPush;
      e.text = ascii_message(static_cast<const nvtxRangePushEx_params*>(p)->eventAttrib);
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
      const auto* q = static_cast<const nvtxDomainRangePushEx_params*>(p);
      e.kind = K::kPush;
      e.domain = q->domain;
      e.named_domain = true;
      e.text = ascii_message(q->core.eventAttrib);
      break;
    }
    case CUPTI_CBID_NVTX_nvtxRangePop:
      e.kind = K::kPop;
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangePop:
      e.kind = K::kPop;
      e.domain = static_cast<const nvtxDomainRangePop_params*>(p)->domain;
      e.named_domain = true;
      break;
    case CUPTI_CBID_NVTX_nvtxRangeStartA:
      e.kind = K::kStart;
      e.text = static_cast<const nvtxRangeStartA_params*>(p)->message;
      e.range_id = returned_id();
      break;
    case CUPTI_CBID_NVTX_nvtxRangeStartEx:
      e.kind = K::kStart;
      e.text = ascii_message(static_cast<const nvtxRangeStartEx_params*>(p)->eventAttrib);
      e.range_id = returned_id();
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx: {
      const auto* q = static_cast<const nvtxDomainRangeStartEx_params*>(p);
      e.kind = K::kStart;
      e.domain = q->domain;
      e.named_domain = true;
      e.text = ascii_message(q->core.eventAttrib);
      e.range_id = returned_id();
      break;
    }
    case CUPTI_CBID_NVTX_nvtxRangeEnd:
      e.kind = K::kEnd;
      e.range_id = static_cast<std::uint64_t>(static_cast<const nvtxRangeEnd_params*>(p)->id);
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangeEnd: {
      const auto* q = static_cast<const nvtxDomainRangeEnd_params*>(p);
      e.kind = K::kEnd;
      e.domain = q->domain;
      e.named_domain = true;
      e.range_id = static_cast<std::uint64_t>(q->core.id);
      break;
    }
    case CUPTI_CBID_NVTX_nvtxDomainCreateA: {
      const char* name = static_cast<const nvtxDomainCreateA_params*>(p)->name;
      if (!name || !nvtx.functionReturnValue) break;
      e.kind = K::kDomainCreate;
      e.text = name;
      e.created = *static_cast<const nvtxDomainHandle_t*>(nvtx.functionReturnValue);
      break;
    }
    default:
      break;
  }
  return e;
}

}  // namespace fuselens::collector
