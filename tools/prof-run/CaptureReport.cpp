#include "CaptureReport.h"

#include <fmt/format.h>

#include <algorithm>

#include "summary/Summary.h"
#include "summary/SummaryFormat.h"
#include "fuselens/db/Reader.h"

namespace fuselens::collector {

std::string capture_report_line(const db::Reader& reader) {
  const analyzer::Summary s = analyzer::summarize(reader);
  if (!s.cuda_used) return "the workload never initialized CUDA: the capture holds no GPU activity";
  std::int64_t peak = 0;
  for (const auto& d : s.device_memory) peak = std::max(peak, d.peak_bytes);
  std::string line = fmt::format(
      "{} kernels, {} memcpys, total GPU time {}, peak device memory {}", s.totals.kernel_count,
      s.totals.memcpy_count, analyzer::format_duration(static_cast<double>(s.totals.kernel_time_ns)),
      analyzer::format_bytes(static_cast<double>(peak)));
  if (s.run.dropped_records > 0) line += fmt::format(", {} records dropped", s.run.dropped_records);
  return line;
}

}  // namespace fuselens::collector
