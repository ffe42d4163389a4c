#include "window/Window.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "fuselens/db/AnalysisStore.h"
#include "fuselens/db/TraceCursors.h"

namespace fuselens::analyzer {
namespace {

constexpr const char* kWindowForms = "all, steady, steps:A-B, range:GLOB or time:T0-T1";

[[noreturn]] void syntax(const std::string& text, const std::string& why) {
  throw WindowError(WindowError::Kind::Syntax, "--window '" + text + "': " + why);
}

[[noreturn]] void empty(const std::string& text, const std::string& why) {
  throw WindowError(WindowError::Kind::Empty, "--window '" + text + "' selects nothing: " + why);
}

// A positive step number; nullopt for anything else (signs, spaces, overflow).
std::optional<int> step_number(std::string_view s) {
  int value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || value < 1) return std::nullopt;
  return value;
}

// A time offset "1.5", "1.5s", "200ms", "30us", "100ns" in ns; nullopt when malformed or
// beyond kMaxTimestampNs.
std::optional<std::int64_t> time_offset(std::string_view s) {
  double scale = 1e9;
  for (const auto& [suffix, factor] :
       {std::pair<std::string_view, double>{"ms", 1e6}, {"us", 1e3}, {"ns", 1.0}, {"s", 1e9}}) {
    if (s.size() > suffix.size() && s.substr(s.size() - suffix.size()) == suffix) {
      s.remove_suffix(suffix.size());
      scale = factor;
      break;
    }
  }
  if (s.empty() || !(std::isdigit(static_cast<unsigned char>(s.front())) || s.front() == '.'))
    return std::nullopt;
  double value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(value)) return std::nullopt;
  const double ns = value * scale;
  if (ns < 0 || ns >= static_cast<double>(db::kMaxTimestampNs)) return std::nullopt;
  return static_cast<std::int64_t>(std::llround(ns));
}

std::string seconds(std::int64_t ns) {
  const double s = static_cast<double>(ns) / 1e9;
  if (s >= 1) return fmt::format("{:.2f} s", s);
  if (s >= 1e-3) return fmt::format("{:.1f} ms", s * 1e3);
  return fmt::format("{:.0f} us", s * 1e6);
}

// The capture's first and last recorded activity (GPU work and API calls) from the rows.
std::pair<std::int64_t, std::int64_t> extent_from_rows(const db::Reader& reader) {
  std::optional<std::int64_t> first, last;
  for (auto table : {db::TimedTable::Kernel, db::TimedTable::Memcpy, db::TimedTable::Memset,
                     db::TimedTable::ApiCall}) {
    const db::TimeExtent extent = db::time_extent(reader, table);
    if (extent.first_ns) first = first ? std::min(*first, *extent.first_ns) : *extent.first_ns;
    if (extent.last_ns) last = last ? std::max(*last, *extent.last_ns) : *extent.last_ns;
  }
  if (!first || !last) return {0, 0};
  return {*first, *last};
}

// The union of the spans, sorted and disjoint (touching spans merged).
std::vector<TimeInterval> merged(std::vector<TimeInterval> spans) {
  std::sort(spans.begin(), spans.end(),
            [](const TimeInterval& a, const TimeInterval& b) { return a.start_ns < b.start_ns; });
  std::vector<TimeInterval> out;
  for (const auto& s : spans) {
    if (s.end_ns <= s.start_ns) continue;
    if (!out.empty() && s.start_ns <= out.back().end_ns) {
      out.back().end_ns = std::max(out.back().end_ns, s.end_ns);
    } else {
      out.push_back(s);
    }
  }
  return out;
}

void describe(Window& w, const std::string& what, bool steady) {
  w.label = what;
  if (w.whole) {
    w.description = fmt::format("{}, {} captured", what, seconds(w.captured_ns));
    return;
  }
  const std::int64_t capture_end = w.capture_start_ns + w.captured_ns;
  const std::int64_t after = std::max<std::int64_t>(0, capture_end - w.intervals.back().end_ns);
  w.description =
      fmt::format("{}, {} of {} captured", what, seconds(w.inside_ns), seconds(w.captured_ns));
  if (steady) {
    w.description += fmt::format("; start-up {} excluded", seconds(w.startup_ns));
    if (after > 0) w.description += fmt::format(", {} after the last step", seconds(after));
  } else {
    w.description +=
        fmt::format("; {} before and {} after excluded", seconds(w.startup_ns), seconds(after));
  }
}

}  // namespace

WindowSpec parse_window(const std::string& text) {
  WindowSpec spec;
  spec.text = text;
  const auto colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : text.substr(colon + 1);
  if (colon == std::string::npos) {
    if (text == "all")
      spec.kind = WindowKind::All;
    else if (text == "steady")
      spec.kind = WindowKind::Steady;
    else
      syntax(text, std::string("expected ") + kWindowForms);
    return spec;
  }
  if (kind == "steps") {
    spec.kind = WindowKind::Steps;
    const auto dash = arg.find('-');
    const auto first = step_number(std::string_view(arg).substr(0, dash));
    if (!first) syntax(text, "expected steps:A-B, steps:A or steps:A- with step numbers from 1");
    spec.first_step = *first;
    if (dash == std::string::npos) {
      spec.last_step = *first;
    } else if (dash + 1 < arg.size()) {
      spec.last_step = step_number(std::string_view(arg).substr(dash + 1));
      if (!spec.last_step) syntax(text, "expected steps:A-B with step numbers from 1");
      if (*spec.last_step < spec.first_step) syntax(text, "the last step comes before the first");
    }
    return spec;
  }
  if (kind == "range") {
    spec.kind = WindowKind::Range;
    if (arg.empty()) syntax(text, "expected range:GLOB with a non-empty GLOB");
    spec.range_glob = arg;
    return spec;
  }
  if (kind == "time") {
    spec.kind = WindowKind::Time;
    const auto dash = arg.find('-');
    const auto t0 = time_offset(std::string_view(arg).substr(0, dash));
    if (!t0 || dash == std::string::npos) {
      syntax(text, "expected time:T0-T1 in seconds from the capture's start (or T0- to its end)");
    }
    spec.t0_ns = *t0;
    if (dash + 1 < arg.size()) {
      const auto t1 = time_offset(std::string_view(arg).substr(dash + 1));
      if (!t1) syntax(text, "expected time:T0-T1 in seconds (suffix s, ms, us or ns allowed)");
      if (*t1 <= *t0) syntax(text, "T1 must be later than T0");
      spec.t1_ns = *t1;
    } else {
      spec.t1_ns = db::kMaxTimestampNs;
    }
    return spec;
  }
  syntax(text, std::string("expected ") + kWindowForms);
}

bool Window::contains(std::int64_t t_ns) const {
  if (whole) return true;
  auto it = std::upper_bound(intervals.begin(), intervals.end(), t_ns,
                             [](std::int64_t t, const TimeInterval& i) { return t < i.start_ns; });
  return it != intervals.begin() && t_ns < std::prev(it)->end_ns;
}

std::pair<std::int64_t, std::int64_t> capture_extent(const db::Reader& reader) {
  if (const auto stored = db::stored_capture_extent(reader)) return *stored;
  return extent_from_rows(reader);
}

WindowSpec default_window(const std::string& text) {
  WindowSpec spec = parse_window(text);
  spec.by_default = true;
  return spec;
}

Window resolve_window(const db::Reader& reader, const WindowSpec& spec,
                      const StepOptions& step_options) {
  Window w;
  w.spec = spec;
  w.sampling = summarize_sampling(reader);
  const auto [first, last] = capture_extent(reader);
  w.capture_start_ns = first;
  w.captured_ns = last - first;
  w.inside_ns = w.captured_ns;
  const auto restrict_to = [&w](std::vector<TimeInterval> spans) {
    w.whole = false;
    w.intervals = merged(std::move(spans));
    w.inside_ns = 0;
    for (const auto& i : w.intervals) w.inside_ns += i.end_ns - i.start_ns;
    if (!w.intervals.empty()) {
      w.startup_ns = std::max<std::int64_t>(0, w.intervals.front().start_ns - w.capture_start_ns);
    }
  };
  switch (spec.kind) {
    case WindowKind::All:
      describe(w, "whole capture", false);
      return w;
    case WindowKind::Time: {
      const std::int64_t t0 = first + spec.t0_ns;
      const std::int64_t t1 =
          spec.t1_ns >= db::kMaxTimestampNs - first ? last + 1 : first + spec.t1_ns;
      if (t0 > last) {
        empty(spec.text, fmt::format("the capture lasts {}", seconds(w.captured_ns)));
      }
      restrict_to({{t0, std::min(t1, last + 1)}});
      describe(w, fmt::format("time {}-{}", seconds(spec.t0_ns), seconds(t1 - first)), false);
      return w;
    }
    case WindowKind::Range: {
      StepOptions by_range = step_options;
      by_range.range_glob = spec.range_glob;
      by_range.function.reset();
      by_range.automatic = false;
      StepReport ranges;
      try {
        ranges = analyze_steps(reader, by_range);
      } catch (const StepError&) {
        empty(spec.text, "no NVTX range matches '" + spec.range_glob + "'");
      }
      std::vector<TimeInterval> spans;
      for (const auto& s : ranges.steps) spans.push_back({s.start_ns, s.end_ns});
      restrict_to(std::move(spans));
      describe(w,
               fmt::format("NVTX range '{}' ({} instance{})", spec.range_glob, ranges.steps.size(),
                           ranges.steps.size() == 1 ? "" : "s"),
               false);
      return w;
    }
    case WindowKind::Steady:
    case WindowKind::Steps:
      break;
  }
  // The steps prof-run stored when the run ended are those the default method finds: read them
  // instead of searching every launch again (a summary then costs what it did before windows).
  const bool default_method =
      !step_options.range_glob && !step_options.function && !step_options.automatic;
  std::optional<StepReport> stored;
  if (default_method) stored = stored_step_report(reader);
  if (spec.kind == WindowKind::Steady && spec.by_default && default_method &&
      reader.gpu_record_bound() > kMaxSteadyDefaultRecords) {
    // The whole capture, whose results prof-run stored; its steps (stored, or none: never a
    // search of every launch) go with it for the analyses that number steps (flags' verdict).
    w.steps = stored ? std::move(*stored) : StepReport{};
    if (!stored)
      w.steps->note = "not searched for the default window (prof-analyze steps finds them)";
    const auto count = w.steps->steps.size();
    const std::string steady =
        count > 0 && w.steps->steady_first > 0
            ? fmt::format("; --window steady: steps {}-{}", w.steps->steady_first, count)
            : "";
    describe(w,
             fmt::format("whole capture (the default above {} GPU records{})",
                         kMaxSteadyDefaultRecords, steady),
             false);
    return w;
  }
  w.steps = stored ? std::move(*stored) : analyze_steps(reader, step_options);
  const StepReport& report = *w.steps;
  const int count = static_cast<int>(report.steps.size());
  if (spec.kind == WindowKind::Steady) {
    if (count == 0 || report.steady_first == 0) {
      describe(w, "whole capture (no steps: " + report.note + ")", false);
      return w;
    }
    w.first_step = report.steady_first;
    w.last_step = count;
  } else {
    if (count == 0) empty(spec.text, "the capture has no steps (" + report.note + ")");
    const int last_step = spec.last_step.value_or(count);
    if (spec.first_step > count || last_step > count) {
      empty(spec.text, fmt::format("the capture has {} step{}", count, count == 1 ? "" : "s"));
    }
    w.first_step = spec.first_step;
    w.last_step = last_step;
  }
  std::vector<TimeInterval> spans;
  for (int i = w.first_step; i <= w.last_step; ++i) {
    const Step& s = report.steps[static_cast<std::size_t>(i - 1)];
    spans.push_back({s.start_ns, s.end_ns});
  }
  restrict_to(std::move(spans));
  const std::string range = w.first_step == w.last_step
                                ? fmt::format("step {}", w.first_step)
                                : fmt::format("steps {}-{}", w.first_step, w.last_step);
  const bool steady = spec.kind == WindowKind::Steady;
  describe(w, fmt::format("{} of {}{}", range, count, steady ? " (steady)" : ""), steady);
  return w;
}

void apply_window(db::Reader& reader, const Window& window) {
  if (window.whole) return;
  std::vector<db::TimeSpan> spans;
  for (const auto& i : window.intervals) spans.push_back({i.start_ns, i.end_ns});
  reader.restrict_to(spans);
  for (auto table : {db::TimedTable::Kernel, db::TimedTable::Memcpy, db::TimedTable::Memset,
                     db::TimedTable::ApiCall}) {
    if (db::has_rows(reader, table)) return;
  }
  empty(window.spec.text, "no GPU work or CUDA call starts inside " + window.label);
}

}  // namespace fuselens::analyzer
