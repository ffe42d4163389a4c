#pragma once
// ReplayStore: the reads of application replay (`prof-run --metrics roofline --replay
// application`, tools/prof-run/ReplayMerge.h), which pairs the profiled launches of each run's
// capture with those of the first run and copies their counters over (writing goes through
// RooflineWriter, RooflineStore.h).
//
// A profiled launch is a kernel row that has at least one kernel_metric row (the collector's range
// profiler writes both). Errors: db::Error when a query fails (a capture without the version-2
// kernel_metric table among them).

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fuselens/db/Reader.h"

namespace fuselens::db {

/// One profiled kernel launch: its correlation id and mangled kernel name (strings.value).
struct ProfiledLaunch {
  std::uint32_t correlation_id = 0;
  std::string mangled_name;
};

/// The profiled launches of one process, in correlation id order.
struct ProfiledProcess {
  std::uint32_t pid = 0;
  std::vector<ProfiledLaunch> launches;
};

/// Every process that launched a kernel, in the order of its first kernel's start (ties by pid),
/// each with its profiled launches; a process whose launches have no counters has none.
std::vector<ProfiledProcess> read_profiled_launches(const Reader& reader);

/// The counters of one launch, (CUPTI metric name, value) in storage order; the query is prepared
/// once (construction) and run for each launch.
class LaunchCounters {
 public:
  explicit LaunchCounters(const Reader& reader);
  /// The kernel_metric rows of launch (pid, correlation id); empty when it has none.
  std::vector<std::pair<std::string, double>> of(std::uint32_t pid, std::uint32_t correlation_id);

 private:
  Statement query_;
};

}  // namespace fuselens::db
