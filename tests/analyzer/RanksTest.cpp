// Ranks (analyzer/ranks, docs/multi-gpu.md): two ranks of synthetic captures written with
// db::Writer (process_rank rows, NVTX "step#k" ranges per rank, compute kernels, NCCL kernels,
// peer and host copies, memsets), one rank whose collectives start later every step. Expected
// figures are computed here from the intervals the test writes, on a 1 us grid (not the
// analysis's interval sweep). Also: hostile captures and `prof-analyze ranks`.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "Subprocess.h"
#include "TestSupport.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/Writer.h"
#include "ranks/Ranks.h"
#include "ranks/RanksFormat.h"
#include "window/Window.h"

#ifndef PROF_ANALYZE_PATH
#error "PROF_ANALYZE_PATH must name the prof-analyze binary"
#endif

using namespace fuselens;
using namespace fuselens::analyzer;
using fuselens::analyzer::test::parse_csv;
using fuselens::analyzer::test::TempDir;

namespace {

constexpr std::int64_t kT0 = 5'000'000'000;  // ns
constexpr std::int64_t us(std::int64_t v) { return v * 1000; }
const std::string kAllReduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";

/// A GPU operation of the synthetic step, in us from the step's start.
struct Op {
  enum Kind { Compute, Nccl, Peer, HostCopy, Memset } kind;
  std::int64_t start_us, end_us;
  std::string name;
};

/// Builds a capture of several processes record by record; every GPU operation gets a launch
/// call 5 us before it (its process's thread, a fresh correlation id per process).
class RankCapture {
 public:
  void process(std::uint32_t pid, std::optional<int> rank) {
    db::ProcessInfo p;
    p.pid = pid;
    p.executable = "/usr/bin/python3";
    processes_.push_back(p);
    if (rank) {
      db::ProcessRank r;
      r.pid = pid;
      r.rank = *rank;
      r.world_size = 2;
      r.local_rank = *rank;
      r.launcher = "torch";
      r.host_name = "node0";
      ranks_.push_back(r);
    }
  }
  void range(std::uint32_t pid, const std::string& text, std::int64_t start, std::int64_t end) {
    db::NvtxRangeRecord r;
    r.pid = pid;
    r.tid = pid;
    r.text = text;
    r.start_ns = static_cast<std::uint64_t>(start);
    r.end_ns = static_cast<std::uint64_t>(end);
    batch_.nvtx_ranges.push_back(r);
  }
  void op(std::uint32_t pid, std::uint32_t device, std::int64_t base, const Op& o) {
    const std::uint32_t corr = ++correlation_[pid];
    const auto start = static_cast<std::uint64_t>(base + us(o.start_us));
    const auto end = static_cast<std::uint64_t>(base + us(o.end_us));
    db::ApiCallRecord call;
    call.pid = pid;
    call.tid = pid;
    call.correlation_id = corr;
    call.start_ns = start > static_cast<std::uint64_t>(us(5)) ? start - us(5) : 0;
    call.end_ns = call.start_ns + us(2);
    if (o.kind == Op::Compute || o.kind == Op::Nccl) {
      call.name = "cudaLaunchKernel";
      db::KernelRecord k;
      k.pid = pid;
      k.device_id = device;
      k.stream_id = o.kind == Op::Nccl ? 20 : 7;
      k.correlation_id = corr;
      k.start_ns = start;
      k.end_ns = end;
      k.mangled_name = o.name;
      batch_.kernels.push_back(k);
    } else if (o.kind == Op::Memset) {
      call.name = "cudaMemsetAsync";
      db::MemsetRecord m;
      m.pid = pid;
      m.device_id = device;
      m.correlation_id = corr;
      m.start_ns = start;
      m.end_ns = end;
      m.bytes = 4096;
      batch_.memsets.push_back(m);
    } else {
      call.name = "cudaMemcpyAsync";
      db::MemcpyRecord c;
      c.pid = pid;
      c.device_id = device;
      c.correlation_id = corr;
      c.start_ns = start;
      c.end_ns = end;
      c.bytes = 1 << 20;
      c.copy_kind = o.kind == Op::Peer ? db::MemcpyKind::PeerToPeer : db::MemcpyKind::HostToDevice;
      batch_.memcpys.push_back(c);
    }
    batch_.api_calls.push_back(call);
  }
  void write(const std::string& path) const {
    db::RunInfo run;
    run.command_line = {"torchrun", "--nproc-per-node", "2", "train.py"};
    run.start_utc_ns = 1;
    auto writer = db::Writer::create(path, run);
    for (const auto& p : processes_) writer.write_process(p);
    for (const auto& r : ranks_) writer.write_process_rank(r);
    writer.write(batch_);
    db::RunEnd end;
    end.reason = db::EndReason::Exited;
    end.exit_status = 0;
    writer.finalize(end);
  }

 private:
  std::vector<db::ProcessInfo> processes_;
  std::vector<db::ProcessRank> ranks_;
  db::RecordBatch batch_;
  std::map<std::uint32_t, std::uint32_t> correlation_;
};

constexpr std::uint32_t kPid0 = 4100, kPid1 = 4200;
constexpr int kSteps = 4;
constexpr std::int64_t kWarmupWall = 3000, kWall = 1000;  // us

std::int64_t step_start(int k) {  // k from 1
  return kT0 + us(k == 1 ? 0 : kWarmupWall + (k - 2) * kWall);
}
std::int64_t step_wall(int k) { return us(k == 1 ? kWarmupWall : kWall); }

/// The operations of rank `rank` in a step: rank 1's collectives start later (50 and 40 us).
std::vector<Op> step_ops(int rank) {
  const std::int64_t late1 = rank == 1 ? 50 : 0, late2 = rank == 1 ? 40 : 0;
  return {
      {Op::Compute, 10, 310, "gemm"},  {Op::Nccl, 200 + late1, 400, kAllReduce},
      {Op::Compute, 450, 500, "relu"}, {Op::Nccl, 520 + late2, 600, kAllReduce},
      {Op::HostCopy, 600, 650, ""},    {Op::Memset, 620, 700, ""},
      {Op::Peer, 700, 720, ""},
  };
}

/// Two ranks on devices 0 and 1, kSteps steps each. `tweak` may change a rank's ops of a step.
RankCapture two_ranks(
    const std::function<void(int rank, int step, std::vector<Op>&)>& tweak = nullptr) {
  RankCapture c;
  c.process(kPid0, 0);
  c.process(kPid1, 1);
  for (int rank = 0; rank < 2; ++rank) {
    const std::uint32_t pid = rank == 0 ? kPid0 : kPid1;
    for (int k = 1; k <= kSteps; ++k) {
      c.range(pid, "step#" + std::to_string(k), step_start(k), step_start(k) + step_wall(k));
      auto ops = step_ops(rank);
      if (tweak) tweak(rank, k, ops);
      for (const Op& o : ops) c.op(pid, static_cast<std::uint32_t>(rank), step_start(k), o);
    }
  }
  return c;
}

/// The hand computation: 1 us cells covered by the ops of the given kinds.
std::set<std::int64_t> cells(const std::vector<Op>& ops, std::set<Op::Kind> kinds) {
  std::set<std::int64_t> covered;
  for (const Op& o : ops) {
    if (kinds.count(o.kind) == 0) continue;
    for (std::int64_t t = o.start_us; t < o.end_us; ++t) covered.insert(t);
  }
  return covered;
}
std::int64_t count_minus(const std::set<std::int64_t>& a, const std::set<std::int64_t>& b) {
  std::int64_t n = 0;
  for (auto t : a) n += b.count(t) == 0 ? 1 : 0;
  return n;
}
std::int64_t count_both(const std::set<std::int64_t>& a, const std::set<std::int64_t>& b) {
  std::int64_t n = 0;
  for (auto t : a) n += b.count(t);
  return n;
}

struct Expected {
  std::int64_t compute, communication, memory, idle, comm_union, overlap;
};
Expected expected_breakdown(int rank, std::int64_t wall_us) {
  const auto ops = step_ops(rank);
  const auto compute = cells(ops, {Op::Compute});
  const auto comm = cells(ops, {Op::Nccl, Op::Peer});
  const auto memory = cells(ops, {Op::HostCopy, Op::Memset});
  std::set<std::int64_t> compute_or_comm = compute;
  compute_or_comm.insert(comm.begin(), comm.end());
  std::set<std::int64_t> all = compute_or_comm;
  all.insert(memory.begin(), memory.end());
  return {us(static_cast<std::int64_t>(compute.size())),
          us(count_minus(comm, compute)),
          us(count_minus(memory, compute_or_comm)),
          us(wall_us - static_cast<std::int64_t>(all.size())),
          us(static_cast<std::int64_t>(comm.size())),
          us(count_both(comm, compute))};
}

std::string write_capture(const TempDir& dir, const RankCapture& c, const char* name = "r.sqlite") {
  const std::string path = (dir.path() / name).string();
  c.write(path);
  return path;
}

const RankStep& row_of(const RanksReport& r, int step, int rank) {
  for (const auto& row : r.rows) {
    if (row.step == step && row.rank == rank) return row;
  }
  throw std::runtime_error("no row for step " + std::to_string(step));
}

fuselens::test::Result prof_analyze(const std::vector<std::string>& args) {
  std::vector<std::string> argv{PROF_ANALYZE_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  return fuselens::test::run(argv);
}

}  // namespace

TEST(RanksClasses, NcclKernelsByShortOrDemangledName) {
  EXPECT_TRUE(is_communication_kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", ""));
  EXPECT_TRUE(is_communication_kernel("", "void ncclKernel_AllGather_RING_LL(ncclWork*)"));
  EXPECT_FALSE(is_communication_kernel("NCCLish", "NcclThing"));  // case-sensitive
  EXPECT_FALSE(is_communication_kernel("gemm", "void gemm<64>(float*, int)"));
}

TEST(Ranks, RanksDevicesAndEqualNcclKernelsPerStep) {
  TempDir dir;
  db::Reader reader(write_capture(dir, two_ranks()));
  const RanksReport r = analyze_ranks(reader);
  EXPECT_TRUE(r.distributed);
  ASSERT_EQ(r.ranks.size(), 2u);
  EXPECT_EQ(r.ranks[0].rank, 0);
  EXPECT_EQ(r.ranks[0].pid, kPid0);
  EXPECT_EQ(r.ranks[0].devices, std::vector<std::int64_t>{0});
  EXPECT_EQ(r.ranks[1].pid, kPid1);
  EXPECT_EQ(r.ranks[1].devices, std::vector<std::int64_t>{1});
  EXPECT_TRUE(r.ranks[1].launcher_rank);
  EXPECT_EQ(r.ranks[1].launcher, "torch");
  ASSERT_EQ(r.steps.size(), static_cast<std::size_t>(kSteps));  // whole capture: every step
  ASSERT_EQ(r.rows.size(), 2u * kSteps);
  for (int k = 1; k <= kSteps; ++k) {
    const RankStep& a = row_of(r, k, 0);
    const RankStep& b = row_of(r, k, 1);
    EXPECT_EQ(a.nccl_kernels, 2) << "step " << k;
    EXPECT_EQ(a.nccl_kernels, b.nccl_kernels) << "step " << k;
    EXPECT_EQ(a.kernels, 4);
    EXPECT_EQ(a.copies, 2);
    EXPECT_EQ(a.memsets, 1);
    EXPECT_EQ(a.start_ns, step_start(k));
  }
}

TEST(Ranks, BreakdownAndOverlapMatchTheHandComputation) {
  TempDir dir;
  db::Reader reader(write_capture(dir, two_ranks()));
  const RanksReport r = analyze_ranks(reader);
  for (int rank = 0; rank < 2; ++rank) {
    for (int k = 1; k <= kSteps; ++k) {
      const std::int64_t wall_us = step_wall(k) / 1000;
      const Expected e = expected_breakdown(rank, wall_us);
      const RankStep& row = row_of(r, k, rank);
      SCOPED_TRACE("rank " + std::to_string(rank) + " step " + std::to_string(k));
      EXPECT_EQ(row.span_ns, step_wall(k));  // every op lies inside the step
      EXPECT_EQ(row.compute_ns, e.compute);
      EXPECT_EQ(row.communication_ns, e.communication);
      EXPECT_EQ(row.memory_ns, e.memory);
      EXPECT_EQ(row.idle_ns, e.idle);
      EXPECT_EQ(row.compute_ns + row.communication_ns + row.memory_ns + row.idle_ns, row.span_ns);
      EXPECT_EQ(row.communication_union_ns, e.comm_union);
      EXPECT_EQ(row.overlap_ns, e.overlap);
      ASSERT_TRUE(row.overlap_share().has_value());
      EXPECT_DOUBLE_EQ(*row.overlap_share(),
                       static_cast<double>(e.overlap) / static_cast<double>(e.comm_union));
    }
    // Over the window: the sums.
    const RankSummary& s = r.summary[static_cast<std::size_t>(rank)];
    const Expected e = expected_breakdown(rank, 1000);
    EXPECT_EQ(s.steps, kSteps);
    EXPECT_EQ(s.overlap_ns, kSteps * e.overlap);
    EXPECT_EQ(s.communication_union_ns, kSteps * e.comm_union);
  }
}

TEST(Ranks, LateRankIsTheStragglerOfEveryStepAndBlocksTheOther) {
  TempDir dir;
  db::Reader reader(write_capture(dir, two_ranks()));
  const RanksReport r = analyze_ranks(reader);
  // Arrivals from step_ops: rank 1 starts each collective later than rank 0.
  const auto ops0 = step_ops(0), ops1 = step_ops(1);
  std::int64_t blocked0 = 0, late = 0;
  for (std::size_t i = 0; i < ops0.size(); ++i) {
    if (ops0[i].kind != Op::Nccl) continue;
    blocked0 += us(ops1[i].start_us - ops0[i].start_us);
    late += us(ops1[i].start_us - ops0[i].start_us);  // last minus second-last of two ranks
  }
  for (const StepCollectives& s : r.steps) {
    SCOPED_TRACE("step " + std::to_string(s.step));
    EXPECT_EQ(s.collectives, 2);
    EXPECT_EQ(s.mismatched, 0);
    ASSERT_TRUE(s.straggler.has_value());
    EXPECT_EQ(*s.straggler, 1);
    EXPECT_EQ(s.straggler_last_in, 2);
    EXPECT_EQ(s.straggler_lateness_ns, late);
    EXPECT_TRUE(s.note.empty()) << s.note;
    EXPECT_EQ(row_of(r, s.step, 0).blocked_ns, blocked0);
    EXPECT_EQ(row_of(r, s.step, 1).blocked_ns, 0);
    EXPECT_TRUE(row_of(r, s.step, 1).straggler);
    EXPECT_FALSE(row_of(r, s.step, 0).straggler);
  }
  EXPECT_EQ(r.summary[1].straggler_steps, kSteps);
  EXPECT_EQ(r.summary[0].blocked_ns, kSteps * blocked0);
}

TEST(Ranks, SteadyWindowDropsTheWarmUpStepOfEveryRank) {
  TempDir dir;
  db::Reader reader(write_capture(dir, two_ranks()));
  const Window w = resolve_window(reader, parse_window("steady"));
  const RanksReport r = analyze_ranks(reader, &w);
  EXPECT_EQ(r.window, w.description);
  ASSERT_EQ(r.steps.size(), static_cast<std::size_t>(kSteps - 1));
  EXPECT_EQ(r.steps.front().step, 2);  // step 1 (3 ms) is the warm-up of both ranks
  for (const RankStep& row : r.rows) EXPECT_TRUE(row.present);
  EXPECT_EQ(r.summary[0].steps, kSteps - 1);
}

TEST(Ranks, DifferentCollectiveCountsAreReportedNotGuessed) {
  TempDir dir;
  const auto capture = two_ranks([](int rank, int step, std::vector<Op>& ops) {
    if (rank == 1 && step == 3) ops.erase(ops.begin() + 3);  // its second all-reduce
    if (rank == 1 && step == 4) ops[3].name = "ncclDevKernel_AllGather_RING_LL";
  });
  db::Reader reader(write_capture(dir, capture));
  const RanksReport r = analyze_ranks(reader);
  const StepCollectives& s3 = r.steps[2];
  EXPECT_EQ(s3.step, 3);
  EXPECT_EQ(s3.collectives, 0);
  EXPECT_FALSE(s3.straggler.has_value());
  EXPECT_EQ(s3.note, "collectives differ across ranks in step 3: rank 0 has 2, rank 1 has 1");
  EXPECT_EQ(row_of(r, 3, 0).blocked_ns, 0);
  const StepCollectives& s4 = r.steps[3];
  EXPECT_EQ(s4.collectives, 1);  // the first matches, the second's names differ
  EXPECT_EQ(s4.mismatched, 1);
  EXPECT_NE(s4.note.find("names differ"), std::string::npos) << s4.note;
  ASSERT_TRUE(s4.straggler.has_value());
  EXPECT_EQ(*s4.straggler, 1);
}

TEST(Ranks, ProcessesWithoutRankRowsComeAfterTheKnownRanks) {
  TempDir dir;
  RankCapture c = two_ranks();
  c.process(4050, std::nullopt);  // lower pid than the ranked ones, no launcher rank
  c.op(4050, 2, step_start(2), {Op::Compute, 0, 10, "gemm"});
  c.process(4300, std::nullopt);  // no GPU work: not a rank
  db::Reader reader(write_capture(dir, c));
  const RanksReport r = analyze_ranks(reader);
  ASSERT_EQ(r.ranks.size(), 3u);
  EXPECT_EQ(r.ranks[2].rank, 2);
  EXPECT_EQ(r.ranks[2].pid, 4050);
  EXPECT_FALSE(r.ranks[2].launcher_rank);
  EXPECT_EQ(r.ranks[2].note, "no launcher rank");
  EXPECT_EQ(r.ranks[2].devices, std::vector<std::int64_t>{2});
  // It has no steps: its rows are absent and each step says so; the others still match.
  EXPECT_FALSE(row_of(r, 2, 2).present);
  EXPECT_NE(r.steps[1].note.find("rank 2 has no step 2"), std::string::npos) << r.steps[1].note;
  EXPECT_EQ(r.steps[1].collectives, 2);
}

TEST(Ranks, OneProcessIsRankZeroWithoutCollectives) {
  TempDir dir;
  RankCapture c;
  c.process(77, std::nullopt);
  c.op(77, 0, kT0, {Op::Compute, 0, 100, "gemm"});
  c.op(77, 0, kT0, {Op::Nccl, 50, 80, kAllReduce});
  db::Reader reader(write_capture(dir, c));
  const RanksReport r = analyze_ranks(reader);
  EXPECT_FALSE(r.distributed);
  ASSERT_EQ(r.ranks.size(), 1u);
  EXPECT_EQ(r.ranks[0].rank, 0);
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0].step, 0);  // no steps: the window is one step
  EXPECT_EQ(r.rows[0].nccl_kernels, 1);
  EXPECT_EQ(r.steps[0].collectives, 0);
  EXPECT_NE(std::find(r.notes.begin(), r.notes.end(), "one rank (pid 77): no collectives to match"),
            r.notes.end());
}

TEST(Ranks, HostileCapturesGiveNotesNotCrashes) {
  TempDir dir;
  {  // no kernels at all
    RankCapture c;
    c.process(10, 0);
    db::Reader reader(write_capture(dir, c, "empty.sqlite"));
    const RanksReport r = analyze_ranks(reader);
    ASSERT_EQ(r.ranks.size(), 1u);  // the ranked process, without work
    EXPECT_TRUE(r.distributed);     // it has a rank row
    EXPECT_NE(std::find(r.notes.begin(), r.notes.end(), "no GPU work in the window"),
              r.notes.end());
  }
  {  // times at both ends of the range a capture allows, two processes claiming rank 0
    RankCapture c;
    c.process(10, 0);
    c.process(11, 0);
    const std::int64_t far = db::kMaxTimestampNs - us(1000);
    c.op(10, 0, us(10), {Op::Nccl, 0, 10, kAllReduce});
    c.op(10, 0, far, {Op::Nccl, 0, 10, kAllReduce});
    c.op(11, 0, far, {Op::Nccl, 1, 10, kAllReduce});
    c.op(11, 0, us(10), {Op::Nccl, 0, 10, kAllReduce});
    db::Reader reader(write_capture(dir, c, "far.sqlite"));
    const RanksReport r = analyze_ranks(reader);
    ASSERT_EQ(r.ranks.size(), 2u);
    EXPECT_EQ(r.ranks[1].pid, 11);
    EXPECT_EQ(r.ranks[1].note, "rank 0 also claimed by pid 10");
    ASSERT_EQ(r.rows.size(), 2u);
    for (const auto& row : r.rows) {
      EXPECT_GE(row.span_ns, 0);
      EXPECT_GE(row.idle_ns, 0);
      EXPECT_LE(row.span_ns, db::kMaxTimestampNs);
    }
    // Launch order (not the order written) pairs the early kernels and the far ones.
    EXPECT_EQ(r.steps[0].collectives, 2);
    EXPECT_GE(r.summary[0].blocked_ns, 0);
    EXPECT_GE(r.summary[1].blocked_ns, 0);
  }
}

TEST(Ranks, TheHighestRankLeavesNoneForAProcessWithoutOne) {
  TempDir dir;
  RankCapture c;
  c.process(20, std::numeric_limits<int>::max());
  c.process(21, std::nullopt);
  c.op(21, 0, kT0, {Op::Compute, 0, 10, "gemm"});
  db::Reader reader(write_capture(dir, c));
  const RanksReport r = analyze_ranks(reader);
  ASSERT_EQ(r.ranks.size(), 1u);
  EXPECT_EQ(r.ranks[0].rank, std::numeric_limits<int>::max());
  EXPECT_NE(std::find(r.notes.begin(), r.notes.end(),
                      "pid 21 left out: no rank after " +
                          std::to_string(std::numeric_limits<int>::max())),
            r.notes.end());
}

TEST(RanksCli, TableCsvAndJsonNameTheWindowAndCarryTheFields) {
  TempDir dir;
  const std::string path = write_capture(dir, two_ranks());
  const auto table = prof_analyze({"ranks", path});
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_EQ(table.out.rfind("Window: steps ", 0), 0u) << table.out;
  EXPECT_NE(table.out.find("(steady)"), std::string::npos);
  EXPECT_NE(table.out.find("step 2: straggler rank 1, last at 2 of 2 collectives"),
            std::string::npos)
      << table.out;

  const auto csv = prof_analyze({"ranks", path, "--format", "csv", "--window", "all"});
  ASSERT_EQ(csv.status, 0) << csv.err;
  const auto records = parse_csv(csv.out);
  ASSERT_FALSE(records.empty());
  const auto& header = records[0];
  for (const char* field : {"step", "rank", "device", "kernels", "nccl_kernels", "busy_ns",
                            "compute_pct", "communication_pct", "memory_pct", "idle_pct",
                            "overlap_pct", "blocked_ns", "straggler", "window"}) {
    EXPECT_NE(std::find(header.begin(), header.end(), field), header.end()) << field;
  }
  EXPECT_EQ(header.back(), "window");
  ASSERT_GT(records.size(), 1u);
  EXPECT_EQ(records[1].back(), "whole capture");
  EXPECT_EQ(records[1].size(), header.size());

  const auto json = prof_analyze({"ranks", path, "--format", "json"});
  ASSERT_EQ(json.status, 0) << json.err;
  const auto doc = nlohmann::json::parse(json.out);
  EXPECT_EQ(doc["window"]["spec"], "steady");
  EXPECT_EQ(doc["rows"].size(), 2u * (kSteps - 1));
  EXPECT_EQ(doc["steps"][0]["straggler"], 1);
  for (const char* field :
       {"rank", "kernels", "nccl_kernels", "busy_ns", "compute_share", "communication_share",
        "memory_share", "idle_share", "overlap_share", "blocked_ns", "straggler"}) {
    EXPECT_TRUE(doc["rows"][0].contains(field)) << field;
  }
}

TEST(RanksCli, OneProcessExitsZeroAndSaysSo) {
  TempDir dir;
  RankCapture c;
  c.process(77, std::nullopt);
  c.op(77, 0, kT0, {Op::Compute, 0, 100, "gemm"});
  const auto result = prof_analyze({"ranks", write_capture(dir, c)});
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.out.find("one rank (pid 77): no collectives to match"), std::string::npos)
      << result.out;
  const auto bad = prof_analyze({"ranks", write_capture(dir, c, "b.sqlite"), "--window", "x"});
  EXPECT_EQ(bad.status, 2);
}

TEST(RanksSteps, StepsOfOneProcessAreNumberedWithinIt) {
  TempDir dir;
  db::Reader reader(write_capture(dir, two_ranks()));
  EXPECT_EQ(analyze_steps(reader).steps.size(), 2u * kSteps);  // both processes, together
  StepOptions one;
  one.pid = kPid1;
  const StepReport r = analyze_steps(reader, one);
  ASSERT_EQ(r.steps.size(), static_cast<std::size_t>(kSteps));
  for (int k = 1; k <= kSteps; ++k) {
    const Step& s = r.steps[static_cast<std::size_t>(k - 1)];
    EXPECT_EQ(s.index, k);
    EXPECT_EQ(s.pid, kPid1);
    EXPECT_EQ(s.label, "step#" + std::to_string(k));
    EXPECT_EQ(s.kernels, 4);  // its own kernels only
  }
  // The automatic method looks at that process's launches alone.
  one.automatic = true;
  const StepReport automatic = analyze_steps(reader, one);
  for (const Step& s : automatic.steps) EXPECT_EQ(s.pid, kPid1);
  // A named range that only another process has is an error for this one.
  StepOptions missing;
  missing.pid = 999;
  missing.range_glob = "step#*";
  EXPECT_THROW(analyze_steps(reader, missing), StepError);
}

TEST(RanksCli, HtmlReportHasARanksSectionOnlyForSeveralRanks) {
  TempDir dir;
  const std::string two = write_capture(dir, two_ranks(), "two.sqlite");
  const std::string html = (dir.path() / "two.html").string();
  const auto result = prof_analyze({"export", two, "--format", "html", "-o", html});
  ASSERT_EQ(result.status, 0) << result.err;
  const std::string page = fuselens::test::slurp(html);
  EXPECT_NE(page.find("id=\"ranks\""), std::string::npos);
  EXPECT_NE(page.find("ranks-steps"), std::string::npos);
  // The whole capture: load_export_analyses computes it on the unrestricted reader.
  const std::string all = (dir.path() / "all.html").string();
  ASSERT_EQ(prof_analyze({"export", two, "--format", "html", "--window", "all", "-o", all}).status,
            0);
  EXPECT_NE(fuselens::test::slurp(all).find("id=\"ranks\""), std::string::npos);
  if (std::getenv("FUSELENS_SHOW_RANKS") != nullptr) {
    std::cerr << prof_analyze({"ranks", two}).out;
  }

  RankCapture c;
  c.process(77, std::nullopt);
  c.op(77, 0, kT0, {Op::Compute, 0, 100, "gemm"});
  const std::string one = write_capture(dir, c, "one.sqlite");
  const std::string html1 = (dir.path() / "one.html").string();
  ASSERT_EQ(prof_analyze({"export", one, "--format", "html", "-o", html1}).status, 0);
  EXPECT_EQ(fuselens::test::slurp(html1).find("id=\"ranks\""), std::string::npos);
}
