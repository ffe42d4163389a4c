// libFuzzer target (issue #9): any byte string, written as a capture file, goes through the reader
// and every analysis prof-analyze runs (steps included). Built with AddressSanitizer and
// UndefinedBehaviorSanitizer (fuzz/CMakeLists.txt); a crash, a sanitizer report, a leak or an
// exception other than the documented error types is a finding. scripts/fuzz.sh builds it and runs
// it for a bounded time on a corpus seeded from the real captures in tests/data.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "cct/CallingContext.h"
#include "cct/CallingContextFormat.h"
#include "compare/Compare.h"
#include "export/ExportRankLanes.h"
#include "flags/Flags.h"
#include "fuselens/db/Reader.h"
#include "roofline/Peaks.h"
#include "roofline/Roofline.h"
#include "steps/Steps.h"
#include "summary/Summary.h"

namespace fa = fuselens::analyzer;

namespace {

std::string capture_path() {
  static const std::string path = "/tmp/fuselens-fuzz-" + std::to_string(::getpid()) + ".sqlite";
  return path;
}

void analyze(const std::string& path) {
  fuselens::db::Reader reader(path);
  (void)fa::summarize(reader);
  const auto cct = fa::calling_context_report(reader, fa::CctOptions{});
  if (cct.available) {  // the text output with a filter (RE2) over every label
    fa::CctDisplay display;
    display.filter.emplace(".*(gemm|a+b)");
    std::ostringstream text;
    fa::write_cct(text, cct, fa::OutputFormat::Table, display);
  }
  fa::CctOptions flat;
  flat.view = fa::CctView::Flat;
  (void)fa::calling_context_report(reader, flat);
  (void)fa::run_flags(reader, fa::FlagsConfig{});
  (void)fa::analyze_roofline(reader);
  if (const auto strip = fa::load_rank_lane_strip(reader)) (void)fa::svg_rank_lanes(*strip);
  try {
    (void)fa::compare_ranges(reader, "*/unfused/*", "*/fused/*");
  } catch (const fa::CompareError&) {
    // No matching ranges: a documented outcome.
  }
  (void)fa::analyze_steps(reader);  // the default patterns, then the automatic method
  fa::StepOptions function;
  function.function = "step";
  try {
    (void)fa::analyze_steps(reader, function);
  } catch (const fa::StepError&) {
    // No launch under that function: a documented outcome.
  }
}

// The summary and the cct through windows (db::Reader::restrict_to), each on its own reader: one
// holding most of the capture (the merge, its view naming the rows left out, the few-rows probes)
// and a narrow one (the index search).
void analyze_windows(const std::string& path) {
  for (const bool narrow : {false, true}) {
    fuselens::db::Reader reader(path);  // every time checked: first and last are in [0, 2^62)
    const std::int64_t first = reader.query_int("SELECT COALESCE(MIN(start_ns), 0) FROM api_call");
    const std::int64_t last = reader.query_int("SELECT COALESCE(MAX(start_ns), 0) FROM api_call");
    if (last <= first) return;
    const std::int64_t span = last - first;
    const std::int64_t start = narrow ? first + span / 2 : first + span / 64;
    const std::int64_t end = narrow ? start + span / 64 + 1 : last;
    reader.restrict_to({{start, end}});
    (void)fa::summarize(reader);
    (void)fa::calling_context_report(reader, fa::CctOptions{});
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = capture_path();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    analyze(path);
    analyze_windows(path);
  } catch (const fuselens::db::Error&) {
    // The documented error for a file that is not a readable capture.
  } catch (const fa::PeaksError&) {
    // A device the peak profiles do not know, with no measured ceilings.
  } catch (const std::invalid_argument&) {
  } catch (const std::out_of_range&) {
  }
  // Nothing left behind in the temporary directory (issue 22: one CI run left 30 files).
  for (const char* suffix : {"", "-journal", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  return 0;
}
