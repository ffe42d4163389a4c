#pragma once
// RankEnv: the rank a distributed launcher gave this process, read from the environment the
// launcher set (table process_rank, schema 8; docs/multi-gpu.md, "Recording ranks").
//
// Launchers, in the order they are tried (db/schema.sql documents the same list):
//   torch    RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE      (torchrun, torch.distributed)
//   openmpi  OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_LOCAL_RANK, OMPI_COMM_WORLD_SIZE,
//            OMPI_COMM_WORLD_LOCAL_SIZE                           (Open MPI's mpirun)
//   pmi      PMI_RANK, MPI_LOCALRANKID, PMI_SIZE, (no local size) (MPICH/Hydra, Intel MPI)
//   slurm    SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS, (none)    (srun)
// The first launcher whose rank variable is set and whose entry is valid gives the row. The
// environment is hostile input: every value must be a plain decimal integer in [0, 2^31) (digits
// only: no sign, no spaces, no exponent, at most 10 digits). A launcher's entry is ignored, with
// one logged line, when one of its variables is set but malformed, when rank >= world size, or
// when local rank >= local world size; the next launcher is then tried (a stray RANK=foo left by
// a user's shell does not hide the mpirun rank). Never throws on bad values, never aborts.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "fuselens/db/Records.h"

namespace fuselens::collector {

/// getenv-like lookup: the value of a variable, or nullptr when it is not set.
using EnvLookup = std::function<const char*(const char* name)>;
/// Where the lines about ignored entries go (log_line by default).
using RankLog = std::function<void(std::string_view line)>;

/// `text` as a rank or size: a plain decimal integer in [0, 2^31) of 1 to 10 digits; nullopt for
/// anything else (nullptr, "", "-1", "+1", " 1", "1e3", "0x10", "99999999999", "2147483648").
std::optional<std::int32_t> parse_rank_value(const char* text);

/// The rank row of process `pid` from the environment seen through `lookup`, with `host_name`
/// stored as given; nullopt when no launcher set a valid rank. Ignored entries are reported
/// through `log`, one line each.
std::optional<db::ProcessRank> rank_from_environment(std::uint32_t pid, const EnvLookup& lookup,
                                                     std::string host_name,
                                                     const RankLog& log = {});

/// This host's name (gethostname), at most 255 bytes, bytes outside printable ASCII replaced by
/// '?'; "" when gethostname fails.
std::string printable_host_name();

}  // namespace fuselens::collector
