#include "roofline/RooflineMath.h"

#include <algorithm>

namespace fuselens::analyzer {

const char* to_string(Precision precision) {
  switch (precision) {
    case Precision::Fp64: return "fp64";
    case Precision::Fp32: return "fp32";
    case Precision::Fp16: return "fp16";
    case Precision::Tensor: return "tensor";
  }
  return "?";
}

const char* to_string(MemoryLevel level) {
  switch (level) {
    case MemoryLevel::Dram: return "dram";
    case MemoryLevel::L2: return "l2";
    case MemoryLevel::L1: return "l1";
  }
  return "?";
}

std::optional<Precision> parse_precision(const std::string& name) {
  for (std::size_t i = 0; i < kPrecisions; ++i) {
    if (name == to_string(static_cast<Precision>(i))) return static_cast<Precision>(i);
  }
  return std::nullopt;
}

double Work::total_flops() const {
  double sum = 0;
  for (const double f : flops) sum += f;
  return sum;
}

Work& Work::operator+=(const Work& other) {
  for (std::size_t i = 0; i < kPrecisions; ++i) flops[i] += other.flops[i];
  for (std::size_t i = 0; i < kMemoryLevels; ++i) {
    if (other.bytes[i]) bytes[i] = bytes[i].value_or(0) + *other.bytes[i];
  }
  return *this;
}

Work Work::scaled(double factor) const {
  Work out = *this;
  for (auto& f : out.flops) f *= factor;
  for (auto& b : out.bytes) {
    if (b) *b *= factor;
  }
  return out;
}

double attainable_flops_per_s(double intensity, double peak_flops_per_s, double bytes_per_s) {
  return std::min(peak_flops_per_s, intensity * bytes_per_s);
}

double ridge_point(double peak_flops_per_s, double bytes_per_s) {
  return bytes_per_s > 0 ? peak_flops_per_s / bytes_per_s : 0.0;
}

RooflineResult evaluate(const Work& work, double time_ns, const Ceilings& ceilings) {
  RooflineResult r;
  r.time_ns = time_ns;
  r.flops = work.total_flops();
  const double seconds = time_ns * 1e-9;
  if (seconds > 0) r.achieved_flops_per_s = r.flops / seconds;

  double best = 0;
  for (std::size_t p = 0; p < kPrecisions; ++p) {
    if (work.flops[p] > best) {
      best = work.flops[p];
      r.dominant = static_cast<Precision>(p);
    }
  }

  // Compute term: the classes' times add up.
  double compute_s = 0;
  for (std::size_t p = 0; p < kPrecisions; ++p) {
    if (work.flops[p] <= 0) continue;
    if (const auto peak = ceilings.flops_per_s[p]; peak && *peak > 0) {
      compute_s += work.flops[p] / *peak;
    } else {
      r.complete = false;
    }
  }
  double floor_s = 0;
  if (compute_s > 0) {
    floor_s = compute_s;
    r.bound = std::string("compute:") + to_string(r.dominant.value_or(Precision::Fp32));
  }
  // Memory terms: the slowest level.
  for (std::size_t l = 0; l < kMemoryLevels; ++l) {
    const auto bytes = work.bytes[l];
    if (!bytes) continue;
    if (*bytes > 0 && r.flops > 0) r.intensity[l] = r.flops / *bytes;
    if (seconds > 0) r.achieved_bytes_per_s[l] = *bytes / seconds;
    if (*bytes <= 0) continue;
    const auto bw = ceilings.bytes_per_s[l];
    if (!bw || *bw <= 0) {
      // L1 rarely has a ceiling; its absence does not make the floor incomplete unless no
      // other memory level has one either.
      continue;
    }
    const double level_s = *bytes / *bw;
    if (level_s > floor_s) {
      floor_s = level_s;
      r.bound = std::string("memory:") + to_string(static_cast<MemoryLevel>(l));
    }
  }
  bool any_memory_ceiling = false, any_bytes = false;
  for (std::size_t l = 0; l < kMemoryLevels; ++l) {
    if (work.bytes[l] && *work.bytes[l] > 0) {
      any_bytes = true;
      if (ceilings.bytes_per_s[l] && *ceilings.bytes_per_s[l] > 0) any_memory_ceiling = true;
    }
  }
  if (any_bytes && !any_memory_ceiling) r.complete = false;

  r.floor_ns = floor_s * 1e9;
  if (floor_s > 0 && r.flops > 0) r.attainable_flops_per_s = r.flops / floor_s;
  if (floor_s > 0 && time_ns > 0) r.efficiency = r.floor_ns / time_ns;
  return r;
}

}  // namespace fuselens::analyzer
