#pragma once
// A synthetic capture of a two-rank data-parallel run (issue 25), written with db::Writer, for the
// timeline tests of the analyzer, the HTML report and the GUI. Header-only, test support.
//
// Processes: pid 200 is rank 0 on device 0, pid 100 is rank 1 on device 1 (a lower pid than rank
// 0, so an order by pid and an order by rank differ), pid 300 has no process_rank row (a launcher
// that touched CUDA). Each rank runs `steps` steps of `step_ns` from kT0; in step s of rank r:
//   - NVTX range "step#s" on the rank's main thread (tid = pid);
//   - kComputeKernels "gemm_kernel" kernels on (its device, stream 7), kComputeNs each;
//   - one "ncclDevKernel_AllReduce_Sum_f32_RING_LL" on (its device, stream 13), kNcclNs;
//   - each kernel launched by a cudaLaunchKernel call on the main thread (its correlation id);
// Rank 1 also launches one "stray_kernel" on device 0, stream 7 (a device shared with rank 0,
// the same stream id), and pid 300 one "launcher_kernel" on device 0, stream 7, with its call.
// Rank 1 starts each step `rank1_delay_ns` later than rank 0 (a straggler).
// Every count a test checks is in TwoRankWritten, derived from the loops below.

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "fuselens/db/Records.h"
#include "fuselens/db/Writer.h"

namespace fuselens::test {

struct TwoRankWritten {
  /// Items per (pid, device, stream), kernels and copies.
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, int> gpu_items;
  std::map<std::uint32_t, int> nvtx_ranges;  ///< per pid (one thread each)
  std::map<std::uint32_t, int> api_calls;    ///< per pid
  int nccl_kernels_per_rank = 0;
  std::int64_t first_ns = 0, last_ns = 0;
};

inline constexpr std::int64_t kTwoRankT0 = 1'000'000'000;
inline constexpr int kComputeKernels = 3;
inline constexpr std::int64_t kComputeNs = 40'000, kNcclNs = 90'000;
inline constexpr const char* kNcclKernel = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";

/// Writes the capture at `path` (db::Error if it exists); `with_ranks` = false leaves out the
/// process_rank rows (the same activity as a capture before schema 8 would hold).
inline TwoRankWritten write_two_rank_capture(const std::string& path, bool with_ranks = true,
                                             int steps = 3, std::int64_t step_ns = 1'000'000,
                                             std::int64_t rank1_delay_ns = 200'000) {
  db::RunInfo run;
  run.command_line = {"torchrun", "--nproc-per-node", "2", "ddp_train.py"};
  run.host_name = "node-a";
  run.trace = "cuda,nvtx,api";
  run.start_utc_ns = 1'700'000'000'000'000'000ull;
  auto w = db::Writer::create(path, run);
  TwoRankWritten out;
  out.first_ns = kTwoRankT0;
  out.last_ns = kTwoRankT0;
  db::RecordBatch b;
  std::uint32_t correlation = 1;
  const auto launch = [&](std::uint32_t pid, std::uint32_t device, std::uint32_t stream,
                          const std::string& name, std::int64_t start, std::int64_t duration) {
    db::ApiCallRecord call;
    call.pid = pid;
    call.tid = pid;
    call.name = "cudaLaunchKernel";
    call.start_ns = static_cast<std::uint64_t>(start - 5'000);
    call.end_ns = static_cast<std::uint64_t>(start - 1'000);
    call.correlation_id = correlation;
    b.api_calls.push_back(call);
    db::KernelRecord k;
    k.pid = pid;
    k.device_id = device;
    k.stream_id = stream;
    k.correlation_id = correlation++;
    k.start_ns = static_cast<std::uint64_t>(start);
    k.end_ns = static_cast<std::uint64_t>(start + duration);
    k.mangled_name = name;
    k.grid_x = k.grid_y = k.grid_z = 1;
    k.block_x = 128;
    k.block_y = k.block_z = 1;
    b.kernels.push_back(k);
    ++out.gpu_items[{pid, device, stream}];
    ++out.api_calls[pid];
    out.first_ns = std::min(out.first_ns, start - 5'000);
    out.last_ns = std::max(out.last_ns, start + duration);
  };
  const std::uint32_t pids[2] = {200, 100};  // by rank
  for (int rank = 0; rank < 2; ++rank) {
    const std::uint32_t pid = pids[rank];
    const auto device = static_cast<std::uint32_t>(rank);
    for (int s = 0; s < steps; ++s) {
      const std::int64_t start = kTwoRankT0 + s * step_ns + (rank == 1 ? rank1_delay_ns : 0);
      std::int64_t t = start + 10'000;
      for (int k = 0; k < kComputeKernels; ++k, t += kComputeNs + 2'000) {
        launch(pid, device, 7, "gemm_kernel", t, kComputeNs);
      }
      launch(pid, device, 13, kNcclKernel, t, kNcclNs);
      t += kNcclNs;
      db::NvtxRangeRecord r;
      r.pid = pid;
      r.tid = pid;
      r.text = "step#" + std::to_string(s);
      r.start_ns = static_cast<std::uint64_t>(start);
      r.end_ns = static_cast<std::uint64_t>(t + 1'000);
      b.nvtx_ranges.push_back(r);
      ++out.nvtx_ranges[pid];
      out.last_ns = std::max(out.last_ns, t + 1'000);
    }
  }
  out.nccl_kernels_per_rank = steps;
  launch(100, 0, 7, "stray_kernel", kTwoRankT0 + 20'000, 5'000);
  launch(300, 0, 7, "launcher_kernel", kTwoRankT0 + 30'000, 5'000);
  w.write(b);
  for (const std::uint32_t pid : {100u, 200u, 300u}) {
    db::ProcessInfo p;
    p.pid = pid;
    p.parent_pid = pid == 300 ? 1 : 300;
    p.executable = "/usr/bin/python3";
    p.start_utc_ns = run.start_utc_ns;
    w.write_process(p);
  }
  if (with_ranks) {
    for (int rank = 0; rank < 2; ++rank) {
      db::ProcessRank r;
      r.pid = pids[rank];
      r.rank = rank;
      r.local_rank = rank;
      r.world_size = 2;
      r.local_world_size = 2;
      r.launcher = "torch";
      r.host_name = "node-a";
      w.write_process_rank(r);
    }
  }
  db::RunEnd end;
  end.reason = db::EndReason::Exited;
  end.exit_status = 0;
  end.end_utc_ns = run.start_utc_ns + 10'000'000'000ull;
  w.finalize(end);
  return out;
}

}  // namespace fuselens::test
