#pragma once
// A CaptureSink for the collector's unit tests: keeps the buffers handed over, stores nothing.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "CaptureSink.h"

namespace fuselens::collector::test {

class FakeCaptureSink final : public CaptureSink {
 public:
  std::vector<std::pair<std::uint8_t*, std::size_t>> buffers;  ///< handle_buffer's arguments

  void handle_buffer(std::uint8_t* buffer, std::size_t valid_size) noexcept override {
    buffers.emplace_back(buffer, valid_size);
  }
  void handle_device(db::DeviceInfo) noexcept override {}
  bool storing() const noexcept override { return true; }
  std::uint64_t records_written() const noexcept override { return 0; }
  std::uint64_t records_discarded() const noexcept override { return 0; }
  std::vector<std::uint32_t> threads() const override { return {}; }
  void handle_process(const db::ProcessInfo&) override {}
  void handle_process_rank(const db::ProcessRank&) override {}
  void handle_threads(const std::vector<db::ThreadInfo>&) override {}
  void handle_calling_contexts(const db::CallingContextTree&) override {}
  void handle_kernel_args(const std::vector<db::KernelArgRecord>&) override {}
  void handle_capture_windows(const std::vector<db::CaptureWindowRecord>&) override {}
  bool finalize(Epilogue&, std::chrono::seconds) noexcept override { return true; }
};

}  // namespace fuselens::collector::test
