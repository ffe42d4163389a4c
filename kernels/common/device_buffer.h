#pragma once
// DeviceBuffer<T>: an owning, move-only array in device global memory (cudaMalloc / cudaFree).
//
// - The constructor only allocates: no memset, no copy (benchmarks count every memory operation).
// - copy_from_host / copy_to_host use synchronous cudaMemcpy of exactly size() * sizeof(T) bytes,
//   so a profiler sees one Host-to-Device or Device-to-Host copy per call.
// - Errors: CUDA failures throw fuselens::kernels::CudaError (see common/cuda_check.h); a host span
//   whose length differs from size() throws std::invalid_argument. The destructor never throws.
// Host code only.

#include "common/cuda_check.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace fuselens::kernels {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;

  /// Allocates `count` elements (uninitialised). count == 0 allocates nothing.
  explicit DeviceBuffer(std::size_t count) : size_(count) {
    if (count > 0) {
      void* raw = nullptr;
      FUSELENS_CUDA_CHECK(cudaMalloc(&raw, count * sizeof(T)));
      data_ = static_cast<T*>(raw);
    }
  }

  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }

  ~DeviceBuffer() { release(); }

  [[nodiscard]] T* data() noexcept { return data_; }
  [[nodiscard]] const T* data() const noexcept { return data_; }
  /// Number of elements.
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  /// Size in bytes.
  [[nodiscard]] std::size_t bytes() const noexcept { return size_ * sizeof(T); }

  /// One synchronous Host-to-Device cudaMemcpy of bytes() bytes.
  void copy_from_host(std::span<const T> host) {
    require_same_size(host.size());
    if (size_ > 0) {
      FUSELENS_CUDA_CHECK(cudaMemcpy(data_, host.data(), bytes(), cudaMemcpyHostToDevice));
    }
  }

  /// One synchronous Device-to-Host cudaMemcpy of bytes() bytes.
  [[nodiscard]] std::vector<T> copy_to_host() const {
    std::vector<T> host(size_);
    if (size_ > 0) {
      FUSELENS_CUDA_CHECK(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost));
    }
    return host;
  }

 private:
  void require_same_size(std::size_t host_count) const {
    if (host_count != size_) {
      throw std::invalid_argument("DeviceBuffer: host span has " + std::to_string(host_count) +
                                  " elements, device buffer has " + std::to_string(size_));
    }
  }

  void release() noexcept {
    if (data_ != nullptr) {
      cudaFree(
          data_);  // Errors here are sticky context errors; the next checked call reports them.
      data_ = nullptr;
      size_ = 0;
    }
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace fuselens::kernels
