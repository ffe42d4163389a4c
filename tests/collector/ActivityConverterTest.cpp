// Synthetic CUPTI records fed to the collector's conversion code: every record kind the
// collector enables, NVTX range pairing and nesting, payloads, and unknown kinds.
#include <gtest/gtest.h>

#include <cstring>

#include "ActivityConverter.h"

using namespace fuselens;
using collector::ActivityConverter;

namespace {

constexpr std::uint32_t kPid = 4242;

ActivityConverter make_converter() {
  return ActivityConverter(kPid, [](db::ApiDomain domain, std::uint32_t cbid) {
    return std::string(domain == db::ApiDomain::Runtime ? "rt" : "drv") + std::to_string(cbid);
  });
}

const CUpti_Activity& as_activity(const void* record) {
  return *static_cast<const CUpti_Activity*>(record);
}

CUpti_ActivityMarker2 marker(std::uint32_t id, CUpti_ActivityFlag flag, std::uint64_t t,
                             std::uint32_t tid, const char* name, const char* domain = nullptr) {
  CUpti_ActivityMarker2 m;
  std::memset(&m, 0, sizeof m);
  m.kind = CUPTI_ACTIVITY_KIND_MARKER;
  m.flags = flag;
  m.timestamp = t;
  m.id = id;
  m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  m.objectId.pt.processId = kPid;
  m.objectId.pt.threadId = tid;
  m.name = name;
  m.domain = domain;
  return m;
}

}  // namespace

TEST(ActivityConverter, ConvertsKernelRecordsFieldByField) {
  CUpti_ActivityKernel10 k;
  std::memset(&k, 0, sizeof k);
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = 1000;
  k.end = 1500;
  k.deviceId = 1;
  k.contextId = 2;
  k.streamId = 13;
  k.correlationId = 77;
  k.gridX = 64;
  k.gridY = 2;
  k.gridZ = 1;
  k.blockX = 256;
  k.blockY = 1;
  k.blockZ = 1;
  k.registersPerThread = 40;
  k.staticSharedMemory = 8192;
  k.dynamicSharedMemory = 1024;
  k.localMemoryPerThread = 16;
  k.name = "_Z4gemmPf";
  auto converter = make_converter();
  db::RecordBatch batch;
  converter.convert(as_activity(&k), batch);
  ASSERT_EQ(batch.kernels.size(), 1u);
  const auto& r = batch.kernels[0];
  EXPECT_EQ(r.pid, kPid);
  EXPECT_EQ(r.start_ns, 1000u);
  EXPECT_EQ(r.end_ns, 1500u);
  EXPECT_EQ(r.device_id, 1u);
  EXPECT_EQ(r.context_id, 2u);
  EXPECT_EQ(r.stream_id, 13u);
  EXPECT_EQ(r.correlation_id, 77u);
  EXPECT_EQ(r.grid_x * r.grid_y * r.grid_z, 128);
  EXPECT_EQ(r.block_x, 256);
  EXPECT_EQ(r.registers_per_thread, 40u);
  EXPECT_EQ(r.static_shared_bytes, 8192);
  EXPECT_EQ(r.dynamic_shared_bytes, 1024);
  EXPECT_EQ(r.local_memory_per_thread, 16u);
  EXPECT_EQ(r.mangled_name, "_Z4gemmPf");
  EXPECT_FALSE(r.graph_id.has_value());

  k.graphId = 5;
  k.graphNodeId = 900;
  converter.convert(as_activity(&k), batch);
  EXPECT_EQ(batch.kernels[1].graph_id, 5u);
  EXPECT_EQ(batch.kernels[1].graph_node_id, 900u);
}

TEST(ActivityConverter, ConvertsCopiesMemsetsAndMemoryEvents) {
  CUpti_ActivityMemcpy6 m;
  std::memset(&m, 0, sizeof m);
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
  m.bytes = 1 << 20;
  m.start = 10;
  m.end = 30;
  m.correlationId = 3;

  CUpti_ActivityMemset4 s;
  std::memset(&s, 0, sizeof s);
  s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  s.bytes = 4096;
  s.value = 0xFF;
  s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;

  CUpti_ActivityMemory4 a;
  std::memset(&a, 0, sizeof a);
  a.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  a.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  a.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  a.address = 0x7000;
  a.bytes = 1 << 20;
  a.timestamp = 5;
  a.deviceId = 0;

  auto converter = make_converter();
  db::RecordBatch batch;
  converter.convert(as_activity(&m), batch);
  converter.convert(as_activity(&s), batch);
  converter.convert(as_activity(&a), batch);
  a.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
  converter.convert(as_activity(&a), batch);
  a.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_INVALID;
  converter.convert(as_activity(&a), batch);

  ASSERT_EQ(batch.memcpys.size(), 1u);
  EXPECT_EQ(batch.memcpys[0].copy_kind, db::MemcpyKind::HostToDevice);
  EXPECT_EQ(batch.memcpys[0].src_kind, db::MemoryKind::Pageable);
  EXPECT_EQ(batch.memcpys[0].dst_kind, db::MemoryKind::Device);
  EXPECT_TRUE(batch.memcpys[0].is_async);
  EXPECT_EQ(batch.memcpys[0].bytes, 1u << 20);
  ASSERT_EQ(batch.memsets.size(), 1u);
  EXPECT_EQ(batch.memsets[0].value, 0xFFu);
  EXPECT_FALSE(batch.memsets[0].is_async);
  ASSERT_EQ(batch.memory_events.size(), 2u);
  EXPECT_EQ(batch.memory_events[0].operation, db::MemoryOperation::Allocation);
  EXPECT_EQ(batch.memory_events[1].operation, db::MemoryOperation::Release);
  EXPECT_EQ(converter.skipped_records(), 1u);
}

// Copies between two devices come as CUPTI_ACTIVITY_KIND_MEMCPY2 records (dropped before: the
// kind was not converted, so a peer copy never reached the capture).
TEST(ActivityConverter, ConvertsPeerToPeerCopies) {
  CUpti_ActivityMemcpyPtoP4 p;
  std::memset(&p, 0, sizeof p);
  p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  p.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  p.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
  p.bytes = 4 << 20;
  p.start = 100;
  p.end = 180;
  p.deviceId = 1;
  p.srcDeviceId = 1;
  p.dstDeviceId = 0;
  p.streamId = 13;
  p.correlationId = 9;
  auto converter = make_converter();
  db::RecordBatch batch;
  converter.convert(as_activity(&p), batch);
  p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN;  // the kind itself says peer to peer
  converter.convert(as_activity(&p), batch);
  ASSERT_EQ(batch.memcpys.size(), 2u);
  for (const auto& m : batch.memcpys) {
    EXPECT_EQ(m.copy_kind, db::MemcpyKind::PeerToPeer);
    EXPECT_EQ(m.device_id, 1u);
    EXPECT_EQ(m.stream_id, 13u);
    EXPECT_EQ(m.correlation_id, 9u);
    EXPECT_EQ(m.bytes, 4u << 20);
    EXPECT_EQ(m.start_ns, 100u);
    EXPECT_EQ(m.end_ns, 180u);
    EXPECT_TRUE(m.is_async);
  }
  EXPECT_EQ(converter.skipped_records(), 0u);
}

TEST(ActivityConverter, NamesApiCallsOncePerCallbackAndRecordsTheirThreads) {
  int resolved = 0;
  ActivityConverter converter(kPid, [&](db::ApiDomain, std::uint32_t cbid) {
    ++resolved;
    return "api" + std::to_string(cbid);
  });
  CUpti_ActivityAPI api;
  std::memset(&api, 0, sizeof api);
  api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  api.cbid = 211;
  api.start = 100;
  api.end = 104;
  api.processId = kPid;
  api.threadId = 99;
  api.correlationId = 8;
  api.returnValue = 0;
  db::RecordBatch batch;
  converter.convert(as_activity(&api), batch);
  converter.convert(as_activity(&api), batch);
  api.kind = CUPTI_ACTIVITY_KIND_DRIVER;
  api.threadId = 100;
  converter.convert(as_activity(&api), batch);
  ASSERT_EQ(batch.api_calls.size(), 3u);
  EXPECT_EQ(batch.api_calls[0].name, "api211");
  EXPECT_EQ(batch.api_calls[0].domain, db::ApiDomain::Runtime);
  EXPECT_EQ(batch.api_calls[2].domain, db::ApiDomain::Driver);
  EXPECT_EQ(batch.api_calls[0].correlation_id, 8u);
  EXPECT_EQ(resolved, 2);  // once per (domain, callback id)
  EXPECT_EQ(converter.threads().size(), 2u);
}

TEST(ActivityConverter, PairsNestedNvtxRangesPerThreadWithDepthAndPayload) {
  auto converter = make_converter();
  db::RecordBatch batch;
  auto outer = marker(1, CUPTI_ACTIVITY_FLAG_MARKER_START, 100, 7, "outer");
  auto inner = marker(2, CUPTI_ACTIVITY_FLAG_MARKER_START, 110, 7, "inner", "mydomain");
  auto other = marker(3, CUPTI_ACTIVITY_FLAG_MARKER_START, 115, 8, "other thread");
  CUpti_ActivityMarkerData2 data;
  std::memset(&data, 0, sizeof data);
  data.kind = CUPTI_ACTIVITY_KIND_MARKER_DATA;
  data.id = 1;
  data.payloadKind = CUPTI_METRIC_VALUE_KIND_UINT64;
  data.payload.metricValueUint64 = 50;
  data.color = 0xFF00FF00;
  data.category = 3;
  converter.convert(as_activity(&outer), batch);
  converter.convert(as_activity(&data), batch);
  converter.convert(as_activity(&inner), batch);
  converter.convert(as_activity(&other), batch);
  auto inner_end = marker(2, CUPTI_ACTIVITY_FLAG_MARKER_END, 120, 7, nullptr);
  auto outer_end = marker(1, CUPTI_ACTIVITY_FLAG_MARKER_END, 130, 7, nullptr);
  converter.convert(as_activity(&inner_end), batch);
  converter.convert(as_activity(&outer_end), batch);
  EXPECT_TRUE(batch.nvtx_ranges.empty());  // released by finish_batch
  converter.finish_batch(batch);
  ASSERT_EQ(batch.nvtx_ranges.size(), 2u);
  const auto& in = batch.nvtx_ranges[0];
  const auto& out = batch.nvtx_ranges[1];
  EXPECT_EQ(in.text, "inner");
  EXPECT_EQ(in.domain, "mydomain");
  EXPECT_EQ(in.depth, 1u);
  EXPECT_EQ(in.start_ns, 110u);
  EXPECT_EQ(in.end_ns, 120u);
  EXPECT_EQ(out.text, "outer");
  EXPECT_EQ(out.depth, 0u);
  EXPECT_EQ(out.tid, 7u);
  EXPECT_EQ(out.payload_kind, db::PayloadKind::UInt64);
  EXPECT_EQ(out.payload_int, 50);
  EXPECT_EQ(out.color, 0xFF00FF00u);
  EXPECT_EQ(out.category, 3u);
  EXPECT_EQ(in.payload_kind, db::PayloadKind::None);

  // The range on thread 8 never ended: it is kept, without an end, at process end.
  converter.flush_open_ranges(batch);
  ASSERT_EQ(batch.nvtx_ranges.size(), 3u);
  EXPECT_EQ(batch.nvtx_ranges[2].text, "other thread");
  EXPECT_EQ(batch.nvtx_ranges[2].depth, 0u);
  EXPECT_FALSE(batch.nvtx_ranges[2].end_ns.has_value());
}

TEST(ActivityConverter, CountsEndMarkersWithoutStartAndKeepsMarks) {
  auto converter = make_converter();
  db::RecordBatch batch;
  auto stray = marker(9, CUPTI_ACTIVITY_FLAG_MARKER_END, 10, 1, nullptr);
  auto mark = marker(10, CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 20, 1, "checkpoint");
  CUpti_ActivityMarkerData2 data;
  std::memset(&data, 0, sizeof data);
  data.kind = CUPTI_ACTIVITY_KIND_MARKER_DATA;
  data.id = 10;
  data.payloadKind = CUPTI_METRIC_VALUE_KIND_DOUBLE;
  data.payload.metricValueDouble = 0.25;
  converter.convert(as_activity(&stray), batch);
  converter.convert(as_activity(&mark), batch);
  converter.convert(as_activity(&data), batch);
  converter.finish_batch(batch);
  EXPECT_EQ(converter.unmatched_range_ends(), 1u);
  ASSERT_EQ(batch.nvtx_marks.size(), 1u);
  EXPECT_EQ(batch.nvtx_marks[0].text, "checkpoint");
  EXPECT_EQ(batch.nvtx_marks[0].payload_kind, db::PayloadKind::Double);
  EXPECT_DOUBLE_EQ(batch.nvtx_marks[0].payload_real, 0.25);
}

TEST(ActivityConverter, ConvertsSyncAndOverheadAndSkipsUnknownKinds) {
  CUpti_ActivitySynchronization2 s;
  std::memset(&s, 0, sizeof s);
  s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  s.start = 1;
  s.end = 9;
  s.streamId = 4;
  s.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  CUpti_ActivityOverhead3 o;
  std::memset(&o, 0, sizeof o);
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
  o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  o.objectId.pt.threadId = 55;
  o.start = 3;
  o.end = 4;
  CUpti_ActivityAPI unknown;
  std::memset(&unknown, 0, sizeof unknown);
  unknown.kind = CUPTI_ACTIVITY_KIND_NAME;
  auto converter = make_converter();
  db::RecordBatch batch;
  converter.convert(as_activity(&s), batch);
  converter.convert(as_activity(&o), batch);
  converter.convert(as_activity(&unknown), batch);
  ASSERT_EQ(batch.syncs.size(), 1u);
  EXPECT_EQ(batch.syncs[0].type, db::SyncType::StreamSynchronize);
  EXPECT_EQ(batch.syncs[0].stream_id, 4u);
  EXPECT_EQ(batch.syncs[0].cuda_event_id, 0u);
  ASSERT_EQ(batch.overheads.size(), 1u);
  EXPECT_EQ(batch.overheads[0].overhead_kind, 2u);  // "CUPTI buffer flush" in enum_overhead_kind
  EXPECT_EQ(batch.overheads[0].object_id, 55u);
  EXPECT_EQ(converter.skipped_records(), 1u);
}

TEST(ActivityConverter, RuntimeApiNamesLoseCuptisVersionSuffix) {
  EXPECT_EQ(collector::runtime_api_display_name("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
  EXPECT_EQ(collector::runtime_api_display_name("cudaMalloc_v3020"), "cudaMalloc");
  EXPECT_EQ(collector::runtime_api_display_name("cudaGraphLaunch"), "cudaGraphLaunch");
  EXPECT_EQ(collector::runtime_api_display_name("cudaFoo_vX"), "cudaFoo_vX");
  EXPECT_EQ(collector::runtime_api_display_name("cudaBar_v"), "cudaBar_v");
}
