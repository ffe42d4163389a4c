#include "roofline/Peaks.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

#include "fuselens/db/RooflineStore.h"

namespace fuselens::analyzer {

const char* builtin_peaks_json();  // PeaksData.cpp, generated from analyzer/data/peaks.json

namespace {

std::optional<double> scaled(const nlohmann::json& entry, const char* key, double unit,
                             const std::string& id) {
  if (!entry.contains(key)) throw PeaksError("peaks entry '" + id + "' has no '" + key + "'");
  const auto& v = entry.at(key);
  if (v.is_null()) return std::nullopt;
  if (!v.is_number() || v.get<double>() < 0) {
    throw PeaksError("peaks entry '" + id + "': '" + key + "' must be a non-negative number or null");
  }
  return v.get<double>() * unit;
}

}  // namespace

Ceilings PeakProfile::ceilings() const {
  Ceilings c;
  c.id = id;
  c.label = name + " (datasheet)";
  c.source = source;
  c.flops_per_s[static_cast<std::size_t>(Precision::Fp64)] = fp64;
  c.flops_per_s[static_cast<std::size_t>(Precision::Fp32)] = fp32;
  c.flops_per_s[static_cast<std::size_t>(Precision::Fp16)] = fp16;
  c.flops_per_s[static_cast<std::size_t>(Precision::Tensor)] = tensor_fp16 ? tensor_fp16 : tensor_bf16;
  c.bytes_per_s[static_cast<std::size_t>(MemoryLevel::Dram)] = dram_bandwidth;
  c.bytes_per_s[static_cast<std::size_t>(MemoryLevel::L2)] = l2_bandwidth;
  return c;
}

std::vector<PeakProfile> parse_peaks(const std::string& json_text) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    throw PeaksError(std::string("peaks file is not valid JSON: ") + e.what());
  }
  if (!doc.is_object() || !doc.contains("gpus") || !doc.at("gpus").is_array()) {
    throw PeaksError("peaks file has no 'gpus' array");
  }
  std::vector<PeakProfile> out;
  constexpr double kTera = 1e12, kGiga = 1e9;
  for (const auto& e : doc.at("gpus")) {
    PeakProfile p;
    try {
      p.id = e.at("id").get<std::string>();
      p.name = e.at("name").get<std::string>();
      p.match = e.at("match").get<std::vector<std::string>>();
      p.sm_count = e.at("sm_count").get<int>();
      p.boost_clock_mhz = e.at("boost_clock_mhz").get<int>();
      p.source = e.at("source").get<std::string>();
      if (e.contains("derived")) p.derived = e.at("derived").get<std::vector<std::string>>();
    } catch (const nlohmann::json::exception& ex) {
      throw PeaksError("peaks entry '" + p.id + "': " + ex.what());
    }
    p.fp64 = scaled(e, "fp64_tflops", kTera, p.id);
    p.fp32 = scaled(e, "fp32_tflops", kTera, p.id);
    p.fp16 = scaled(e, "fp16_tflops", kTera, p.id);
    p.tensor_fp16 = scaled(e, "tensor_fp16_tflops", kTera, p.id);
    p.tensor_bf16 = scaled(e, "tensor_bf16_tflops", kTera, p.id);
    p.tensor_tf32 = scaled(e, "tensor_tf32_tflops", kTera, p.id);
    p.int8_tensor = scaled(e, "int8_tops", kTera, p.id);
    p.dram_bandwidth = scaled(e, "dram_gbps", kGiga, p.id);
    p.l2_bandwidth = scaled(e, "l2_gbps", kGiga, p.id);
    if (find_peaks(out, p.id)) throw PeaksError("peaks file lists '" + p.id + "' twice");
    out.push_back(std::move(p));
  }
  return out;
}

const std::vector<PeakProfile>& builtin_peaks() {
  static const std::vector<PeakProfile> profiles = parse_peaks(builtin_peaks_json());
  return profiles;
}

const PeakProfile* find_peaks(const std::vector<PeakProfile>& profiles, const std::string& id) {
  for (const auto& p : profiles) {
    if (p.id == id) return &p;
  }
  return nullptr;
}

const PeakProfile* match_device(const std::vector<PeakProfile>& profiles,
                                const std::string& device_name, int sm_count) {
  for (const auto& p : profiles) {
    if (sm_count != 0 && p.sm_count != sm_count) continue;
    for (const auto& m : p.match) {
      if (!m.empty() && device_name.find(m) != std::string::npos) return &p;
    }
  }
  return nullptr;
}

std::optional<Ceilings> measured_ceilings(const db::Reader& reader, std::uint32_t device_id,
                                          const PeakProfile* fallback) {
  std::map<std::string, db::CeilingRecord> latest;
  for (auto& c : db::read_ceilings(reader)) {
    if (c.device_id == device_id) latest[c.name] = c;
  }
  if (latest.empty()) return std::nullopt;
  Ceilings c;
  c.id = "measured";
  const std::string device = latest.begin()->second.device_name;
  c.label = "measured on " + device;
  c.source = "prof-ceilings microbenchmarks stored in the capture";
  auto value = [&](const char* name) -> std::optional<double> {
    const auto it = latest.find(name);
    return it == latest.end() ? std::nullopt : std::optional<double>(it->second.value);
  };
  c.flops_per_s[static_cast<std::size_t>(Precision::Fp32)] = value(db::kCeilingFp32);
  const auto fp16t = value(db::kCeilingFp16Tensor), bf16t = value(db::kCeilingBf16Tensor);
  if (fp16t || bf16t) {
    c.flops_per_s[static_cast<std::size_t>(Precision::Tensor)] =
        std::max(fp16t.value_or(0), bf16t.value_or(0));
  }
  c.bytes_per_s[static_cast<std::size_t>(MemoryLevel::Dram)] = value(db::kCeilingDramBandwidth);
  c.bytes_per_s[static_cast<std::size_t>(MemoryLevel::L2)] = value(db::kCeilingL2Bandwidth);
  if (fallback) {
    const Ceilings sheet = fallback->ceilings();
    bool used = false;
    for (std::size_t i = 0; i < kPrecisions; ++i) {
      if (!c.flops_per_s[i] && sheet.flops_per_s[i]) {
        c.flops_per_s[i] = sheet.flops_per_s[i];
        used = true;
      }
    }
    if (used) c.label += " (fp64/fp16 from the " + fallback->id + " datasheet)";
  }
  return c;
}

PeaksChoice choose_peaks(const std::string& selection, const db::Reader& reader,
                         const std::vector<PeakProfile>& profiles) {
  const auto devices = reader.devices();
  const db::DeviceInfo* device = devices.empty() ? nullptr : &devices.front();
  const PeakProfile* matched =
      device ? match_device(profiles, device->name, device->sm_count) : nullptr;
  const std::string device_text =
      device ? "device " + std::to_string(device->id) + " '" + device->name + "' (" +
                   std::to_string(device->sm_count) + " SMs)"
             : std::string("no device recorded");
  if (selection == "auto") {
    if (!matched) {
      throw PeaksError("--peaks auto: " + device_text +
                       " matches no datasheet profile; choose one with --peaks (" +
                       [&] {
                         std::string ids;
                         for (const auto& p : profiles) ids += (ids.empty() ? "" : ", ") + p.id;
                         return ids;
                       }() +
                       ") or use --peaks measured");
    }
    return {matched->ceilings(), "datasheet of " + matched->id + ", matched " + device_text};
  }
  if (selection == "measured") {
    auto measured = device ? measured_ceilings(reader, device->id, matched) : std::nullopt;
    if (!measured) {
      throw PeaksError("--peaks measured: the capture holds no measured ceilings (record them "
                       "with prof-run --measure-ceilings, or prof-ceilings --into FILE)");
    }
    return {*measured, "measured ceilings of " + device_text};
  }
  const PeakProfile* chosen = find_peaks(profiles, selection);
  if (!chosen) {
    std::string ids;
    for (const auto& p : profiles) ids += (ids.empty() ? "" : ", ") + p.id;
    throw PeaksError("--peaks '" + selection + "' is not a known profile (" + ids +
                     ", auto, measured)");
  }
  return {chosen->ceilings(), "datasheet of " + chosen->id + " (capture from " + device_text + ")"};
}

}  // namespace fuselens::analyzer
