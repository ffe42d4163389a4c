// p2p_copy: peer-to-peer copies between devices 0 and 1, both ways, for the communication rows of
// multi-GPU captures (issue 25) and their GPU test (tests/gpu/PeerCopyGpuTest.cpp).
//
//   p2p_copy [--copies N] [--json PATH]
//
// With two or more devices: enables peer access both ways where cudaDeviceCanAccessPeer allows it,
// then for each size of kSizes (64 KiB, 1 MiB, 16 MiB) issues N (default 4) cudaMemcpyPeerAsync
// copies from device 0 to device 1 on a stream of device 0, and N from device 1 to device 0 on a
// stream of device 1, so a profiler's copy rows (device_id = the stream's device) tell the two
// directions apart; then synchronizes both streams and checks the last copy's bytes.
// With one device: prints "p2p_copy: 1 device; peer copies need two: copying device-to-device on
// device 0 instead" and makes the same copies within device 0 (cudaMemcpyPeerAsync with both
// devices 0: device-to-device rows), exit 0, so a single-GPU machine still runs it.
//
// Output: one JSON object (stdout, or PATH): {"devices": D, "mode": "peer"|"single_device",
// "peer_access": [0->1, 1->0 enabled], "copies": [{"src_device", "dst_device", "stream_device",
// "bytes", "count"}], "bytes_by_direction": {"0->1": B, "1->0": B}} (bytes are per copy in
// "copies", totals in "bytes_by_direction"; single_device mode has only "0->0").
// Exit status: 0, 77 without a CUDA device, 2 on bad options, 1 on a CUDA error or a wrong copy.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr std::size_t kSizes[] = {64u << 10, 1u << 20, 16u << 20};
constexpr std::size_t kMaxSize = 16u << 20;

[[noreturn]] void usage(const char* message) {
  std::fprintf(stderr, "p2p_copy: %s\nusage: p2p_copy [--copies N] [--json PATH]\n", message);
  std::exit(2);
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "p2p_copy: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

struct Direction {
  int src = 0, dst = 0;
  cudaStream_t stream = nullptr;  // a stream of device `src`
  unsigned char* src_buffer = nullptr;
  unsigned char* dst_buffer = nullptr;
  unsigned long long total_bytes = 0;
};

/// Allocates the source (filled with `pattern`) and destination buffers and the source's stream.
void prepare(Direction& d, int pattern) {
  check(cudaSetDevice(d.src), "cudaSetDevice");
  check(cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cudaMalloc(&d.src_buffer, kMaxSize), "cudaMalloc");
  check(cudaMemset(d.src_buffer, pattern, kMaxSize), "cudaMemset");
  check(cudaSetDevice(d.dst), "cudaSetDevice");
  check(cudaMalloc(&d.dst_buffer, kMaxSize), "cudaMalloc");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

/// Whether the first and last byte of the largest copy arrived.
bool arrived(const Direction& d, int pattern) {
  unsigned char first = 0, last = 0;
  check(cudaSetDevice(d.dst), "cudaSetDevice");
  check(cudaMemcpy(&first, d.dst_buffer, 1, cudaMemcpyDeviceToHost), "cudaMemcpy");
  check(cudaMemcpy(&last, d.dst_buffer + kMaxSize - 1, 1, cudaMemcpyDeviceToHost), "cudaMemcpy");
  return first == pattern && last == pattern;
}

}  // namespace

int main(int argc, char** argv) {
  int copies = 4;
  const char* json_path = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--copies") == 0 && i + 1 < argc) {
      char* end = nullptr;
      const long n = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || n < 1 || n > 10000) usage("--copies needs an integer in [1, 10000]");
      copies = static_cast<int>(n);
    } else if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
      json_path = argv[++i];
    } else {
      usage("unknown or incomplete option");
    }
  }

  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "p2p_copy: no CUDA device\n");
    return 77;
  }
  const bool peer = devices >= 2;
  std::vector<Direction> directions;
  bool access[2] = {false, false};
  if (peer) {
    directions = {Direction{0, 1}, Direction{1, 0}};
    for (int d = 0; d < 2; ++d) {
      int can = 0;
      check(cudaDeviceCanAccessPeer(&can, d, 1 - d), "cudaDeviceCanAccessPeer");
      if (!can) continue;
      check(cudaSetDevice(d), "cudaSetDevice");
      const cudaError_t e = cudaDeviceEnablePeerAccess(1 - d, 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled) {
        (void)cudaGetLastError();
      } else {
        check(e, "cudaDeviceEnablePeerAccess");
      }
      access[d] = true;
    }
  } else {
    std::printf(
        "p2p_copy: 1 device; peer copies need two: copying device-to-device on device 0 "
        "instead\n");
    directions = {Direction{0, 0}};
  }
  for (std::size_t i = 0; i < directions.size(); ++i) prepare(directions[i], 0x11 * int(i + 1));

  for (const auto size : kSizes) {
    for (int n = 0; n < copies; ++n) {
      for (auto& d : directions) {
        check(cudaSetDevice(d.src), "cudaSetDevice");
        check(cudaMemcpyPeerAsync(d.dst_buffer, d.dst, d.src_buffer, d.src, size, d.stream),
              "cudaMemcpyPeerAsync");
        d.total_bytes += size;
      }
    }
  }
  bool ok = true;
  for (std::size_t i = 0; i < directions.size(); ++i) {
    auto& d = directions[i];
    check(cudaSetDevice(d.src), "cudaSetDevice");
    check(cudaStreamSynchronize(d.stream), "cudaStreamSynchronize");
    if (!arrived(d, 0x11 * int(i + 1))) {
      std::fprintf(stderr, "p2p_copy: copy %d->%d did not arrive\n", d.src, d.dst);
      ok = false;
    }
  }

  std::string json = "{\"devices\": " + std::to_string(devices) + ", \"mode\": \"" +
                     (peer ? "peer" : "single_device") + "\", \"peer_access\": [" +
                     (access[0] ? "true" : "false") + ", " + (access[1] ? "true" : "false") +
                     "], \"copies\": [";
  bool first = true;
  for (const auto& d : directions) {
    for (const auto size : kSizes) {
      json += std::string(first ? "" : ", ") + "{\"src_device\": " + std::to_string(d.src) +
              ", \"dst_device\": " + std::to_string(d.dst) +
              ", \"stream_device\": " + std::to_string(d.src) +
              ", \"bytes\": " + std::to_string(size) + ", \"count\": " + std::to_string(copies) +
              "}";
      first = false;
    }
  }
  json += "], \"bytes_by_direction\": {";
  first = true;
  for (const auto& d : directions) {
    json += std::string(first ? "" : ", ") + "\"" + std::to_string(d.src) + "->" +
            std::to_string(d.dst) + "\": " + std::to_string(d.total_bytes);
    first = false;
  }
  json += "}}\n";

  for (auto& d : directions) {
    check(cudaSetDevice(d.src), "cudaSetDevice");
    check(cudaStreamDestroy(d.stream), "cudaStreamDestroy");
    check(cudaFree(d.src_buffer), "cudaFree");
    check(cudaSetDevice(d.dst), "cudaSetDevice");
    check(cudaFree(d.dst_buffer), "cudaFree");
  }
  if (json_path) {
    FILE* out = std::fopen(json_path, "w");
    if (!out) {
      std::fprintf(stderr, "p2p_copy: cannot write %s\n", json_path);
      return 1;
    }
    std::fputs(json.c_str(), out);
    std::fclose(out);
  } else {
    std::fputs(json.c_str(), stdout);
  }
  return ok ? 0 : 1;
}
