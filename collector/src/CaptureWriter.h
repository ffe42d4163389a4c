#pragma once
// CaptureWriter: the CaptureSink that stores records in the SQLite capture (db::Writer), served
// by one writer thread ("fuselens-write", so that top -H, gdb and per-thread CPU accounting tell
// it from the program's threads).
//
// handle_buffer() and handle_device() queue under a short lock (the queue's capacity is reserved
// for every pool buffer: no allocation on CUPTI's thread) and wake the thread. The thread stores
// devices, then converts each queued buffer (ActivityConverter) and appends its records in one
// transaction, giving the buffer back to the ActivityBuffers. A failed write is logged once; from
// then on the sink no longer stores (storing() false) and counts the records it converts as
// discarded. finalize() wakes the thread to drain the queue, emit NVTX ranges that never ended,
// run the session's Epilogue and stop; it waits a bounded time, so a stuck store never hangs the
// host program.
//
// The capture's indexes are kept by the writes (db::IndexBuild::WhileWriting, prof-run's
// captures), which makes each write about 2.8 times as long for a launch loop (docs/BENCHMARKS.md):
// a tight launch loop on the H100 host brings the thread to the edge of what it keeps up with.
// The thread drops them (finalize then builds them) when it is too slow for them, judged twice:
// after its first kIndexCheckBuffers buffers, while the tables are small and a drop costs little,
// when it was busy more than half the time since the first (too_busy); and at any buffer, when
// an eighth of the pool waits (fell_behind: the drop then takes about 1.4 s per million kernels
// on the development machine, while the rest of the pool takes the records).
//
// The synchronous rows (handle_process, handle_process_rank, handle_threads,
// handle_calling_contexts, handle_kernel_args) go straight to the capture: call them before start()
// or from the Epilogue.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <memory>
#include <unordered_set>
#include "ActivityConverter.h"
#include "CaptureSink.h"

#include "fuselens/db/Aggregate.h"
#include "fuselens/db/Writer.h"

namespace fuselens::collector {

class ActivityBuffers;

class CaptureWriter final : public CaptureSink {
 public:
  /// Appends to `writer` (an open capture) the records of process `pid` (ActivityConverter's
  /// pid); buffers go back to `buffers`, which hands out at most `max_buffers` at a time.
  CaptureWriter(db::Writer writer, ActivityBuffers& buffers, std::uint32_t pid,
                std::size_t max_buffers);
  /// Stops and joins the writer thread if finalize() did not (for tests; the collector never
  /// destroys its sink).
  ~CaptureWriter() override;

  /// Aggregate mode (CollectorConfig::aggregate, docs/aggregate.md); call before start(). Every
  /// converted record goes to a db::Aggregator; only the records inside the windows of the
  /// filter (set_api_filter; none without one) are stored as rows: API calls, NVTX ranges and
  /// marks, memory, synchronization and overhead records by their start, kernels, copies and
  /// memsets by their start or their launch call's being stored. `with_contexts`: the calling
  /// contexts arrive through handle_calling_contexts, which then also stores the aggregates
  /// (attributed to the nodes) and only the contexts of stored rows; otherwise the aggregates are
  /// stored after the Epilogue. `keep_trace`: every record is also stored as a row
  /// (CollectorConfig::aggregate_keep_trace).
  void set_aggregate(bool with_contexts, bool keep_trace = false);

  /// Starts the writer thread. Throws std::system_error when no thread can be started.
  void start();
  /// The writer thread (for ExitGuard::add_own_thread); valid after start().
  std::thread::native_handle_type thread_handle() { return thread_.native_handle(); }

  void handle_buffer(std::uint8_t* buffer, std::size_t valid_size) noexcept override;
  void handle_device(db::DeviceInfo device) noexcept override;

  bool storing() const noexcept override { return !broken_; }
  std::uint64_t records_written() const noexcept override { return written_.load(); }
  std::uint64_t records_discarded() const noexcept override { return discarded_.load(); }
  std::vector<std::uint32_t> threads() const override;

  void handle_process(const db::ProcessInfo& process) override;
  void handle_process_rank(const db::ProcessRank& rank) override;
  void handle_threads(const std::vector<db::ThreadInfo>& threads) override;
  void handle_calling_contexts(const db::CallingContextTree& tree) override;
  void handle_kernel_args(const std::vector<db::KernelArgRecord>& args) override;

  /// Which API call records to store (capture control: those that start inside a recorded
  /// window). Called on the writer thread; must not block.
  class ApiFilter {
   public:
    virtual bool keeps(std::uint64_t start_ns) const noexcept = 0;

   protected:
    ~ApiFilter() = default;
  };
  /// Sets the filter (nullptr: keep every record); the filter must outlive the writer.
  void set_api_filter(const ApiFilter* filter) noexcept { api_filter_.store(filter); }
  void handle_capture_windows(const std::vector<db::CaptureWindowRecord>& windows) override;
  void handle_sampling(const db::SamplingRecord& sampling) override;

  bool finalize(Epilogue& epilogue, std::chrono::seconds timeout) noexcept override;

 private:
  struct Completed {
    std::uint8_t* buffer;
    std::size_t valid_size;
  };

  void writer_loop() noexcept;
  // Aggregate mode: aggregates `batch` and keeps in it only the records of the windows.
  void aggregate_and_filter(db::RecordBatch& batch);
  void write_aggregates(const db::CallingContextTree* tree) noexcept;
  std::atomic<const ApiFilter*> api_filter_{nullptr};
  void write_batch(db::RecordBatch& batch) noexcept;
  // Drops the live indexes (once), saying why: `waiting` buffers behind (fell_behind), or when
  // 0, busy `busy_s` of the first kIndexCheckBuffers buffers' `wall_s` (too_busy).
  void drop_indexes(std::size_t waiting, double busy_s, double wall_s) noexcept;

 public:
  /// The buffers after which the writer judges whether it is too busy for the live indexes.
  static constexpr std::uint64_t kIndexCheckBuffers = 16;
  /// Too busy to keep the live indexes: writing took more than half of `wall_s`.
  static bool too_busy(double busy_s, double wall_s) noexcept {
    return wall_s > 0 && busy_s > 0.5 * wall_s;
  }
  /// Fallen behind: `waiting` buffers queued, an eighth of a pool of `max_buffers` (at least 2).
  static bool fell_behind(std::size_t waiting, std::size_t max_buffers) noexcept {
    return waiting >= std::max<std::size_t>(2, max_buffers / 8);
  }

 private:
  db::Writer writer_;
  ActivityBuffers& buffers_;
  ActivityConverter converter_;  // writer thread only
  std::uint32_t converter_pid_;
  const std::size_t max_buffers_;

  std::mutex mutex_;  // guards queue_, devices_, stop_, epilogue_, done_
  std::condition_variable wake_;
  std::vector<Completed> queue_;
  std::vector<db::DeviceInfo> devices_;
  Epilogue* epilogue_ = nullptr;
  bool stop_ = false;
  bool done_ = false;
  std::thread thread_;

  std::atomic<std::uint64_t> written_{0};
  std::atomic<std::uint64_t> discarded_{0};  // records converted but not stored (write errors)
  bool broken_ = false;                      // writer thread only (after start)
  bool indexes_dropped_ = false;             // writer thread only: drop_indexes() was called
  bool busy_checked_ = false;                // writer thread only: too_busy() was asked

  // Aggregate mode, writer thread only.
  std::unique_ptr<db::Aggregator> aggregator_;
  bool aggregate_contexts_ = false;
  bool aggregate_keep_trace_ = false;
  bool aggregates_written_ = false;
  std::unordered_set<std::uint32_t> traced_calls_;  // correlation ids of the rows stored
};

}  // namespace fuselens::collector
