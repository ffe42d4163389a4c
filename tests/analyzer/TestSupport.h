#pragma once
// Test support for the analyzer suites: temporary directories, a synthetic reference capture
// with known values (written through db::Writer), and an RFC 4180 CSV parser.

#include <filesystem>
#include <string>
#include <vector>

#include "TempDir.h"

namespace fuselens::analyzer::test {

/// A fresh directory under the system temporary directory, removed with everything in it.
using TempDir = fuselens::test::TempDir;

// Kernel names of the reference capture.
inline constexpr const char* kGemm64Mangled = "_Z4gemmILi64EEvPfi";
inline constexpr const char* kGemm64 = "void gemm<64>(float*, int)";
inline constexpr const char* kGemm128 = "void gemm<128>(float*, int)";
inline constexpr const char* kRelu = "relu(float*)";
/// Not an Itanium name, so stored unchanged: exercises CSV quoting.
inline constexpr const char* kQuoted = "say \"hi\", <T>";
inline constexpr const char* kDeviceName = "NVIDIA H100 80GB HBM3";

/// Writes the reference capture at `path` (see TestSupport.cpp for every record and the values
/// the tests expect). `finalize` = false leaves it as a crashed run would: no indexes.
void write_reference_capture(const std::string& path, bool finalize = true);

/// A finalized capture with a run row but no process (the workload never initialized CUDA).
void write_capture_without_process(const std::string& path);

/// Records of an RFC 4180 document; a blank line is an empty record.
std::vector<std::vector<std::string>> parse_csv(const std::string& text);

}  // namespace fuselens::analyzer::test
