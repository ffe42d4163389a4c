// call_path (analyzer/CallPath.h): the calling context of one call by (pid, correlation id), on a
// synthetic capture whose paths are known and on the H100 capture of workloads/cct_paths.
//   corr 1: main [x.cpp:5] > a [x.cpp:10] > b [x.cpp:20] > libcuda > launch      tid 100
//   corr 2: train [train.py:7] (Python) > forward [model.py:3] (Python) > libcuda  tid 101
//   corr 3: a kernel launched with no recorded context
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "TempDir.h"
#include "cct/CallPath.h"
#include "cct/CallingContext.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/Writer.h"

using namespace fuselens;
using namespace fuselens::analyzer;

namespace {

std::string data_file(const std::string& name) {
  return std::string(FUSELENS_TEST_DATA_DIR) + "/" + name;
}

void write_capture(const std::string& path, bool with_contexts) {
  db::RunInfo run;
  run.command_line = {"x"};
  auto w = db::Writer::create(path, run);
  db::RecordBatch b;
  for (std::uint32_t corr : {1u, 2u, 3u}) {
    db::KernelRecord k;
    k.pid = 9;
    k.correlation_id = corr;
    k.start_ns = 1000 * corr;
    k.end_ns = k.start_ns + 100;
    k.mangled_name = "K(float*)";
    b.kernels.push_back(k);
  }
  w.write(b);
  if (with_contexts) {
    db::CallingContextTree t;
    t.pid = 9;
    using db::FrameKind;
    t.frames = {
        {FrameKind::Native, "/bin/x", 0x10, "main", "/src/x.cpp", 5},        // 0
        {FrameKind::Native, "/bin/x", 0x20, "a()", "/src/x.cpp", 10},        // 1
        {FrameKind::Native, "/bin/x", 0x30, "b()", "/src/x.cpp", 20},        // 2
        {FrameKind::Native, "/usr/lib/libcuda.so.1", 0x99, "", "", 0},       // 3: internal
        {FrameKind::Python, "/w/train.py", 0, "train", "/w/train.py", 7},    // 4
        {FrameKind::Python, "/w/model.py", 0, "forward", "/w/model.py", 3},  // 5
        {FrameKind::Native, "/bin/x", 0x40, "", "", 0},                      // 6: no symbol
    };
    t.nodes = {{0, 0},                           // 0 root
               {0, 0}, {1, 1}, {2, 2}, {3, 3},   // 1 main, 2 a, 3 b, 4 libcuda
               {0, 4}, {5, 5}, {6, 6}, {7, 3}};  // 5 train, 6 forward, 7 no symbol, 8 libcuda
    t.contexts = {{1, 100, 4}, {2, 101, 8}};
    w.write_calling_contexts(t);
  }
  w.finalize({db::EndReason::Exited, 0, std::nullopt, 1});
}

std::vector<std::string> labels(const CallPath& p) {
  std::vector<std::string> out;
  for (const auto& f : p.frames) out.push_back(f.label);
  return out;
}

TEST(CallPath, GivesTheFramesFromTheOutermostToTheLaunchSite) {
  fuselens::test::TempDir dir;
  write_capture(dir.file("c.sqlite"), true);
  const db::Reader reader(dir.file("c.sqlite"));
  const CallPath p = call_path(reader, 9, 1);
  ASSERT_EQ(p.status, CallPath::Status::Found) << p.reason;
  EXPECT_EQ(p.tid, 100u);
  EXPECT_EQ(labels(p),
            (std::vector<std::string>{"main [x.cpp:5]", "a() [x.cpp:10]", "b() [x.cpp:20]"}));
  EXPECT_EQ(p.hidden_frames, 1u);  // libcuda
  EXPECT_EQ(p.frames[2].function, "b()");
  EXPECT_EQ(p.frames[2].module, "/bin/x");
  EXPECT_EQ(p.frames[2].file, "/src/x.cpp");
  EXPECT_EQ(p.frames[2].line, 20u);
  EXPECT_FALSE(p.frames[2].python);
}

TEST(CallPath, ShowsInternalFramesWhenAsked) {
  fuselens::test::TempDir dir;
  write_capture(dir.file("c.sqlite"), true);
  const CallPath p = call_path(db::Reader(dir.file("c.sqlite")), 9, 1, /*show_internal=*/true);
  ASSERT_EQ(p.frames.size(), 4u);
  EXPECT_EQ(p.hidden_frames, 0u);
  EXPECT_TRUE(p.frames[3].internal);
  EXPECT_EQ(p.frames[3].label, "libcuda.so.1+0x99");
}

TEST(CallPath, LabelsPythonFramesAndFramesWithoutSymbols) {
  fuselens::test::TempDir dir;
  write_capture(dir.file("c.sqlite"), true);
  const CallPath p = call_path(db::Reader(dir.file("c.sqlite")), 9, 2);
  ASSERT_EQ(p.status, CallPath::Status::Found) << p.reason;
  EXPECT_EQ(p.tid, 101u);
  EXPECT_EQ(labels(p),
            (std::vector<std::string>{"train [train.py:7]", "forward [model.py:3]", "x+0x40"}));
  EXPECT_TRUE(p.frames[0].python);
  EXPECT_TRUE(p.frames[1].python);
  EXPECT_FALSE(p.frames[2].python);
  EXPECT_TRUE(p.frames[2].function.empty());
}

TEST(CallPath, SaysWhenTheCallHasNoContextOrTheCaptureHasNone) {
  fuselens::test::TempDir dir;
  write_capture(dir.file("with.sqlite"), true);
  write_capture(dir.file("without.sqlite"), false);
  const CallPath missing = call_path(db::Reader(dir.file("with.sqlite")), 9, 3);
  EXPECT_EQ(missing.status, CallPath::Status::NotRecorded);
  EXPECT_TRUE(missing.frames.empty());
  EXPECT_NE(missing.reason.find("no calling context was recorded for this call"),
            std::string::npos);
  EXPECT_EQ(call_path(db::Reader(dir.file("with.sqlite")), 10, 1).status,
            CallPath::Status::NotRecorded);

  const CallPath none = call_path(db::Reader(dir.file("without.sqlite")), 9, 1);
  EXPECT_EQ(none.status, CallPath::Status::NoContexts);
  EXPECT_NE(none.reason.find("'context' trace group"), std::string::npos) << none.reason;

  const CallPath v1 = call_path(db::Reader(data_file("fusion_bench_schema_v1.sqlite")), 1, 1);
  EXPECT_EQ(v1.status, CallPath::Status::NoContexts);
  EXPECT_NE(v1.reason.find("schema version 1"), std::string::npos) << v1.reason;
}

// workloads/cct_paths on an H100: path_kernel launched 5 times from main > a > b (cct_paths.cu).
TEST(CallPath, CctPathsCaptureHasKnownPaths) {
  const db::Reader reader(data_file("cct_paths.sqlite"));
  auto s = reader.prepare(
      "SELECT k.pid, k.correlation_id FROM kernel k JOIN strings n ON n.id = k.short_name_id"
      " WHERE n.value = 'path_kernel' ORDER BY k.start_ns");
  int from_b = 0, kernels = 0;
  while (s.step()) {
    ++kernels;
    const CallPath p = call_path(reader, static_cast<std::uint32_t>(s.int64(0)),
                                 static_cast<std::uint32_t>(s.int64(1)));
    ASSERT_EQ(p.status, CallPath::Status::Found) << p.reason;
    std::vector<std::string> wanted = {"main", "(anonymous namespace)::a(float*)",
                                       "(anonymous namespace)::b(float*)"};
    std::size_t next = 0;
    for (const auto& f : p.frames) {
      if (next < wanted.size() && f.function == wanted[next]) ++next;
      EXPECT_FALSE(f.internal);
    }
    if (next == wanted.size()) {
      ++from_b;
      EXPECT_EQ(p.frames.back().function.rfind("__device_stub_", 0), 0u) << p.frames.back().label;
      EXPECT_GT(p.hidden_frames, 0u);  // libcudart, libcuda, libcupti, the collector
    }
  }
  EXPECT_EQ(kernels, 13);
  EXPECT_EQ(from_b, 5);
}

// The single lookup agrees with launch_paths, which loads the whole tree, for every call.
TEST(CallPath, AgreesWithLaunchPathsOnEveryCall) {
  const db::Reader reader(data_file("cct_paths.sqlite"));
  const LaunchPaths all = launch_paths(reader);
  ASSERT_FALSE(all.by_call.empty());
  for (const auto& [key, index] : all.by_call) {
    const CallPath p = call_path(reader, static_cast<std::uint32_t>(key >> 32),
                                 static_cast<std::uint32_t>(key & 0xFFFFFFFFu));
    ASSERT_EQ(p.status, CallPath::Status::Found);
    const auto& expected = all.paths[index];
    ASSERT_EQ(p.frames.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(p.frames[i].function.empty() ? p.frames[i].label : p.frames[i].function,
                expected[i].function);
    }
  }
}

}  // namespace
