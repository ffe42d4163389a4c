#include "RankEnv.h"

#include <unistd.h>

#include <array>
#include <utility>

#include "Log.h"

namespace fuselens::collector {
namespace {

// The variables of one launcher (db/schema.sql, table process_rank); nullptr: none.
struct Launcher {
  const char* name;
  const char* rank;
  const char* local_rank;
  const char* world_size;
  const char* local_world_size;
};

constexpr std::array<Launcher, 4> kLaunchers{{
    {"torch", "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE"},
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE",
     "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"pmi", "PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE", nullptr},
    {"slurm", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS", nullptr},
}};

// At most this many bytes of a hostile value go into a log line.
constexpr std::size_t kQuoted = 24;

std::string quoted(const char* value) {
  std::string out = "'";
  std::size_t n = 0;
  for (const char* p = value; *p != '\0'; ++p, ++n) {
    if (n == kQuoted) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(*p);
    out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  }
  return out + "'";
}

// Reads the optional variable `name` of a launcher into `out`. False (with `why` set) when it is
// set but not a valid value.
bool read_optional(const EnvLookup& lookup, const char* name, std::optional<std::int32_t>& out,
                   std::string& why) {
  if (name == nullptr) return true;
  const char* value = lookup(name);
  if (value == nullptr) return true;
  out = parse_rank_value(value);
  if (!out) {
    why = std::string(name) + "=" + quoted(value) + " is not a decimal integer in [0, 2^31)";
    return false;
  }
  return true;
}

}  // namespace

std::optional<std::int32_t> parse_rank_value(const char* text) {
  if (text == nullptr || *text == '\0') return std::nullopt;
  std::int64_t value = 0;
  std::size_t digits = 0;
  for (const char* p = text; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9' || ++digits > 10) return std::nullopt;
    value = value * 10 + (*p - '0');  // at most 10 digits: below 2^34, no overflow
  }
  if (value >= (std::int64_t{1} << 31)) return std::nullopt;
  return static_cast<std::int32_t>(value);
}

std::optional<db::ProcessRank> rank_from_environment(std::uint32_t pid, const EnvLookup& lookup,
                                                     std::string host_name, const RankLog& log) {
  const auto report = [&](std::string_view line) {
    if (log) {
      log(line);
    } else {
      log_line(line);
    }
  };
  for (const Launcher& launcher : kLaunchers) {
    const char* rank_text = lookup(launcher.rank);
    if (rank_text == nullptr) continue;
    std::string why;
    db::ProcessRank row;
    row.pid = pid;
    const auto rank = parse_rank_value(rank_text);
    if (!rank) {
      why = std::string(launcher.rank) + "=" + quoted(rank_text) +
            " is not a decimal integer in [0, 2^31)";
    } else {
      row.rank = *rank;
      if (read_optional(lookup, launcher.local_rank, row.local_rank, why) &&
          read_optional(lookup, launcher.world_size, row.world_size, why) &&
          read_optional(lookup, launcher.local_world_size, row.local_world_size, why)) {
        if (row.world_size && row.rank >= *row.world_size) {
          why = "rank " + std::to_string(row.rank) + " is not below the world size " +
                std::to_string(*row.world_size);
        } else if (row.local_rank && row.local_world_size &&
                   *row.local_rank >= *row.local_world_size) {
          why = "local rank " + std::to_string(*row.local_rank) +
                " is not below the local world size " + std::to_string(*row.local_world_size);
        }
      }
    }
    if (why.empty()) {
      row.launcher = launcher.name;
      row.host_name = std::move(host_name);
      return row;
    }
    try {
      report("ignoring the " + std::string(launcher.name) + " rank variables: " + why);
    } catch (...) {
    }
  }
  return std::nullopt;
}

std::string printable_host_name() {
  char buffer[256] = {};
  if (::gethostname(buffer, sizeof buffer - 1) != 0) return std::string();
  buffer[sizeof buffer - 1] = '\0';  // gethostname need not terminate a truncated name
  std::string name(buffer);
  for (char& c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) c = '?';
  }
  return name;
}

}  // namespace fuselens::collector
