// Runs `prof-analyze merge` on per-rank captures written with db::Writer: the merged capture is
// read by the other subcommands, the clock placement is printed, and each refusal is one line
// with the documented exit status (docs/multi-gpu.md, "Refusals and exit status").
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "Subprocess.h"
#include "TestSupport.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/Writer.h"

#ifndef PROF_ANALYZE_PATH
#error "PROF_ANALYZE_PATH must name the prof-analyze binary"
#endif

namespace fuselens::analyzer {
namespace {

using fuselens::test::Result;
using fuselens::test::run_cli;
using test::TempDir;
namespace fs = std::filesystem;

// One rank's capture: one process with its rank, two kernels.
void write_rank(const std::string& path, const std::string& host, std::uint32_t pid,
                std::int32_t rank, std::int64_t clock_offset_ns) {
  db::RunInfo run;
  run.command_line = {"torchrun", "train.py"};
  run.host_name = host;
  run.fuselens_version = "test";
  run.trace = "cuda";
  run.start_utc_ns = 1'700'000'000'000'000'000ull;
  db::Writer w = db::Writer::create(path, run);
  db::ProcessInfo p;
  p.pid = pid;
  p.executable = "python3";
  p.start_utc_ns = run.start_utc_ns;
  p.clock_offset_ns = clock_offset_ns;
  w.write_process(p);
  db::ProcessRank r;
  r.pid = pid;
  r.rank = rank;
  r.world_size = 2;
  r.launcher = "torch";
  r.host_name = host;
  w.write_process_rank(r);
  db::RecordBatch b;
  for (std::uint32_t i = 0; i < 2; ++i) {
    db::KernelRecord k;
    k.pid = pid;
    k.start_ns = 5'000'000'000 + 1000 * i;
    k.end_ns = k.start_ns + 500;
    k.correlation_id = i + 1;
    k.mangled_name = "_Z13ncclAllReducev";
    b.kernels.push_back(k);
  }
  w.write(b);
  db::RunEnd end;
  end.reason = db::EndReason::Exited;
  end.exit_status = 0;
  end.end_utc_ns = run.start_utc_ns + 1;
  w.finalize(end);
}

Result merge(const TempDir& dir, std::vector<std::string> args) {
  args.insert(args.begin(), "merge");
  return run_cli(dir, std::move(args));
}

void expect_one_error_line(const Result& r, const std::string& needle) {
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("prof-analyze: error: merge: ", 0), 0U) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
}

class MergeCommand : public ::testing::Test {
 protected:
  TempDir dir_;
  std::string a_ = dir_.file("run.100.sqlite"), b_ = dir_.file("run.200.sqlite"),
              out_ = dir_.file("merged.sqlite");
};

TEST_F(MergeCommand, MergesRanksOfOneHostAndStatesTheResidualError) {
  write_rank(a_, "node-a", 100, 0, 1'000'000);
  write_rank(b_, "node-a", 200, 1, 1'000'250);
  const Result r = merge(dir_, {"-o", out_, a_, b_});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  EXPECT_NE(r.out.find("residual error 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("spread over 250 ns"), std::string::npos) << r.out;  // 1'000'250 - 1'000'000
  db::Reader reader(out_);
  EXPECT_EQ(reader.processes().size(), 2U);
  EXPECT_EQ(reader.process_ranks().size(), 2U);
  // Another subcommand reads the merged capture: both ranks' kernels, one name.
  const Result summary = run_cli(dir_, {"summary", out_, "--window", "all", "--format", "csv"});
  ASSERT_EQ(summary.status, 0) << summary.err;
  EXPECT_NE(summary.out.find("ncclAllReduce"), std::string::npos) << summary.out;
  // No temporary file is left next to OUT.
  for (const auto& entry : fs::directory_iterator(dir_.path())) {
    EXPECT_NE(entry.path().filename().string().rfind(".merged", 0), 0U) << entry.path();
  }
}

TEST_F(MergeCommand, OtherHostIsShiftedAndItsErrorIsBoundedBySynchronisation) {
  write_rank(a_, "node-a", 100, 0, 1'000'000);
  write_rank(b_, "node-b", 200, 1, 3'000'000);
  const Result r = merge(dir_, {"-o", out_, a_, b_});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("shift +2,000,000 ns"), std::string::npos) << r.out;  // 3e6 - 1e6
  EXPECT_NE(r.out.find("NTP/PTP"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cannot measure"), std::string::npos) << r.out;
}

TEST_F(MergeCommand, RefusalsAreOneLineWithTheirStatus) {
  write_rank(a_, "node-a", 100, 0, 1'000'000);
  write_rank(b_, "node-a", 200, 1, 1'000'000);
  // Usage (2): one capture, the same capture twice, OUT is an input, OUT exists, OUT a directory.
  expect_one_error_line(merge(dir_, {"-o", out_, a_}), "at least two");
  EXPECT_EQ(merge(dir_, {"-o", out_, a_}).status, 2);
  const std::string link = dir_.file("link.sqlite");
  fs::create_hard_link(a_, link);
  Result r = merge(dir_, {"-o", out_, a_, link});
  EXPECT_EQ(r.status, 2);
  expect_one_error_line(r, "same file");
  r = merge(dir_, {"-o", b_, a_, b_});
  EXPECT_EQ(r.status, 2);
  expect_one_error_line(r, "being read");
  r = merge(dir_, {"-o", b_, "--force", a_, b_});  // --force never replaces an input
  EXPECT_EQ(r.status, 2);
  { std::ofstream(out_) << "keep me"; }
  r = merge(dir_, {"-o", out_, a_, b_});
  EXPECT_EQ(r.status, 2);
  expect_one_error_line(r, "--force");
  EXPECT_EQ(fs::file_size(out_), 7U);  // untouched
  r = merge(dir_, {"-o", dir_.path().string(), a_, b_});
  EXPECT_EQ(r.status, 2);
  r = merge(dir_, {"-o", "-", a_, b_});
  EXPECT_EQ(r.status, 2);
  // --force replaces a plain file.
  r = merge(dir_, {"-o", out_, "--force", a_, b_});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(db::Reader(out_).processes().size(), 2U);

  // Capture (1): a non-capture, a repeated pid, a newer or older schema.
  const std::string other = dir_.file("other.sqlite");
  const std::string text = dir_.file("notes.txt");
  { std::ofstream(text) << "not a database"; }
  r = merge(dir_, {"-o", other, a_, text});
  EXPECT_EQ(r.status, 1);
  expect_one_error_line(r, "not a FuseLens capture");
  const std::string twin = dir_.file("twin.sqlite");
  write_rank(twin, "node-b", 100, 1, 5'000'000);
  r = merge(dir_, {"-o", other, a_, twin});
  EXPECT_EQ(r.status, 1);
  expect_one_error_line(r, "pid 100");
  for (const int version : {db::kSchemaVersion + 1, 7}) {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(b_.c_str(), &raw), SQLITE_OK);
    const std::string pragma = "PRAGMA user_version = " + std::to_string(version);
    ASSERT_EQ(sqlite3_exec(raw, pragma.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(raw);
    r = merge(dir_, {"-o", other, a_, b_});
    EXPECT_EQ(r.status, 1) << version;
    expect_one_error_line(r, "schema version " + std::to_string(version));
  }
  EXPECT_FALSE(fs::exists(other));
  for (const auto& entry : fs::directory_iterator(dir_.path())) {
    EXPECT_NE(entry.path().filename().string().rfind(".other", 0), 0U) << entry.path();
  }
}

}  // namespace
}  // namespace fuselens::analyzer
