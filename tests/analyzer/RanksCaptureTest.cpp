// Issue 25 on the committed two-GPU captures of scripts/device/plans/ranks.sh
// (tests/data/README.md): ddp_2rank.sqlite (torchrun --nproc-per-node 2 ddp_train.py) and
// ddp_2rank_slow.sqlite (the same with --slow-rank 1 --slow-ms 5), each with what the workload
// reported (ddp_2rank*.json). Checks: the ranks and their devices, the NCCL kernels of every step
// equal across ranks, the overlap of one step against a computation from the rows (SQL and an
// interval merge written here, not the analysis's sweep), and the slowed rank named the straggler
// in every step.

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "fuselens/db/Reader.h"
#include "ranks/Ranks.h"
#include "window/Window.h"

using namespace fuselens;
using namespace fuselens::analyzer;

namespace {

std::string data(const std::string& name) {
  return std::string(FUSELENS_TEST_DATA_DIR) + "/" + name;
}

bool have(const std::string& name) {
  return std::filesystem::exists(data(name + ".sqlite")) &&
         std::filesystem::exists(data(name + ".json"));
}

nlohmann::json report_of(const std::string& name) {
  return nlohmann::json::parse(std::ifstream(data(name + ".json")));
}

RanksReport steady(const db::Reader& reader) {
  const Window w = resolve_window(reader, parse_window("steady"));
  return analyze_ranks(reader, &w);
}

using Interval = std::pair<std::int64_t, std::int64_t>;

std::vector<Interval> merged(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  std::vector<Interval> out;
  for (const auto& i : v) {
    if (!out.empty() && i.first <= out.back().second) {
      out.back().second = std::max(out.back().second, i.second);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

std::int64_t length(const std::vector<Interval>& v) {
  std::int64_t n = 0;
  for (const auto& i : v) n += i.second - i.first;
  return n;
}

std::int64_t intersection(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::int64_t n = 0;
  for (const auto& x : a) {
    for (const auto& y : b)
      n += std::max<std::int64_t>(0, std::min(x.second, y.second) - std::max(x.first, y.first));
  }
  return n;
}

TEST(RanksCapture, TwoRanksEachOnItsOwnDevice) {
  if (!have("ddp_2rank")) GTEST_SKIP() << "ddp_2rank.sqlite is not committed (plan ranks.sh)";
  const auto run = report_of("ddp_2rank");
  const db::Reader reader(data("ddp_2rank.sqlite"));
  const auto ranks = reader.process_ranks();
  ASSERT_EQ(ranks.size(), 2U);
  for (const auto& expected : run["ranks"]) {
    const auto r = std::find_if(ranks.begin(), ranks.end(), [&](const db::ProcessRank& p) {
      return p.rank == expected["rank"].get<int>();
    });
    ASSERT_NE(r, ranks.end());
    EXPECT_EQ(r->pid, expected["pid"].get<std::uint32_t>());
    EXPECT_EQ(r->world_size.value_or(-1), 2);
    EXPECT_EQ(r->launcher, "torch");
  }
  const auto report = steady(reader);
  ASSERT_EQ(report.ranks.size(), 2U);
  for (const auto& info : report.ranks) {
    EXPECT_TRUE(info.launcher_rank);
    ASSERT_EQ(info.devices.size(), 1U) << "rank " << info.rank;
  }
  EXPECT_NE(report.ranks[0].devices, report.ranks[1].devices);
}

TEST(RanksCapture, EveryStepHasTheSameNcclKernelsOnBothRanks) {
  for (const std::string name : {"ddp_2rank", "ddp_2rank_slow"}) {
    if (!have(name)) GTEST_SKIP() << name << ".sqlite is not committed (plan ranks.sh)";
    SCOPED_TRACE(name);
    const db::Reader reader(data(name + ".sqlite"));
    const auto report = steady(reader);
    std::map<int, std::vector<std::int64_t>> per_step;
    for (const auto& row : report.rows) {
      ASSERT_TRUE(row.present) << "step " << row.step << " rank " << row.rank;
      per_step[row.step].push_back(row.nccl_kernels);
    }
    ASSERT_GE(per_step.size(), 10U);
    for (const auto& [step, counts] : per_step) {
      ASSERT_EQ(counts.size(), 2U);
      EXPECT_GT(counts[0], 0) << "step " << step;
      EXPECT_EQ(counts[0], counts[1]) << "step " << step;
    }
    for (const auto& s : report.steps) {
      EXPECT_TRUE(s.note.empty()) << s.note;
      // Each NCCL kernel of a step is one collective, matched on both ranks.
      ASSERT_TRUE(per_step.count(s.step));
      EXPECT_EQ(s.collectives, per_step.at(s.step)[0]) << "step " << s.step;
      EXPECT_EQ(s.mismatched, 0);
    }
  }
}

// The overlap of one step of each rank from the rows: kernels launched (their launch call's start)
// inside the step's CPU window, NCCL by name, the rest computation.
TEST(RanksCapture, OverlapOfAStepMatchesAComputationFromTheRows) {
  if (!have("ddp_2rank")) GTEST_SKIP() << "ddp_2rank.sqlite is not committed (plan ranks.sh)";
  const db::Reader reader(data("ddp_2rank.sqlite"));
  const auto report = steady(reader);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(data("ddp_2rank.sqlite").c_str(), &db, SQLITE_OPEN_READONLY, nullptr),
            SQLITE_OK);
  int checked = 0;
  for (const auto& row : report.rows) {
    if (checked == 4) break;  // the first two steps of both ranks
    const auto& info = report.ranks[static_cast<std::size_t>(row.rank)];
    sqlite3_stmt* s = nullptr;
    ASSERT_EQ(
        sqlite3_prepare_v2(db,
                           "SELECT k.start_ns, k.end_ns, n.value FROM kernel k"
                           " JOIN strings n ON n.id = k.short_name_id"
                           " WHERE k.pid = ?1 AND (SELECT MIN(a.start_ns) FROM api_call a"
                           "  WHERE a.pid = k.pid AND a.correlation_id = k.correlation_id)"
                           "  >= ?2 AND (SELECT MIN(a.start_ns) FROM api_call a"
                           "  WHERE a.pid = k.pid AND a.correlation_id = k.correlation_id) < ?3",
                           -1, &s, nullptr),
        SQLITE_OK)
        << sqlite3_errmsg(db);
    sqlite3_bind_int64(s, 1, info.pid);
    sqlite3_bind_int64(s, 2, row.start_ns);
    sqlite3_bind_int64(s, 3, row.end_ns);
    std::vector<Interval> comm, comp;
    while (sqlite3_step(s) == SQLITE_ROW) {
      const std::string name = reinterpret_cast<const char*>(sqlite3_column_text(s, 2));
      (name.rfind("nccl", 0) == 0 ? comm : comp)
          .emplace_back(sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1));
    }
    sqlite3_finalize(s);
    SCOPED_TRACE("step " + std::to_string(row.step) + " rank " + std::to_string(row.rank));
    ASSERT_FALSE(comm.empty());
    const auto u_comm = merged(comm), u_comp = merged(comp);
    EXPECT_EQ(row.communication_union_ns, length(u_comm));
    EXPECT_EQ(row.overlap_ns, intersection(u_comm, u_comp));
    EXPECT_EQ(row.compute_ns, length(u_comp));
    ++checked;
  }
  sqlite3_close(db);
  EXPECT_EQ(checked, 4);
}

TEST(RanksCapture, TheSlowedRankIsTheStragglerOfEveryStep) {
  if (!have("ddp_2rank_slow")) GTEST_SKIP() << "ddp_2rank_slow.sqlite is not committed";
  const auto run = report_of("ddp_2rank_slow");
  const int slow = run["slow_rank"].get<int>();
  const db::Reader reader(data("ddp_2rank_slow.sqlite"));
  const auto report = steady(reader);
  ASSERT_GE(report.steps.size(), 10U);
  for (const auto& s : report.steps) {
    ASSERT_TRUE(s.straggler.has_value()) << "step " << s.step << ": " << s.note;
    EXPECT_EQ(*s.straggler, slow) << "step " << s.step;
    EXPECT_GT(s.straggler_lateness_ns, 0);
  }
  // The other rank waits for it: more time blocked in collectives than the slowed one.
  const auto& summary = report.summary;
  ASSERT_EQ(summary.size(), 2U);
  EXPECT_GT(summary[static_cast<std::size_t>(1 - slow)].blocked_ns,
            summary[static_cast<std::size_t>(slow)].blocked_ns);
}

// p2p_copy on two H200s: every peer copy the program reports is a memcpy row of kind peer to peer
// on the device whose stream ran it (CUPTI's MEMCPY2 records, dropped by the collector before),
// and the ranks analysis counts them as communication.
TEST(RanksCapture, PeerCopiesAreRecordedBothWaysAsCommunication) {
  if (!have("p2p_copy")) GTEST_SKIP() << "p2p_copy.sqlite is not committed (plan ranks.sh)";
  const auto run = report_of("p2p_copy");
  ASSERT_EQ(run["mode"], "peer");
  std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> expected;  // device: count, bytes
  for (const auto& c : run["copies"]) {
    auto& e = expected[c["stream_device"].get<std::int64_t>()];
    e.first += c["count"].get<std::int64_t>();
    e.second += c["count"].get<std::int64_t>() * c["bytes"].get<std::int64_t>();
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(data("p2p_copy.sqlite").c_str(), &db, SQLITE_OPEN_READONLY, nullptr),
            SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "SELECT device_id, COUNT(*), SUM(bytes) FROM memcpy"
                               " WHERE copy_kind = 10 GROUP BY device_id",
                               -1, &s, nullptr),
            SQLITE_OK);
  std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> found;
  while (sqlite3_step(s) == SQLITE_ROW) {
    found[sqlite3_column_int64(s, 0)] = {sqlite3_column_int64(s, 1), sqlite3_column_int64(s, 2)};
  }
  sqlite3_finalize(s);
  sqlite3_close(db);
  EXPECT_EQ(found, expected);
  const db::Reader reader(data("p2p_copy.sqlite"));
  const auto report = analyze_ranks(reader);
  ASSERT_FALSE(report.rows.empty());
  std::int64_t communication = 0;
  for (const auto& row : report.rows) communication += row.communication_union_ns;
  EXPECT_GT(communication, 0);
}

}  // namespace
