#include "FilterOptions.h"

#include <stdlib.h>

#include <vector>

#include "fuselens/collector/LaunchFilter.h"

namespace fuselens::tools {

namespace c = fuselens::collector;

void FilterOptions::add_to(CLI::App& app, c::LaunchFilterSpec& spec) {
  app.add_option("-k,--kernel-name", spec.kernel_name,
                 "With --metrics: profile only kernels named NAME, or whose name RE matches "
                 "anywhere (regex:RE, RE2 syntax), as ncu --kernel-name; the others run unreplayed")
      ->type_name("NAME|regex:RE");
  app.add_option("--kernel-name-base", name_base_,
                 "What --kernel-name matches: function (the bare function name, default), "
                 "demangled or mangled, as ncu --kernel-name-base")
      ->type_name("function|demangled|mangled");
  app.add_option("-s,--launch-skip", skip_,
                 "With --metrics: skip the first N launches that pass the name and NVTX filters")
      ->type_name("N");
  app.add_option("--launch-skip-before-match", skip_before_match_,
                 "With --metrics: leave out the first N launches of any kernel before the filters "
                 "match (ncu --launch-skip-before-match)")
      ->type_name("N");
  app.add_option("-c,--launch-count", count_,
                 "With --metrics: profile at most N launches (N >= 1) that pass the filters, after "
                 "--launch-skip")
      ->type_name("N");
  app.add_option("--nvtx-include", spec.nvtx_include,
                 "With --metrics: profile only launches inside NVTX ranges: A/ (push/pop range A "
                 "on the thread's stack), A/B/, A/*/B/, [A/ (outermost), B] (innermost), "
                 "DOMAIN@A/, A (an open start/end range); * and ? globs, \\ escapes. Repeatable: "
                 "any one suffices")
      ->type_name("EXPR")
      ->allow_extra_args(false);
  app.add_option("--nvtx-exclude", spec.nvtx_exclude,
                 "With --metrics: leave out launches matching EXPR (same syntax). Repeatable")
      ->type_name("EXPR")
      ->allow_extra_args(false);
}

void FilterOptions::apply(const CLI::App& app, bool metrics, c::LaunchFilterSpec& spec) const {
  for (const char* option :
       {"--kernel-name", "--kernel-name-base", "--launch-skip", "--launch-skip-before-match",
        "--launch-count", "--nvtx-include", "--nvtx-exclude"}) {
    if (app.count(option) > 0 && !metrics) {
      throw c::ConfigError(std::string(option) +
                           " chooses launches for counters: it needs --metrics");
    }
  }
  if (app.count("--kernel-name") > 0 && spec.kernel_name.empty()) {
    throw c::ConfigError("--kernel-name: expected NAME or regex:RE, not an empty name");
  }
  if (app.count("--kernel-name-base") > 0) spec.name_base = c::parse_kernel_name_base(name_base_);
  if (app.count("--launch-skip") > 0) {
    spec.launch_skip = c::parse_launch_number("--launch-skip", skip_);
  }
  if (app.count("--launch-skip-before-match") > 0) {
    spec.launch_skip_before_match =
        c::parse_launch_number("--launch-skip-before-match", skip_before_match_);
  }
  if (app.count("--launch-count") > 0) {
    spec.launch_count = c::parse_launch_number("--launch-count", count_);
    if (spec.launch_count == 0) {
      throw c::ConfigError(
          "--launch-count 0: expected at least 1 (leave it out to profile every launch)");
    }
  }
}

void set_filter_environment(const c::LaunchFilterSpec& spec) {
  auto lines = [](const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items) out += (out.empty() ? "" : "\n") + item;
    return out;
  };
  ::setenv(c::kEnvKernelName, spec.kernel_name.c_str(), 1);
  ::setenv(c::kEnvKernelNameBase, c::kernel_name_base_name(spec.name_base), 1);
  ::setenv(c::kEnvLaunchSkip, std::to_string(spec.launch_skip).c_str(), 1);
  ::setenv(c::kEnvLaunchSkipBeforeMatch, std::to_string(spec.launch_skip_before_match).c_str(), 1);
  ::setenv(c::kEnvLaunchCount, spec.launch_count ? std::to_string(spec.launch_count).c_str() : "",
           1);
  ::setenv(c::kEnvNvtxInclude, lines(spec.nvtx_include).c_str(), 1);
  ::setenv(c::kEnvNvtxExclude, lines(spec.nvtx_exclude).c_str(), 1);
}

}  // namespace fuselens::tools
