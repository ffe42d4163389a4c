// sync_memcpy, async_pageable, sync_memset, sync_api: Nsight Systems' CUDA API rules. Time at
// stake of a blocking operation is the duration of the API call that issued it (how long the
// host thread was blocked) when that call is in the capture, else the operation's GPU duration.
#include <fmt/format.h>
#include <algorithm>
#include <array>
#include <map>
#include <string_view>
#include <utility>
#include <vector>

#include "flags/FlagsRules.h"
#include "summary/SummaryFormat.h"

namespace fuselens::analyzer {
namespace {

/// Host-blocking synchronization calls (runtime and driver), by base name.
constexpr std::array<std::string_view, 7> kSyncCalls{
    "cudaDeviceSynchronize", "cudaThreadSynchronize", "cudaStreamSynchronize",
    "cudaEventSynchronize",  "cuCtxSynchronize",      "cuStreamSynchronize",
    "cuEventSynchronize"};

bool is_sync_call(std::string_view base_name) {
  return std::find(kSyncCalls.begin(), kSyncCalls.end(), base_name) != kSyncCalls.end();
}

bool within_one_device(db::MemcpyKind kind) {
  using K = db::MemcpyKind;
  return kind == K::DeviceToDevice || kind == K::ArrayToArray || kind == K::ArrayToDevice ||
         kind == K::DeviceToArray;
}

bool pinned_or_managed(db::MemoryKind kind) {
  using K = db::MemoryKind;
  return kind == K::Pinned || kind == K::Managed || kind == K::ManagedStatic;
}

std::int64_t blocked_ns(const FlagsTrace& trace, const TraceOp& op) {
  const TraceCall* call = trace.launch_call(op);
  return call != nullptr ? call->end_ns - call->start_ns : op.duration_ns();
}

void add_copy(HitAggregator& agg, const FlagsTrace& trace, const TraceOp& op,
              std::int64_t time_ns) {
  Hit& h = agg.add(op_site(trace, op), time_ns, op.start_ns);
  h.add_metric("bytes", static_cast<double>(op.bytes));
  h.add_metric("gpu_ns", static_cast<double>(op.duration_ns()));
}

/// Start times of the kernel launch calls of each (pid, tid), sorted.
std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::int64_t>> kernel_launches(
    const FlagsTrace& trace) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::int64_t>> launches;
  for (const TraceOp& op : trace.ops) {
    const TraceCall* call = trace.launch_call(op);
    if (op.kind == OpKind::Kernel && call != nullptr) {
      launches[{call->pid, call->tid}].push_back(call->start_ns);
    }
  }
  for (auto& [thread, starts] : launches) std::sort(starts.begin(), starts.end());
  return launches;
}

/// True when `starts` has a value before `start` and one after `end`.
bool between(const std::vector<std::int64_t>& starts, std::int64_t start, std::int64_t end) {
  return !starts.empty() && starts.front() < start && starts.back() > end;
}

const char* sync_type_name(db::SyncType type) {
  switch (type) {
    case db::SyncType::EventSynchronize:
      return "Event synchronize";
    case db::SyncType::StreamWaitEvent:
      return "Stream wait event";
    case db::SyncType::StreamSynchronize:
      return "Stream synchronize";
    case db::SyncType::ContextSynchronize:
      return "Context synchronize";
    case db::SyncType::Unknown:
      break;
  }
  return "Unknown";
}

void sync_api(const FlagsTrace& trace, std::vector<Hit>& hits) {
  const auto launches = kernel_launches(trace);
  const auto thread_between = [&](const TraceCall& call) {
    const auto it = launches.find({call.pid, call.tid});
    return it != launches.end() && between(it->second, call.start_ns, call.end_ns);
  };
  HitAggregator agg("sync_api");
  for (const TraceCall& call : trace.calls) {
    if (!is_sync_call(call.base_name)) continue;
    if (call.range < 0 && !thread_between(call)) continue;
    agg.add(call_site(trace, call, std::string(call.base_name)), call.end_ns - call.start_ns,
            call.start_ns);
  }
  // sync_event records: those of a synchronization call are counted with it; the others name
  // their call when it is in the capture, else the record's type (no thread known).
  std::map<std::uint32_t, std::vector<std::int64_t>> process_kernels;
  for (const TraceOp& op : trace.ops) {
    if (op.kind == OpKind::Kernel) process_kernels[op.pid].push_back(op.start_ns);
  }
  for (const TraceSync& s : trace.syncs) {
    if (s.type == db::SyncType::StreamWaitEvent) continue;  // does not block the host
    if (s.call >= 0) {
      const TraceCall& call = trace.calls[static_cast<std::size_t>(s.call)];
      if (is_sync_call(call.base_name)) continue;
      if (call.range < 0 && !thread_between(call)) continue;
      agg.add(call_site(trace, call, std::string(call.base_name)), s.end_ns - s.start_ns,
              s.start_ns);
      continue;
    }
    const auto it = process_kernels.find(s.pid);
    if (it == process_kernels.end() || !between(it->second, s.start_ns, s.end_ns)) continue;
    HitSite site;
    site.subject = std::string("[sync: ") + sync_type_name(s.type) + "]";
    site.pid = s.pid;
    if (s.stream_id != 0) site.stream_id = s.stream_id;
    agg.add(site, s.end_ns - s.start_ns, s.start_ns);
  }
  for (Hit& h : agg.take()) {
    h.detail = fmt::format(
        "{} calls blocked the host for {} in total (mean {}){}", h.count,
        flags_duration(static_cast<double>(h.time_ns)),
        flags_duration(static_cast<double>(h.time_ns) /
                       static_cast<double>(std::max<std::int64_t>(h.count, 1))),
        h.range.empty() ? ", between kernel launches of the thread" : ", inside an NVTX range");
    h.advice =
        "Synchronize only where the host needs the results: wait on one stream or event "
        "(cudaStreamWaitEvent keeps it on the GPU) instead of the whole device, and move "
        "timing syncs out of the measured loop.";
    hits.push_back(std::move(h));
  }
}

}  // namespace

std::vector<Hit> find_memory_hits(const FlagsTrace& trace, const FlagsConfig& config) {
  const auto small_htod = static_cast<std::int64_t>(config.get("sync_memcpy.small_htod_bytes"));
  HitAggregator sync_copies("sync_memcpy"), pageable("async_pageable"), memsets("sync_memset");
  for (const TraceOp& op : trace.ops) {
    if (op.kind == OpKind::Memcpy) {
      if (!op.is_async && !within_one_device(op.copy_kind) &&
          !(op.copy_kind == db::MemcpyKind::HostToDevice && op.bytes <= small_htod)) {
        add_copy(sync_copies, trace, op, blocked_ns(trace, op));
      }
      if (op.is_async &&
          (op.src_kind == db::MemoryKind::Pageable || op.dst_kind == db::MemoryKind::Pageable)) {
        add_copy(pageable, trace, op, op.duration_ns());
      }
    } else if (op.kind == OpKind::Memset && !op.is_async && pinned_or_managed(op.memory_kind)) {
      HitSite site = op_site(trace, op);
      site.subject += std::string(" on ") + db::to_string(op.memory_kind) + " memory";
      Hit& h = memsets.add(site, blocked_ns(trace, op), op.start_ns);
      h.add_metric("bytes", static_cast<double>(op.bytes));
    }
  }
  std::vector<Hit> hits;
  for (Hit& h : sync_copies.take()) {
    h.detail = fmt::format("{} synchronous copies, {} in total, blocked the host for {}", h.count,
                           format_bytes(h.metric("bytes")),
                           flags_duration(static_cast<double>(h.time_ns)));
    h.advice =
        "Use cudaMemcpyAsync on a stream with pinned host memory (cudaHostAlloc / "
        "cudaHostRegister) and synchronize only when the host needs the data.";
    hits.push_back(std::move(h));
  }
  for (Hit& h : pageable.take()) {
    h.detail = fmt::format(
        "{} asynchronous copies, {} in total ({} on the GPU), touch pageable host memory: "
        "they are staged through a driver buffer and may block the host",
        h.count, format_bytes(h.metric("bytes")), flags_duration(static_cast<double>(h.time_ns)));
    h.advice =
        "Pin the host buffer (cudaHostAlloc, cudaHostRegister, or pin_memory=True in a PyTorch "
        "DataLoader) so the copy is truly asynchronous and overlaps with compute.";
    hits.push_back(std::move(h));
  }
  for (Hit& h : memsets.take()) {
    h.detail = fmt::format(
        "{} synchronous memsets, {} in total, are fully synchronous on this memory and blocked "
        "the host for {}",
        h.count, format_bytes(h.metric("bytes")), flags_duration(static_cast<double>(h.time_ns)));
    h.advice = "Use cudaMemsetAsync on a stream, or set the memory on the host.";
    hits.push_back(std::move(h));
  }
  if (config.enabled("sync_api")) sync_api(trace, hits);
  return hits;
}

}  // namespace fuselens::analyzer
