#pragma once
// Peaks: datasheet peak profiles of GPUs (analyzer/data/peaks.json, embedded at build time and
// installed to share/fuselens/peaks.json), the matching of a capture's device to one of them, and
// the ceilings measured on the running GPU (`prof-ceilings`, the capture's `ceiling` table).
//
// Every profile states its source (datasheet URL) and which figures were derived from the
// architecture rather than read off the datasheet. Tensor figures are dense (no sparsity).
// Units in the structs: FLOP/s and bytes/s (the JSON file uses TFLOP/s and GB/s, 1 GB = 1e9 B).
//
// Errors: PeaksError (a malformed peaks file, an unknown profile id, `measured` asked of a
// capture without ceilings).

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "roofline/RooflineMath.h"
#include "fuselens/db/Reader.h"

namespace fuselens::analyzer {

class PeaksError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One GPU's datasheet figures (absent: the datasheet gives none).
struct PeakProfile {
  std::string id;                  ///< "t4", "a100-sxm", "h100-sxm", "h100-pcie", "h200", "l4"
  std::string name;                ///< "NVIDIA Tesla T4"
  std::vector<std::string> match;  ///< substrings of the CUDA device name
  int sm_count = 0;
  int boost_clock_mhz = 0;
  std::optional<double> fp64, fp32, fp16;  ///< FLOP/s; fp16 = non-tensor half2
  std::optional<double> tensor_fp16, tensor_bf16, tensor_tf32;  ///< FLOP/s, dense
  std::optional<double> int8_tensor;  ///< OP/s, dense
  std::optional<double> dram_bandwidth, l2_bandwidth;  ///< bytes/s
  std::vector<std::string> derived;  ///< figures computed rather than read off the datasheet
  std::string source;

  /// As roofline ceilings: fp64, fp32, fp16, tensor = tensor_fp16 (falling back to
  /// tensor_bf16); DRAM and L2 bandwidth (no L1 figure).
  Ceilings ceilings() const;
};

/// Parses a peaks file (the format of analyzer/data/peaks.json). Throws PeaksError naming the
/// entry and key at fault.
std::vector<PeakProfile> parse_peaks(const std::string& json_text);
/// The profiles embedded at build time from analyzer/data/peaks.json.
const std::vector<PeakProfile>& builtin_peaks();
/// The profile with `id`, or nullptr.
const PeakProfile* find_peaks(const std::vector<PeakProfile>& profiles, const std::string& id);
/// The first profile whose match list has a substring of `device_name` and whose sm_count equals
/// `sm_count` (0 = any), or nullptr.
const PeakProfile* match_device(const std::vector<PeakProfile>& profiles,
                                const std::string& device_name, int sm_count);

/// Ceilings from the capture's `ceiling` table for `device_id` (the latest row of each name;
/// fp32 from fp32_fma, tensor from the larger of fp16_tensor and bf16_tensor, DRAM and L2
/// bandwidth); classes the microbenchmarks do not measure (fp64, fp16) are taken from
/// `fallback` when given, and the label says so. nullopt when the capture has no ceilings.
std::optional<Ceilings> measured_ceilings(const db::Reader& reader, std::uint32_t device_id,
                                          const PeakProfile* fallback);

/// What `--peaks` selected and why.
struct PeaksChoice {
  Ceilings ceilings;
  std::string reason;  ///< e.g. "matched device 0 'NVIDIA H100 80GB HBM3' (132 SMs)"
};

/// Resolves a --peaks value against a capture: "auto" (the datasheet profile matching the
/// capture's first device), "measured" (measured_ceilings, datasheet fallback), or a profile id.
/// Throws PeaksError for an unknown id, an unmatched device under "auto", or "measured" on a
/// capture without ceilings.
PeaksChoice choose_peaks(const std::string& selection, const db::Reader& reader,
                         const std::vector<PeakProfile>& profiles);

}  // namespace fuselens::analyzer
