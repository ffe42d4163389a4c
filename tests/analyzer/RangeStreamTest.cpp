// project_ranges (analyzer/compare/RangeStream.cpp, issue 21): the work and GPU span of each
// window in one streaming pass equal RangeProjection's and SpanProjection's on every committed
// capture's NVTX ranges (both projections) and on synthetic windows that nest, overlap, are
// empty or inverted, and whose launch calls come out of correlation order.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "TestSupport.h"
#include "compare/CompareProjection.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/TraceCursors.h"

namespace fuselens::analyzer {
namespace {

using test::FlagsCapture;
using test::TempDir;
using test::us;

void expect_work(const ProjectedWork& a, const ProjectedWork& b, const std::string& at) {
  EXPECT_EQ(a.records, b.records) << at;
  EXPECT_EQ(a.launches, b.launches) << at;
  EXPECT_EQ(a.gpu_ns, b.gpu_ns) << at;
  EXPECT_EQ(a.bytes, b.bytes) << at;
}

/// project_ranges against the in-memory projections on `windows` of `reader`; returns the number
/// of windows with work.
int expect_same_as_in_memory(const db::Reader& reader, const std::vector<ProjectionWindow>& windows,
                             NvtxProjection projection, const std::string& what) {
  const RangeProjection kernels(reader, ProjectedActivity::Kernels, projection);
  const RangeProjection copies(reader, ProjectedActivity::Memcpys, projection);
  const RangeProjection sets(reader, ProjectedActivity::Memsets, projection);
  const RangeProjection process(reader, ProjectedActivity::Kernels, NvtxProjection::Process);
  const SpanProjection spans(reader, projection);
  const auto streamed = project_ranges(reader, windows, projection);
  int with_work = 0;
  for (std::size_t i = 0; i < windows.size(); ++i) {
    const auto& w = windows[i];
    const std::string at = what + " window " + std::to_string(i);
    const ProjectedRange& p = streamed[i];
    expect_work(p.kernels, kernels.inside(w.pid, w.tid, w.start_ns, w.end_ns), at + " kernels");
    expect_work(p.copies, copies.inside(w.pid, w.tid, w.start_ns, w.end_ns), at + " copies");
    expect_work(p.memsets, sets.inside(w.pid, w.tid, w.start_ns, w.end_ns), at + " memsets");
    EXPECT_EQ(p.process_kernels, process.inside(w.pid, w.tid, w.start_ns, w.end_ns).records) << at;
    const auto span = spans.inside(w.pid, w.tid, w.start_ns, w.end_ns);
    EXPECT_EQ(p.span.has_value(), span.has_value()) << at;
    if (span && p.span) {
      EXPECT_EQ(p.span->start_ns, span->start_ns) << at;
      EXPECT_EQ(p.span->end_ns, span->end_ns) << at;
    }
    with_work += p.kernels.records + p.copies.records + p.memsets.records > 0 ? 1 : 0;
  }
  return with_work;
}

}  // namespace

TEST(RangeStream, EqualsTheInMemoryProjectionsOnTheCommittedCaptures) {
  int with_work = 0;
  for (const auto& entry : std::filesystem::directory_iterator(FUSELENS_TEST_DATA_DIR)) {
    if (entry.path().extension() != ".sqlite") continue;
    const db::Reader reader(entry.path().string());
    std::vector<ProjectionWindow> windows;
    db::ended_nvtx_ranges(reader).for_each([&](const db::NvtxRow& r) {
      windows.push_back({r.pid, r.tid, r.start_ns, *r.end_ns});
    });
    for (const auto projection : {NvtxProjection::Process, NvtxProjection::Thread}) {
      with_work +=
          expect_same_as_in_memory(reader, windows, projection, entry.path().filename().string());
    }
  }
  EXPECT_GT(with_work, 1000);  // the committed captures' ranges hold work
}

TEST(RangeStream, NestedOverlappingEmptyAndOutOfOrderWindows) {
  FlagsCapture c;
  // Launch calls at 100, 300, ..., 1900 us on the main thread, then two whose correlation ids come
  // after every other but whose calls started early (out of correlation order), one on thread 2.
  for (int i = 0; i < 10; ++i) c.kernel("k", us(200 * i + 150), us(40), us(200 * i + 100), us(5));
  c.copy(db::MemcpyKind::HostToDevice, 4096, us(1000), us(10), true, db::MemoryKind::Pinned,
         db::MemoryKind::Device);
  c.memset(db::MemoryKind::Device, us(1500), us(5), true);
  c.kernel("late", us(2500), us(40), us(350), us(5));
  c.kernel("other thread", us(2600), us(40), us(360), us(5), 2);
  TempDir dir;
  const std::string path = (dir.path() / "windows.sqlite").string();
  c.write(path);
  const db::Reader reader(path);
  const auto at = [](std::int64_t t) { return test::kFlagsT0 + t; };
  const std::int64_t pid = test::kFlagsPid, main = test::kFlagsTid;
  const std::vector<ProjectionWindow> windows{
      {pid, main, at(0), at(us(2000))},         // everything
      {pid, main, at(us(90)), at(us(500))},     // three calls and both late ones
      {pid, main, at(us(300)), at(us(300))},    // one instant: the call at 300 us
      {pid, main, at(us(250)), at(us(1200))},   // overlaps the one before it
      {pid, main, at(us(600)), at(us(550))},    // inverted: nothing
      {pid, main, at(us(1950)), at(us(3000))},  // after every call
      {pid, 2, at(us(345)), at(us(365))},       // a late call of each thread
      {pid + 1, main, at(0), at(us(2000))},     // another process: nothing
  };
  for (const auto projection : {NvtxProjection::Process, NvtxProjection::Thread}) {
    EXPECT_GT(expect_same_as_in_memory(reader, windows, projection, "synthetic"), 3);
  }
  const auto p = project_ranges(reader, windows, NvtxProjection::Process);
  EXPECT_EQ(p[0].kernels.records, 12);  // every kernel, the two out of order included
  EXPECT_EQ(p[1].kernels.records, 5);   // 100, 300, 500, and the late calls at 350 and 360
  EXPECT_EQ(p[2].kernels.records, 1);
  EXPECT_EQ(p[4].kernels.records, 0);
  EXPECT_FALSE(p[4].span.has_value());
  EXPECT_EQ(p[6].kernels.records, 2);  // Process: the window of thread 2 counts its process
  const auto t = project_ranges(reader, windows, NvtxProjection::Thread);
  EXPECT_EQ(t[1].kernels.records, 4);  // the other thread's call left out
  EXPECT_EQ(t[1].process_kernels, 5);
  EXPECT_EQ(t[6].kernels.records, 1);
}

}  // namespace fuselens::analyzer
