// fusion_chain: repeated chains of back-to-back kernels in one calling context.
//
// A run is a maximal sequence of kernels on one stream with no copy or memset between them, each
// launched from the same thread inside the same NVTX range instance (or outside any range on
// that thread), with GPU gaps <= fusion_chain.max_gap_us between consecutive kernels. A run that
// repeats one sequence of kernel names (smallest period p of the name sequence, from its longest
// border, O(n)) yields floor((n - r) / p) occurrences of that p-kernel chain, where the phase r
// (< p) puts the first kernel of the run's NVTX range instance on this stream at the head of the
// chain when the run lies in a range and that kernel is in the period, else r = 0 (a run cut by
// one long gap after a range's first kernel would otherwise report the chain rotated, e.g.
// "multiply -> sigmoid" for a sigmoid-then-multiply loop); a run without repetition is one
// occurrence of itself. Chains of >= min_kernels kernels seen >= min_repeats times in one
// (stream, thread, range name, call path) are reported, ranked by estimated GPU time saved.
//
// Evidence per hit (FlagsFusionEvidence.cpp): whether each kernel's output feeds the next
// (kernel arguments pointing into one allocation), whether the chain is memory-bound (its
// arithmetic intensity against the device's ridge point) and the bytes of the shared buffers.
#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "flags/FlagsFusionEvidence.h"
#include "flags/FlagsRules.h"

namespace fuselens::analyzer {
namespace {

/// Smallest p >= 1 with ids[i] == ids[i - p] for every i >= p (n - longest proper border).
std::size_t smallest_period(const std::vector<int>& ids) {
  const std::size_t n = ids.size();
  if (n == 0) return 0;
  std::vector<std::size_t> border(n, 0);
  for (std::size_t i = 1; i < n; ++i) {
    std::size_t k = border[i - 1];
    while (k > 0 && ids[i] != ids[k]) k = border[k - 1];
    if (ids[i] == ids[k]) ++k;
    border[i] = k;
  }
  return n - border[n - 1];
}

class ChainFinder {
 public:
  ChainFinder(const FlagsTrace& trace, const FlagsConfig& config)
      : trace_(trace),
        max_gap_(config.get_ns("fusion_chain.max_gap_us")),
        min_kernels_(static_cast<std::size_t>(config.get("fusion_chain.min_kernels"))),
        sites_(trace),
        agg_("fusion_chain") {}

  void add_stream(const std::vector<std::size_t>& ops) {
    range_head_.clear();
    std::vector<std::size_t> run;
    for (const std::size_t i : ops) {
      const TraceOp& op = trace_.ops[i];
      const TraceCall* call = trace_.launch_call(op);
      if (op.kind != OpKind::Kernel || call == nullptr) {
        flush(run);
        continue;
      }
      if (!run.empty() && !continues(trace_.ops[run.back()], op)) flush(run);
      if (call->range >= 0) range_head_.try_emplace(call->range, name_id(op.name));
      run.push_back(i);
    }
    flush(run);
  }

  std::vector<Hit> take() { return agg_.take(); }

  /// The counters of the chain's launches at `hit`'s site, when every launch had them.
  std::optional<Work> counted(const Hit& hit) const {
    HitSite site;
    site.subject = hit.subject;
    site.device_id = hit.device_id;
    site.stream_id = hit.stream_id;
    site.pid = hit.pid;
    site.tid = hit.tid;
    site.range = hit.range;
    site.context = hit.context;
    const auto it = counted_.find(site);
    if (it == counted_.end() || !it->second.complete) return std::nullopt;
    return it->second.work;
  }

 private:
  bool continues(const TraceOp& prev, const TraceOp& op) const {
    const TraceCall* a = trace_.launch_call(prev);
    const TraceCall* b = trace_.launch_call(op);
    return a->pid == b->pid && a->tid == b->tid && a->range == b->range &&
           op.start_ns - prev.end_ns <= max_gap_;
  }

  int name_id(std::string_view name) {
    return names_.try_emplace(name, static_cast<int>(names_.size())).first->second;
  }

  void flush(std::vector<std::size_t>& run) {
    if (run.size() >= min_kernels_) {
      std::vector<int> ids;
      ids.reserve(run.size());
      for (const std::size_t i : run) ids.push_back(name_id(trace_.ops[i].name));
      const std::size_t p = smallest_period(ids);
      if (p >= min_kernels_) {
        std::size_t phase = 0;
        const int range = trace_.launch_call(trace_.ops[run.front()])->range;
        if (const auto head = range_head_.find(range); head != range_head_.end()) {
          for (std::size_t r = 0; r < p && r + p <= ids.size(); ++r) {
            if (ids[r] == head->second) {
              phase = r;
              break;
            }
          }
        }
        for (std::size_t first = phase; first + p <= run.size(); first += p) {
          add_occurrence(run, first, p);
        }
      }
    }
    run.clear();
  }

  void add_occurrence(const std::vector<std::size_t>& run, std::size_t first, std::size_t p) {
    const TraceOp& head = trace_.ops[run[first]];
    std::vector<const TraceOp*> chain;
    std::int64_t gaps = 0, gpu = 0, cpu = 0;
    // The chain's site is found by what it is built from: the head's site, then each kernel's
    // name and call path (a million occurrences share a few sites).
    std::vector<std::uintptr_t> key{reinterpret_cast<std::uintptr_t>(&sites_.op(head))};
    for (std::size_t j = first; j < first + p; ++j) {
      const TraceOp& op = trace_.ops[run[j]];
      chain.push_back(&op);
      if (j > first) gaps += std::max<std::int64_t>(0, op.start_ns - trace_.ops[run[j - 1]].end_ns);
      gpu += op.duration_ns();
      const TraceCall* call = trace_.launch_call(op);
      cpu += call->end_ns - call->start_ns;
      key.push_back(reinterpret_cast<std::uintptr_t>(op.name.data()));
      key.push_back(op.name.size());
      key.push_back(static_cast<std::uintptr_t>(call->context + 1));
    }
    ChainSite& chain_site = chain_sites_[key];
    if (!chain_site.site) {
      HitSite site = sites_.op(head);
      for (std::size_t j = 1; j < chain.size(); ++j)
        site.subject += " -> " + std::string(chain[j]->name);
      site.context = chain_context(trace_, chain);
      chain_site.counted = &counted_[site];
      chain_site.site = std::make_unique<HitSite>(std::move(site));
    }
    CountedWork& counted = *chain_site.counted;
    for (const TraceOp* op : chain) {
      if (const Work* work = trace_.counters(*op)) {
        counted.work += *work;
      } else {
        counted.complete = false;
      }
    }
    Hit& h = agg_.add_cached(*chain_site.site, gaps, head.start_ns);
    h.set_metric("kernels_per_chain", static_cast<double>(p));
    h.add_metric("launches_removed", static_cast<double>(p - 1));
    h.add_metric("gap_ns", static_cast<double>(gaps));
    h.add_metric("gpu_ns", static_cast<double>(gpu));
    h.add_metric("cpu_launch_ns", static_cast<double>(cpu));
    h.add_metric("host_saving_ns",
                 static_cast<double>(cpu) * static_cast<double>(p - 1) / static_cast<double>(p));
    add_sharing(h, share_buffers(trace_, chain));
  }

  const FlagsTrace& trace_;
  std::int64_t max_gap_;
  std::size_t min_kernels_;
  struct CountedWork {
    Work work;
    bool complete = true;
  };
  struct ChainSite {
    std::unique_ptr<HitSite> site;
    CountedWork* counted = nullptr;  // in counted_ (std::map: stable)
  };
  struct KeyHash {
    std::size_t operator()(const std::vector<std::uintptr_t>& key) const {
      std::size_t h = key.size();
      for (const std::uintptr_t v : key) h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
      return h;
    }
  };
  SiteCache sites_;
  HitAggregator agg_;
  std::map<HitSite, CountedWork> counted_;
  std::unordered_map<std::vector<std::uintptr_t>, ChainSite, KeyHash> chain_sites_;
  std::unordered_map<std::string_view, int> names_;  // views into FlagsTrace::texts
  std::unordered_map<int, int> range_head_;  ///< range instance -> name id of its first kernel
};

void describe(Hit& h, const FlagsTrace& trace, const std::optional<Work>& counted,
              std::int64_t max_gap_ns) {
  const double k = h.metric("kernels_per_chain");
  const double removed = h.metric("launches_removed");
  const double per_launch = removed > 0 ? h.metric("gap_ns") / removed : 0.0;
  const double count = static_cast<double>(h.count);
  const double kernel_mean = h.metric("gpu_ns") / (count * k);
  const double launch_mean = h.metric("cpu_launch_ns") / (count * k);
  const bool launch_bound = kernel_mean < launch_mean;
  h.set_metric("gap_per_launch_ns", per_launch);
  h.set_metric("launch_bound", launch_bound ? 1 : 0);

  const Feeds feeds = feeds_of(h);
  const Boundness bound = chain_boundness(trace, h, counted);
  const ByteSaving bytes = byte_saving(trace, h, feeds, bound);
  h.time_ns += bytes.saving_ns;
  const bool candidate = feeds != Feeds::No && bound.verdict != Bound::Compute;
  h.set_metric("output_feeds_next", feeds_metric(feeds));
  h.set_metric("memory_bound", bound_metric(bound.verdict));
  h.set_metric("fusion_candidate", candidate ? 1 : 0);

  h.detail = fmt::format(
      "{} occurrences of this {}-kernel chain (gaps <= {}); fusing removes {} launches in all. "
      "Estimated saving: {} of GPU idle ({} measured per removed launch){} and {} of CPU "
      "launch time. The chain's kernels run {} per occurrence (mean kernel {} vs launch call {}: "
      "{}). Output feeds next: {}. Memory-bound: {}.{}",
      h.count, k, flags_duration(static_cast<double>(max_gap_ns)), removed,
      flags_duration(h.metric("gap_ns")), flags_duration(per_launch), bytes.clause,
      flags_duration(h.metric("host_saving_ns")), flags_duration(h.metric("gpu_ns") / count),
      flags_duration(kernel_mean), flags_duration(launch_mean),
      launch_bound ? "launch-bound" : "GPU-bound", feeds_text(h, feeds, trace.args_captured),
      bound.text, bytes.note);
  if (feeds == Feeds::No) {
    h.advice = "The kernels share no buffer: fusing them removes no memory round trip. " +
               std::string(launch_bound
                               ? "The chain is launch-bound: capture it in a CUDA Graph (or fuse "
                                 "horizontally) to remove the launch cost."
                               : "Leave them apart unless the launches matter.");
  } else if (bound.verdict == Bound::Compute) {
    h.advice = "Compute-bound: fusion saves little beyond the launches. " +
               std::string(launch_bound ? "The chain is launch-bound: a CUDA Graph removes most "
                                          "of the launch cost without rewriting kernels."
                                        : "Look at the kernels' own efficiency first.");
  } else if (launch_bound) {
    h.advice =
        "Launch-bound fusion candidate: fuse the chain into one kernel (the element-wise steps as "
        "the producer's epilogue), or capture it in a CUDA Graph, which removes most of the launch "
        "cost without rewriting kernels.";
  } else {
    h.advice =
        "Fusion candidate: one kernel (e.g. the element-wise steps as the producer's epilogue) "
        "removes the launches and the intermediates' round trips through memory.";
  }
}

}  // namespace

std::vector<Hit> find_fusion_hits(const FlagsTrace& trace, const FlagsConfig& config) {
  if (!config.enabled("fusion_chain")) return {};
  const auto min_repeats = static_cast<std::int64_t>(config.get("fusion_chain.min_repeats"));
  using StreamKey = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>;
  std::map<StreamKey, std::vector<std::size_t>> streams;
  for (std::size_t i = 0; i < trace.ops.size(); ++i) {
    const TraceOp& op = trace.ops[i];
    streams[{op.pid, op.device_id, op.context_id, op.stream_id}].push_back(i);
  }
  ChainFinder finder(trace, config);
  for (const auto& [key, ops] : streams) finder.add_stream(ops);
  std::vector<Hit> hits;
  for (Hit& h : finder.take()) {
    if (h.count < min_repeats) continue;
    describe(h, trace, finder.counted(h), config.get_ns("fusion_chain.max_gap_us"));
    hits.push_back(std::move(h));
  }
  return hits;
}

}  // namespace fuselens::analyzer
