#include "CaptureWriter.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <optional>
#include <string>

#include "ActivityBuffers.h"
#include "Log.h"

namespace fuselens::collector {

CaptureWriter::CaptureWriter(db::Writer writer, ActivityBuffers& buffers, std::uint32_t pid,
                             std::size_t max_buffers)
    : writer_(std::move(writer)),
      buffers_(buffers),
      converter_(pid, &ActivityConverter::cupti_api_name),
      converter_pid_(pid),
      max_buffers_(max_buffers) {
  queue_.reserve(max_buffers_);
}

CaptureWriter::~CaptureWriter() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void CaptureWriter::set_aggregate(bool with_contexts, bool keep_trace) {
  aggregator_ = std::make_unique<db::Aggregator>(converter_pid_, with_contexts);
  aggregate_contexts_ = with_contexts;
  aggregate_keep_trace_ = keep_trace;
}

void CaptureWriter::start() {
  thread_ = std::thread([this] { writer_loop(); });
}

void CaptureWriter::handle_buffer(std::uint8_t* buffer, std::size_t valid_size) noexcept {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back({buffer, valid_size});  // capacity reserved for every pool buffer
  }
  wake_.notify_one();
}

void CaptureWriter::handle_device(db::DeviceInfo device) noexcept {
  try {
    std::lock_guard lock(mutex_);
    devices_.push_back(std::move(device));
  } catch (...) {
  }
  wake_.notify_one();
}

std::vector<std::uint32_t> CaptureWriter::threads() const {
  return {converter_.threads().begin(), converter_.threads().end()};
}

void CaptureWriter::handle_process(const db::ProcessInfo& process) {
  writer_.write_process(process);
}

void CaptureWriter::handle_process_rank(const db::ProcessRank& rank) {
  writer_.write_process_rank(rank);
}

void CaptureWriter::handle_threads(const std::vector<db::ThreadInfo>& threads) {
  writer_.write_threads(threads);
}

void CaptureWriter::handle_calling_contexts(const db::CallingContextTree& tree) {
  if (!aggregator_) {
    writer_.write_calling_contexts(tree);
    return;
  }
  write_aggregates(&tree);
}

void CaptureWriter::write_aggregates(const db::CallingContextTree* tree) noexcept {
  if (aggregates_written_ || broken_) return;
  aggregates_written_ = true;
  try {
    // The node of each call, by correlation id (sorted pairs: 8 bytes a call).
    std::vector<std::pair<std::uint32_t, std::uint32_t>> node_of_call;
    std::vector<std::int64_t> node_ids;
    if (tree) {
      node_of_call.reserve(tree->contexts.size());
      for (const auto& c : tree->contexts) node_of_call.emplace_back(c.correlation_id, c.node);
      std::sort(node_of_call.begin(), node_of_call.end());
      // Only the contexts of the rows stored (the windows'): the others are in the aggregates.
      db::CallingContextTree kept;
      kept.pid = tree->pid;
      kept.nodes = tree->nodes;
      kept.frames = tree->frames;
      kept.graph_nodes = tree->graph_nodes;
      for (const auto& c : tree->contexts) {
        if (traced_calls_.count(c.correlation_id) != 0) kept.contexts.push_back(c);
      }
      node_ids = writer_.write_calling_contexts(kept);
    }
    const auto set = aggregator_->finish([&](std::uint32_t correlation) -> std::int64_t {
      const auto it = std::lower_bound(node_of_call.begin(), node_of_call.end(),
                                       std::make_pair(correlation, std::uint32_t{0}));
      return it != node_of_call.end() && it->first == correlation ? it->second : -1;
    });
    writer_.write_aggregates(set, node_ids);
  } catch (const std::exception& e) {
    log("cannot record the aggregates: {}", e.what());
  }
}

void CaptureWriter::aggregate_and_filter(db::RecordBatch& batch) {
  aggregator_->add(batch);
  const ApiFilter* filter = api_filter_.load();
  auto keeps = [this, filter](std::uint64_t start_ns) {
    return aggregate_keep_trace_ || (filter && filter->keeps(start_ns));
  };
  std::erase_if(batch.api_calls, [&](const db::ApiCallRecord& r) { return !keeps(r.start_ns); });
  for (const auto& a : batch.api_calls) traced_calls_.insert(a.correlation_id);
  auto gpu = [&](auto& records) {
    std::erase_if(records, [&](const auto& r) {
      return !keeps(r.start_ns) && traced_calls_.count(r.correlation_id) == 0;
    });
    for (const auto& r : records) traced_calls_.insert(r.correlation_id);
  };
  gpu(batch.kernels);
  gpu(batch.memcpys);
  gpu(batch.memsets);
  std::erase_if(batch.memory_events,
                [&](const db::MemoryEventRecord& r) { return !keeps(r.timestamp_ns); });
  std::erase_if(batch.nvtx_ranges,
                [&](const db::NvtxRangeRecord& r) { return !keeps(r.start_ns); });
  std::erase_if(batch.nvtx_marks,
                [&](const db::NvtxMarkRecord& r) { return !keeps(r.timestamp_ns); });
  std::erase_if(batch.syncs, [&](const db::SyncRecord& r) { return !keeps(r.start_ns); });
  std::erase_if(batch.overheads, [&](const db::OverheadRecord& r) { return !keeps(r.start_ns); });
  aggregator_->add_traced(batch.size());
}

void CaptureWriter::handle_kernel_args(const std::vector<db::KernelArgRecord>& args) {
  writer_.write_kernel_args(args);
}

void CaptureWriter::handle_capture_windows(const std::vector<db::CaptureWindowRecord>& windows) {
  writer_.write_capture_windows(windows);
}

void CaptureWriter::handle_sampling(const db::SamplingRecord& sampling) {
  writer_.write_sampling(sampling);
}

bool CaptureWriter::finalize(Epilogue& epilogue, std::chrono::seconds timeout) noexcept {
  {
    std::lock_guard lock(mutex_);
    epilogue_ = &epilogue;
    stop_ = true;
  }
  wake_.notify_all();
  // Never hang the host program: give the writer a bounded time to finish.
  std::unique_lock lock(mutex_);
  const bool done = wake_.wait_for(lock, timeout, [&] { return done_; });
  lock.unlock();
  if (done && thread_.joinable()) {
    thread_.join();
  } else if (!done) {
    log("the capture writer did not finish in {} s; the capture may miss the last records",
        timeout.count());
    thread_.detach();
  }
  return done;
}

void CaptureWriter::writer_loop() noexcept {
  // Named so that top -H, gdb and per-thread CPU accounting tell the collector's threads from
  // the program's (at most 15 characters).
  ::pthread_setname_np(::pthread_self(), "fuselens-write");
  db::RecordBatch batch;
  std::vector<Completed> work;
  std::vector<db::DeviceInfo> devices;
  work.reserve(max_buffers_);
  Epilogue* epilogue = nullptr;
  // The writer's load, for the live indexes (the header's comment).
  using Clock = std::chrono::steady_clock;
  std::optional<Clock::time_point> first_buffer;
  double busy_s = 0;
  std::uint64_t buffers_written = 0;
  while (true) {
    bool stopping = false;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || !queue_.empty() || !devices_.empty(); });
      work.swap(queue_);
      devices.swap(devices_);
      stopping = stop_;
      epilogue = epilogue_;
    }
    for (const auto& device : devices) {
      try {
        if (!broken_ && !device.name.empty()) writer_.write_device(device);
      } catch (const std::exception& e) {
        log("cannot record device {}: {}", device.id, e.what());
      }
    }
    devices.clear();
    if (!work.empty() && !first_buffer) first_buffer = Clock::now();
    for (std::size_t i = 0; i < work.size(); ++i) {
      const Completed& item = work[i];
      const auto started = Clock::now();
      if (!indexes_dropped_) {
        std::size_t waiting = work.size() - i - 1;
        {
          std::lock_guard lock(mutex_);
          waiting += queue_.size();
        }
        if (fell_behind(waiting, max_buffers_)) drop_indexes(waiting, 0, 0);
      }
      try {
        converter_.convert_buffer(item.buffer, item.valid_size, batch);
        if (aggregator_) {
          aggregate_and_filter(batch);
        } else if (const ApiFilter* filter = api_filter_.load()) {
          std::erase_if(batch.api_calls, [filter](const db::ApiCallRecord& r) {
            return !filter->keeps(r.start_ns);
          });
        }
      } catch (const std::exception& e) {
        log("cannot convert an activity buffer: {}", e.what());
      }
      buffers_.release(item.buffer);
      write_batch(batch);
      busy_s += std::chrono::duration<double>(Clock::now() - started).count();
      if (!busy_checked_ && ++buffers_written >= kIndexCheckBuffers) {
        busy_checked_ = true;
        const double wall_s = std::chrono::duration<double>(Clock::now() - *first_buffer).count();
        if (!indexes_dropped_ && too_busy(busy_s, wall_s)) drop_indexes(0, busy_s, wall_s);
      }
    }
    work.clear();
    if (stopping) break;
  }
  try {
    converter_.flush_open_ranges(batch);
  } catch (...) {
  }
  if (aggregator_) {
    try {
      aggregate_and_filter(batch);
    } catch (...) {
    }
  }
  write_batch(batch);
  if (epilogue) epilogue->write_final(*this);
  if (aggregator_) write_aggregates(nullptr);  // no calling contexts arrived
  {
    std::lock_guard lock(mutex_);
    done_ = true;
  }
  wake_.notify_all();
}

void CaptureWriter::drop_indexes(std::size_t waiting, double busy_s, double wall_s) noexcept {
  indexes_dropped_ = true;
  if (broken_) return;
  try {
    const int dropped = writer_.drop_indexes();
    if (dropped == 0) return;
    const std::string why =
        waiting > 0 ? fmt::format("it fell behind: {} activity buffers waiting", waiting)
                    : fmt::format("it was busy {:.0f} % of its first {} buffers' {:.2f} s",
                                  100.0 * busy_s / wall_s, kIndexCheckBuffers, wall_s);
    log("the capture writer no longer keeps the capture's {} indexes ({}); they are built when "
        "the run ends",
        dropped, why);
  } catch (const std::exception& e) {
    log("cannot drop the capture's indexes: {}", e.what());
  } catch (...) {
  }
}

void CaptureWriter::write_batch(db::RecordBatch& batch) noexcept {
  if (batch.empty()) return;
  const std::size_t n = batch.size();
  if (broken_) {
    discarded_ += n;
  } else {
    try {
      writer_.write(batch);
      written_ += n;
    } catch (const std::exception& e) {
      log("cannot write to the capture ({}); further records are counted as dropped", e.what());
      broken_ = true;
      discarded_ += n;
    }
  }
  batch.clear();
}

}  // namespace fuselens::collector
