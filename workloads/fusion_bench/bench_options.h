#pragma once
// Command line of fusion_bench (parsed by hand; no dependencies).
//
//   fusion_bench [--iters N] [--warmup N] [--quick] [--only OP] [--help]
//
// --iters N    iterations inside each measured NVTX range (default 50, N >= 1)
// --warmup N   iterations before each range, outside any range (default 5, N >= 0)
// --quick      iters 5, warmup 2 and each op's smallest shapes; an explicit --iters / --warmup wins
// --only OP    run one op only (main() checks OP against the registered ops: bench_case.h)
// --help       print usage, exit 0
// Values may also be given as --iters=N. Anything else throws UsageError (main prints one line,
// exits 2).

#include <optional>
#include <stdexcept>
#include <string>

namespace fuselens::workloads {

/// A malformed command line; what() is the one-line message for stderr.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct BenchOptions {
  int iters = 50;
  int warmup = 5;
  std::optional<std::string> only;  ///< one registered op; empty = all
  bool quick = false;
  bool help = false;

  /// True when `op` is selected by --only (or no --only was given).
  [[nodiscard]] bool runs(const std::string& op) const { return !only || *only == op; }
};

/// Parses argv[1..argc). Throws UsageError.
[[nodiscard]] BenchOptions parse_bench_options(int argc, const char* const* argv);

/// The usage text printed by --help.
[[nodiscard]] std::string bench_usage();

}  // namespace fuselens::workloads
