// RankEnv: the launcher's rank variables read through a fake environment, including hostile values.

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "RankEnv.h"

namespace fuselens::collector {
namespace {

// A fake environment and the lines RankEnv logged.
struct FakeEnv {
  std::map<std::string, std::string> vars;
  std::vector<std::string> lines;

  std::optional<db::ProcessRank> rank(std::uint32_t pid = 42) {
    return rank_from_environment(
        pid,
        [this](const char* name) -> const char* {
          const auto it = vars.find(name);
          return it == vars.end() ? nullptr : it->second.c_str();
        },
        "node-a", [this](std::string_view line) { lines.emplace_back(line); });
  }
};

TEST(RankEnv, NoLauncherGivesNoRow) {
  FakeEnv env;
  env.vars = {{"PATH", "/usr/bin"}, {"LOCAL_RANK", "0"}, {"WORLD_SIZE", "2"}};  // no RANK
  EXPECT_FALSE(env.rank());
  EXPECT_TRUE(env.lines.empty());
}

TEST(RankEnv, ReadsTorchrun) {
  FakeEnv env;
  env.vars = {{"RANK", "3"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "4"}, {"LOCAL_WORLD_SIZE", "2"}};
  const auto rank = env.rank(7);
  ASSERT_TRUE(rank);
  EXPECT_EQ(rank->pid, 7u);
  EXPECT_EQ(rank->rank, 3);
  EXPECT_EQ(rank->local_rank, 1);
  EXPECT_EQ(rank->world_size, 4);
  EXPECT_EQ(rank->local_world_size, 2);
  EXPECT_EQ(rank->launcher, "torch");
  EXPECT_EQ(rank->host_name, "node-a");
  EXPECT_TRUE(env.lines.empty());
}

TEST(RankEnv, ReadsOpenMpi) {
  FakeEnv env;
  env.vars = {{"OMPI_COMM_WORLD_RANK", "5"},
              {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
              {"OMPI_COMM_WORLD_SIZE", "8"},
              {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}};
  const auto rank = env.rank();
  ASSERT_TRUE(rank);
  EXPECT_EQ(rank->launcher, "openmpi");
  EXPECT_EQ(rank->rank, 5);
  EXPECT_EQ(rank->local_rank, 1);
  EXPECT_EQ(rank->world_size, 8);
  EXPECT_EQ(rank->local_world_size, 4);
}

TEST(RankEnv, ReadsPmiWithoutLocalSize) {
  FakeEnv env;
  env.vars = {{"PMI_RANK", "2"}, {"PMI_SIZE", "3"}, {"MPI_LOCALRANKID", "0"}};
  const auto rank = env.rank();
  ASSERT_TRUE(rank);
  EXPECT_EQ(rank->launcher, "pmi");
  EXPECT_EQ(rank->rank, 2);
  EXPECT_EQ(rank->local_rank, 0);
  EXPECT_EQ(rank->world_size, 3);
  EXPECT_FALSE(rank->local_world_size);
}

TEST(RankEnv, ReadsSlurmWithOnlyTheRank) {
  FakeEnv env;
  env.vars = {{"SLURM_PROCID", "0"}};
  const auto rank = env.rank();
  ASSERT_TRUE(rank);
  EXPECT_EQ(rank->launcher, "slurm");
  EXPECT_EQ(rank->rank, 0);
  EXPECT_FALSE(rank->local_rank);
  EXPECT_FALSE(rank->world_size);
  EXPECT_FALSE(rank->local_world_size);

  env.vars = {{"SLURM_PROCID", "3"}, {"SLURM_LOCALID", "1"}, {"SLURM_NTASKS", "4"}};
  ASSERT_TRUE(env.rank());
  EXPECT_EQ(env.rank()->local_rank, 1);
  EXPECT_EQ(env.rank()->world_size, 4);
}

TEST(RankEnv, FirstLauncherWithARankWins) {
  // torchrun under srun under mpirun: torch's variables first, then Open MPI's, PMI's, Slurm's.
  FakeEnv env;
  env.vars = {{"RANK", "1"},
              {"WORLD_SIZE", "2"},
              {"OMPI_COMM_WORLD_RANK", "2"},
              {"PMI_RANK", "3"},
              {"SLURM_PROCID", "4"},
              {"SLURM_NTASKS", "8"},
              {"OMPI_COMM_WORLD_SIZE", "4"}};
  EXPECT_EQ(env.rank()->launcher, "torch");
  EXPECT_EQ(env.rank()->rank, 1);
  env.vars.erase("RANK");
  EXPECT_EQ(env.rank()->launcher, "openmpi");
  EXPECT_EQ(env.rank()->rank, 2);
  env.vars.erase("OMPI_COMM_WORLD_RANK");
  EXPECT_EQ(env.rank()->launcher, "pmi");
  EXPECT_EQ(env.rank()->rank, 3);
  env.vars.erase("PMI_RANK");
  EXPECT_EQ(env.rank()->launcher, "slurm");
  EXPECT_EQ(env.rank()->rank, 4);
  // Sizes come from the winning launcher only.
  EXPECT_EQ(env.rank()->world_size, 8);
  EXPECT_TRUE(env.lines.empty());
}

TEST(RankEnv, ParsesOnlyPlainDecimalsBelowTwoToThe31) {
  EXPECT_EQ(parse_rank_value("0"), 0);
  EXPECT_EQ(parse_rank_value("17"), 17);
  EXPECT_EQ(parse_rank_value("007"), 7);
  EXPECT_EQ(parse_rank_value("2147483647"), 2147483647);
  for (const char* bad : {"", "-1", "+1", " 1", "1 ", "1e3", "0x10", "1.0", "99999999999",
                          "2147483648", "4294967296", "00000000001", "1\n", "１"}) {
    EXPECT_FALSE(parse_rank_value(bad)) << "'" << bad << "'";
  }
  EXPECT_FALSE(parse_rank_value(nullptr));
}

// Each hostile rank value: torch's entry is ignored with one line and Slurm's (valid) is used.
TEST(RankEnv, HostileRankIsIgnoredWithOneLine) {
  for (const char* bad : {"-1", "1e3", " 1", "99999999999", "", "2147483648", "0x1"}) {
    FakeEnv env;
    env.vars = {{"RANK", bad}, {"SLURM_PROCID", "1"}};
    const auto rank = env.rank();
    ASSERT_TRUE(rank) << bad;
    EXPECT_EQ(rank->launcher, "slurm") << bad;
    EXPECT_EQ(rank->rank, 1) << bad;
    ASSERT_EQ(env.lines.size(), 1u) << bad;
    EXPECT_NE(env.lines[0].find("RANK="), std::string::npos) << env.lines[0];
    EXPECT_NE(env.lines[0].find("torch"), std::string::npos) << env.lines[0];
  }
}

TEST(RankEnv, HostileOptionalValueIgnoresTheEntry) {
  for (const char* var : {"LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE"}) {
    for (const char* bad : {"-2", "1e3", " 1", "99999999999", ""}) {
      FakeEnv env;
      env.vars = {
          {"RANK", "0"}, {"LOCAL_RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_WORLD_SIZE", "2"}};
      env.vars[var] = bad;
      EXPECT_FALSE(env.rank()) << var << "=" << bad;
      ASSERT_EQ(env.lines.size(), 1u) << var << "=" << bad;
      EXPECT_NE(env.lines[0].find(var), std::string::npos) << env.lines[0];
    }
  }
}

TEST(RankEnv, RankNotBelowSizeIsIgnored) {
  FakeEnv env;
  env.vars = {{"RANK", "2"}, {"WORLD_SIZE", "2"}};
  EXPECT_FALSE(env.rank());
  ASSERT_EQ(env.lines.size(), 1u);
  EXPECT_NE(env.lines[0].find("world size 2"), std::string::npos) << env.lines[0];

  env.lines.clear();
  env.vars = {{"RANK", "0"}, {"WORLD_SIZE", "0"}};  // an empty world holds no rank
  EXPECT_FALSE(env.rank());
  EXPECT_EQ(env.lines.size(), 1u);

  env.lines.clear();
  env.vars = {{"OMPI_COMM_WORLD_RANK", "1"},
              {"OMPI_COMM_WORLD_LOCAL_RANK", "4"},
              {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
              {"PMI_RANK", "1"}};
  const auto rank = env.rank();  // Open MPI's entry ignored, PMI's taken
  ASSERT_TRUE(rank);
  EXPECT_EQ(rank->launcher, "pmi");
  ASSERT_EQ(env.lines.size(), 1u);
  EXPECT_NE(env.lines[0].find("local rank 4"), std::string::npos) << env.lines[0];
}

TEST(RankEnv, LoggedValuesAreBoundedAndPrintable) {
  FakeEnv env;
  env.vars = {{"RANK", std::string(1000, 'x') + "\x1b[31m"}};
  EXPECT_FALSE(env.rank());
  ASSERT_EQ(env.lines.size(), 1u);
  EXPECT_LT(env.lines[0].size(), 200u);
  for (const char c : env.lines[0]) EXPECT_GE(static_cast<unsigned char>(c), 0x20);
  env.lines.clear();
  env.vars = {{"RANK", "\x1b[2J"}};
  EXPECT_FALSE(env.rank());
  ASSERT_EQ(env.lines.size(), 1u);
  EXPECT_EQ(env.lines[0].find('\x1b'), std::string::npos);
}

TEST(RankEnv, HostNameIsPrintable) {
  const std::string name = printable_host_name();
  EXPECT_LE(name.size(), 255u);
  for (const char c : name) {
    EXPECT_GE(static_cast<unsigned char>(c), 0x20);
    EXPECT_LT(static_cast<unsigned char>(c), 0x7f);
  }
}

}  // namespace
}  // namespace fuselens::collector
