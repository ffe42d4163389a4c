// Peer-to-peer copies on a real machine with two GPUs (issue 25): p2p_copy copies buffers from
// device 0 to device 1 on a stream of device 0 and back on a stream of device 1 with
// cudaMemcpyPeerAsync; the capture must hold peer-to-peer memcpy rows (db::MemcpyKind::PeerToPeer)
// in both directions (told apart by the row's device_id, the device of the stream) whose count and
// bytes per direction are those of p2p_copy's --json report. Skips with fewer than two devices.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cuda.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "Binaries.h"
#include "GpuSkip.h"
#include "Subprocess.h"
#include "TempDir.h"
#include "fuselens/db/ActivityCursors.h"
#include "fuselens/db/Reader.h"

using fuselens::test::binary;
using fuselens::test::run;
using fuselens::test::TempDir;

namespace {

/// CUDA devices visible to this process (the driver probed with dlopen, as GpuSkip.h does).
int device_count() {
  void* cuda = dlopen("libcuda.so.1", RTLD_LAZY);
  if (!cuda) return 0;
  using Count = CUresult (*)(int*);
  auto count = reinterpret_cast<Count>(dlsym(cuda, "cuDeviceGetCount"));
  int n = 0;
  if (!count || count(&n) != CUDA_SUCCESS) return 0;
  return n;
}

}  // namespace

TEST(PeerCopyGpu, PeerCopiesAreRecordedInBothDirectionsWithTheirBytes) {
  FUSELENS_SKIP_WITHOUT_GPU();
  const int devices = device_count();
  if (devices < 2) {
    GTEST_SKIP() << "GPU test skipped: peer-to-peer copies need two CUDA devices, this machine has "
                 << devices;
  }
  TempDir dir;
  const std::string capture = dir.file("p2p_copy.sqlite");
  const std::string report = dir.file("copies.json");
  const auto r = run({binary("prof-run", PROF_RUN_PATH), "-o", capture, "--force", "--",
                      binary("p2p_copy", P2P_COPY_PATH), "--copies", "4", "--json", report});
  ASSERT_EQ(r.status, 0) << r.err;

  std::ifstream in(report);
  ASSERT_TRUE(in) << "cannot read " << report;
  const auto copies = nlohmann::json::parse(in);
  ASSERT_EQ(copies.at("mode"), "peer");
  // Expected count and bytes per stream device, from the report.
  std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> expected;
  for (const auto& c : copies.at("copies")) {
    auto& [count, bytes] = expected[c.at("stream_device").get<std::int64_t>()];
    count += c.at("count").get<std::int64_t>();
    bytes += c.at("count").get<std::int64_t>() * c.at("bytes").get<std::int64_t>();
  }
  ASSERT_EQ(expected.size(), 2u) << "the report names both directions";

  const fuselens::db::Reader reader(capture);
  EXPECT_EQ(reader.run().dropped_records, 0u);
  std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> seen;
  auto rows = fuselens::db::copy_details(reader);
  while (auto c = rows.next()) {
    if (c->copy_kind != static_cast<std::int64_t>(fuselens::db::MemcpyKind::PeerToPeer)) continue;
    auto& [count, bytes] = seen[c->device_id];
    ++count;
    bytes += c->bytes;
  }
  ASSERT_EQ(seen.size(), 2u) << "peer-to-peer rows on both devices (both directions)";
  for (const auto& [device, want] : expected) {
    EXPECT_EQ(seen[device].first, want.first) << "peer copies issued on device " << device;
    EXPECT_EQ(seen[device].second, want.second) << "bytes copied from device " << device;
  }
}
