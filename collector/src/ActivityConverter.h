#pragma once
// ActivityConverter: the boundary between CUPTI and FuseLens. It turns CUPTI activity records
// (CUpti_ActivityKernel10, Memcpy6, Memset4, Memory4, API, Marker2, MarkerData2,
// Synchronization2, Overhead3 of CUDA 13's CUPTI) into the plain db:: records of one process,
// pairs NVTX range start/end markers into ranges with their nesting depth, and attaches NVTX
// payload/colour/category data. Tests drive it with synthetic records; nothing here needs a GPU.
// Not thread-safe: one converter is used by the collector's single writer thread.

#include <cupti_activity.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "fuselens/db/Records.h"

namespace fuselens::collector {

/// A runtime API callback name without CUPTI's version suffix: "cudaMalloc_v3020" -> "cudaMalloc".
std::string runtime_api_display_name(std::string_view name);

class ActivityConverter {
 public:
  /// Names an API call from its CUPTI domain and callback id ("cudaLaunchKernel").
  using ApiNameResolver = std::function<std::string(db::ApiDomain, std::uint32_t)>;

  /// `pid` is stamped on records that do not carry one (GPU activity).
  ActivityConverter(std::uint32_t pid, ApiNameResolver resolver);

  /// Appends the converted record to `out`. NVTX ranges are held until their end marker and
  /// released by finish_batch(). Unsupported kinds are counted in skipped_records().
  void convert(const CUpti_Activity& record, db::RecordBatch& out);
  /// Walks a completed CUPTI buffer with cuptiActivityGetNextRecord and converts every record,
  /// then calls finish_batch(). Returns the number of records read.
  std::size_t convert_buffer(std::uint8_t* buffer, std::size_t valid_size, db::RecordBatch& out);
  /// Emits the NVTX ranges and marks completed so far, with their marker data.
  void finish_batch(db::RecordBatch& out);
  /// At process end: emits ranges that never ended (end_ns empty), then everything pending.
  void flush_open_ranges(db::RecordBatch& out);

  /// Threads (OS ids) seen in API and NVTX records.
  const std::unordered_set<std::uint32_t>& threads() const { return threads_; }
  std::uint64_t skipped_records() const { return skipped_; }
  /// End markers whose start was never seen (dropped or begun before collection).
  std::uint64_t unmatched_range_ends() const { return unmatched_ends_; }

  /// The CUPTI API name resolver used by the collector (cuptiGetCallbackName).
  static std::string cupti_api_name(db::ApiDomain domain, std::uint32_t callback_id);

 private:
  struct MarkerData {
    db::PayloadKind kind = db::PayloadKind::None;
    double real = 0;
    std::int64_t integer = 0;
    std::uint32_t color = 0, category = 0;
  };
  template <typename Record>
  static void apply(const MarkerData& data, Record& record);

  void convert_marker(const CUpti_ActivityMarker2& marker);
  void convert_marker_data(const CUpti_ActivityMarkerData2& data);
  const std::string& api_name(db::ApiDomain domain, std::uint32_t callback_id);

  std::uint32_t pid_;
  ApiNameResolver resolver_;
  std::unordered_map<std::uint64_t, std::string> api_names_;
  std::unordered_map<std::uint32_t, db::NvtxRangeRecord> open_ranges_;   // by marker id
  std::unordered_map<std::uint32_t, std::uint32_t> open_depth_;          // by thread
  std::unordered_map<std::uint32_t, MarkerData> marker_data_;            // by marker id
  std::vector<std::pair<std::uint32_t, db::NvtxRangeRecord>> done_ranges_;
  std::vector<std::pair<std::uint32_t, db::NvtxMarkRecord>> done_marks_;
  std::unordered_set<std::uint32_t> threads_;
  std::uint64_t skipped_ = 0;
  std::uint64_t unmatched_ends_ = 0;
};

}  // namespace fuselens::collector
