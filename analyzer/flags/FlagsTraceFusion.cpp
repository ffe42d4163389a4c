// The fusion evidence of a FlagsTrace (FlagsTrace.h): kernel arguments (kernel_arg), device
// allocations (memory_event), work from hardware counters and work annotations (Roofline.h) and
// each device's own ceilings (Peaks.h).
#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "flags/FlagsTrace.h"
#include "fuselens/db/RooflineStore.h"
#include "fuselens/db/TraceCursors.h"
#include "roofline/Peaks.h"
#include "roofline/Roofline.h"

namespace fuselens::analyzer {
namespace {

std::uint64_t launch_key(std::uint32_t pid, std::uint32_t correlation_id) {
  return static_cast<std::uint64_t>(pid) << 32 | correlation_id;
}

void load_args(const db::Reader& reader, FlagsTrace& t) {
  if (!reader.has_table("kernel_arg")) return;
  std::unordered_map<std::uint64_t, std::size_t> kernel_of;
  for (std::size_t i = 0; i < t.ops.size(); ++i) {
    if (t.ops[i].kind == OpKind::Kernel) {
      kernel_of.emplace(launch_key(t.ops[i].pid, t.ops[i].correlation_id), i);
    }
  }
  auto args = db::kernel_args(reader);
  while (auto s = args.next()) {
    t.args_captured = true;
    const auto it = kernel_of.find(launch_key(static_cast<std::uint32_t>(s->pid),
                                              static_cast<std::uint32_t>(s->correlation_id)));
    if (it == kernel_of.end()) continue;
    TraceOp& op = t.ops[it->second];
    if (op.args_index < 0) {
      op.args_index = static_cast<int>(t.op_args.size());
      t.op_args.emplace_back();
    }
    t.op_args[static_cast<std::size_t>(op.args_index)].push_back(
        static_cast<std::uint64_t>(s->value));
  }
}

void load_allocations(const db::Reader& reader, FlagsTrace& t) {
  auto events = db::memory_events(reader);
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::size_t> live;  // (pid, address) -> index
  while (auto s = events.next()) {
    const auto kind = static_cast<db::MemoryKind>(s->memory_kind);
    if (kind != db::MemoryKind::Device && kind != db::MemoryKind::Managed) continue;
    const auto pid = static_cast<std::uint32_t>(s->pid);
    const auto address = static_cast<std::uint64_t>(s->address);
    if (static_cast<db::MemoryOperation>(s->operation) == db::MemoryOperation::Allocation) {
      TraceAllocation a;
      a.pid = pid;
      a.device_id = static_cast<std::uint32_t>(s->device_id);
      a.address = address;
      a.bytes = static_cast<std::uint64_t>(s->bytes);
      a.start_ns = s->timestamp_ns;
      t.largest_allocation = std::max(t.largest_allocation, a.bytes);
      live[{pid, address}] = t.allocations.size();
      t.allocations.push_back(a);
    } else if (const auto it = live.find({pid, address}); it != live.end()) {
      t.allocations[it->second].end_ns = s->timestamp_ns;
      live.erase(it);
    }
  }
  std::sort(t.allocations.begin(), t.allocations.end(),
            [](const TraceAllocation& a, const TraceAllocation& b) {
              return std::tie(a.pid, a.address, a.start_ns) <
                     std::tie(b.pid, b.address, b.start_ns);
            });
}

bool has_annotations(const db::Reader& reader) {
  return db::has_nvtx_mark_in_domain(reader, kAnnotationDomain);
}

void load_counters(const db::Reader& reader, FlagsTrace& t) {
  if (!db::has_kernel_metrics(reader)) return;
  std::unordered_map<std::uint64_t, std::map<std::string, double>> launches;
  auto counters = db::kernel_counters(reader);
  while (auto s = counters.next()) {
    launches[launch_key(static_cast<std::uint32_t>(s->pid),
                        static_cast<std::uint32_t>(s->correlation_id))][s->metric] = s->value;
  }
  for (TraceOp& op : t.ops) {
    if (op.kind != OpKind::Kernel) continue;
    const auto it = launches.find(launch_key(op.pid, op.correlation_id));
    if (it == launches.end()) continue;
    op.work_index = static_cast<int>(t.op_work.size());
    t.op_work.push_back(work_from_counters(it->second));
  }
}

void load_annotations(const db::Reader& reader, NameKind names, FlagsTrace& t) {
  if (!has_annotations(reader)) return;
  RooflineOptions options;
  // Any profile: the rows' work does not depend on the ceilings chosen ("auto" would refuse a
  // device without a datasheet profile).
  options.peaks = builtin_peaks().front().id;
  options.kernel_names = names;
  for (const RooflineRow& row : analyze_roofline(reader, options).ranges) {
    if (row.annotation) t.range_work[row.name] = row.annotation->work;
  }
}

void load_ceilings(const db::Reader& reader, FlagsTrace& t) {
  const auto dram = static_cast<std::size_t>(MemoryLevel::Dram);
  for (const db::DeviceInfo& d : t.devices) {
    const PeakProfile* sheet = match_device(builtin_peaks(), d.name, d.sm_count);
    const std::string sheet_text = sheet ? "datasheet peak of " + sheet->name : std::string();
    DeviceCeilings c;
    if (auto measured = measured_ceilings(reader, d.id, sheet)) {
      c.ceilings = *measured;
      c.compute_source = "measured on this device, ceiling table";
      c.dram_source = c.compute_source;
      if (!c.ceilings.bytes_per_s[dram] && sheet) {
        c.ceilings.bytes_per_s[dram] = sheet->ceilings().bytes_per_s[dram];
        c.dram_source = sheet_text;
      }
    } else if (sheet) {
      c.ceilings = sheet->ceilings();
      c.compute_source = c.dram_source = sheet_text;
    } else {
      continue;
    }
    t.ceilings[d.id] = std::move(c);
  }
}

}  // namespace

const TraceAllocation* FlagsTrace::allocation_at(std::uint32_t pid, std::uint64_t address,
                                                 std::int64_t t_ns) const {
  // Allocations are sorted by (pid, address, start): walk back from the last one starting at or
  // below `address` while an allocation that far below could still reach it.
  auto it = std::upper_bound(
      allocations.begin(), allocations.end(), std::tie(pid, address),
      [](const auto& key, const TraceAllocation& a) { return key < std::tie(a.pid, a.address); });
  while (it != allocations.begin()) {
    --it;
    if (it->pid != pid || address - it->address >= largest_allocation) break;
    if (address < it->address + it->bytes && it->start_ns <= t_ns && t_ns < it->end_ns) return &*it;
  }
  return nullptr;
}

void load_fusion_evidence(const db::Reader& reader, NameKind names, FlagsTrace& trace) {
  load_args(reader, trace);
  load_allocations(reader, trace);
  load_counters(reader, trace);
  load_annotations(reader, names, trace);
  load_ceilings(reader, trace);
}

}  // namespace fuselens::analyzer
