#include "summary/NsysReports.h"

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <sstream>

#include "summary/SummaryFormat.h"

namespace fuselens::analyzer {
namespace {

constexpr NsysReport kAll[] = {NsysReport::KernSum,    NsysReport::MemTimeSum,
                               NsysReport::MemSizeSum, NsysReport::ApiSum,
                               NsysReport::NvtxSum,    NsysReport::NvtxGpuProjSum};

std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

std::string one(double value) { return fixed(value, 1); }
std::string megabytes(double bytes) { return fixed(bytes / 1e6, 3); }

/// Time (%),Total Time (ns),<count>,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns)
void time_columns(std::ostream& out, double percent, const DurationStats& s) {
  out << one(percent) << ',' << s.total_ns << ',' << s.count << ',' << one(s.avg_ns) << ','
      << one(s.median_ns) << ',' << s.min_ns << ',' << s.max_ns << ',' << one(s.stddev_ns);
}

std::string time_header(const char* count) {
  return std::string("Time (%),Total Time (ns),") + count +
         ",Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns)";
}

}  // namespace

const char* to_string(NsysReport report) {
  switch (report) {
    case NsysReport::KernSum:
      return "cuda_gpu_kern_sum";
    case NsysReport::MemTimeSum:
      return "cuda_gpu_mem_time_sum";
    case NsysReport::MemSizeSum:
      return "cuda_gpu_mem_size_sum";
    case NsysReport::ApiSum:
      return "cuda_api_sum";
    case NsysReport::NvtxSum:
      return "nvtx_sum";
    case NsysReport::NvtxGpuProjSum:
      return "nvtx_gpu_proj_sum";
    case NsysReport::DeviceMemorySum:
      return "device_memory_sum";
  }
  return "";
}

bool is_nsys_report_name(std::string_view name) {
  return std::any_of(std::begin(kAll), std::end(kAll),
                     [&](NsysReport r) { return name == to_string(r); });
}

std::vector<NsysReport> reports_named(std::string_view name) {
  for (const NsysReport r : kAll) {
    if (name == to_string(r)) return {r};
  }
  if (name == to_string(NsysReport::DeviceMemorySum)) return {NsysReport::DeviceMemorySum};
  if (name == "kernels") return {NsysReport::KernSum};
  if (name == "memops") return {NsysReport::MemTimeSum, NsysReport::MemSizeSum};
  if (name == "api") return {NsysReport::ApiSum};
  if (name == "nvtx") return {NsysReport::NvtxSum, NsysReport::NvtxGpuProjSum};
  if (name == "memory") return {NsysReport::DeviceMemorySum};
  if (name == "all") {
    std::vector<NsysReport> all(std::begin(kAll), std::end(kAll));
    all.push_back(NsysReport::DeviceMemorySum);
    return all;
  }
  return {};
}

std::string nsys_report_path(const std::string& prefix, NsysReport report) {
  return prefix + "_" + to_string(report) + ".csv";
}

void write_nsys_csv(std::ostream& out, NsysReport report, const Summary& summary,
                    const std::vector<NvtxGpuProjectionRow>* projection) {
  switch (report) {
    case NsysReport::KernSum:
      out << time_header("Instances") << ",Name\n";
      for (const auto& r : summary.kernels) {
        time_columns(out, r.time_percent, r.stats);
        out << ',' << csv_field(r.name) << '\n';
      }
      break;
    case NsysReport::MemTimeSum:
      out << time_header("Count") << ",Operation\n";
      for (const auto& r : summary.memory_operations) {
        time_columns(out, r.time_percent, r.stats);
        out << ',' << csv_field(r.name) << '\n';
      }
      break;
    case NsysReport::MemSizeSum: {
      out << "Total (MB),Count,Avg (MB),Med (MB),Min (MB),Max (MB),StdDev (MB),Operation\n";
      std::vector<const MemoryOperationRow*> rows;
      for (const auto& r : summary.memory_operations) rows.push_back(&r);
      std::stable_sort(rows.begin(), rows.end(), [](const auto* a, const auto* b) {
        return a->size_stats.total_ns > b->size_stats.total_ns;
      });
      for (const auto* r : rows) {
        const DurationStats& s = r->size_stats;
        out << megabytes(static_cast<double>(s.total_ns)) << ',' << s.count << ','
            << megabytes(s.avg_ns) << ',' << megabytes(s.median_ns) << ','
            << megabytes(static_cast<double>(s.min_ns)) << ','
            << megabytes(static_cast<double>(s.max_ns)) << ',' << megabytes(s.stddev_ns) << ','
            << csv_field(r->name) << '\n';
      }
      break;
    }
    case NsysReport::ApiSum:
      out << time_header("Num Calls") << ",Name\n";
      for (const auto& r : summary.api) {
        time_columns(out, r.time_percent, r.stats);
        out << ',' << csv_field(r.name) << '\n';
      }
      break;
    case NsysReport::NvtxSum:
      out << time_header("Instances") << ",Style,Range\n";
      for (const auto& r : summary.nvtx) {
        if (r.stats.count == 0) continue;  // only never-ended ranges: nothing timed
        time_columns(out, r.time_percent, r.stats);
        out << ",PushPop," << csv_field(r.name) << '\n';
      }
      break;
    case NsysReport::NvtxGpuProjSum:
      out << "Range,Style,Total Proj Time (ns),Total Range Time (ns),Range Instances,"
             "Proj Avg (ns),Proj Med (ns),Proj Min (ns),Proj Max (ns),Proj StdDev (ns),"
             "Total GPU Ops,Avg GPU Ops,Avg Range Lvl,Avg Num Child\n";
      if (projection == nullptr) break;
      for (const auto& r : *projection) {
        const DurationStats& s = r.projected;
        const double n = s.count > 0 ? static_cast<double>(s.count) : 1.0;
        out << csv_field(r.name) << ",PushPop," << s.total_ns << ',' << r.range_total_ns << ','
            << s.count << ',' << one(s.avg_ns) << ',' << one(s.median_ns) << ',' << s.min_ns << ','
            << s.max_ns << ',' << one(s.stddev_ns) << ',' << r.gpu_ops << ','
            << one(static_cast<double>(r.gpu_ops) / n) << ',' << one(r.avg_level) << ','
            << one(r.avg_children) << '\n';
      }
      break;
    case NsysReport::DeviceMemorySum: {
      SummarySections only = SummarySections::none();
      only.device_memory = true;
      // The summary's own CSV of the table, without its "# device_memory" section line.
      std::ostringstream text;
      write_summary(text, summary, OutputFormat::Csv, only);
      std::string csv = text.str();
      if (csv.rfind("# ", 0) == 0) csv.erase(0, csv.find('\n') + 1);
      out << csv;
      break;
    }
  }
}

}  // namespace fuselens::analyzer
