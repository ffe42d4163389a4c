#include "compare/Compare.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <unordered_map>
#include <utility>

#include "compare/CompareGate.h"
#include "compare/CompareProjection.h"
#include "fuselens/db/ActivityCursors.h"
#include "fuselens/db/Instrumentation.h"
#include "fuselens/db/Strings.h"
#include "fuselens/db/TraceCursors.h"
#include "store/AnalysisStore.h"
#include "summary/SummaryStore.h"

namespace fuselens::analyzer {
namespace {

// Iterative matcher: `*` any text, `?` one character, anything else itself. Backtracks only to
// the last star seen (once a later star is reached, an earlier star never needs to grow: the
// text left can only shrink), so the work is O(|pattern| x |text|) with no recursion, whatever
// the stars (issue 22: the recursive matcher took > 60 s on '********Z' and overflowed the stack
// on 60,000 stars). Each wildcard's text is the leftmost-shortest one, as the recursive search
// chose it. `spans` gets one (start, length) in `t` per wildcard, in pattern order.
bool glob_spans(std::string_view p, std::string_view t,
                std::vector<std::pair<std::size_t, std::size_t>>& spans) {
  constexpr auto npos = std::string_view::npos;
  std::size_t pi = 0, ti = 0;
  std::size_t star = npos, star_text = 0, star_spans = 0;  // the last star: where, its text start
  while (ti < t.size()) {
    if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      star_text = ti;
      star_spans = spans.size();
      spans.emplace_back(ti, 0);
    } else if (pi < p.size() && (p[pi] == '?' || p[pi] == t[ti])) {
      if (p[pi] == '?') spans.emplace_back(ti, 1);
      ++pi;
      ++ti;
    } else if (star != npos) {
      // Give the last star one more character and retry what follows it.
      spans.resize(star_spans + 1);
      ++spans[star_spans].second;
      pi = star + 1;
      ti = star_text + spans[star_spans].second;
    } else {
      return false;
    }
  }
  for (; pi < p.size() && p[pi] == '*'; ++pi) spans.emplace_back(ti, 0);
  return pi == p.size();
}

std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto pos = text.find(sep, start);
    parts.emplace_back(text.substr(start, pos == std::string_view::npos ? pos : pos - start));
    if (pos == std::string_view::npos) return parts;
    start = pos + 1;
  }
}

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

std::int64_t batch_items(const std::string& name) {
  const std::string last = split(name, '/').back();
  if (last.size() <= 5 || last.compare(0, 5, "batch") != 0) return 0;
  std::int64_t n = 0;
  for (std::size_t i = 5; i < last.size(); ++i) {
    if (last[i] < '0' || last[i] > '9' || n > 1'000'000'000'000) return 0;
    n = n * 10 + (last[i] - '0');
  }
  return n;
}

/// Running device-memory sums per (pid, device) with a sparse table for range maxima.
class PeakIndex {
 public:
  explicit PeakIndex(const db::Reader& reader) {
    auto events = db::device_memory_events(reader, db::MemoryOrder::ByProcessDevice);
    while (auto e = events.next()) {
      Series& series = series_[{e->pid, static_cast<std::uint32_t>(e->device_id)}];
      const std::int64_t before = series.level.empty() ? 0 : series.level.back();
      const bool alloc =
          static_cast<db::MemoryOperation>(e->operation) == db::MemoryOperation::Allocation;
      series.time.push_back(e->timestamp_ns);
      series.level.push_back(before + (alloc ? e->bytes : -e->bytes));
    }
    for (auto& [key, series] : series_) series.build();
  }

  /// Peak per device of `pid` over [start, end]; devices whose peak is 0 are left out.
  std::vector<std::pair<std::uint32_t, std::int64_t>> peak(std::int64_t pid, std::int64_t start,
                                                           std::int64_t end) const {
    std::vector<std::pair<std::uint32_t, std::int64_t>> out;
    for (auto it = series_.lower_bound({pid, 0}); it != series_.end() && it->first.first == pid;
         ++it) {
      const Series& s = it->second;
      const auto first = static_cast<std::size_t>(
          std::upper_bound(s.time.begin(), s.time.end(), start) - s.time.begin());
      const auto last = static_cast<std::size_t>(
          std::upper_bound(s.time.begin(), s.time.end(), end) - s.time.begin());
      std::int64_t value = first > 0 ? s.level[first - 1] : 0;
      if (last > first) value = std::max(value, s.max(first, last - 1));
      if (value > 0) out.emplace_back(it->first.second, value);
    }
    return out;
  }

 private:
  struct Series {
    std::vector<std::int64_t> time, level;
    std::vector<std::vector<std::int64_t>> table;  // table[k][i]: max of level[i, i + 2^k)
    void build() {
      table.push_back(level);
      for (std::size_t k = 1; (std::size_t{1} << k) <= level.size(); ++k) {
        const auto& prev = table.back();
        std::vector<std::int64_t> row(level.size() - (std::size_t{1} << k) + 1);
        for (std::size_t i = 0; i < row.size(); ++i) {
          row[i] = std::max(prev[i], prev[i + (std::size_t{1} << (k - 1))]);
        }
        table.push_back(std::move(row));
      }
    }
    std::int64_t max(std::size_t lo, std::size_t hi) const {  // inclusive
      std::size_t k = 0;
      while ((std::size_t{2} << k) <= hi - lo + 1) ++k;
      return std::max(table[k][lo], table[k][hi + 1 - (std::size_t{1} << k)]);
    }
  };
  std::map<std::pair<std::int64_t, std::uint32_t>, Series> series_;
};

std::map<std::string, DurationStats> kernel_stats(const db::Reader& reader, NameKind names) {
  // The statistics stored when the run ended (the whole capture, demangled or short names), else
  // the rows.
  if (names != NameKind::Mangled) {
    if (const auto stored = load_summary_aggregates(reader)) {
      const StatsById* by_id = names == NameKind::Demangled    ? &stored->kernels_by_demangled_name
                               : stored->kernels_by_short_name ? &*stored->kernels_by_short_name
                                                               : nullptr;
      if (by_id != nullptr) {
        db::StringLookup lookup(reader);
        std::map<std::string, DurationStats> out;
        for (const auto& [id, stats] : *by_id) {
          std::string name;  // as from the rows: "" for an id the strings lack
          lookup.with(id, [&](std::string value) { name = std::move(value); });
          out.emplace(std::move(name), stats);
        }
        return out;
      }
    }
  }
  reader.check_table_timestamps("kernel");
  std::unordered_map<std::int64_t, std::vector<std::int64_t>> groups;
  auto rows = db::kernel_durations_by_name(reader, names, db::RowOrder::Scan);
  while (auto r = rows.next()) groups[r->id].push_back(r->duration_ns);
  db::StringLookup lookup(reader);
  std::map<std::string, DurationStats> out;
  for (auto& [id, durations] : groups) {
    std::string name;
    lookup.with(id, [&](std::string value) { name = std::move(value); });
    out.emplace(name, compute_stats(std::move(durations)));  // strings.value is UNIQUE
  }
  return out;
}

/// Segments of `name` that are neither its first (the op) nor matched by a wildcard of
/// `pattern` (same segment count required), joined with '/'.
std::string variant_of(const std::string& name, std::string_view pattern) {
  const auto segments = split(name, '/');
  const auto pattern_segments = split(pattern, '/');
  if (segments.size() < 3 || segments.size() != pattern_segments.size()) return {};
  std::vector<std::string> kept;
  for (std::size_t i = 1; i < segments.size(); ++i) {
    if (pattern_segments[i].find_first_of("*?") == std::string::npos) kept.push_back(segments[i]);
  }
  return join(kept, "/");
}

void set_op_and_shape(CompareEntry& e, const std::string& range_name) {
  e.op = split(range_name, '/').front();
  e.shape = e.key;
  if (e.shape.size() > e.op.size() && e.shape.compare(0, e.op.size() + 1, e.op + "/") == 0) {
    e.shape = e.shape.substr(e.op.size() + 1);
  } else if (e.shape == e.op) {
    e.shape.clear();
  }
}

void finish(CompareEntry& e) {
  if (!e.baseline || !e.candidate) return;
  if (e.candidate->median_gpu_ns_per_iter > 0) {
    e.speedup = e.baseline->median_gpu_ns_per_iter / e.candidate->median_gpu_ns_per_iter;
  }
  if (e.candidate->median_span_ns_per_iter > 0) {
    e.span_speedup = e.baseline->median_span_ns_per_iter / e.candidate->median_span_ns_per_iter;
  }
}

double median(std::vector<double>& v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// "M64" < "M128": digit runs compare as numbers, the rest character by character.
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      std::size_t i2 = i, j2 = j;
      while (i2 < a.size() && a[i2] == '0') ++i2;
      while (j2 < b.size() && b[j2] == '0') ++j2;
      std::size_t ie = i2, je = j2;
      while (ie < a.size() && digit(a[ie])) ++ie;
      while (je < b.size() && digit(b[je])) ++je;
      if (ie - i2 != je - j2) return ie - i2 < je - j2;
      const int c = a.compare(i2, ie - i2, b, j2, je - j2);
      if (c != 0) return c < 0;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

void sort_entries(std::vector<CompareEntry>& entries) {
  std::stable_sort(entries.begin(), entries.end(),
                   [](const CompareEntry& a, const CompareEntry& b) {
                     const bool pa = a.baseline && a.candidate, pb = b.baseline && b.candidate;
                     if (pa != pb) return pa;
                     if (a.op != b.op) return natural_less(a.op, b.op);
                     if (a.shape != b.shape) return natural_less(a.shape, b.shape);
                     return natural_less(a.key, b.key);
                   });
}

}  // namespace

std::optional<std::vector<std::string>> glob_match(std::string_view pattern,
                                                   std::string_view text) {
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  if (!glob_spans(pattern, text, spans)) return std::nullopt;
  std::vector<std::string> captures;
  captures.reserve(spans.size());
  for (const auto& [start, length] : spans) captures.emplace_back(text.substr(start, length));
  return captures;
}

std::int64_t RangeStats::max_peak_bytes() const {
  std::int64_t peak = 0;
  for (const auto& [device, bytes] : peak_device_bytes) peak = std::max(peak, bytes);
  return peak;
}

RangeInstances range_instances(const db::Reader& reader) {
  RangeInstances out;
  db::StringCache strings(reader);
  strings.load_all();
  auto ranges = db::ended_nvtx_range_payloads(reader);
  while (auto r = ranges.next()) {
    const std::string& domain = strings.get(r->domain_id);
    const std::string& text = strings.get(r->text_id);
    if (db::is_fuselens_instrumentation(text)) continue;  // FuseLens's own ranges
    const auto kind = static_cast<db::PayloadKind>(r->payload_kind);
    const bool integer = kind == db::PayloadKind::UInt64 || kind == db::PayloadKind::Int64 ||
                         kind == db::PayloadKind::UInt32 || kind == db::PayloadKind::Int32;
    out.groups.push_back(domain.empty() ? text : domain + ":" + text);
    out.iterations.push_back(integer && r->payload_int && *r->payload_int > 0 ? *r->payload_int
                                                                              : 1);
    out.windows.push_back({r->pid, r->tid, r->start_ns, *r->end_ns});
  }
  return out;
}

std::vector<RangeStats> range_stats(const db::Reader& reader, NvtxProjection projection) {
  struct Acc {
    std::vector<double> per_iter_exact;  // ns per iteration of each instance
    std::vector<double> span_per_iter;   // GPU span per iteration of each instance
    std::int64_t iterations = 0, gpu_ns = 0, span_ns = 0, kernels = 0, launches = 0, copy = 0,
                 set = 0;
    std::int64_t left_out = 0;
    std::map<std::uint32_t, std::int64_t> peak;
  };
  const PeakIndex peaks(reader);
  // The ranges first, then their work: stored when the run ended (the whole capture under the
  // process projection, AnalysisStore.h), else in one streaming pass (project_ranges).
  const RangeInstances ranges = range_instances(reader);
  const std::vector<ProjectionWindow>& windows = ranges.windows;
  std::optional<std::vector<ProjectedRange>> stored;
  if (projection == NvtxProjection::Process) stored = stored_range_projection(reader, windows);
  if (!stored) {  // project_ranges reads every launch and its call
    reader.check_table_timestamps("kernel");
    reader.check_table_timestamps("api_call");
  }
  const std::vector<ProjectedRange> projected =
      stored ? std::move(*stored) : project_ranges(reader, windows, projection);
  std::map<std::string, Acc> groups;
  for (std::size_t i = 0; i < windows.size(); ++i) {
    Acc& acc = groups[ranges.groups[i]];
    const ProjectionWindow& w = windows[i];
    const std::int64_t iterations = ranges.iterations[i];
    const ProjectedRange& p = projected[i];
    const ProjectedWork& k = p.kernels;
    acc.per_iter_exact.push_back(static_cast<double>(k.gpu_ns) / static_cast<double>(iterations));
    const std::int64_t span_ns = p.span ? p.span->ns() : 0;
    acc.span_per_iter.push_back(static_cast<double>(span_ns) / static_cast<double>(iterations));
    acc.iterations += iterations;
    acc.gpu_ns += k.gpu_ns;
    acc.span_ns += span_ns;
    acc.kernels += k.records;
    if (projection == NvtxProjection::Thread) {
      acc.left_out += std::max<std::int64_t>(0, p.process_kernels - k.records);
    }
    acc.launches += k.launches;
    acc.copy += p.copies.bytes;
    acc.set += p.memsets.bytes;
    for (const auto& [device, bytes] : peaks.peak(w.pid, w.start_ns, w.end_ns)) {
      acc.peak[device] = std::max(acc.peak[device], bytes);
    }
  }
  std::vector<RangeStats> out;
  for (auto& [name, acc] : groups) {
    RangeStats r;
    r.name = name;
    r.instances = static_cast<std::int64_t>(acc.per_iter_exact.size());
    r.iterations = acc.iterations;
    r.gpu_ns = acc.gpu_ns;
    r.span_ns = acc.span_ns;
    r.gpu_ns_per_iter_samples = acc.per_iter_exact;
    r.span_ns_per_iter_samples = acc.span_per_iter;
    r.median_gpu_ns_per_iter = median(acc.per_iter_exact);
    r.median_span_ns_per_iter = median(acc.span_per_iter);
    const auto iterations = static_cast<double>(acc.iterations);
    const auto per_iter = [iterations](std::int64_t total) {
      return static_cast<double>(total) / iterations;
    };
    r.kernels_per_iter = per_iter(acc.kernels);
    r.projection = projection;
    r.left_out_kernels = acc.left_out;
    r.launches_per_iter = per_iter(acc.launches);
    r.memcpy_bytes_per_iter = per_iter(acc.copy);
    r.memset_bytes_per_iter = per_iter(acc.set);
    r.peak_device_bytes.assign(acc.peak.begin(), acc.peak.end());
    r.items_per_iter = batch_items(name);
    if (r.median_gpu_ns_per_iter > 0) {
      r.iterations_per_s = 1e9 / r.median_gpu_ns_per_iter;
      if (r.items_per_iter > 0) {
        r.items_per_s = static_cast<double>(r.items_per_iter) * r.iterations_per_s;
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

VariantMatrix variant_matrix(const std::vector<RangeStats>& ranges,
                             const std::vector<std::string>& leading) {
  struct Parsed {
    std::string row, variant;
    const RangeStats* stats;
  };
  std::vector<Parsed> parsed;
  std::map<std::string, std::size_t> row_index;
  std::map<std::string, std::size_t> variant_index;
  for (const auto& r : ranges) {
    const auto first = r.name.find('/');
    if (first == std::string::npos) continue;
    const auto second = r.name.find('/', first + 1);
    if (second == std::string::npos) continue;
    Parsed p{r.name.substr(0, first) + " · " + r.name.substr(second + 1),
             r.name.substr(first + 1, second - first - 1), &r};
    row_index.emplace(p.row, 0);
    variant_index.emplace(p.variant, 0);
    parsed.push_back(std::move(p));
  }
  VariantMatrix m;
  for (auto& [row, index] : row_index) {
    index = m.rows.size();
    m.rows.push_back(row);
  }
  for (const auto& name : leading) {
    const auto it = variant_index.find(name);
    if (it == variant_index.end() || it->second != 0 ||
        std::find(m.columns.begin(), m.columns.end(), name) != m.columns.end()) {
      continue;
    }
    it->second = m.columns.size() + 1;  // 1-based while placing, so 0 means "not placed yet"
    m.columns.push_back(name);
  }
  for (auto& [name, index] : variant_index) {
    if (index != 0) continue;
    m.columns.push_back(name);
    index = m.columns.size();
  }
  m.cells.assign(m.rows.size(), std::vector<const RangeStats*>(m.columns.size(), nullptr));
  for (const auto& p : parsed) m.cells[row_index[p.row]][variant_index[p.variant] - 1] = p.stats;
  return m;
}

double median_ns_per_iter(const RangeStats& stats, TimeBasis basis) {
  return basis == TimeBasis::Span ? stats.median_span_ns_per_iter : stats.median_gpu_ns_per_iter;
}

const std::vector<double>& samples_ns_per_iter(const RangeStats& stats, TimeBasis basis) {
  return basis == TimeBasis::Span ? stats.span_ns_per_iter_samples : stats.gpu_ns_per_iter_samples;
}

std::optional<double> CompareEntry::slowdown_percent(TimeBasis basis) const {
  if (!baseline || !candidate) return std::nullopt;
  const double b = median_ns_per_iter(*baseline, basis);
  if (b <= 0) return std::nullopt;
  return (median_ns_per_iter(*candidate, basis) / b - 1) * 100;
}

const char* to_string(KernelChange change) {
  // In KernelChange's order; a value outside it reads as "unchanged".
  constexpr const char* kNames[] = {"added", "removed", "faster", "slower", "unchanged"};
  const auto i = static_cast<std::size_t>(change);
  return i < std::size(kNames) ? kNames[i] : "unchanged";
}

std::vector<const CompareEntry*> CompareReport::slower_than(double percent, TimeBasis basis) const {
  std::vector<const CompareEntry*> out;
  for (const auto& e : entries) {
    const auto slowdown = e.slowdown_percent(basis);
    if (slowdown && *slowdown > percent) out.push_back(&e);
  }
  return out;
}

CompareReport compare_ranges(const db::Reader& reader, std::string_view baseline_pattern,
                             std::string_view candidate_pattern, NvtxProjection projection) {
  CompareReport report;
  report.projection = projection;
  report.baseline_path = report.candidate_path = reader.path();
  report.baseline_pattern = baseline_pattern;
  report.candidate_pattern = candidate_pattern;
  std::map<std::string, CompareEntry> by_key;
  bool baseline_seen = false, candidate_seen = false;
  for (RangeStats& r : range_stats(reader, projection)) {
    for (const bool is_baseline : {true, false}) {
      const auto pattern = is_baseline ? baseline_pattern : candidate_pattern;
      const auto captures = glob_match(pattern, r.name);
      if (!captures) continue;
      (is_baseline ? baseline_seen : candidate_seen) = true;
      CompareEntry& e = by_key[join(*captures, "/")];
      e.key = join(*captures, "/");
      if (e.op.empty()) set_op_and_shape(e, r.name);
      std::string variant = variant_of(r.name, pattern);
      if (variant.empty()) variant = is_baseline ? "baseline" : "candidate";
      (is_baseline ? e.baseline_variant : e.candidate_variant) = variant;
      (is_baseline ? e.baseline : e.candidate) = r;
    }
  }
  if (!baseline_seen) {
    throw CompareError("--baseline '" + std::string(baseline_pattern) + "' matches no NVTX range");
  }
  if (!candidate_seen) {
    throw CompareError("--candidate '" + std::string(candidate_pattern) +
                       "' matches no NVTX range");
  }
  for (auto& [key, e] : by_key) {
    finish(e);
    report.entries.push_back(std::move(e));
  }
  if (std::none_of(report.entries.begin(), report.entries.end(),
                   [](const CompareEntry& e) { return e.baseline && e.candidate; })) {
    throw CompareError("no baseline range pairs with a candidate range: the wildcards of '" +
                       std::string(baseline_pattern) + "' and '" + std::string(candidate_pattern) +
                       "' never match the same text");
  }
  sort_entries(report.entries);
  judge(report, GateOptions{});
  return report;
}

CompareReport compare_captures(const db::Reader& baseline, const db::Reader& candidate,
                               const CompareOptions& options) {
  CompareReport report;
  report.two_captures = true;
  report.projection = options.projection;
  report.baseline_path = baseline.path();
  report.candidate_path = candidate.path();
  report.diff_threshold_percent = options.diff_threshold_percent;
  std::map<std::string, CompareEntry> by_name;
  for (const bool is_baseline : {true, false}) {
    for (RangeStats& r : range_stats(is_baseline ? baseline : candidate, options.projection)) {
      CompareEntry& e = by_name[r.name];
      e.key = r.name;
      set_op_and_shape(e, r.name);
      e.baseline_variant = "baseline";
      e.candidate_variant = "candidate";
      (is_baseline ? e.baseline : e.candidate) = std::move(r);
    }
  }
  for (auto& [name, e] : by_name) {
    finish(e);
    report.entries.push_back(std::move(e));
  }
  sort_entries(report.entries);

  const auto a = kernel_stats(baseline, options.kernel_names);
  const auto b = kernel_stats(candidate, options.kernel_names);
  std::map<std::string, KernelDiffRow> rows;
  for (const auto& [name, st] : a) {
    KernelDiffRow& row = rows[name];
    row.name = name;
    row.baseline_count = st.count;
    row.baseline_median_ns = st.median_ns;
    row.baseline_total_ns = st.total_ns;
  }
  for (const auto& [name, st] : b) {
    KernelDiffRow& row = rows[name];
    row.name = name;
    row.candidate_count = st.count;
    row.candidate_median_ns = st.median_ns;
    row.candidate_total_ns = st.total_ns;
  }
  for (auto& [name, row] : rows) {
    if (row.baseline_count == 0) {
      row.change = KernelChange::Added;
    } else if (row.candidate_count == 0) {
      row.change = KernelChange::Removed;
    } else {
      const double change = row.baseline_median_ns > 0
                                ? (row.candidate_median_ns / row.baseline_median_ns - 1) * 100
                                : 0.0;
      row.change_percent = change;
      row.change = change > options.diff_threshold_percent    ? KernelChange::Slower
                   : change < -options.diff_threshold_percent ? KernelChange::Faster
                                                              : KernelChange::Unchanged;
    }
    report.kernel_diff.push_back(row);
  }
  std::stable_sort(report.kernel_diff.begin(), report.kernel_diff.end(),
                   [](const KernelDiffRow& x, const KernelDiffRow& y) {
                     return std::llabs(x.candidate_total_ns - x.baseline_total_ns) >
                            std::llabs(y.candidate_total_ns - y.baseline_total_ns);
                   });
  judge(report, GateOptions{});
  return report;
}

}  // namespace fuselens::analyzer
