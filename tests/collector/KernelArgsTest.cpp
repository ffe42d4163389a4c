// KernelArgs (collector/src/KernelArgs.h): the parameter layout probe and the reading of one
// launch's 8-byte parameters, from kernelParams and from a packed `extra` buffer.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "KernelArgs.h"

using namespace fuselens::collector;

namespace {

// A kernel (const float* a, int n, float* b, double scale, char c): offsets as the CUDA ABI
// lays them out.
struct FakeParam {
  std::size_t offset, size;
};
const std::vector<FakeParam> kParams = {{0, 8}, {8, 4}, {16, 8}, {24, 8}, {32, 1}};

ParamLayout fake_layout() {
  return probe_layout([](std::size_t i, std::size_t* offset, std::size_t* size) {
    if (i >= kParams.size()) return false;
    *offset = kParams[i].offset;
    *size = kParams[i].size;
    return true;
  });
}

}  // namespace

TEST(KernelArgs, ProbeKeepsThe8ByteParametersAndStopsAtTheFirstRefusedIndex) {
  const ParamLayout l = fake_layout();
  EXPECT_EQ(l.params, 5);
  ASSERT_EQ(l.count, 3);
  EXPECT_EQ(l.index[0], 0);
  EXPECT_EQ(l.index[1], 2);
  EXPECT_EQ(l.index[2], 3);
  EXPECT_EQ(l.offset[1], 16);
  EXPECT_EQ(l.offset[2], 24);
}

TEST(KernelArgs, ProbeLooksAtNoMoreThanSixteenParameters) {
  int asked = 0;
  const ParamLayout l = probe_layout([&](std::size_t i, std::size_t* offset, std::size_t* size) {
    ++asked;
    *offset = 8 * i;
    *size = 8;
    return true;
  });
  EXPECT_EQ(l.count, kMaxKernelParams);
  EXPECT_EQ(asked, kMaxKernelParams);
}

TEST(KernelArgs, ReadsValuesThroughKernelParamsAndSkipsSmallOnes) {
  const std::uint64_t a = 0x7f00'1234'0000ull, b = 0x7f00'5678'0000ull;
  const int n = 1 << 20;
  const double scale = 0.5;  // 8 bytes: a candidate too (its bits are a large number)
  const char c = 'x';
  void* params[] = {const_cast<std::uint64_t*>(&a), const_cast<int*>(&n),
                    const_cast<std::uint64_t*>(&b), const_cast<double*>(&scale),
                    const_cast<char*>(&c)};
  std::uint64_t values[kMaxKernelParams];
  std::uint8_t indexes[kMaxKernelParams];
  ASSERT_EQ(read_args(fake_layout(), params, nullptr, values, indexes), 3);
  EXPECT_EQ(values[0], a);
  EXPECT_EQ(values[1], b);
  EXPECT_EQ(indexes[1], 2);
  EXPECT_EQ(indexes[2], 3);

  const std::uint64_t null_pointer = 0;
  params[0] = const_cast<std::uint64_t*>(&null_pointer);  // below kMinPointer: skipped
  ASSERT_EQ(read_args(fake_layout(), params, nullptr, values, indexes), 2);
  EXPECT_EQ(values[0], b);
}

TEST(KernelArgs, ReadsValuesFromAPackedExtraBuffer) {
  alignas(8) unsigned char buffer[40] = {};
  const std::uint64_t a = 0x7f00'1234'0000ull, b = 0x7f00'5678'0000ull;
  std::memcpy(buffer, &a, 8);
  std::memcpy(buffer + 16, &b, 8);
  std::size_t size = 24;  // too short for the parameter at offset 24: it is left out
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                   CU_LAUNCH_PARAM_END};
  std::uint64_t values[kMaxKernelParams];
  std::uint8_t indexes[kMaxKernelParams];
  ASSERT_EQ(read_args(fake_layout(), nullptr, extra, values, indexes), 2);
  EXPECT_EQ(values[0], a);
  EXPECT_EQ(values[1], b);
  EXPECT_EQ(read_args(fake_layout(), nullptr, nullptr, values, indexes), 0);
}
