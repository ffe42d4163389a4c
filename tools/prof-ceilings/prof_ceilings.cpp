// prof-ceilings: measures the running GPU's roofline ceilings (DRAM and L2 bandwidth, FP32 FMA
// rate, FP16 and BF16 tensor rate) and prints them; with --into CAPTURE, stores them in the
// capture's `ceiling` table, where `prof-analyze roofline --peaks measured` reads them.
//
//   prof-ceilings [--into FILE] [--device N] [--only dram,l2,fp32,tensor] [--quick] [--format table|json]
//
// Exit status: 0 measured (and stored); 1 a CUDA or capture error; 2 bad command line; 77 no CUDA
// device. A missing cuBLASLt only skips the tensor ceilings, with a note.

#include <CLI/CLI.hpp>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "Microkernels.cuh"
#include "TensorGemm.h"
#include "common/cuda_check.h"
#include "fuselens/db/RooflineStore.h"

namespace {

namespace fc = fuselens::ceilings;
namespace db = fuselens::db;

std::uint64_t utc_now_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

}  // namespace

int main(int argc, char** argv) {
  std::string into, format = "table";
  int device = 0;
  bool quick = false;
  std::vector<std::string> only{"dram", "l2", "fp32", "tensor"};
  CLI::App app{"prof-ceilings: measure the running GPU's roofline ceilings (Empirical Roofline "
               "Toolkit's method) and optionally store them in a FuseLens capture.",
               "prof-ceilings"};
  app.add_option("--into", into, "Capture (schema 2) to store the ceilings in");
  app.add_option("--device", device, "CUDA device ordinal")->capture_default_str();
  app.add_option("--only", only, "Ceilings to measure: dram, l2, fp32, tensor")
      ->delimiter(',')
      ->check(CLI::IsMember({"dram", "l2", "fp32", "tensor"}));
  app.add_flag("--quick", quick, "Smaller buffers and fewer repetitions (a smoke test, not a ceiling)");
  app.add_option("--format", format, "Output format")->check(CLI::IsMember({"table", "json"}));
  app.footer(
      "Examples:\n"
      "  prof-ceilings\n"
      "  prof-ceilings --into run.sqlite   (then: prof-analyze roofline run.sqlite --peaks "
      "measured)\n"
      "  prof-ceilings --only dram,tensor --format json\n"
      "  prof-ceilings --quick --device 1");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << "prof-ceilings: error: " << e.what() << '\n';
    return 2;
  }
  const std::set<std::string> which(only.begin(), only.end());

  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::cerr << "prof-ceilings: error: no CUDA device available\n";
    return 77;
  }
  if (device < 0 || device >= count) {
    std::cerr << "prof-ceilings: error: --device " << device << ": " << count << " device(s)\n";
    return 2;
  }
  std::vector<db::CeilingRecord> rows;
  std::vector<std::string> notes;
  std::string device_name;
  try {
    FUSELENS_CUDA_CHECK(cudaSetDevice(device));
    cudaDeviceProp prop{};
    FUSELENS_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    device_name = prop.name;
    int clock_khz = 0;
    cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device);
    fc::MicrokernelOptions options;
    if (quick) {
      options.dram_bytes = std::size_t{64} << 20;
      options.repetitions = 3;
    }
    auto add = [&](const char* name, const fc::Measurement& m) {
      rows.push_back({static_cast<std::uint32_t>(device), device_name, name, m.value, m.method, utc_now_ns()});
    };
    if (which.count("dram")) {
      const fc::Measurement copy = fc::dram_copy_bandwidth(options);
      const fc::Measurement read = fc::dram_read_bandwidth(options);
      notes.push_back(fmt::format("DRAM copy {:.0f} GB/s, read-only {:.0f} GB/s; the larger is the ceiling",
                                  copy.value / 1e9, read.value / 1e9));
      add(db::kCeilingDramBandwidth, copy.value >= read.value ? copy : read);
    }
    if (which.count("l2")) add(db::kCeilingL2Bandwidth, fc::l2_read_bandwidth(options));
    if (which.count("fp32")) {
      const fc::Measurement m = fc::fp32_fma_rate(options);
      add(db::kCeilingFp32, m);
      if (clock_khz > 0) {
        // FP32 lanes x 2 FLOP per clock per SM: 128 on Hopper, Ada and Ampere GA10x, 64 on Turing and GA100.
        notes.push_back(fmt::format("FP32 rate / ({} SMs x 2 FLOP) = {:.0f} FMA lanes x GHz; the peak SM clock "
                                    "reported is {:.0f} MHz",
                                    prop.multiProcessorCount, m.value / (2.0 * prop.multiProcessorCount) / 1e9,
                                    clock_khz / 1e3));
      }
    }
    if (which.count("tensor")) {
      const int size = quick ? 2048 : 8192;
      for (const auto& [type, name] : {std::pair{fc::TensorType::Fp16, db::kCeilingFp16Tensor},
                                       std::pair{fc::TensorType::Bf16, db::kCeilingBf16Tensor}}) {
        try {
          add(name, fc::tensor_gemm_rate(type, size, quick ? 3 : 20));
        } catch (const fc::TensorGemmUnavailable& e) {
          notes.push_back(std::string("tensor ceiling skipped: ") + e.what());
          break;
        }
      }
    }
  } catch (const fuselens::kernels::CudaError& e) {
    std::cerr << "prof-ceilings: error: " << e.what() << '\n';
    return 1;
  }

  if (format == "json") {
    std::cout << "{\"device\": " << device << ", \"device_name\": \"" << device_name << "\", \"ceilings\": [";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      std::cout << (i ? ", " : "") << fmt::format("{{\"name\": \"{}\", \"value\": {}}}", rows[i].name, rows[i].value);
    }
    std::cout << "]}\n";
  } else {
    std::cout << fmt::format("Ceilings of device {} ({}):\n", device, device_name);
    for (const auto& r : rows) {
      const bool bandwidth = r.name.find("bandwidth") != std::string::npos;
      std::cout << fmt::format("  {:<15} {:>10.1f} {:<8} {}\n", r.name, r.value / (bandwidth ? 1e9 : 1e12),
                               bandwidth ? "GB/s" : "TFLOP/s", r.method);
    }
    for (const auto& n : notes) std::cout << "  note: " << n << '\n';
  }
  if (!into.empty()) {
    try {
      db::RooflineWriter(into).write_ceilings(rows);
      std::cerr << "[fuselens] " << rows.size() << " ceilings stored in " << into << '\n';
    } catch (const std::exception& e) {
      std::cerr << "prof-ceilings: error: cannot store the ceilings: " << e.what() << '\n';
      return 1;
    }
  }
  return 0;
}
