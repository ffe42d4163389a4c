#pragma once
// FlagsRules: the rule families behind run_flags (Flags.h), one source file each, exposed so
// tests and tools can run one family on a trace. Each returns the hits of its enabled rules in
// no particular order; run_flags sorts them. Definitions, thresholds and sources: Flags.h and
// docs/rules.md.
//
// Errors: FlagsError when a threshold they read is missing (cannot happen with FlagsConfig's
// defaults).

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
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

/// op_site and the stream_idle site, built once per distinct site: the operations of one site share
/// their name (FlagsTrace::texts), device, stream, pid, launch thread, range and call path, so the
/// site is found by those integers instead of being built (three strings) for each of ten million
/// launches. The returned sites live as long as the cache and never change (HitAggregator::add's
/// `cached` form relies on it).
class SiteCache {
 public:
  explicit SiteCache(const FlagsTrace& trace);
  /// op_site(trace, op).
  const HitSite& op(const TraceOp& op);
  /// The stream_idle site of `op` (FlagsTimeline.cpp): op_site without subject and call path, and
  /// without thread and range when `outside` or when the op was launched outside every range.
  const HitSite& stream(const TraceOp& op, bool outside);

 private:
  struct Key {
    const char* name = nullptr;  // FlagsTrace::texts' copy of the name, or nullptr
    std::size_t name_size = 0;
    std::uint32_t device = 0, stream = 0, pid = 0;
    std::int64_t tid = -1;  // -1: none
    int range = -1;         // the range's name (range_names_), not its instance
    int context = -1;
    bool stream_site = false;  // stream(), else op()
    bool operator==(const Key& o) const {
      return stream_site == o.stream_site && name == o.name && name_size == o.name_size &&
             device == o.device && stream == o.stream && pid == o.pid && tid == o.tid &&
             range == o.range && context == o.context;
    }
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const;
  };
  const HitSite& find(const Key& key, const TraceOp& op);

  const FlagsTrace& trace_;
  std::vector<int> range_names_;  // by FlagsTrace::ranges index: one id per distinct name
  std::unordered_map<Key, std::unique_ptr<HitSite>, KeyHash> sites_;
};

/// A hit of one instance at `site`.
Hit make_hit(std::string rule, const HitSite& site, std::int64_t time_ns, std::int64_t start_ns);

/// Collects instances into one Hit per site: count, summed time at stake, earliest start.
class HitAggregator {
 public:
  explicit HitAggregator(std::string rule) : rule_(std::move(rule)) {}
  /// Adds one instance and returns its hit, to add metrics to.
  Hit& add(const HitSite& site, std::int64_t time_ns, std::int64_t start_ns);
  /// The same for a site that lives and stays unchanged as long as this aggregator (a SiteCache's):
  /// its hit is found by the site's address after the first instance.
  Hit& add_cached(const HitSite& site, std::int64_t time_ns, std::int64_t start_ns);
  /// The hits, in site order.
  std::vector<Hit> take();

 private:
  static void count(Hit& h, std::int64_t time_ns, std::int64_t start_ns);

  std::string rule_;
  std::map<HitSite, Hit> hits_;
  std::unordered_map<const HitSite*, Hit*> by_address_;
};

/// "12.345 µs" etc. (format_duration) of an integer nanosecond count.
std::string flags_duration(double ns);

}  // namespace fuselens::analyzer
