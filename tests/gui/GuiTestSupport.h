#pragma once
// Support for the GUI tests: paths of the committed H100 captures and a synthetic capture
// written with db::Writer (no Qt here, so the Timeline GoogleTest can use it too).

#include <cstdint>
#include <memory>
#include <string>

#include "fuselens/db/Reader.h"

namespace fuselens::gui::test {

/// tests/data/<name>.
std::string dataFile(const std::string& name);

/// A reader of `path` restricted to `window` (parse_window, resolve_window, apply_window: what
/// `prof-analyze --window WINDOW` reads); the GUI's default window is "steady".
std::unique_ptr<db::Reader> windowedReader(const std::string& path,
                                           const std::string& window = "steady");

/// What writeSyntheticCapture wrote.
struct SyntheticCapture {
  std::int64_t kernels = 0, api_calls = 0, ranges = 0, memory_events = 0;
  std::int64_t first_ns = 0, last_ns = 0;
  std::int64_t peak_bytes = 0;
};

/// A finalized capture at `path` (replaced if present): `kernels` kernels of 2 µs every 3 µs,
/// alternating over `streams` streams of device 0, each launched by a cudaLaunchKernel call
/// (pid 100, tid 7, same correlation id) 5 µs before it starts; one NVTX range "step/<i>"
/// (depth 0) around every 1000 launches; a 1 MiB device allocation at the start of every range,
/// freed at its end, plus one 64 MiB allocation kept to the end.
SyntheticCapture writeSyntheticCapture(const std::string& path, std::int64_t kernels,
                                       int streams = 2);

}  // namespace fuselens::gui::test
