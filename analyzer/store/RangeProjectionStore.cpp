// The stored NVTX range projections (AnalysisStore.h, range_projection_row and
// stored_range_projection): what compare and the HTML report read of every ended range, computed
// once when the run ends (issue 21: ten million launches streamed once, not at every compare).

#include <limits>

#include "fuselens/db/AnalysisStore.h"
#include "store/AnalysisStore.h"
#include "store/StoredJson.h"

namespace fuselens::analyzer {
namespace {

using store::BadStore;
using store::Json;

// Columns of one stored range, in order (range_projection_row's documentation).
constexpr std::size_t kColumns = 20;
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

Json work_columns(Json row, const ProjectedWork& w) {
  for (const std::int64_t v : {w.records, w.launches, w.gpu_ns, w.bytes}) row.push_back(v);
  return row;
}

// Reads four columns from `at` into `w`, adding them to `sums` (all within 64 bits).
void read_work(const Json& row, std::size_t at, ProjectedWork& w, std::int64_t* sums) {
  std::int64_t* fields[] = {&w.records, &w.launches, &w.gpu_ns, &w.bytes};
  for (std::size_t i = 0; i < 4; ++i) {
    *fields[i] = store::int_in(row[at + i], 0, kMax);
    if (__builtin_add_overflow(sums[at + i], *fields[i], &sums[at + i]))
      throw BadStore("nvtx_ranges: sums overflow");
  }
}

}  // namespace

db::StoredAnalysisRow range_projection_row(const db::Reader& reader) {
  const RangeInstances ranges = range_instances(reader);
  const std::vector<ProjectedRange> projected =
      project_ranges(reader, ranges.windows, NvtxProjection::Process);
  Json list = Json::array();
  for (std::size_t i = 0; i < projected.size(); ++i) {
    const ProjectionWindow& w = ranges.windows[i];
    const ProjectedRange& p = projected[i];
    Json row = Json::array({w.pid, w.tid, w.start_ns, w.end_ns});
    row = work_columns(std::move(row), p.kernels);
    row = work_columns(std::move(row), p.copies);
    row = work_columns(std::move(row), p.memsets);
    row.push_back(p.span.has_value() ? 1 : 0);
    row.push_back(p.span ? p.span->start_ns : 0);
    row.push_back(p.span ? p.span->end_ns : 0);
    row.push_back(p.process_kernels);
    list.push_back(std::move(row));
  }
  return {kRangeProjectionAnalysis, "", "", Json{{"ranges", std::move(list)}}.dump()};
}

std::optional<std::vector<ProjectedRange>> stored_range_projection(
    const db::Reader& reader, const std::vector<ProjectionWindow>& windows) {
  if (reader.restricted() || !db::has_stored_analyses(reader)) return std::nullopt;
  try {
    const auto row =
        db::read_stored_analysis(reader, kRangeProjectionAnalysis, "", kMaxStoredBodyBytes);
    if (!row || !row->window_key.empty() || !db::stored_analyses_fresh(reader)) return std::nullopt;
    const Json body = Json::parse(row->body, nullptr, /*allow_exceptions=*/false);
    if (body.is_discarded() || !body.is_object()) return std::nullopt;
    const Json& list = store::array_member(body, "ranges");
    if (list.size() != windows.size()) return std::nullopt;
    std::vector<ProjectedRange> out(windows.size());
    std::int64_t sums[kColumns] = {};
    for (std::size_t i = 0; i < windows.size(); ++i) {
      const Json& r = list[i];
      if (!r.is_array() || r.size() != kColumns) return std::nullopt;
      const ProjectionWindow& w = windows[i];
      const std::int64_t bounds[] = {w.pid, w.tid, w.start_ns, w.end_ns};
      for (std::size_t c = 0; c < 4; ++c) {  // the same range, in the same place
        if (!r[c].is_number_integer() || r[c].get<std::int64_t>() != bounds[c]) return std::nullopt;
      }
      ProjectedRange& p = out[i];
      read_work(r, 4, p.kernels, sums);
      read_work(r, 8, p.copies, sums);
      read_work(r, 12, p.memsets, sums);
      if (store::int_in(r[16], 0, 1) == 1) {
        const std::int64_t start = store::int_in(r[17], 0, kMax);
        const std::int64_t end = store::int_in(r[18], start, kMax);
        if (__builtin_add_overflow(sums[17], end - start, &sums[17]))
          throw BadStore("nvtx_ranges: spans overflow");
        p.span = ProjectedSpan{start, end};
      }
      p.process_kernels = store::int_in(r[19], 0, kMax);
    }
    return out;
  } catch (const BadStore&) {
  } catch (const Json::exception&) {
  }
  return std::nullopt;
}

}  // namespace fuselens::analyzer
