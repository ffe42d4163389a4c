#pragma once
// RooflineStore: the roofline tables of a capture (schema version 2, db/schema.sql): measured
// ceilings (`ceiling`), hardware counters per kernel launch (`kernel_metric`) and what each
// counter session asked for and cost (`metric_session`).
//
// Writing opens its own SQLite connection to a capture made by Writer::create, so that the
// collector's range profiler and `prof-ceilings` can append beside the activity writer (WAL
// mode, busy timeout 10 s). Reading goes through a db::Reader; a version-1 capture has none of
// these tables and reads as empty (migration-free: versions only add tables).
//
// Units: ceiling values are bytes/s (bandwidths, bytes read + bytes written) or FLOP/s (an FMA
// counts 2 FLOP); metric values are what CUPTI evaluates (instruction counts, bytes).
// Errors: db::Error (not a capture, a capture older than version 2 for writing, SQLite failures).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fuselens/db/Reader.h"

namespace fuselens::db {

/// Names of the ceilings `prof-ceilings` measures (ceiling.name).
inline constexpr const char* kCeilingDramBandwidth = "dram_bandwidth";  ///< bytes/s
inline constexpr const char* kCeilingL2Bandwidth = "l2_bandwidth";      ///< bytes/s
inline constexpr const char* kCeilingFp32 = "fp32_fma";                 ///< FLOP/s
inline constexpr const char* kCeilingFp16Tensor = "fp16_tensor";        ///< FLOP/s
inline constexpr const char* kCeilingBf16Tensor = "bf16_tensor";        ///< FLOP/s

/// CUPTI metric names of the `roofline` metric set (prof-run --metrics roofline), as stored in
/// kernel_metric. FLOP formulas (ANCHORS.md, Nsight Compute's roofline): FP32 = fadd + fmul +
/// 2 ffma; FP64 = dadd + dmul + 2 dfma; FP16 (packed half2) = 2 hadd + 2 hmul + 4 hfma; tensor =
/// the sum of the sm__ops_path_tensor_* counts (math ops); bytes: DRAM = read + write, L2 =
/// lts__t_bytes, L1 = l1tex__t_bytes. Counts are thread-level SASS instructions with all
/// predicates true.
namespace metric {
inline constexpr const char* kFadd = "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum";
inline constexpr const char* kFmul = "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum";
inline constexpr const char* kFfma = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum";
inline constexpr const char* kDadd = "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum";
inline constexpr const char* kDmul = "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum";
inline constexpr const char* kDfma = "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum";
inline constexpr const char* kHadd = "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum";
inline constexpr const char* kHmul = "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum";
inline constexpr const char* kHfma = "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum";
inline constexpr const char* kTensorFp16 = "sm__ops_path_tensor_src_fp16.sum";
inline constexpr const char* kTensorBf16 = "sm__ops_path_tensor_src_bf16_dst_fp32.sum";
inline constexpr const char* kTensorTf32 = "sm__ops_path_tensor_src_tf32_dst_fp32.sum";
inline constexpr const char* kTensorFp8 = "sm__ops_path_tensor_src_fp8.sum";
inline constexpr const char* kTensorFp64 = "sm__ops_path_tensor_src_fp64.sum";
inline constexpr const char* kDramRead = "dram__bytes_read.sum";
inline constexpr const char* kDramWrite = "dram__bytes_write.sum";
inline constexpr const char* kL2Bytes = "lts__t_bytes.sum";
inline constexpr const char* kL1Bytes = "l1tex__t_bytes.sum";
inline constexpr const char* kDuration = "gpu__time_duration.sum";  ///< ns, of the profiled pass
}  // namespace metric

/// A named set of metrics: `required` must all be supported by the chip (else the session
/// fails with a message naming the first missing one); `optional` ones the chip lacks (tensor
/// paths on Turing, say) are left out.
struct MetricSet {
  std::string name;
  std::vector<std::string> required;
  std::vector<std::string> optional;
};

/// The `roofline` set: the metric:: names above (tensor paths optional). On an H100 (GH100)
/// CUPTI schedules them in 5 kernel replays (cuptiProfilerHostGetNumOfPasses).
MetricSet roofline_metric_set();

struct CeilingRecord {
  std::uint32_t device_id = 0;
  std::string device_name;
  std::string name;    ///< one of the kCeiling* names
  double value = 0;    ///< bytes/s or FLOP/s
  std::string method;  ///< how it was measured, for people
  std::uint64_t measured_utc_ns = 0;
};

/// The counters of one kernel launch: parallel names and values.
struct KernelMetricRecord {
  std::uint32_t pid = 0;
  std::uint32_t correlation_id = 0;
  std::vector<std::pair<std::string, double>> values;  ///< (CUPTI metric name, value)
};

struct MetricSessionRecord {
  std::uint32_t pid = 0;
  std::uint32_t device_id = 0;
  std::string metric_set;            ///< as given to --metrics
  std::vector<std::string> metrics;  ///< CUPTI names collected
  /// Kernel replay: CUPTI's replays per launch; application replay: runs of the program.
  std::int64_t passes = 0;
  std::string replay = "kernel";       ///< "kernel" or "application" (table metric_replay)
  std::string cache_control = "none";  ///< "all" or "none" (table metric_replay)
  std::int64_t ranges = 0;             ///< launches with counters stored
  std::int64_t unattributed_ranges = 0;
  std::string status = "ok";  ///< "ok" or one line saying why counters are missing
};

/// Appends roofline rows to an existing capture of schema version >= 2.
class RooflineWriter {
 public:
  /// Opens `path` read-write. db::Error when it is not a FuseLens capture or is version 1.
  explicit RooflineWriter(const std::string& path);
  ~RooflineWriter();
  RooflineWriter(RooflineWriter&&) noexcept;
  RooflineWriter& operator=(RooflineWriter&&) noexcept;

  void write_ceilings(const std::vector<CeilingRecord>& ceilings);
  /// One transaction; a launch already stored is replaced.
  void write_kernel_metrics(const std::vector<KernelMetricRecord>& launches);
  /// Inserts or replaces the session row of (pid, device_id), and its metric_replay row (a
  /// version-4 capture gets that table).
  void write_metric_session(const MetricSessionRecord& session);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Every ceiling of the capture, in row order (empty for a version-1 capture).
std::vector<CeilingRecord> read_ceilings(const Reader& reader);
/// How the session's counters were collected, for reports: "5 kernel replay passes per launch"
/// (cache control none: CUPTI's replay), "5 kernel replay passes per launch, memory restored and
/// L2 flushed before each" (cache control all: the collector's replay) or "application replay, 4
/// runs, L2 flushed before each launch" ("caches as left" for cache control none).
std::string describe_replay(const MetricSessionRecord& session);
/// Every metric session (empty for a version-1 capture).
std::vector<MetricSessionRecord> read_metric_sessions(const Reader& reader);
/// True when the capture holds at least one kernel_metric row.
bool has_kernel_metrics(const Reader& reader);

}  // namespace fuselens::db
