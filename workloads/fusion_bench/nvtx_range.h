#pragma once
// NvtxRange: RAII push/pop of one NVTX range with a uint64 payload (header-only, NVTX v3).
//
// The range carries message type NVTX_MESSAGE_TYPE_ASCII and payload type
// NVTX_PAYLOAD_TYPE_UNSIGNED_INT64; fusion_bench stores the number of iterations run inside it.
// Without a tool attached (no NVTX_INJECTION64_PATH) the calls are near no-ops. Never throws.

#include <nvtx3/nvToolsExt.h>

#include <cstdint>
#include <string>

namespace fuselens::workloads {

class NvtxRange {
 public:
  NvtxRange(const std::string& name, std::uint64_t payload) {
    nvtxEventAttributes_t attributes{};
    attributes.version = NVTX_VERSION;
    attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attributes.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    attributes.payload.ullValue = payload;
    attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attributes.message.ascii = name.c_str();  // copied by the tool during the call
    nvtxRangePushEx(&attributes);
  }

  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;

  ~NvtxRange() { nvtxRangePop(); }
};

}  // namespace fuselens::workloads
