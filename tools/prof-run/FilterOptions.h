#pragma once
// FilterOptions: prof-run's counter launch filters (-k/--kernel-name, --kernel-name-base,
// -s/--launch-skip, --launch-skip-before-match, -c/--launch-count, --nvtx-include,
// --nvtx-exclude; docs/counters.md, collector LaunchFilter.h): their command-line definitions,
// their checks once parsed, and the environment variables that pass them to the collector.

#include <CLI/CLI.hpp>

#include <string>

#include "fuselens/collector/Config.h"

namespace fuselens::tools {

class FilterOptions {
 public:
  /// Adds the filter options to `app`; the name and the NVTX expressions go straight into `spec`,
  /// the rest into this object's texts until apply().
  void add_to(CLI::App& app, collector::LaunchFilterSpec& spec);
  /// Once `app` parsed: converts the texts into `spec` and checks them. `metrics`: whether
  /// --metrics was given. Throws collector::ConfigError (one line naming the option) for a
  /// filter without --metrics, an empty --kernel-name, a count that is not a whole number from 0
  /// to 10^15 or --launch-count 0, an unknown --kernel-name-base. The regex and the NVTX
  /// expressions are compiled by CollectorConfig::validate().
  void apply(const CLI::App& app, bool metrics, collector::LaunchFilterSpec& spec) const;

 private:
  std::string name_base_, skip_, skip_before_match_, count_;
};

/// Sets every filter variable of the collector (kEnvKernelName ... kEnvNvtxExclude) from `spec`,
/// empty or zero when unused, so that a stray value in the user's environment never reaches the
/// collector. For the workload's process, before it runs.
void set_filter_environment(const collector::LaunchFilterSpec& spec);

}  // namespace fuselens::tools
