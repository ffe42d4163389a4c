#pragma once
// RooflineFormat: writes a RooflineReport (Roofline.h) as a text table, CSV or JSON.
//
// Table: a header (capture, device, the ceilings chosen with their ridge points, measured
//   ceilings, counter sessions), then "Kernels (hardware counters)" and "NVTX ranges", one line
//   per row and source of work ("cnt" = counters, "ann" = annotation), then the notes.
//   Columns: GPU time, instances, source, GFLOP, DRAM MB, FLOP/B at DRAM and L2, achieved
//   TFLOP/s and DRAM GB/s, bound, attainable TFLOP/s, efficiency %, floor time at the chosen
//   peaks, projected time (only when the peaks are not the device's own), and for annotated
//   ranges with counters the difference annotation vs counters in FLOPs and DRAM bytes.
// CSV (RFC 4180): one header row, then one row per (section, row, source); columns:
//   section,name,source,instances,kernels,kernels_with_counters,gpu_time_ns,counter_time_ns,
//   flops,flops_fp64,flops_fp32,flops_fp16,flops_tensor,dram_bytes,l2_bytes,l1_bytes,
//   intensity_dram,intensity_l2,intensity_l1,achieved_flops_per_s,dram_bytes_per_s,
//   l2_bytes_per_s,bound,floor_ns,attainable_flops_per_s,efficiency,projected_ns,
//   flops_difference,dram_bytes_difference
//   (section: kernel or range; empty fields where a figure is absent; raw SI units).
// JSON: {"capture", "devices", "peaks", "device_ceilings", "measured_ceilings",
//   "metric_sessions", "kernels", "ranges", "chart", "notes"}; rows carry "counters" and
//   "annotation" objects (or null) with the figures of RooflineResult under the CSV names.
//
// Errors: none of its own; stream errors are left in the stream's state.

#include <iosfwd>

#include <nlohmann/json.hpp>

#include "roofline/Roofline.h"
#include "summary/SummaryFormat.h"

namespace fuselens::analyzer {

void write_roofline(std::ostream& out, const RooflineReport& report, OutputFormat format);
nlohmann::json roofline_to_json(const RooflineReport& report);

}  // namespace fuselens::analyzer
