// finalize_benchmark: prof-run's finalization (FinalizeCapture.h) of an existing capture, for the
// finalize figures of docs/BENCHMARKS.md without running a workload first.
//
//   finalize_benchmark CAPTURE.sqlite
//
// CAPTURE is finalized in place as prof-run finalizes a run that exited with status 0: the indexes,
// the window edges, the steps and the stored results, with prof-run's progress and its
// "[fuselens] finalized in X s (breakdown)" line on stderr. scripts/bench/finalize_ab.sh first
// takes a copy and removes what an earlier finalization left (the indexes and the stored results),
// so that the copy is what the collector left when the workload ended. Exit status 0, 1 when the
// finalization failed (prof-run's error line), 2 for a bad command line.

#include <chrono>
#include <cstdio>
#include <string>

#include "FinalizeCapture.h"

int main(int argc, char** argv) {
  if (argc != 2 || std::string(argv[1]).rfind('-', 0) == 0) {
    std::fprintf(stderr, "usage: finalize_benchmark CAPTURE.sqlite\n");
    return 2;
  }
  const fuselens::db::RunEnd end{
      fuselens::db::EndReason::Exited, 0, std::nullopt,
      static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count())};
  return fuselens::tools::finalize_capture(argv[1], end, /*metrics=*/false) ? 0 : 1;
}
