#pragma once
// Test support for the analyzer suites: temporary directories, a synthetic reference capture
// with known values (written through db::Writer), and an RFC 4180 CSV parser.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "TempDir.h"
#include "flags/Flags.h"
#include "fuselens/db/Records.h"
#include "fuselens/db/RooflineStore.h"

namespace fuselens::analyzer::test {

/// A fresh directory under the system temporary directory, removed with everything in it.
using TempDir = fuselens::test::TempDir;

// Kernel names of the reference capture.
inline constexpr const char* kGemm64Mangled = "_Z4gemmILi64EEvPfi";
inline constexpr const char* kGemm64 = "void gemm<64>(float*, int)";
inline constexpr const char* kGemm128 = "void gemm<128>(float*, int)";
inline constexpr const char* kRelu = "relu(float*)";
/// Not an Itanium name, so stored unchanged: exercises CSV quoting.
inline constexpr const char* kQuoted = "say \"hi\", <T>";
inline constexpr const char* kDeviceName = "NVIDIA H100 80GB HBM3";

/// Writes the reference capture at `path` (see TestSupport.cpp for every record and the values
/// the tests expect). `finalize` = false leaves it as a crashed run would: no indexes.
void write_reference_capture(const std::string& path, bool finalize = true);

/// Runs `sql` (one or more statements) on the capture at `path`, opened read-write: how a test
/// edits or damages a capture. Throws db::Error when SQLite refuses it.
void exec_sql(const std::string& path, const std::string& sql);

/// A finalized capture with a run row but no process (the workload never initialized CUDA).
void write_capture_without_process(const std::string& path);

/// Records of an RFC 4180 document; a blank line is an empty record.
std::vector<std::vector<std::string>> parse_csv(const std::string& text);

// The flags tests' capture builder: pid kFlagsPid, thread kFlagsTid, stream kFlagsStream,
// device 0; every time is in ns relative to kFlagsT0.
inline constexpr std::uint32_t kFlagsPid = 100, kFlagsTid = 1, kFlagsStream = 7;
inline constexpr std::int64_t kFlagsT0 = 1'000'000'000;
constexpr std::int64_t us(std::int64_t v) { return v * 1000; }

/// A capture built record by record; every GPU operation gets a launching API call with a fresh
/// correlation id. Besides activity it can hold calling contexts, kernel arguments, device
/// allocations, hardware counters, work annotations, a device row and measured ceilings: the
/// evidence of the fusion_chain rule.
class FlagsCapture {
 public:
  void range(const std::string& text, std::int64_t start, std::int64_t end,
             std::uint32_t tid = kFlagsTid, std::uint32_t depth = 0);
  void range_on(std::uint32_t tid, const std::string& text, std::int64_t start, std::int64_t end) {
    range(text, start, end, tid);
  }
  std::uint32_t call(const std::string& name, std::int64_t start, std::int64_t end,
                     std::uint32_t tid = kFlagsTid);
  /// A kernel and its launch call; returns the correlation id.
  std::uint32_t kernel(const std::string& name, std::int64_t start, std::int64_t duration,
                       std::int64_t call_start, std::int64_t call_duration,
                       std::uint32_t tid = kFlagsTid, const std::string& api = "cudaLaunchKernel");
  /// A copy; its call runs from 1 us before the copy starts to 1 us after it ends.
  void copy(db::MemcpyKind kind, std::uint64_t bytes, std::int64_t start, std::int64_t duration,
            bool async, db::MemoryKind src, db::MemoryKind dst);
  void memset(db::MemoryKind kind, std::int64_t start, std::int64_t duration, bool async);
  void sync(db::SyncType type, std::int64_t start, std::int64_t end, std::uint32_t correlation);

  /// The call path of call `correlation`, root first (function names; module /tmp/synthetic);
  /// the last frame gets source location synthetic.cu:`leaf_line` when it is not 0.
  void context(std::uint32_t correlation, const std::vector<std::string>& path,
               std::uint32_t leaf_line = 0);
  /// PyTorch autograd sequence numbers of call `correlation` (api_context, schema 9; -1: none).
  void seq(std::uint32_t correlation, std::int64_t forward_seq, std::int64_t backward_seq) {
    seqs_[correlation] = {forward_seq, backward_seq};
  }
  /// An NVTX mark `text` (default domain) at `t` on thread `tid`.
  void mark(const std::string& text, std::int64_t t, std::uint32_t tid = kFlagsTid);
  /// Kernel arguments (kernel_arg rows) of launch `correlation`, indexes 0, 1, ...
  void args(std::uint32_t correlation, const std::vector<std::uint64_t>& values);
  /// A device allocation at `start` (memory_event), released at `end` when given.
  void allocation(std::uint64_t address, std::uint64_t bytes, std::int64_t start,
                  std::optional<std::int64_t> end = std::nullopt);
  /// Hardware counters of launch `correlation`: `fp32_flops` (as FFMA counts), DRAM bytes (half
  /// read, half written) and L2 bytes (none when 0).
  void counters(std::uint32_t correlation, double fp32_flops, double dram_bytes,
                double l2_bytes = 0);
  /// A work annotation (NVTX mark, domain "fuselens") at `t`: fp32 FLOPs and bytes.
  void annotation(std::int64_t t, double flops, double bytes);
  /// A device row (id 0); kDeviceName with 132 SMs matches the h100-sxm datasheet profile.
  void device(const std::string& name = kDeviceName, int sm_count = 132);
  /// A measured ceiling of device 0 (db::kCeiling* name, bytes/s or FLOP/s).
  void ceiling(const std::string& name, double value);

  /// Names thread `tid` (the thread table).
  void thread(std::uint32_t tid, const std::string& name) {
    threads_.push_back({kFlagsPid, tid, name});
  }

  void write(const std::string& path, bool with_process = true) const;

 private:
  db::RecordBatch batch_;
  std::uint32_t next_correlation_ = 1;
  struct Context {
    std::uint32_t correlation;
    std::vector<std::string> path;
    std::uint32_t leaf_line;
  };
  std::vector<Context> contexts_;
  std::map<std::uint32_t, std::pair<std::int64_t, std::int64_t>> seqs_;
  std::vector<db::KernelArgRecord> args_;
  std::vector<db::KernelMetricRecord> counters_;
  std::vector<db::CeilingRecord> ceilings_;
  std::optional<db::DeviceInfo> device_;
  std::vector<db::ThreadInfo> threads_;
};

/// Writes `capture` to a temporary file and runs the flags rules on it.
FlagsReport flags_of(const FlagsCapture& capture, const FlagsConfig& config = {});
/// The rules that fired.
std::set<std::string> fired(const FlagsReport& report);
/// The hits of `rule`, in report order.
std::vector<const Hit*> hits_of(const FlagsReport& report, const std::string& rule);

}  // namespace fuselens::analyzer::test
