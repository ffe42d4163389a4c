#include "fuselens/collector/Config.h"

#include "fuselens/collector/LaunchFilter.h"
#include "fuselens/db/Printable.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <utility>

namespace fuselens::collector {
namespace {

constexpr std::array<std::pair<std::string_view, std::uint32_t>, 10> kGroups = {{
    {"cuda", kTraceCuda},
    {"sync", kTraceSync},
    {"memory", kTraceMemory},
    {"api", kTraceApi},
    {"runtime", kTraceRuntime},
    {"driver", kTraceDriver},
    {"nvtx", kTraceNvtx},
    {"overhead", kTraceOverhead},
    {"context", kTraceContext},
    {"args", kTraceArgs},
}};

std::uint32_t group_bits(std::string_view item) {
  if (item == "all") return kTraceAll;
  for (const auto& [name, value] : kGroups) {
    if (name == item) return value;
  }
  throw ConfigError(
      "unknown trace group '" + std::string(item) +
      "' (known: cuda, sync, memory, api, runtime, driver, nvtx, overhead, context, args, all; "
      "+GROUP / -GROUP change the default)");
}

std::uint32_t parse_uint(std::string_view name, std::string_view text) {
  std::uint32_t value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty()) {
    throw ConfigError(std::string(name) + ": '" + std::string(text) + "' is not a whole number");
  }
  return value;
}

void check_range(std::string_view name, std::uint32_t value, std::uint32_t lo, std::uint32_t hi) {
  if (value < lo || value > hi) {
    throw ConfigError(std::string(name) + " must be in " + std::to_string(lo) + ".." +
                      std::to_string(hi) + ", got " + std::to_string(value));
  }
}

}  // namespace

std::uint32_t parse_trace(std::string_view list) {
  std::uint32_t absolute = 0, added = 0, removed = 0;
  bool any_absolute = false, any_relative = false;
  std::size_t pos = 0;
  while (pos <= list.size()) {
    const std::size_t comma = list.find(',', pos);
    std::string_view item =
        list.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    const char sign = item.empty() ? '\0' : item.front();
    if (sign == '+' || sign == '-') {
      any_relative = true;
      item.remove_prefix(1);
      (sign == '+' ? added : removed) |= group_bits(item);
    } else {
      any_absolute = true;
      absolute |= group_bits(item);
    }
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  if (any_absolute && any_relative) {
    throw ConfigError("trace list '" + std::string(list) +
                      "' mixes group names with +GROUP/-GROUP changes; use one form");
  }
  return any_relative ? ((kTraceDefault | added) & ~removed) : absolute;
}

std::string trace_to_string(std::uint32_t mask) {
  std::string out;
  for (const auto& [name, value] : kGroups) {
    if (mask & value) {
      if (!out.empty()) out += ',';
      out += name;
    }
  }
  return out;
}

ContextMethod parse_context_method(std::string_view name) {
  if (name == "cached") return ContextMethod::Cached;
  if (name == "unwind") return ContextMethod::Unwind;
  if (name == "none") return ContextMethod::None;
  throw ConfigError(std::string(kEnvContextMethod) + ": unknown method '" + std::string(name) +
                    "' (known: cached, unwind, none)");
}

void CollectorConfig::validate() const {
  check_range("buffer size (KiB)", buffer_kib, 64, 256 * 1024);
  check_range("max buffers", max_buffers, 2, 4096);
  check_range("flush period (ms)", flush_period_ms, 10, 60000);
  if (trace == 0) throw ConfigError("nothing to trace");
  if (!metrics.empty() && metrics != "roofline") {
    throw ConfigError("unknown metric set '" + metrics + "' (known: roofline)");
  }
  if (metric_replay != "kernel" && metric_replay != "application") {
    throw ConfigError("unknown replay mode '" + metric_replay + "' (known: kernel, application)");
  }
  if (cache_control != "all" && cache_control != "none") {
    throw ConfigError("unknown cache control '" + cache_control + "' (known: all, none)");
  }
  check_range("metric pass", metric_pass, 0, 1000);
  const bool range = capture_range.kind != CaptureRange::Kind::None;
  const bool sample = sample_every > 0;
  if (range && steps) throw ConfigError("a capture range and --steps both choose what to record");
  if (sample && (range || steps)) {
    throw ConfigError("--sample chooses the steps to record: not with --capture-range or --steps");
  }
  if (sample_every > 1'000'000) throw ConfigError("--sample 1/N: N must be at most 1000000");
  if ((delay_ms > 0 || duration_ms > 0) && (range || steps || sample)) {
    throw ConfigError(
        "--delay/--duration cannot be combined with a capture range, --steps or --sample");
  }
  if (capture_range_windows != 1 && !range) {
    throw ConfigError("--capture-range-end needs --capture-range");
  }
  if (!step_range.empty() && !steps && !sample) {
    throw ConfigError("--step-range needs --steps or --sample");
  }
  if (aggregate && !metrics.empty()) {
    throw ConfigError("counters (--metrics) are per launch: they cannot be aggregated");
  }
  if (controlled() && !metrics.empty()) {
    throw ConfigError("counters (--metrics) cannot be limited to windows; profile the whole run");
  }
  if (filter.any()) {
    if (metrics.empty()) {
      throw ConfigError(
          "--kernel-name, --launch-skip, --launch-skip-before-match, --launch-count, "
          "--nvtx-include and --nvtx-exclude choose launches for counters: they need --metrics");
    }
    (void)LaunchFilter(filter);  // compiles the regex and the NVTX expressions, or throws
  }
  constexpr std::uint64_t kYearMs = 1000ull * 86400 * 365;
  if (delay_ms > kYearMs || duration_ms > kYearMs) {
    throw ConfigError("--delay and --duration must be under a year");
  }
}

namespace {

std::uint32_t step_field(std::string_view text, std::string_view field) {
  std::uint32_t v = 0;
  const auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
  if (field.empty() || ec != std::errc() || ptr != field.data() + field.size() ||
      v >= 1'000'000'000) {
    throw ConfigError("--steps '" + std::string(text) +
                      "': expected WAIT:WARMUP:ACTIVE[:REPEAT] as whole numbers");
  }
  return v;
}

}  // namespace

CaptureRange parse_capture_range(std::string_view text) {
  if (text == "cudaProfilerApi") return {CaptureRange::Kind::ProfilerApi, "", ""};
  if (text.substr(0, 5) != "nvtx:") {
    throw ConfigError("--capture-range '" + std::string(text) +
                      "': expected nvtx:NAME[@DOMAIN] or cudaProfilerApi");
  }
  std::string_view rest = text.substr(5);
  const auto at = rest.rfind('@');
  CaptureRange r{CaptureRange::Kind::Nvtx, std::string(rest.substr(0, at)), ""};
  if (at != std::string_view::npos) r.domain = std::string(rest.substr(at + 1));
  if (r.name.empty() || (at != std::string_view::npos && r.domain.empty())) {
    throw ConfigError("--capture-range '" + std::string(text) +
                      "': NAME and DOMAIN must not be empty (nvtx:NAME or nvtx:NAME@DOMAIN)");
  }
  return r;
}

std::uint32_t parse_capture_range_end(std::string_view text) {
  if (text == "stop") return 1;
  if (text == "repeat") return 0;
  if (text.substr(0, 7) == "repeat:") {
    const std::string_view n = text.substr(7);
    std::uint32_t v = 0;
    const auto [ptr, ec] = std::from_chars(n.data(), n.data() + n.size(), v);
    if (!n.empty() && ec == std::errc() && ptr == n.data() + n.size() && v >= 1 && v < 1'000'000)
      return v;
  }
  throw ConfigError("--capture-range-end '" + std::string(text) +
                    "': expected stop, repeat or repeat:N with N >= 1");
}

std::uint32_t parse_sample(std::string_view text) {
  const std::string shown = db::printable(text, 64);
  if (text.substr(0, 2) != "1/") {
    if (text.find('/') != std::string_view::npos &&
        text.find_first_of("0123456789") != std::string_view::npos &&
        text.find_first_of("mnus") != std::string_view::npos) {
      throw ConfigError("--sample '" + shown +
                        "': a time duty cycle is not supported; sample steps with 1/N");
    }
    throw ConfigError("--sample '" + shown + "': expected 1/N (one step in N, N >= 1)");
  }
  const std::string_view n = text.substr(2);
  std::uint32_t v = 0;
  const auto [ptr, ec] = std::from_chars(n.data(), n.data() + n.size(), v);
  if (n.empty() || n.front() == '0' || ec != std::errc() || ptr != n.data() + n.size() ||
      v > 1'000'000) {
    throw ConfigError("--sample '" + shown + "': N must be a whole number from 1 to 1000000");
  }
  return v;
}

StepSchedule parse_steps(std::string_view text) {
  std::string_view fields[5];
  std::size_t n = 0, begin = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == ':') {
      if (n == 5) break;
      fields[n++] = text.substr(begin, i - begin);
      begin = i + 1;
    }
  }
  if (n < 3 || n > 4) {
    throw ConfigError("--steps '" + std::string(text) + "': expected WAIT:WARMUP:ACTIVE[:REPEAT]");
  }
  StepSchedule s{step_field(text, fields[0]), step_field(text, fields[1]),
                 step_field(text, fields[2]), n == 4 ? step_field(text, fields[3]) : 0};
  if (s.active == 0) throw ConfigError("--steps '" + std::string(text) + "': ACTIVE must be >= 1");
  return s;
}

CollectorConfig CollectorConfig::from_environment() {
  CollectorConfig config;
  auto env = [](const char* name) -> std::optional<std::string_view> {
    const char* value = std::getenv(name);
    return value ? std::optional<std::string_view>(value) : std::nullopt;
  };
  if (auto v = env(kEnvOutput)) config.output = std::string(*v);
  if (auto v = env(kEnvTrace)) config.trace = parse_trace(*v);
  if (auto v = env(kEnvBufferKiB)) config.buffer_kib = parse_uint(kEnvBufferKiB, *v);
  if (auto v = env(kEnvMaxBuffers)) config.max_buffers = parse_uint(kEnvMaxBuffers, *v);
  if (auto v = env(kEnvFlushMs)) config.flush_period_ms = parse_uint(kEnvFlushMs, *v);
  if (auto v = env(kEnvMetrics)) config.metrics = std::string(*v);
  if (auto v = env(kEnvMetricReplay)) config.metric_replay = std::string(*v);
  if (auto v = env(kEnvMetricPass)) config.metric_pass = parse_uint(kEnvMetricPass, *v);
  if (auto v = env(kEnvCacheControl)) config.cache_control = std::string(*v);
  if (auto v = env(kEnvContextMethod)) config.context_method = parse_context_method(*v);
  auto flag = [&](const char* name, bool& out) {
    if (auto v = env(name)) {
      if (*v != "0" && *v != "1") {
        throw ConfigError(std::string(name) + ": '" + std::string(*v) + "' is not 0 or 1");
      }
      out = *v == "1";
    }
  };
  if (env(kEnvPythonFrames)) {
    bool on = false;
    flag(kEnvPythonFrames, on);
    config.python_frames = on;
  }
  if (auto v = env(kEnvTorchModules)) {
    if (*v == "frames" || *v == "on" || *v == "1") {
      config.torch_module_frames = true;
    } else if (*v == "hooks" || *v == "off" || *v == "0") {
      config.torch_module_frames = false;
    } else {
      throw ConfigError(std::string(kEnvTorchModules) + ": '" + std::string(*v) +
                        "' is not frames, hooks or off");
    }
  }
  flag(kEnvContextStats, config.context_stats);
  flag(kEnvPerProcess, config.per_process);
  flag(kEnvExitShim, config.exit_shim);
  flag(kEnvAggregateKeepTrace, config.aggregate_keep_trace);
  if (auto v = env(kEnvApiSelect)) {
    if (*v != "kind" && *v != "ids") {
      throw ConfigError(std::string(kEnvApiSelect) + ": '" + std::string(*v) +
                        "' is not kind or ids");
    }
    config.api_select = *v == "ids" ? ApiSelect::kIds : ApiSelect::kKind;
  }
  if (auto v = env(kEnvMode); v && !v->empty()) {
    if (*v != "trace" && *v != "aggregate") {
      throw ConfigError(std::string(kEnvMode) + ": '" + std::string(*v) +
                        "' is not trace or aggregate");
    }
    config.aggregate = *v == "aggregate";
  }
  if (auto v = env(kEnvControlApi)) {
    if (*v == "runtime") {
      config.window_api = WindowApi::kRuntime;
    } else if (*v == "filter") {
      config.window_api = WindowApi::kFilter;
    } else if (*v == "both") {
      config.window_api = WindowApi::kBoth;
    } else if (*v == "driver-ids") {
      config.window_api = WindowApi::kDriverIds;
    } else {
      throw ConfigError(std::string(kEnvControlApi) + ": '" + std::string(*v) +
                        "' is not runtime, filter, both or driver-ids");
    }
  }
  if (auto v = env(kEnvCaptureRange); v && !v->empty()) {
    config.capture_range = parse_capture_range(*v);
  }
  if (auto v = env(kEnvCaptureRangeEnd)) config.capture_range_windows = parse_capture_range_end(*v);
  auto u64 = [&](const char* name) -> std::uint64_t {
    const auto v = env(name);
    if (!v) return 0;
    std::uint64_t out = 0;
    const auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
    if (v->empty() || ec != std::errc() || ptr != v->data() + v->size()) {
      throw ConfigError(std::string(name) + ": '" + std::string(*v) + "' is not a whole number");
    }
    return out;
  };
  config.delay_ms = u64(kEnvDelayMs);
  config.duration_ms = u64(kEnvDurationMs);
  config.start_utc_ns = u64(kEnvStartUtcNs);
  if (auto v = env(kEnvSteps); v && !v->empty()) config.steps = parse_steps(*v);
  if (auto v = env(kEnvSample); v && !v->empty()) config.sample_every = parse_sample(*v);
  // Sampling idles between its steps with nothing but the counting callbacks on: driver-ids
  // unless the variable asks otherwise (Config.h window_api).
  if (config.sample_every > 0 && !env(kEnvControlApi)) {
    config.window_api = WindowApi::kDriverIds;
  }
  // Launch filters: empty values are unset (prof-run always sets them).
  if (auto v = env(kEnvKernelName); v && !v->empty()) config.filter.kernel_name = std::string(*v);
  if (auto v = env(kEnvKernelNameBase); v && !v->empty()) {
    config.filter.name_base = parse_kernel_name_base(*v);
  }
  if (auto v = env(kEnvLaunchSkip); v && !v->empty()) {
    config.filter.launch_skip = parse_launch_number(kEnvLaunchSkip, *v);
  }
  if (auto v = env(kEnvLaunchSkipBeforeMatch); v && !v->empty()) {
    config.filter.launch_skip_before_match = parse_launch_number(kEnvLaunchSkipBeforeMatch, *v);
  }
  if (auto v = env(kEnvLaunchCount); v && !v->empty()) {
    config.filter.launch_count = parse_launch_number(kEnvLaunchCount, *v);
    if (config.filter.launch_count == 0) {
      throw ConfigError(std::string(kEnvLaunchCount) + ": must be at least 1");
    }
  }
  auto lines = [&](const char* name, std::vector<std::string>& out) {
    const auto v = env(name);
    if (!v) return;
    std::size_t pos = 0;
    while (pos < v->size()) {
      const std::size_t nl = std::min(v->find('\n', pos), v->size());
      if (nl > pos) out.emplace_back(v->substr(pos, nl - pos));
      pos = nl + 1;
    }
  };
  lines(kEnvNvtxInclude, config.filter.nvtx_include);
  lines(kEnvNvtxExclude, config.filter.nvtx_exclude);
  // The tools read the same variable for their progress line: the same values
  // (tools/common/ProgressLine.h, parse_progress_mode).
  if (auto v = env(kEnvProgress); v && *v != "auto" && !v->empty()) {
    if (*v == "1" || *v == "always") {
      config.progress = true;
    } else if (*v == "0" || *v == "never") {
      config.progress = false;
    } else {
      throw ConfigError(std::string(kEnvProgress) + ": '" + std::string(*v) +
                        "' is not auto, always (1) or never (0)");
    }
  }
  if (auto v = env(kEnvStepRange)) config.step_range = std::string(*v);
  config.validate();
  return config;
}

namespace {

// The position in `path` where per_process_output inserts ".<pid>": before the file name's last
// dot, or at the end when the name has none (a leading dot does not count).
std::size_t pid_insert_position(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  const std::size_t name = slash == std::string::npos ? 0 : slash + 1;
  const std::size_t dot = path.rfind('.');
  return dot != std::string::npos && dot > name ? dot : path.size();
}

}  // namespace

std::string per_process_output(const std::string& output, std::uint32_t pid) {
  const std::size_t at = pid_insert_position(output);
  return output.substr(0, at) + "." + std::to_string(pid) + output.substr(at);
}

std::optional<std::uint32_t> per_process_pid(const std::string& output,
                                             const std::string& candidate) {
  const std::size_t at = pid_insert_position(output);
  const std::string_view head(output.data(), at), tail(output.data() + at, output.size() - at);
  const std::string_view c(candidate);
  if (c.size() < head.size() + tail.size() + 2 || c.substr(0, head.size()) != head ||
      c.substr(c.size() - tail.size()) != tail || c[head.size()] != '.') {
    return std::nullopt;
  }
  const std::string_view digits =
      c.substr(head.size() + 1, c.size() - tail.size() - head.size() - 1);
  if (digits.empty() || digits.front() == '0') return std::nullopt;
  std::uint32_t pid = 0;
  const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) return std::nullopt;
  return pid;
}

}  // namespace fuselens::collector
