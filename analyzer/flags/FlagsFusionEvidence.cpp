#include "flags/FlagsFusionEvidence.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <iterator>

#include "flags/FlagsRules.h"

namespace fuselens::analyzer {
namespace {

constexpr std::uint64_t kAllocationTag = std::uint64_t{1} << 63;  // never set in a user address

/// A buffer a kernel received: an allocation (key = its index | kAllocationTag, bytes its size)
/// or a bare pointer value outside every recorded allocation (key = the value, bytes 0).
struct Buffer {
  std::uint64_t key = 0;
  std::uint64_t bytes = 0;
  bool operator<(const Buffer& other) const { return key < other.key; }
};

bool looks_like_pointer(std::uint64_t value) {
  return value >= (std::uint64_t{1} << 32) && value % 256 == 0 && value < kAllocationTag;
}

std::vector<Buffer> buffers_of(const FlagsTrace& trace, const TraceOp& op) {
  const TraceCall* call = trace.launch_call(op);
  const std::int64_t t = call != nullptr ? call->start_ns : op.start_ns;
  std::vector<Buffer> out;
  for (const std::uint64_t value : trace.args(op)) {
    if (const TraceAllocation* a = trace.allocation_at(op.pid, value, t)) {
      const auto index = static_cast<std::uint64_t>(a - trace.allocations.data());
      out.push_back({index | kAllocationTag, a->bytes});
    } else if (looks_like_pointer(value)) {
      out.push_back({value, 0});
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end(),
                        [](const Buffer& a, const Buffer& b) { return a.key == b.key; }),
            out.end());
  return out;
}

std::string bytes_text(double bytes) {
  if (bytes >= 1e9) return fmt::format("{:.2f} GB", bytes / 1e9);
  if (bytes >= 1e6) return fmt::format("{:.2f} MB", bytes / 1e6);
  if (bytes >= 1e3) return fmt::format("{:.1f} kB", bytes / 1e3);
  return fmt::format("{:.0f} B", bytes);
}

}  // namespace

std::string chain_context(const FlagsTrace& trace, const std::vector<const TraceOp*>& chain) {
  std::vector<const std::vector<CallPathFrame>*> paths;
  for (const TraceOp* op : chain) {
    const auto* path = trace.launch_context(*op);
    if (path == nullptr) return {};
    paths.push_back(path);
  }
  if (paths.empty()) return {};
  std::size_t common = paths.front()->size();
  for (const auto* path : paths) {
    std::size_t n = 0;
    while (n < common && n < path->size() && (*path)[n].function == (*paths.front())[n].function) {
      ++n;
    }
    common = n;
  }
  std::vector<CallPathFrame> prefix(paths.front()->begin(),
                                    paths.front()->begin() + static_cast<std::ptrdiff_t>(common));
  if (!prefix.empty()) {
    for (const auto* path : paths) {
      if ((*path)[common - 1].location != prefix.back().location) prefix.back().location.clear();
    }
  }
  return format_context(prefix);
}

Sharing share_buffers(const FlagsTrace& trace, const std::vector<const TraceOp*>& chain) {
  Sharing s;
  std::vector<std::vector<Buffer>> buffers;
  for (const TraceOp* op : chain) buffers.push_back(buffers_of(trace, *op));
  for (std::size_t i = 0; i + 1 < chain.size(); ++i) {
    ++s.pairs;
    if (!trace.args_captured || trace.args(*chain[i]).empty() ||
        trace.args(*chain[i + 1]).empty()) {
      ++s.pairs_unknown;
      continue;
    }
    std::vector<Buffer> shared;
    std::set_intersection(buffers[i].begin(), buffers[i].end(), buffers[i + 1].begin(),
                          buffers[i + 1].end(), std::back_inserter(shared));
    if (shared.empty()) continue;
    ++s.pairs_sharing;
    for (const Buffer& b : shared) {
      if (b.bytes > 0) {
        s.intermediate_bytes += 2 * b.bytes;
      } else {
        ++s.unsized_buffers;
      }
    }
  }
  return s;
}

void add_sharing(Hit& hit, const Sharing& s) {
  const bool unknown = s.pairs_unknown > 0 && s.pairs_sharing + s.pairs_unknown == s.pairs;
  const bool independent = s.pairs_sharing + s.pairs_unknown < s.pairs;
  hit.add_metric("occurrences_feeding", !unknown && !independent ? 1 : 0);
  hit.add_metric("occurrences_independent", independent ? 1 : 0);
  hit.add_metric("occurrences_unknown", unknown ? 1 : 0);
  hit.add_metric("intermediate_bytes", static_cast<double>(s.intermediate_bytes));
  hit.add_metric("unsized_shared_buffers", s.unsized_buffers);
}

Feeds feeds_of(const Hit& hit) {
  const double feeding = hit.metric("occurrences_feeding");
  const double independent = hit.metric("occurrences_independent");
  if (feeding + independent == 0) return Feeds::Unknown;
  if (independent == 0) return Feeds::Yes;
  return feeding == 0 ? Feeds::No : Feeds::Partly;
}

double feeds_metric(Feeds feeds) {
  switch (feeds) {
    case Feeds::Yes:
      return 1;
    case Feeds::Partly:
      return 0.5;
    case Feeds::No:
      return 0;
    case Feeds::Unknown:
      break;
  }
  return -1;
}

std::string feeds_text(const Hit& hit, Feeds feeds, bool args_captured) {
  const auto feeding = static_cast<std::int64_t>(hit.metric("occurrences_feeding"));
  const auto independent = static_cast<std::int64_t>(hit.metric("occurrences_independent"));
  switch (feeds) {
    case Feeds::Yes:
      return fmt::format(
          "yes (each kernel receives a pointer into a buffer the previous one received, in all "
          "{} occurrences with arguments; a shared buffer, read/write direction unknown)",
          feeding);
    case Feeds::Partly:
      return fmt::format(
          "partly ({} of {} occurrences with arguments share a buffer between "
          "every pair of kernels)",
          feeding, feeding + independent);
    case Feeds::No:
      return "no (consecutive kernels' pointer arguments share no allocation)";
    case Feeds::Unknown:
      break;
  }
  return args_captured ? "unknown (no pointer arguments recorded for these launches)"
                       : "unknown (no args captured: record with prof-run --trace +args)";
}

double bound_metric(Bound bound) {
  switch (bound) {
    case Bound::Memory:
      return 1;
    case Bound::Compute:
      return 0;
    case Bound::Unknown:
      break;
  }
  return -1;
}

Boundness chain_boundness(const FlagsTrace& trace, Hit& hit, const std::optional<Work>& counted) {
  Boundness b;
  Work work;
  std::string source;
  if (counted) {
    work = *counted;
    source = "the hardware counters of its launches";
  } else if (const auto it = trace.range_work.find(hit.range);
             !hit.range.empty() && it != trace.range_work.end()) {
    work = it->second;
    source = "the work annotation of range " + hit.range;
  } else {
    b.text =
        "unknown (no hardware counters or work annotation for this chain: prof-run --metrics "
        "roofline, or fuselens/annotate.h)";
    return b;
  }
  const double flops = work.total_flops();
  if (flops == 0) {
    b.verdict = Bound::Memory;
    b.intensity = 0;
    hit.set_metric("arithmetic_intensity", 0);
    b.text = "yes (no floating-point work, from " + source + ")";
    return b;
  }
  std::size_t dominant = 0;
  for (std::size_t p = 1; p < kPrecisions; ++p) {
    if (work.flops[p] > work.flops[dominant]) dominant = p;
  }
  const char* precision = to_string(static_cast<Precision>(dominant));
  const auto ceilings = hit.device_id ? trace.ceilings.find(*hit.device_id) : trace.ceilings.end();
  const Ceilings* c = ceilings != trace.ceilings.end() ? &ceilings->second.ceilings : nullptr;
  const double dram = work.bytes_at(MemoryLevel::Dram).value_or(0);
  const auto unknown = [&] {
    b.text = dram > 0 ? fmt::format(
                            "unknown (arithmetic intensity {:.1f} FLOP/B from {}, but no "
                            "{} peak and DRAM bandwidth known for the device)",
                            flops / dram, source, precision)
                      : "unknown (" + source + " gives no DRAM bytes)";
    return b;
  };
  if (c == nullptr || !c->flops_per_s[dominant]) return unknown();
  const double peak = *c->flops_per_s[dominant];
  // The level whose intensity is furthest below (or least above) its ridge point binds: with
  // counters, data that stays in L2 leaves little DRAM traffic, and L2 may bound instead.
  std::optional<MemoryLevel> binding;
  double best_intensity = 0, best_ridge = 1;
  for (std::size_t l = 0; l < kMemoryLevels; ++l) {
    const auto level = static_cast<MemoryLevel>(l);
    const double bytes = work.bytes_at(level).value_or(0);
    const double bandwidth = c->bandwidth(level).value_or(0);
    if (bytes <= 0 || bandwidth <= 0) continue;
    const double intensity = flops / bytes, ridge = ridge_point(peak, bandwidth);
    if (!binding || intensity / ridge < best_intensity / best_ridge) {
      binding = level;
      best_intensity = intensity;
      best_ridge = ridge;
    }
  }
  if (!binding) return unknown();
  b.intensity = best_intensity;
  b.ridge = best_ridge;
  hit.set_metric("arithmetic_intensity", *b.intensity);
  hit.set_metric("ridge_point", *b.ridge);
  std::string level = to_string(*binding);
  std::transform(level.begin(), level.end(), level.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
  const std::string figures = fmt::format(
      "arithmetic intensity {:.1f} FLOP/B of {} traffic {} the {} ridge point {:.1f} FLOP/B, "
      "peaks {}; work from {}",
      *b.intensity, level, *b.intensity < *b.ridge ? "<" : ">=", precision, *b.ridge,
      ceilings->second.compute_source, source);
  if (*b.intensity < *b.ridge) {
    b.verdict = Bound::Memory;
    b.text = "yes (" + figures + ")";
  } else {
    b.verdict = Bound::Compute;
    b.text = "no, compute-bound: fusion saves little (" + figures + ")";
  }
  return b;
}

ByteSaving byte_saving(const FlagsTrace& trace, Hit& hit, Feeds feeds, const Boundness& bound) {
  ByteSaving out;
  const double bytes = hit.metric("intermediate_bytes");
  const auto unsized = static_cast<std::int64_t>(hit.metric("unsized_shared_buffers"));
  if (unsized > 0) {
    out.note = fmt::format(
        " {} shared buffer(s) lie in no recorded allocation (record the "
        "`memory` trace group): their bytes are not counted.",
        unsized);
  }
  if (feeds == Feeds::Unknown) {
    out.note += " Intermediate bytes not measured (no shared buffers known).";
    return out;
  }
  if (feeds == Feeds::No) return out;
  if (bound.verdict == Bound::Compute) {
    out.note += fmt::format(" Intermediate bytes ({}) not counted: the chain is compute-bound.",
                            bytes_text(bytes));
    return out;
  }
  const auto ceilings = hit.device_id ? trace.ceilings.find(*hit.device_id) : trace.ceilings.end();
  const std::optional<double> bandwidth =
      ceilings != trace.ceilings.end() ? ceilings->second.ceilings.bandwidth(MemoryLevel::Dram)
                                       : std::nullopt;
  if (!bandwidth || *bandwidth <= 0) {
    out.note += fmt::format(
        " Intermediate bytes {} not turned into time: no DRAM bandwidth "
        "known for the device.",
        bytes_text(bytes));
    return out;
  }
  if (bytes <= 0) return out;
  const double ns = bytes / *bandwidth * 1e9;
  out.saving_ns = static_cast<std::int64_t>(ns + 0.5);
  hit.set_metric("byte_saving_ns", ns);
  hit.set_metric("dram_bytes_per_s", *bandwidth);
  out.clause = fmt::format(
      ", plus {} of intermediate traffic ({} of shared buffers written and read again, at "
      "{:.0f} GB/s: {}{})",
      flags_duration(ns), bytes_text(bytes), *bandwidth / 1e9, ceilings->second.dram_source,
      bound.verdict == Bound::Unknown ? "; if the chain is memory-bound" : "");
  return out;
}

}  // namespace fuselens::analyzer
