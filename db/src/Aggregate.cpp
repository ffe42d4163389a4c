#include "fuselens/db/Aggregate.h"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>

#include "fuselens/db/Saturating.h"

namespace fuselens::db {
namespace {

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

std::int64_t clipped(std::uint64_t v) {
  return v > static_cast<std::uint64_t>(kInt64Max) ? kInt64Max : static_cast<std::int64_t>(v);
}

// end - start in ns, 0 when end < start.
std::int64_t duration(std::uint64_t start, std::uint64_t end) {
  return end > start ? clipped(end - start) : 0;
}

using KernelKey = std::tuple<std::uint32_t, std::string, std::int32_t, std::int32_t, std::int32_t,
                             std::int32_t, std::int32_t, std::int32_t, std::int32_t, std::int32_t>;
using TransferKey = std::tuple<std::uint32_t, int, int, int, int>;  // device, op, kinds

KernelKey key_of(const KernelRecord& k) {
  return {k.device_id,
          k.mangled_name,
          k.grid_x,
          k.grid_y,
          k.grid_z,
          k.block_x,
          k.block_y,
          k.block_z,
          k.static_shared_bytes,
          k.dynamic_shared_bytes};
}

// A record waiting for its node (with contexts) or its launch call.
struct Pending {
  std::uint32_t correlation;
  std::uint32_t key;       // index into the kernel or transfer keys
  std::int64_t value;      // GPU time
  std::int64_t latency;    // -1: unknown
  std::int64_t bytes = 0;  // transfers
};

}  // namespace

void AggregateStats::add(std::int64_t value) {
  value = std::max<std::int64_t>(value, 0);
  if (count == 0) {
    min = max = value;
  } else {
    min = std::min(min, value);
    max = std::max(max, value);
  }
  ++count;
  total = saturating_add(total, value);
  sketch.add(static_cast<std::uint64_t>(value));
}

struct Aggregator::State {
  std::uint32_t pid;
  bool with_contexts;
  std::map<KernelKey, std::uint32_t> kernel_keys;
  std::vector<const KernelKey*> kernel_key_list;
  std::map<TransferKey, std::uint32_t> transfer_keys;
  std::vector<const TransferKey*> transfer_key_list;
  // (node, key) -> row
  std::map<std::pair<std::int64_t, std::uint32_t>, AggregateKernelRow> kernels;
  std::map<std::pair<std::int64_t, std::uint32_t>, AggregateTransferRow> transfers;
  std::map<std::pair<std::uint32_t, std::uint32_t>, AggregateMemoryRow> memory;
  AggregateProcessRow process;
  // Launch calls: correlation id -> (earliest start, generation seen)
  std::unordered_map<std::uint32_t, std::pair<std::uint64_t, std::uint32_t>> calls;
  // Kernels whose call was not seen yet, with the generation they arrived in.
  std::vector<std::pair<Pending, std::uint32_t>> waiting;
  std::vector<std::uint64_t> waiting_start;                 // kernel start_ns of each waiting entry
  std::vector<Pending> pending_kernels, pending_transfers;  // with contexts: for finish()
  std::uint32_t generation = 0;

  std::uint32_t kernel_key(const KernelRecord& k) {
    auto [it, fresh] =
        kernel_keys.emplace(key_of(k), static_cast<std::uint32_t>(kernel_key_list.size()));
    if (fresh) kernel_key_list.push_back(&it->first);
    return it->second;
  }
  std::uint32_t transfer_key(const TransferKey& key) {
    auto [it, fresh] =
        transfer_keys.emplace(key, static_cast<std::uint32_t>(transfer_key_list.size()));
    if (fresh) transfer_key_list.push_back(&it->first);
    return it->second;
  }

  AggregateKernelRow& kernel_row(std::int64_t node, std::uint32_t key) {
    auto [it, fresh] = kernels.try_emplace({node, key});
    if (fresh) {
      const auto& k = *kernel_key_list[key];
      auto& r = it->second;
      r.pid = pid;
      r.node = node;
      std::tie(r.device_id, r.mangled_name, r.grid_x, r.grid_y, r.grid_z, r.block_x, r.block_y,
               r.block_z, r.static_shared_bytes, r.dynamic_shared_bytes) = k;
    }
    return it->second;
  }
  void add_kernel(std::int64_t node, const Pending& p) {
    auto& row = kernel_row(node, p.key);
    row.gpu.add(p.value);
    if (p.latency >= 0) row.latency.add(p.latency);
  }
  void add_transfer(std::int64_t node, const Pending& p) {
    auto [it, fresh] = transfers.try_emplace({node, p.key});
    auto& r = it->second;
    if (fresh) {
      const auto& [device, op, copy, src, dst] = *transfer_key_list[p.key];
      r.pid = pid;
      r.node = node;
      r.device_id = device;
      r.operation = static_cast<TransferOperation>(op);
      r.copy_kind = static_cast<MemcpyKind>(copy);
      r.src_kind = static_cast<MemoryKind>(src);
      r.dst_kind = static_cast<MemoryKind>(dst);
      r.min_ns = r.max_ns = p.value;
    }
    r.min_ns = std::min(r.min_ns, p.value);
    r.max_ns = std::max(r.max_ns, p.value);
    ++r.count;
    r.bytes = saturating_add(r.bytes, p.bytes);
    r.total_ns = saturating_add(r.total_ns, p.value);
  }
  void kernel_ready(const Pending& p) {
    if (with_contexts) {
      pending_kernels.push_back(p);
    } else {
      add_kernel(-1, p);
    }
  }
  void memory_event(const MemoryEventRecord& m) {
    auto [it, fresh] = memory.try_emplace({m.device_id, m.context_id});
    auto& r = it->second;
    if (fresh) {
      r.pid = pid;
      r.device_id = m.device_id;
      r.context_id = m.context_id;
    }
    const std::int64_t bytes = clipped(m.bytes);
    if (m.operation == MemoryOperation::Allocation) {
      ++r.allocations;
      r.allocated_bytes = saturating_add(r.allocated_bytes, bytes);
      r.final_bytes = saturating_add(r.final_bytes, bytes);
      r.peak_bytes = std::max(r.peak_bytes, r.final_bytes);
    } else {
      ++r.releases;
      r.final_bytes = std::max<std::int64_t>(r.final_bytes - bytes, 0);
    }
  }
};

Aggregator::Aggregator(std::uint32_t pid, bool with_contexts) : state_(std::make_unique<State>()) {
  state_->pid = pid;
  state_->with_contexts = with_contexts;
  state_->process.pid = pid;
}

Aggregator::~Aggregator() = default;

void Aggregator::add(const RecordBatch& batch) {
  auto& s = *state_;
  const std::uint32_t gen = ++s.generation;
  for (const auto& a : batch.api_calls) {
    auto [it, fresh] = s.calls.try_emplace(a.correlation_id, a.start_ns, gen);
    if (!fresh) it->second.first = std::min(it->second.first, a.start_ns);
  }
  auto latency_of = [&](std::uint32_t correlation, std::uint64_t kernel_start) -> std::int64_t {
    const auto it = s.calls.find(correlation);
    if (it == s.calls.end()) return -1;
    return duration(it->second.first, kernel_start);
  };
  // Kernels of earlier batches whose call was missing: found now, or given up after
  // kGenerations batches.
  std::size_t kept = 0;
  for (std::size_t i = 0; i < s.waiting.size(); ++i) {
    auto [p, since] = s.waiting[i];
    p.latency = latency_of(p.correlation, s.waiting_start[i]);
    if (p.latency >= 0 || gen - since >= kGenerations) {
      s.kernel_ready(p);
    } else {
      s.waiting[kept] = s.waiting[i];
      s.waiting_start[kept++] = s.waiting_start[i];
    }
  }
  s.waiting.resize(kept);
  s.waiting_start.resize(kept);
  for (const auto& k : batch.kernels) {
    Pending p{k.correlation_id, s.kernel_key(k), duration(k.start_ns, k.end_ns),
              latency_of(k.correlation_id, k.start_ns)};
    ++s.process.kernels;
    if (p.latency >= 0) {
      s.kernel_ready(p);
    } else {
      s.waiting.emplace_back(p, gen);
      s.waiting_start.push_back(k.start_ns);
    }
  }
  auto transfer = [&](const Pending& p) {
    if (s.with_contexts) {
      s.pending_transfers.push_back(p);
    } else {
      s.add_transfer(-1, p);
    }
  };
  for (const auto& m : batch.memcpys) {
    ++s.process.copies;
    Pending p{m.correlation_id,
              s.transfer_key({m.device_id, static_cast<int>(TransferOperation::Memcpy),
                              static_cast<int>(m.copy_kind), static_cast<int>(m.src_kind),
                              static_cast<int>(m.dst_kind)}),
              duration(m.start_ns, m.end_ns), -1, clipped(m.bytes)};
    transfer(p);
  }
  for (const auto& m : batch.memsets) {
    ++s.process.memsets;
    Pending p{m.correlation_id,
              s.transfer_key({m.device_id, static_cast<int>(TransferOperation::Memset), 0,
                              static_cast<int>(m.memory_kind), 0}),
              duration(m.start_ns, m.end_ns), -1, clipped(m.bytes)};
    transfer(p);
  }
  for (const auto& m : batch.memory_events) {
    ++s.process.memory_events;
    s.memory_event(m);
  }
  // Calls older than kGenerations batches: their kernels have come (graph launches keep one
  // call for many kernels, which arrive within a few batches).
  if (gen % kGenerations == 0) {
    std::erase_if(s.calls, [gen](const auto& c) { return gen - c.second.second >= kGenerations; });
  }
}

AggregateSet Aggregator::finish(const std::function<std::int64_t(std::uint32_t)>& node_of) {
  auto& s = *state_;
  for (auto [p, since] : s.waiting) s.kernel_ready(p);  // never saw the call: no latency
  s.waiting.clear();
  auto node = [&](std::uint32_t correlation) -> std::int64_t {
    const std::int64_t n = node_of ? node_of(correlation) : -1;
    if (n < 0) ++s.process.without_context;
    return n < 0 ? -1 : n;
  };
  for (const auto& p : s.pending_kernels) s.add_kernel(node(p.correlation), p);
  for (const auto& p : s.pending_transfers) s.add_transfer(node(p.correlation), p);
  if (!s.with_contexts) {
    s.process.without_context = s.process.kernels + s.process.copies + s.process.memsets;
  }
  s.pending_kernels.clear();
  s.pending_transfers.clear();
  AggregateSet out;
  s.process.traced = clipped(traced_);
  out.processes.push_back(s.process);
  for (auto& [key, row] : s.kernels) out.kernels.push_back(std::move(row));
  for (auto& [key, row] : s.transfers) out.transfers.push_back(row);
  for (auto& [key, row] : s.memory) out.memory.push_back(row);
  return out;
}

}  // namespace fuselens::db
