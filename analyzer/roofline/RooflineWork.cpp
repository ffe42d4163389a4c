// Work of one launch or one range: from hardware counters and from annotations (Roofline.h).
#include <charconv>
#include <cmath>
#include <string_view>

#include "roofline/Roofline.h"

namespace fuselens::analyzer {
namespace {

std::optional<double> parse_number(std::string_view text) {
  double value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty() || !std::isfinite(value) || value < 0) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

const char* to_string(WorkSource source) {
  return source == WorkSource::Counters ? "counters" : "annotation";
}

std::optional<Work> parse_work_annotation(const std::string& text) {
  const std::string_view prefix = kAnnotationPrefix;
  std::string_view rest(text);
  if (rest.substr(0, prefix.size()) != prefix) return std::nullopt;
  rest.remove_prefix(prefix.size());
  if (!rest.empty() && rest.front() != ' ') return std::nullopt;
  std::optional<double> flops, bytes;
  Precision precision = Precision::Fp32;
  while (!rest.empty()) {
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    if (rest.empty()) break;
    const std::size_t space = rest.find(' ');
    const std::string_view token = rest.substr(0, space);
    rest.remove_prefix(space == std::string_view::npos ? rest.size() : space);
    const std::size_t eq = token.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    const std::string_view key = token.substr(0, eq), value = token.substr(eq + 1);
    if (key == "flops") {
      flops = parse_number(value);
      if (!flops) return std::nullopt;
    } else if (key == "bytes") {
      bytes = parse_number(value);
      if (!bytes) return std::nullopt;
    } else if (key == "precision") {
      const auto p = parse_precision(std::string(value));
      if (!p) return std::nullopt;
      precision = *p;
    }  // other keys are ignored, for later versions of the annotation
  }
  if (!flops && !bytes) return std::nullopt;
  Work work;
  work.flops[static_cast<std::size_t>(precision)] = flops.value_or(0);
  if (bytes) work.bytes[static_cast<std::size_t>(MemoryLevel::Dram)] = *bytes;
  return work;
}

Work work_from_counters(const std::map<std::string, double>& counters) {
  namespace m = db::metric;
  auto get = [&](const char* name) {
    const auto it = counters.find(name);
    return it == counters.end() ? 0.0 : it->second;
  };
  auto has = [&](const char* name) { return counters.count(name) != 0; };
  Work w;
  w.flops[static_cast<std::size_t>(Precision::Fp32)] = get(m::kFadd) + get(m::kFmul) + 2 * get(m::kFfma);
  w.flops[static_cast<std::size_t>(Precision::Fp64)] = get(m::kDadd) + get(m::kDmul) + 2 * get(m::kDfma);
  w.flops[static_cast<std::size_t>(Precision::Fp16)] =
      2 * get(m::kHadd) + 2 * get(m::kHmul) + 4 * get(m::kHfma);
  w.flops[static_cast<std::size_t>(Precision::Tensor)] = get(m::kTensorFp16) + get(m::kTensorBf16) +
                                                         get(m::kTensorTf32) + get(m::kTensorFp8) +
                                                         get(m::kTensorFp64);
  if (has(m::kDramRead) || has(m::kDramWrite)) {
    w.bytes[static_cast<std::size_t>(MemoryLevel::Dram)] = get(m::kDramRead) + get(m::kDramWrite);
  }
  if (has(m::kL2Bytes)) w.bytes[static_cast<std::size_t>(MemoryLevel::L2)] = get(m::kL2Bytes);
  if (has(m::kL1Bytes)) w.bytes[static_cast<std::size_t>(MemoryLevel::L1)] = get(m::kL1Bytes);
  return w;
}

}  // namespace fuselens::analyzer
