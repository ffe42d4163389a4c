#pragma once
// CaptureSink: where the collector's records go (after libkineto's ActivityLogger: the session
// writes to an interface; the SQLite capture is one implementation, CaptureWriter.h).
//
// Two kinds of calls:
// - while the program runs, from any thread (CUPTI's buffer thread, the program's): completed
//   activity buffers and devices. These never block longer than a short lock and never throw;
//   the sink stores them later, off the calling thread.
// - rows stored synchronously, on the thread that serves the sink: before the sink is started
//   (the first process row) and from the Epilogue that finalize() runs once every activity
//   record is stored (calling contexts, kernel arguments, threads, the final process row). These
//   throw what the store throws (std::exception); the caller logs and goes on.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuselens/db/Records.h"

namespace fuselens::collector {

class CaptureSink {
 public:
  /// The records a session stores once, at the end: finalize() calls write_final(sink) on the
  /// thread that serves the sink, after the last activity record and before it stops.
  class Epilogue {
   public:
    virtual void write_final(CaptureSink& sink) noexcept = 0;

   protected:
    ~Epilogue() = default;
  };

  virtual ~CaptureSink();

  /// Takes a completed CUPTI activity buffer holding `valid_size` bytes of records (> 0). The
  /// sink converts and stores the records off the calling thread and then gives the buffer back
  /// to the ActivityBuffers that handed it out.
  virtual void handle_buffer(std::uint8_t* buffer, std::size_t valid_size) noexcept = 0;
  /// Takes the properties of a device the process uses (stored unless the name is empty).
  virtual void handle_device(db::DeviceInfo device) noexcept = 0;

  /// False once a write failed: further records are counted as discarded, not stored.
  virtual bool storing() const noexcept = 0;
  /// Activity records stored so far.
  virtual std::uint64_t records_written() const noexcept = 0;
  /// Activity records converted but not stored (a write failed).
  virtual std::uint64_t records_discarded() const noexcept = 0;
  /// OS ids of the threads seen in the stored API and NVTX records, in the sink's order. Call on
  /// the serving thread (the Epilogue).
  virtual std::vector<std::uint32_t> threads() const = 0;

  /// Stores (inserts or replaces) the process row.
  virtual void handle_process(const db::ProcessInfo& process) = 0;
  /// Stores (inserts or replaces) the process's rank row (table process_rank).
  virtual void handle_process_rank(const db::ProcessRank& rank) = 0;
  /// Stores thread rows (names of the threads seen).
  virtual void handle_threads(const std::vector<db::ThreadInfo>& threads) = 0;
  /// Stores the process's calling context tree (one transaction).
  virtual void handle_calling_contexts(const db::CallingContextTree& tree) = 0;
  /// Stores kernel argument rows (one transaction per call; empty is allowed).
  virtual void handle_kernel_args(const std::vector<db::KernelArgRecord>& args) = 0;
  /// Stores the windows recorded under capture control (one transaction; empty is allowed).
  virtual void handle_capture_windows(const std::vector<db::CaptureWindowRecord>& windows) = 0;
  /// Stores a process's sampled tracing (prof-run --sample: every step's launch calls; one
  /// transaction). A sink that does not store it keeps this default, which drops it.
  virtual void handle_sampling(const db::SamplingRecord& /*sampling*/) {}

  /// Stores every buffer and device handed over so far, runs `epilogue` and stops serving.
  /// Waits at most `timeout` for that; returns false (and logs) when the time ran out (the
  /// serving thread then finishes on its own). Call once, after the last handle_buffer().
  virtual bool finalize(Epilogue& epilogue, std::chrono::seconds timeout) noexcept = 0;

 protected:
  CaptureSink() = default;
  CaptureSink(const CaptureSink&) = delete;
  CaptureSink& operator=(const CaptureSink&) = delete;
};

}  // namespace fuselens::collector
