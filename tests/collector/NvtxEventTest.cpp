// decode_nvtx: CUPTI's NVTX callback data as the range tracking of CaptureControl and
// CounterFilter reads it (collector/src/NvtxEvent.h).
#include <generated_nvtx_meta.h>
#include <gtest/gtest.h>
#include <nvtx3/nvToolsExt.h>

#include "NvtxEvent.h"

namespace fuselens::collector {
namespace {

using K = NvtxEvent::Kind;

CUpti_NvtxData callback(const void* params, void* returned = nullptr) {
  CUpti_NvtxData data{};
  data.functionName = "nvtx";
  data.functionParams = params;
  data.functionReturnValue = returned;
  return data;
}

nvtxEventAttributes_t attributes(const char* ascii) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = ascii;
  return a;
}

TEST(NvtxEvent, PushesAndPopsOfBothDomainKinds) {
  const nvtxRangePushA_params push_a{"step"};
  auto data = callback(&push_a);
  NvtxEvent e = decode_nvtx(CUPTI_CBID_NVTX_nvtxRangePushA, &data);
  EXPECT_EQ(e.kind, K::kPush);
  EXPECT_STREQ(e.text, "step");
  EXPECT_EQ(e.domain, nullptr);
  EXPECT_FALSE(e.named_domain);

  const nvtxEventAttributes_t attr = attributes("forward");
  auto* domain = reinterpret_cast<nvtxDomainHandle_t>(0x1234);
  const nvtxDomainRangePushEx_params push_d{domain, {&attr}};
  data = callback(&push_d);
  e = decode_nvtx(CUPTI_CBID_NVTX_nvtxDomainRangePushEx, &data);
  EXPECT_EQ(e.kind, K::kPush);
  EXPECT_STREQ(e.text, "forward");
  EXPECT_EQ(e.domain, domain);
  EXPECT_TRUE(e.named_domain);

  const nvtxDomainRangePop_params pop_d{domain};
  data = callback(&pop_d);
  e = decode_nvtx(CUPTI_CBID_NVTX_nvtxDomainRangePop, &data);
  EXPECT_EQ(e.kind, K::kPop);
  EXPECT_EQ(e.domain, domain);

  const int no_params = 0;  // nvtxRangePop has none; CUPTI still passes a pointer
  data = callback(&no_params);
  e = decode_nvtx(CUPTI_CBID_NVTX_nvtxRangePop, &data);
  EXPECT_EQ(e.kind, K::kPop);
  EXPECT_EQ(e.domain, nullptr);
}

TEST(NvtxEvent, StartEndCarryTheRangeIdAndNonAsciiMessagesHaveNoText) {
  nvtxEventAttributes_t attr = attributes("window");
  const nvtxRangeStartEx_params start{&attr};
  nvtxRangeId_t returned = 42;
  auto data = callback(&start, &returned);
  NvtxEvent e = decode_nvtx(CUPTI_CBID_NVTX_nvtxRangeStartEx, &data);
  EXPECT_EQ(e.kind, K::kStart);
  EXPECT_STREQ(e.text, "window");
  EXPECT_EQ(e.range_id, 42u);

  data = callback(&start);  // the entry callback: nothing returned yet
  EXPECT_EQ(decode_nvtx(CUPTI_CBID_NVTX_nvtxRangeStartEx, &data).range_id, 0u);

  attr.messageType = NVTX_MESSAGE_TYPE_UNICODE;
  data = callback(&start, &returned);
  e = decode_nvtx(CUPTI_CBID_NVTX_nvtxRangeStartEx, &data);
  EXPECT_EQ(e.kind, K::kStart);
  EXPECT_EQ(e.text, nullptr);

  const nvtxDomainRangeEnd_params end_d{reinterpret_cast<nvtxDomainHandle_t>(0x99), {7}};
  data = callback(&end_d);
  e = decode_nvtx(CUPTI_CBID_NVTX_nvtxDomainRangeEnd, &data);
  EXPECT_EQ(e.kind, K::kEnd);
  EXPECT_EQ(e.range_id, 7u);
  EXPECT_TRUE(e.named_domain);
}

TEST(NvtxEvent, DomainCreationNeedsANameAndAHandleAndOtherCallsAreNone) {
  const nvtxDomainCreateA_params create{"app"};
  nvtxDomainHandle_t handle = reinterpret_cast<nvtxDomainHandle_t>(0x77);
  auto data = callback(&create, &handle);
  NvtxEvent e = decode_nvtx(CUPTI_CBID_NVTX_nvtxDomainCreateA, &data);
  EXPECT_EQ(e.kind, K::kDomainCreate);
  EXPECT_STREQ(e.text, "app");
  EXPECT_EQ(e.created, handle);

  data = callback(&create);  // not returned yet
  EXPECT_EQ(decode_nvtx(CUPTI_CBID_NVTX_nvtxDomainCreateA, &data).kind, K::kNone);
  const nvtxDomainCreateA_params unnamed{nullptr};
  data = callback(&unnamed, &handle);
  EXPECT_EQ(decode_nvtx(CUPTI_CBID_NVTX_nvtxDomainCreateA, &data).kind, K::kNone);

  const nvtxMarkA_params mark{"m"};
  data = callback(&mark);
  EXPECT_EQ(decode_nvtx(CUPTI_CBID_NVTX_nvtxMarkA, &data).kind, K::kNone);
  EXPECT_EQ(decode_nvtx(CUPTI_CBID_NVTX_nvtxRangePushA, nullptr).kind, K::kNone);
  data = callback(nullptr);
  EXPECT_EQ(decode_nvtx(CUPTI_CBID_NVTX_nvtxRangePushA, &data).kind, K::kNone);
}

}  // namespace
}  // namespace fuselens::collector
