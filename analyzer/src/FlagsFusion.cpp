// fusion_chain: repeated chains of back-to-back kernels in one calling context.
//
// A run is a maximal sequence of kernels on one stream with no copy or memset between them, each
// launched from the same thread inside the same NVTX range instance (or outside any range on
// that thread), with GPU gaps <= fusion_chain.max_gap_us between consecutive kernels. A run that
// repeats one sequence of kernel names (smallest period p of the name sequence, from its longest
// border, O(n)) yields floor(n / p) occurrences of that p-kernel chain; a run without repetition
// is one occurrence of itself. Chains of >= min_kernels kernels seen >= min_repeats times in one
// (stream, thread, range name) are reported, ranked by estimated GPU time saved.
#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "fuselens/analyzer/FlagsRules.h"

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
        agg_("fusion_chain") {}

  void add_stream(const std::vector<std::size_t>& ops) {
    std::vector<std::size_t> run;
    for (const std::size_t i : ops) {
      const TraceOp& op = trace_.ops[i];
      const TraceCall* call = trace_.launch_call(op);
      if (op.kind != OpKind::Kernel || call == nullptr) {
        flush(run);
        continue;
      }
      if (!run.empty() && !continues(trace_.ops[run.back()], op)) flush(run);
      run.push_back(i);
    }
    flush(run);
  }

  std::vector<Hit> take() { return agg_.take(); }

 private:
  bool continues(const TraceOp& prev, const TraceOp& op) const {
    const TraceCall* a = trace_.launch_call(prev);
    const TraceCall* b = trace_.launch_call(op);
    return a->pid == b->pid && a->tid == b->tid && a->range == b->range &&
           op.start_ns - prev.end_ns <= max_gap_;
  }

  int name_id(const std::string& name) {
    return names_.try_emplace(name, static_cast<int>(names_.size())).first->second;
  }

  void flush(std::vector<std::size_t>& run) {
    if (run.size() >= min_kernels_) {
      std::vector<int> ids;
      ids.reserve(run.size());
      for (const std::size_t i : run) ids.push_back(name_id(trace_.ops[i].name));
      const std::size_t p = smallest_period(ids);
      if (p >= min_kernels_) {
        for (std::size_t first = 0; first + p <= run.size(); first += p) {
          add_occurrence(run, first, p);
        }
      }
    }
    run.clear();
  }

  void add_occurrence(const std::vector<std::size_t>& run, std::size_t first, std::size_t p) {
    const TraceOp& head = trace_.ops[run[first]];
    HitSite site = op_site(trace_, head);
    std::int64_t gaps = 0, gpu = 0, cpu = 0;
    for (std::size_t j = first; j < first + p; ++j) {
      const TraceOp& op = trace_.ops[run[j]];
      if (j > first) {
        site.subject += " -> " + op.name;
        gaps += std::max<std::int64_t>(0, op.start_ns - trace_.ops[run[j - 1]].end_ns);
      }
      gpu += op.duration_ns();
      const TraceCall* call = trace_.launch_call(op);
      cpu += call->end_ns - call->start_ns;
    }
    Hit& h = agg_.add(site, gaps, head.start_ns);
    h.set_metric("kernels_per_chain", static_cast<double>(p));
    h.add_metric("launches_removed", static_cast<double>(p - 1));
    h.add_metric("gap_ns", static_cast<double>(gaps));
    h.add_metric("gpu_ns", static_cast<double>(gpu));
    h.add_metric("cpu_launch_ns", static_cast<double>(cpu));
    h.add_metric("host_saving_ns",
                 static_cast<double>(cpu) * static_cast<double>(p - 1) / static_cast<double>(p));
  }

  const FlagsTrace& trace_;
  std::int64_t max_gap_;
  std::size_t min_kernels_;
  HitAggregator agg_;
  std::unordered_map<std::string, int> names_;
};

void describe(Hit& h, std::int64_t max_gap_ns) {
  const double k = h.metric("kernels_per_chain");
  const double removed = h.metric("launches_removed");
  const double per_launch = removed > 0 ? h.metric("gap_ns") / removed : 0.0;
  const double count = static_cast<double>(h.count);
  const double kernel_mean = h.metric("gpu_ns") / (count * k);
  const double launch_mean = h.metric("cpu_launch_ns") / (count * k);
  const bool launch_bound = kernel_mean < launch_mean;
  h.set_metric("gap_per_launch_ns", per_launch);
  h.set_metric("launch_bound", launch_bound ? 1 : 0);
  h.detail = fmt::format(
      "{} occurrences of this {}-kernel chain (gaps <= {}); fusing removes {} launches in all. "
      "Estimated saving: {} of GPU idle ({} measured per removed launch) and {} of CPU launch "
      "time. The chain's kernels run {} per occurrence (mean kernel {} vs launch call {}: {}). "
      "Bytes saved by not writing and re-reading intermediates are not measured (no counters).",
      h.count, k, flags_duration(static_cast<double>(max_gap_ns)), removed,
      flags_duration(static_cast<double>(h.time_ns)), flags_duration(per_launch),
      flags_duration(h.metric("host_saving_ns")), flags_duration(h.metric("gpu_ns") / count),
      flags_duration(kernel_mean), flags_duration(launch_mean),
      launch_bound ? "launch-bound" : "GPU-bound");
  h.advice = launch_bound
                 ? "Launch-bound: fuse the chain into one kernel, or capture it in a CUDA Graph, "
                   "which removes most of the launch cost without rewriting kernels."
                 : "Fusion candidate: one kernel (e.g. the element-wise steps as the producer's "
                   "epilogue) removes the launches and the intermediates' round trips through "
                   "memory. Whether the kernels are memory-bound needs counters (roofline): "
                   "check before fusing.";
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
    describe(h, config.get_ns("fusion_chain.max_gap_us"));
    hits.push_back(std::move(h));
  }
  return hits;
}

}  // namespace fuselens::analyzer
