// prof-analyze steps: table, CSV and JSON writers of a StepReport.

#include "steps/StepsFormat.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace fuselens::analyzer {

namespace {

double ms(double ns) { return ns / 1e6; }
double share(std::int64_t part, std::int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0;
}
std::int64_t stream_idle(const Step& s) {
  return s.host_wait_ns + s.kernel_wait_ns + s.other_wait_ns;
}

std::string method_text(const StepReport& r) {
  std::string text = step_method_name(r.method);
  if (r.method == StepMethod::Auto) {
    text += fmt::format(" (confidence {:.2f})", r.confidence);
  }
  return text + ": " + r.note;
}

void write_table(std::ostream& out, const StepReport& r) {
  out << "Steps: " << method_text(r) << "\n";
  out << steady_window_text(r) << "\n";
  if (r.steps.empty()) return;
  out << fmt::format(
      "{:>5} {:>11} {:>10} {:>10} {:>6} {:>8} {:>8} {:>6} {:>6} {:>6} {:>6} {:>8} {:>6} {:>5} "
      "{:>6} {:>9}  {}\n",
      "step", "start_ms", "wall_ms", "busy_ms", "busy%", "compute%", "noncomp%", "idle%", "host%",
      "kern%", "other%", "launches", "copies", "syncs", "allocs", "peak_MiB", "top kernel");
  const std::int64_t origin = r.steps.front().start_ns;
  for (const Step& s : r.steps) {
    const std::int64_t idle = stream_idle(s);
    out << fmt::format(
        "{:>4}{} {:>11.3f} {:>10.3f} {:>10.3f} {:>6.1f} {:>8.1f} {:>8.1f} {:>6.1f} {:>6.1f} "
        "{:>6.1f} {:>6.1f} {:>8} {:>6} {:>5} {:>6} {:>9.1f}  {}\n",
        s.index, s.index < r.steady_first ? "w" : " ", ms(static_cast<double>(s.start_ns - origin)),
        ms(static_cast<double>(s.wall_ns())), ms(static_cast<double>(s.gpu_busy_ns)),
        share(s.gpu_busy_ns, s.span_ns), share(s.compute_ns, s.span_ns),
        share(s.non_compute_ns, s.span_ns), share(s.idle_ns, s.span_ns),
        share(s.host_wait_ns, idle), share(s.kernel_wait_ns, idle), share(s.other_wait_ns, idle),
        s.launches, s.copies, s.syncs, s.allocations,
        static_cast<double>(s.peak_memory_bytes) / (1024.0 * 1024.0),
        s.top_kernel.empty() ? "-" : s.top_kernel);
  }
  const StepDistribution& d = r.distribution;
  out << fmt::format(
      "(w: warm-up, before the steady window; busy/compute/noncomp/idle%: of the step's span, "
      "its window widened to its GPU work; host/kern/other%: HTA's idle breakdown of the stream "
      "gaps)\nstep time over the steady steps: median {:.3f} ms, p10 {:.3f} ms, p90 {:.3f} "
      "ms, max {:.3f} ms; median step {}\n",
      ms(d.median_ns), ms(d.p10_ns), ms(d.p90_ns), ms(d.max_ns), r.median_step);
  if (r.outliers.empty()) {
    out << "outliers (wall > max(Q3 + 1.5 IQR, 1.2x median)): none\n";
  } else {
    out << "outliers (wall > max(Q3 + 1.5 IQR, 1.2x median)):\n";
    for (const auto& o : r.outliers) {
      out << "  step " << o.index << ": " << o.reason << "; " << o.differs << "\n";
    }
  }
}

void write_csv(std::ostream& out, const StepReport& r) {
  out << "step,method,pid,tid,label,start_ns,end_ns,wall_ns,gpu_busy_ns,compute_ns,non_compute_ns,"
         "span_ns,idle_ns,host_wait_ns,kernel_wait_ns,other_wait_ns,launches,kernels,copies,"
         "memsets,syncs,allocations,peak_memory_bytes,top_kernel,top_kernel_ns,steady,outlier\n";
  for (const Step& s : r.steps) {
    bool outlier = false;
    for (const auto& o : r.outliers) outlier = outlier || o.index == s.index;
    out << s.index << ',' << step_method_name(r.method) << ',' << s.pid << ',' << s.tid << ','
        << csv_field(s.label) << ',' << s.start_ns << ',' << s.end_ns << ',' << s.wall_ns() << ','
        << s.gpu_busy_ns << ',' << s.compute_ns << ',' << s.non_compute_ns << ',' << s.span_ns
        << ',' << s.idle_ns << ',' << s.host_wait_ns << ',' << s.kernel_wait_ns << ','
        << s.other_wait_ns << ',' << s.launches << ',' << s.kernels << ',' << s.copies << ','
        << s.memsets << ',' << s.syncs << ',' << s.allocations << ',' << s.peak_memory_bytes << ','
        << csv_field(s.top_kernel) << ',' << s.top_kernel_ns << ','
        << (s.index >= r.steady_first ? 1 : 0) << ',' << (outlier ? 1 : 0) << '\n';
  }
}

void write_json(std::ostream& out, const StepReport& r) {
  nlohmann::ordered_json j;
  j["method"] = step_method_name(r.method);
  j["pattern"] = r.pattern;
  j["confidence"] = r.confidence;
  j["period"] = r.period;
  j["note"] = r.note;
  j["steady"] = steady_window_text(r);
  j["captured_ns"] = r.captured_ns;
  j["steady_ns"] = r.steady_ns;
  j["steady_first"] = r.steady_first;
  j["median_step"] = r.median_step;
  const StepDistribution& d = r.distribution;
  j["distribution"] = {{"median_ns", d.median_ns}, {"p10_ns", d.p10_ns}, {"p25_ns", d.p25_ns},
                       {"p75_ns", d.p75_ns},       {"p90_ns", d.p90_ns}, {"max_ns", d.max_ns}};
  j["outlier_rule"] = "wall > max(Q3 + 1.5 IQR, 1.2 x median) among the steady steps";
  j["outliers"] = nlohmann::ordered_json::array();
  for (const auto& o : r.outliers) {
    j["outliers"].push_back({{"step", o.index}, {"reason", o.reason}, {"differs", o.differs}});
  }
  j["steps"] = nlohmann::ordered_json::array();
  for (const Step& s : r.steps) {
    j["steps"].push_back({{"step", s.index},
                          {"pid", s.pid},
                          {"tid", s.tid},
                          {"label", s.label},
                          {"start_ns", s.start_ns},
                          {"end_ns", s.end_ns},
                          {"wall_ns", s.wall_ns()},
                          {"gpu_busy_ns", s.gpu_busy_ns},
                          {"compute_ns", s.compute_ns},
                          {"non_compute_ns", s.non_compute_ns},
                          {"span_ns", s.span_ns},
                          {"idle_ns", s.idle_ns},
                          {"host_wait_ns", s.host_wait_ns},
                          {"kernel_wait_ns", s.kernel_wait_ns},
                          {"other_wait_ns", s.other_wait_ns},
                          {"launches", s.launches},
                          {"kernels", s.kernels},
                          {"copies", s.copies},
                          {"memsets", s.memsets},
                          {"syncs", s.syncs},
                          {"allocations", s.allocations},
                          {"peak_memory_bytes", s.peak_memory_bytes},
                          {"top_kernel", s.top_kernel},
                          {"top_kernel_ns", s.top_kernel_ns},
                          {"steady", s.index >= r.steady_first}});
  }
  out << j.dump(2) << "\n";
}

}  // namespace

std::string steady_window_text(const StepReport& r) {
  if (r.step_count == 0) {
    return fmt::format("no steps, {:.2f} s captured", static_cast<double>(r.captured_ns) / 1e9);
  }
  return fmt::format("steps {}-{} of {}, {:.3f} s of {:.2f} s captured", r.steady_first,
                     r.step_count, r.step_count, static_cast<double>(r.steady_ns) / 1e9,
                     static_cast<double>(r.captured_ns) / 1e9);
}

void write_steps(std::ostream& out, const StepReport& report, OutputFormat format) {
  switch (format) {
    case OutputFormat::Table:
      write_table(out, report);
      break;
    case OutputFormat::Csv:
      write_csv(out, report);
      break;
    case OutputFormat::Json:
      write_json(out, report);
      break;
  }
}

}  // namespace fuselens::analyzer
