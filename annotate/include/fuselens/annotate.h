#pragma once
// fuselens/annotate.h: declare the work of an NVTX range, for `prof-analyze roofline`.
// Header-only (NVTX v3, target fuselens::annotate); without a tool attached the calls cost an
// NVTX no-op each.
//
//   fuselens::annotate::declare_work(flops, bytes);            // inside an open NVTX range
//   { fuselens::annotate::ScopedWork w("gemm", flops, bytes); ... launches ... }
//
// declare_work emits one NVTX mark in domain "fuselens" with the ASCII message
//   "fuselens:work flops=<F> bytes=<B> precision=<P>"
// F: floating-point operations (an FMA counts 2), B: the bytes the work must move through
// device memory at least (each input read once, each output written once), P: fp64, fp32, fp16
// (non-tensor half) or tensor. The analyzer attaches the mark to the innermost NVTX range open
// on the same thread at that moment and counts it in every range around that one too; marks
// add up, so declare once per range with the totals, or once per iteration. Mixed precisions:
// one mark per precision (bytes=0 on all but one).

#include <nvtx3/nvToolsExt.h>

#include <cstdio>

namespace fuselens::annotate {

enum class Precision { fp64, fp32, fp16, tensor };

inline const char* precision_name(Precision p) {
  switch (p) {
    case Precision::fp64: return "fp64";
    case Precision::fp16: return "fp16";
    case Precision::tensor: return "tensor";
    case Precision::fp32: break;
  }
  return "fp32";
}

/// The NVTX domain of FuseLens annotations (created once per process).
inline nvtxDomainHandle_t domain() {
  static const nvtxDomainHandle_t handle = nvtxDomainCreateA("fuselens");
  return handle;
}

/// Declares `flops` FLOPs of `precision` and `bytes` compulsory device-memory bytes for the
/// innermost NVTX range open on the calling thread. Values are written as whole numbers.
inline void declare_work(double flops, double bytes, Precision precision = Precision::fp32) {
  char message[160];
  std::snprintf(message, sizeof message, "fuselens:work flops=%.0f bytes=%.0f precision=%s",
                flops < 0 ? 0.0 : flops, bytes < 0 ? 0.0 : bytes, precision_name(precision));
  nvtxEventAttributes_t attributes{};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attributes.message.ascii = message;  // copied by the tool during the call
  nvtxDomainMarkEx(domain(), &attributes);
}

/// Pushes an NVTX range named `name` (default domain), declares its work, pops it at scope exit.
class ScopedWork {
 public:
  ScopedWork(const char* name, double flops, double bytes, Precision precision = Precision::fp32) {
    nvtxRangePushA(name);
    declare_work(flops, bytes, precision);
  }
  ScopedWork(const ScopedWork&) = delete;
  ScopedWork& operator=(const ScopedWork&) = delete;
  ~ScopedWork() { nvtxRangePop(); }
};

}  // namespace fuselens::annotate
