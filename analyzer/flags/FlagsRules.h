#pragma once
// FlagsRules: the rule families behind run_flags (Flags.h), one source file each, exposed so
// tests and tools can run one family on a trace. Each returns the hits of its enabled rules in
// no particular order; run_flags sorts them. Definitions, thresholds and sources: Flags.h and
// docs/rules.md.
//
// Errors: FlagsError when a threshold they read is missing (cannot happen with FlagsConfig's
// defaults).

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "flags/Flags.h"
#include "flags/FlagsTrace.h"

namespace fuselens::analyzer {

/// launch_short, launch_delay, runtime_outlier (FlagsLaunch.cpp).
std::vector<Hit> find_launch_hits(const FlagsTrace& trace, const FlagsConfig& config);
/// stream_idle, gpu_gaps, gpu_utilization (FlagsTimeline.cpp).
std::vector<Hit> find_timeline_hits(const FlagsTrace& trace, const FlagsConfig& config);
/// sync_memcpy, async_pageable, sync_memset, sync_api (FlagsMemory.cpp).
std::vector<Hit> find_memory_hits(const FlagsTrace& trace, const FlagsConfig& config);
/// fusion_chain (FlagsFusion.cpp).
std::vector<Hit> find_fusion_hits(const FlagsTrace& trace, const FlagsConfig& config);

/// Where something happened: the aggregation key of most rules.
struct HitSite {
  std::string subject;
  std::optional<std::uint32_t> device_id, stream_id, pid, tid;
  std::string range;
  std::string context;  ///< formatted call path (Hit::context)

  auto key() const { return std::tie(subject, device_id, stream_id, pid, tid, range, context); }
  bool operator<(const HitSite& other) const { return key() < other.key(); }
};

/// The site of a GPU operation: its name, device and stream, and its launch call's thread,
/// innermost NVTX range and call path.
HitSite op_site(const FlagsTrace& trace, const TraceOp& op);
/// The site of an API call (no device or stream).
HitSite call_site(const FlagsTrace& trace, const TraceCall& call, std::string subject);

/// A hit of one instance at `site`.
Hit make_hit(std::string rule, const HitSite& site, std::int64_t time_ns, std::int64_t start_ns);

/// Collects instances into one Hit per site: count, summed time at stake, earliest start.
class HitAggregator {
 public:
  explicit HitAggregator(std::string rule) : rule_(std::move(rule)) {}
  /// Adds one instance and returns its hit, to add metrics to.
  Hit& add(const HitSite& site, std::int64_t time_ns, std::int64_t start_ns);
  /// The hits, in site order.
  std::vector<Hit> take();

 private:
  std::string rule_;
  std::map<HitSite, Hit> hits_;
};

/// "12.345 µs" etc. (format_duration) of an integer nanosecond count.
std::string flags_duration(double ns);

}  // namespace fuselens::analyzer
