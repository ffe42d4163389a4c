// launch_short, launch_delay, runtime_outlier: HTA's launch statistics. Each kernel is joined to
// its launch call (FlagsTrace); cpu = call duration, gpu = kernel duration,
// launch_delay = gpu_start - (cpu_start + cpu_duration) clipped at 0.
#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <tuple>

#include "flags/FlagsRules.h"

namespace fuselens::analyzer {
namespace {

using StreamKey = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>;

StreamKey stream_key(const TraceOp& op) {
  return {op.pid, op.device_id, op.context_id, op.stream_id};
}

double mean(double total, std::int64_t count) {
  return count > 0 ? total / static_cast<double>(count) : 0.0;
}

void describe_short(Hit& h, std::int64_t cutoff_ns) {
  const double gpu = h.metric("gpu_ns"), cpu = h.metric("cpu_ns"), idle = h.metric("idle_ns");
  const double share = gpu + idle > 0 ? 100.0 * idle / (gpu + idle) : 0.0;
  h.set_metric("idle_percent", share);
  h.detail = fmt::format(
      "{} launches: kernel runs {} on the GPU, its launch call takes {} on the CPU (<= {} "
      "cutoff); {:.1f} % of the GPU time around them is idle between launches ({})",
      h.count, flags_duration(mean(gpu, h.count)), flags_duration(mean(cpu, h.count)),
      flags_duration(static_cast<double>(cutoff_ns)), share, flags_duration(idle));
  h.advice =
      "Launch overhead exceeds the work: fuse this kernel with its neighbours (see "
      "fusion_chain), give each launch more work (batch), or capture the sequence in a CUDA "
      "Graph.";
}

void describe_delay(Hit& h, std::int64_t cutoff_ns) {
  h.detail = fmt::format(
      "{} kernels started more than {} after their launch call returned (mean {}, max {})", h.count,
      flags_duration(static_cast<double>(cutoff_ns)),
      flags_duration(mean(static_cast<double>(h.time_ns), h.count)),
      flags_duration(h.metric("max_delay_ns")));
  h.advice =
      "The kernel waited in the stream's queue. If the GPU was busy with earlier work this is "
      "queueing, not lost time (the host runs ahead); if the GPU was idle meanwhile, look for "
      "what the stream waited on: events from other streams, implicit synchronization on the "
      "legacy default stream, or a blocking call.";
}

void describe_runtime(Hit& h, std::int64_t cutoff_ns) {
  h.detail = fmt::format("{} launch calls took more than {} on the CPU (mean {}, max {})", h.count,
                         flags_duration(static_cast<double>(cutoff_ns)),
                         flags_duration(mean(static_cast<double>(h.time_ns), h.count)),
                         flags_duration(h.metric("max_cpu_ns")));
  h.advice =
      "Launches this slow usually blocked: lazy module loading on a kernel's first launch "
      "(CUDA_MODULE_LOADING=EAGER or a warm-up moves it out of the hot path), a full launch "
      "queue, implicit synchronization, or profiler buffer flushes.";
}

}  // namespace

std::vector<Hit> find_launch_hits(const FlagsTrace& trace, const FlagsConfig& config) {
  const std::int64_t short_cutoff = config.get_ns("launch_short.runtime_cutoff_us");
  const std::int64_t delay_cutoff = config.get_ns("launch_delay.cutoff_us");
  const std::int64_t runtime_cutoff = config.get_ns("runtime_outlier.cutoff_us");
  HitAggregator shorts("launch_short"), delays("launch_delay"), runtimes("runtime_outlier");
  std::map<StreamKey, std::int64_t> last_end;  // per stream, end of the latest operation so far
  SiteCache sites(trace);

  for (const TraceOp& op : trace.ops) {
    const auto key = stream_key(op);
    const auto prev = last_end.find(key);
    const bool has_prev = prev != last_end.end();
    const std::int64_t prev_end = has_prev ? prev->second : 0;
    last_end[key] = std::max(prev_end, op.end_ns);
    const TraceCall* call = trace.launch_call(op);
    if (op.kind != OpKind::Kernel || call == nullptr) continue;

    const std::int64_t cpu = call->end_ns - call->start_ns;
    const std::int64_t gpu = op.duration_ns();
    const std::int64_t delay = std::max<std::int64_t>(0, op.start_ns - call->end_ns);
    const HitSite& site = sites.op(op);
    if (cpu <= short_cutoff && gpu < cpu) {
      // GPU idle lost to this launch: the gap before it on its stream, at most one launch call.
      const std::int64_t gap = has_prev ? std::max<std::int64_t>(0, op.start_ns - prev_end) : 0;
      const std::int64_t idle = std::min(gap, cpu);
      Hit& h = shorts.add_cached(site, idle, op.start_ns);
      h.add_metric("gpu_ns", static_cast<double>(gpu));
      h.add_metric("cpu_ns", static_cast<double>(cpu));
      h.add_metric("idle_ns", static_cast<double>(idle));
    }
    if (delay > delay_cutoff) {
      Hit& h = delays.add_cached(site, delay, op.start_ns);
      h.set_metric("max_delay_ns", std::max(h.metric("max_delay_ns"), static_cast<double>(delay)));
    }
    if (cpu > runtime_cutoff) {
      HitSite call_key = site;
      call_key.subject = std::string(call->base_name) + " (" + std::string(op.name) + ")";
      Hit& h = runtimes.add(call_key, cpu, call->start_ns);
      h.set_metric("max_cpu_ns", std::max(h.metric("max_cpu_ns"), static_cast<double>(cpu)));
    }
  }

  std::vector<Hit> hits;
  for (Hit& h : shorts.take()) {
    describe_short(h, short_cutoff);
    hits.push_back(std::move(h));
  }
  for (Hit& h : delays.take()) {
    describe_delay(h, delay_cutoff);
    hits.push_back(std::move(h));
  }
  for (Hit& h : runtimes.take()) {
    describe_runtime(h, runtime_cutoff);
    hits.push_back(std::move(h));
  }
  return hits;
}

}  // namespace fuselens::analyzer
