// CaptureWriter (collector/src/CaptureWriter.h): the SQLite CaptureSink and its writer thread,
// without a GPU: devices handed over while the program runs, the session's Epilogue run on the
// writer thread at finalize(), the synchronous rows.
#include <gtest/gtest.h>
#include <pthread.h>

#include <chrono>
#include <string>
#include <vector>

#include "ActivityBuffers.h"
#include "CaptureWriter.h"
#include "TempDir.h"
#include "fuselens/db/CaptureIndexes.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/Writer.h"

using fuselens::collector::ActivityBuffers;
using fuselens::collector::CaptureSink;
using fuselens::collector::CaptureWriter;
namespace db = fuselens::db;

namespace {

constexpr std::uint32_t kPid = 4242;

db::Writer new_capture(const std::string& path) {
  db::RunInfo run;
  run.command_line = {"workload"};
  db::Writer::create(path, run);
  return db::Writer::open(path);
}

db::DeviceInfo device(std::uint32_t id, std::string name) {
  db::DeviceInfo d;
  d.id = id;
  d.name = std::move(name);
  return d;
}

// Stores the final process row, as the collector's session does, and notes where it ran.
class ProcessRowEpilogue final : public CaptureSink::Epilogue {
 public:
  std::string thread_name;
  int runs = 0;

  void write_final(CaptureSink& sink) noexcept override {
    ++runs;
    char name[16] = {};
    ::pthread_getname_np(::pthread_self(), name, sizeof name);
    thread_name = name;
    db::ProcessInfo p;
    p.pid = kPid;
    p.records_written = sink.records_written();
    p.dropped_records = sink.records_discarded();
    p.end_utc_ns = 2;
    try {
      sink.handle_threads({{kPid, kPid, "main"}});  // a thread row needs no activity record
      sink.handle_process(p);
    } catch (...) {
      ADD_FAILURE() << "the sink threw";
    }
  }
};

}  // namespace

TEST(CaptureWriter, StoresNamedDevicesThenRunsTheEpilogueOnTheWriterThread) {
  fuselens::test::TempDir dir;
  const std::string path = dir.file("capture.fuselens");
  ActivityBuffers buffers(4096, 2);
  CaptureWriter sink(new_capture(path), buffers, kPid, 2);
  EXPECT_TRUE(sink.storing());
  db::ProcessInfo first;
  first.pid = kPid;
  sink.handle_process(first);  // before start(), as the collector writes its first row
  sink.start();
  sink.handle_device(device(0, "GPU zero"));
  sink.handle_device(device(1, ""));  // no properties: not stored
  ProcessRowEpilogue epilogue;
  EXPECT_TRUE(sink.finalize(epilogue, std::chrono::seconds(30)));
  EXPECT_EQ(epilogue.runs, 1);
  EXPECT_EQ(epilogue.thread_name, "fuselens-write");
  EXPECT_EQ(sink.records_written(), 0u);
  EXPECT_EQ(sink.records_discarded(), 0u);
  EXPECT_TRUE(sink.threads().empty());  // no API or NVTX record was converted

  db::Reader reader(path);
  const auto devices = reader.devices();
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].id, 0u);
  EXPECT_EQ(devices[0].name, "GPU zero");
  const auto processes = reader.processes();
  ASSERT_EQ(processes.size(), 1u);
  EXPECT_EQ(processes[0].pid, kPid);
  EXPECT_EQ(processes[0].end_utc_ns, std::optional<std::uint64_t>(2));  // the Epilogue's row
}

TEST(CaptureWriter, StopsItsThreadWhenDestroyedWithoutFinalize) {
  fuselens::test::TempDir dir;
  ActivityBuffers buffers(4096, 1);
  {
    CaptureWriter sink(new_capture(dir.file("capture.fuselens")), buffers, kPid, 1);
    sink.start();
    sink.handle_device(device(0, "GPU zero"));
  }  // joins: a test ends without hanging
  db::Reader reader(dir.file("capture.fuselens"));
  EXPECT_EQ(reader.devices().size(), 1u);
}

namespace {

// Hands the sink a calling context tree of two calls, as the collector's session does at exit.
class ContextsEpilogue final : public CaptureSink::Epilogue {
 public:
  void write_final(CaptureSink& sink) noexcept override {
    db::CallingContextTree tree;
    tree.pid = kPid;
    tree.frames.push_back({db::FrameKind::Native, "/bin/app", 16, "main", "", 0});
    tree.nodes = {{0, 0}, {0, 0}};
    tree.contexts = {{1, kPid, 1}, {2, kPid, 1}};
    try {
      sink.handle_calling_contexts(tree);
    } catch (...) {
      ADD_FAILURE() << "the sink threw";
    }
  }
};

}  // namespace

TEST(CaptureWriter, AggregateModeStoresTheTreeAndItsAggregatesButNoContextOfUnstoredRows) {
  fuselens::test::TempDir dir;
  const std::string path = dir.file("capture.fuselens");
  ActivityBuffers buffers(4096, 2);
  {
    CaptureWriter sink(new_capture(path), buffers, kPid, 2);
    sink.set_aggregate(true);
    sink.start();
    ContextsEpilogue epilogue;
    EXPECT_TRUE(sink.finalize(epilogue, std::chrono::seconds(30)));
  }
  db::Reader reader(path);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM aggregate_process WHERE pid = 4242"), 1);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM cct_node"), 2);
  // No window: no row was stored, so no call's context either (the aggregates hold them).
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM api_context"), 0);
}

TEST(CaptureWriter, AggregateModeWithoutContextsStoresItsAggregatesAfterTheEpilogue) {
  fuselens::test::TempDir dir;
  const std::string path = dir.file("capture.fuselens");
  ActivityBuffers buffers(4096, 2);
  {
    CaptureWriter sink(new_capture(path), buffers, kPid, 2);
    sink.set_aggregate(false);
    sink.start();
    ProcessRowEpilogue epilogue;
    EXPECT_TRUE(sink.finalize(epilogue, std::chrono::seconds(30)));
  }
  db::Reader reader(path);
  EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM aggregate_process WHERE pid = 4242"), 1);
}

// prof-run's captures keep their indexes while the collector writes (db::IndexBuild::
// WhileWriting). A writer thread that finds an eighth of the pool's buffers (at least two)
// waiting while it writes one has fallen behind: it drops them (finalize builds them) so that
// the pool does not fill on their account; one that keeps up keeps them.
TEST(CaptureWriter, DropsTheLiveIndexesWhenAnEighthOfThePoolWaits) {
  for (const int queued : {2, 3}) {
    fuselens::test::TempDir dir;
    const std::string path = dir.file("capture.fuselens");
    {
      db::Writer::create(path, db::RunInfo{}, db::TraceLayout::Full, db::IndexBuild::WhileWriting);
    }
    ActivityBuffers buffers(4096, 4);
    {
      CaptureWriter sink(db::Writer::open(path), buffers, kPid, 4);
      for (int i = 0; i < queued; ++i) {  // queued before the thread starts: all seen at once
        std::uint8_t* buffer = nullptr;
        std::size_t size = 0, max_records = 0;
        buffers.on_buffer_requested(&buffer, &size, &max_records);
        ASSERT_NE(buffer, nullptr);
        sink.handle_buffer(buffer, 0);
      }
      sink.start();
      ProcessRowEpilogue epilogue;
      EXPECT_TRUE(sink.finalize(epilogue, std::chrono::seconds(30)));
      EXPECT_EQ(sink.records_discarded(), 0u);
    }
    db::Reader reader(path);
    // Writing the first of 3, two wait: an eighth of 4 (at least two).
    EXPECT_EQ(reader.query_int("SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND "
                               "sql IS NOT NULL"),
              queued == 2 ? static_cast<std::int64_t>(db::capture_index_count()) : 0)
        << queued << " buffers queued";
  }
}

// The two judgements: busy more than half the time since the first buffer (asked once, after
// kIndexCheckBuffers buffers), or an eighth of the pool waiting (at least two buffers).
TEST(CaptureWriter, TooBusyOrBehindForTheLiveIndexes) {
  EXPECT_FALSE(CaptureWriter::too_busy(0.5, 1.0));
  EXPECT_TRUE(CaptureWriter::too_busy(0.51, 1.0));
  EXPECT_FALSE(CaptureWriter::too_busy(0.0, 0.0));
  EXPECT_FALSE(CaptureWriter::fell_behind(7, 64));
  EXPECT_TRUE(CaptureWriter::fell_behind(8, 64));
  EXPECT_FALSE(CaptureWriter::fell_behind(1, 1));
  EXPECT_TRUE(CaptureWriter::fell_behind(2, 1));
}
