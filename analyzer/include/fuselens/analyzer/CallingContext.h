#pragma once
// Calling-context attribution: GPU time, launches and bytes charged to the code that launched
// them, in the three views of HPCToolkit (and its deep-learning variant, seed 003):
//  - top-down: call paths from the process entry down to each launch site, with the GPU
//    operations as placeholder children of their launch site ("<gpu kernel> NAME",
//    "<gpu copy> Host-to-Device", "<gpu memset>");
//  - bottom-up: each GPU operation (and, below it, each function) with its cost split among the
//    call paths that reach it;
//  - flat: cost by static structure, module > function > call-site line.
// Inclusive cost of a node = the cost of every GPU operation launched under it; exclusive cost =
// the cost attributed to the node itself (in top-down, only GPU operation placeholders carry it;
// in flat, a function's exclusive cost is that of the operations it launched directly).
// Costs: gpu_time_ns (sum of GPU durations, ns), launches (number of GPU operations), bytes
// (memcpy and memset bytes). Frames inside the CUDA stack (libcuda, libcudart, libcupti) and
// FuseLens's own collector are hidden unless show_internal is set.

#include <cstdint>
#include <string>
#include <vector>

#include "fuselens/db/Reader.h"

namespace fuselens::analyzer {

enum class CctView { TopDown, BottomUp, Flat };
enum class CctMetric { GpuTime, Launches, Bytes };

struct CctCost {
  std::int64_t gpu_time_ns = 0;
  std::int64_t launches = 0;
  std::int64_t bytes = 0;
  std::int64_t get(CctMetric metric) const;
  CctCost& operator+=(const CctCost& other);
};

struct CctRow {
  enum class Kind { Root, Process, Frame, GpuOperation, Unattributed, Module, Function, Line };
  Kind kind = Kind::Frame;
  std::string label;   ///< function (demangled), "<gpu kernel> name", module path, ...
  std::string module;  ///< for frames: the executable or shared object
  std::string file;    ///< source file where debug information exists
  std::uint32_t line = 0;
  CctCost inclusive, exclusive;
  int parent = -1;     ///< index into CctReport::rows; -1 for the root
  int depth = 0;
  std::vector<int> children;  ///< sorted by the report's metric, descending
};

struct CctOptions {
  CctView view = CctView::TopDown;
  CctMetric metric = CctMetric::GpuTime;
  bool show_internal = false;
};

struct CctReport {
  bool available = false;
  std::string unavailable_reason;  ///< why there is nothing to show (old capture, no contexts)
  CctView view = CctView::TopDown;
  CctMetric metric = CctMetric::GpuTime;
  CctCost total;                   ///< over every GPU operation in the capture
  std::int64_t unattributed_operations = 0;  ///< GPU operations with no recorded context
  std::vector<CctRow> rows;        ///< rows[0] is the root; children before grandchildren
};

/// Builds the chosen view. Throws db::Error when a query fails; a capture without calling
/// contexts (schema version 1, or recorded without the "context" trace group) gives
/// available = false and the reason.
CctReport calling_context_report(const db::Reader& reader, const CctOptions& options);

/// A printable label for a frame: "function [file:line]", or "module+0xoffset" with no symbol.
std::string frame_label(const std::string& function, const std::string& module,
                        std::uint64_t module_offset, const std::string& file, std::uint32_t line);

}  // namespace fuselens::analyzer
