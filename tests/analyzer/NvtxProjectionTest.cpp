// NVTX ranges projected onto the GPU by process (default) or by thread (nsys nvtx_gpu_proj_sum):
// synthetic captures with the range on one thread and kernels launched on another, and the
// committed PyTorch capture whose backward kernels come from autograd's thread (issue 22).

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "TestSupport.h"
#include "compare/Compare.h"
#include "compare/CompareFormat.h"
#include "compare/CompareProjection.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/Writer.h"
#include "summary/Summary.h"
#include "summary/SummaryFormat.h"

namespace fuselens::analyzer {
namespace {

using test::TempDir;

constexpr std::uint32_t kPid = 7, kMain = 70, kAutograd = 71;

const NvtxRow& row_named(const std::vector<NvtxRow>& rows, const std::string& name) {
  for (const auto& r : rows) {
    if (r.name == name) return r;
  }
  throw std::runtime_error("no row " + name);
}

/// A range "step" [1000, 9000] on thread kMain; kernels launched inside its span on kMain and on
/// kAutograd, one launched on kAutograd after it, and a range "other" of another process.
struct TwoThreadCapture {
  db::RecordBatch batch;
  std::string path;

  explicit TwoThreadCapture(const std::string& file) : path(file) {
    db::RunInfo run;
    run.command_line = {"two-threads"};
    auto writer = db::Writer::create(path, run);
    for (const std::uint32_t pid : {kPid, kPid + 1}) {
      db::ProcessInfo process;
      process.pid = pid;
      writer.write_process(process);
    }
    // (tid, call start, kernel duration): the first three on kMain inside, two on kAutograd
    // inside, one on kAutograd after the range.
    const std::vector<std::tuple<std::uint32_t, std::uint64_t, std::uint64_t>> launches = {
        {kMain, 1000, 100},      {kMain, 2000, 200},      {kMain, 8999, 300},
        {kAutograd, 3000, 1000}, {kAutograd, 9000, 2000}, {kAutograd, 9001, 4000}};
    std::uint32_t correlation = 1;
    for (const auto& [tid, start, duration] : launches) {
      db::ApiCallRecord a;
      a.pid = kPid;
      a.tid = tid;
      a.name = "cudaLaunchKernel";
      a.start_ns = start;
      a.end_ns = start + 5;
      a.correlation_id = correlation;
      batch.api_calls.push_back(a);
      db::KernelRecord k;
      k.pid = kPid;
      k.correlation_id = correlation++;
      k.start_ns = start + 20;
      k.end_ns = k.start_ns + duration;
      k.mangled_name = tid == kMain ? "forward" : "backward";
      batch.kernels.push_back(k);
    }
    db::NvtxRangeRecord step;
    step.pid = kPid;
    step.tid = kMain;
    step.text = "step";
    step.start_ns = 1000;
    step.end_ns = 9000;
    batch.nvtx_ranges.push_back(step);
    db::NvtxRangeRecord other = step;
    other.pid = kPid + 1;
    other.text = "other";
    batch.nvtx_ranges.push_back(other);
    writer.write(batch);
    writer.finalize({});
  }

  /// Kernels (count, summed duration) whose call started in the step's span, on `only_tid` or,
  /// when 0, on any thread: counted from the rows written.
  std::pair<std::int64_t, std::int64_t> launched_in_step(std::uint32_t only_tid) const {
    const auto& r = batch.nvtx_ranges.front();
    std::int64_t count = 0, ns = 0;
    for (std::size_t i = 0; i < batch.api_calls.size(); ++i) {
      const auto& a = batch.api_calls[i];
      if ((only_tid == 0 || a.tid == only_tid) && a.pid == r.pid && a.start_ns >= r.start_ns &&
          a.start_ns <= *r.end_ns) {
        ++count;
        ns += static_cast<std::int64_t>(batch.kernels[i].end_ns - batch.kernels[i].start_ns);
      }
    }
    return {count, ns};
  }
};

TEST(NvtxProjection, ParsesAndNamesBothProjections) {
  EXPECT_EQ(parse_nvtx_projection("process"), NvtxProjection::Process);
  EXPECT_EQ(parse_nvtx_projection("thread"), NvtxProjection::Thread);
  EXPECT_FALSE(parse_nvtx_projection("Thread").has_value());
  EXPECT_FALSE(parse_nvtx_projection("").has_value());
  EXPECT_STREQ(to_string(NvtxProjection::Process), "process");
  EXPECT_STREQ(to_string(NvtxProjection::Thread), "thread");
}

TEST(NvtxProjection, ProcessCountsKernelsOtherThreadsLaunchInsideTheSpan) {
  TempDir dir;
  const TwoThreadCapture c(dir.file("two.sqlite"));
  const auto all = c.launched_in_step(0);
  const auto own = c.launched_in_step(kMain);
  ASSERT_GT(all.first, own.first);  // the capture has other-thread kernels inside the span

  const Summary process = summarize(db::Reader(c.path));
  EXPECT_EQ(process.nvtx_projection, NvtxProjection::Process);
  const NvtxRow& p = row_named(process.nvtx, "step");
  EXPECT_EQ(p.kernel_count, all.first);
  EXPECT_EQ(p.gpu_time_ns, all.second);
  EXPECT_EQ(p.other_thread_kernels, all.first - own.first);
  EXPECT_EQ(p.left_out_kernels, 0);
  EXPECT_EQ(row_named(process.nvtx, "other").kernel_count, 0);  // another process's range

  const Summary thread = summarize(db::Reader(c.path), NameKind::Demangled, NvtxProjection::Thread);
  EXPECT_EQ(thread.nvtx_projection, NvtxProjection::Thread);
  const NvtxRow& t = row_named(thread.nvtx, "step");
  EXPECT_EQ(t.kernel_count, own.first);
  EXPECT_EQ(t.gpu_time_ns, own.second);
  EXPECT_EQ(t.left_out_kernels, all.first - own.first);
  EXPECT_EQ(t.other_thread_kernels, all.first - own.first);
}

TEST(NvtxProjection, RangeStatsAndSpansFollowTheProjection) {
  TempDir dir;
  const TwoThreadCapture c(dir.file("two.sqlite"));
  const db::Reader reader(c.path);
  const auto all = c.launched_in_step(0);
  const auto own = c.launched_in_step(kMain);
  const auto find = [](const std::vector<RangeStats>& stats) {
    for (const auto& s : stats) {
      if (s.name == "step") return s;
    }
    throw std::runtime_error("no step");
  };
  const RangeStats p = find(range_stats(reader));
  EXPECT_EQ(p.projection, NvtxProjection::Process);
  EXPECT_EQ(p.gpu_ns, all.second);
  EXPECT_DOUBLE_EQ(p.kernels_per_iter, static_cast<double>(all.first));
  EXPECT_EQ(p.left_out_kernels, 0);
  const RangeStats t = find(range_stats(reader, NvtxProjection::Thread));
  EXPECT_EQ(t.gpu_ns, own.second);
  EXPECT_EQ(t.left_out_kernels, all.first - own.first);

  // Spans: the process projection reaches the last kernel launched inside the span on any thread.
  std::int64_t first = INT64_MAX, last = 0, own_last = 0;
  for (std::size_t i = 0; i < c.batch.api_calls.size(); ++i) {
    const auto& a = c.batch.api_calls[i];
    if (a.start_ns < 1000 || a.start_ns > 9000) continue;
    const auto& k = c.batch.kernels[i];
    first = std::min<std::int64_t>(first, static_cast<std::int64_t>(k.start_ns));
    last = std::max<std::int64_t>(last, static_cast<std::int64_t>(k.end_ns));
    if (a.tid == kMain)
      own_last = std::max<std::int64_t>(own_last, static_cast<std::int64_t>(k.end_ns));
  }
  const SpanProjection spans(reader);
  const auto span = spans.inside(kPid, kMain, 1000, 9000);
  ASSERT_TRUE(span.has_value());
  EXPECT_EQ(span->start_ns, first);
  EXPECT_EQ(span->end_ns, last);
  const auto thread_span =
      SpanProjection(reader, NvtxProjection::Thread).inside(kPid, kMain, 1000, 9000);
  ASSERT_TRUE(thread_span.has_value());
  EXPECT_EQ(thread_span->end_ns, own_last);
}

TEST(NvtxProjection, EveryOutputSaysTheProjectionAndWhatItLeftOut) {
  TempDir dir;
  const TwoThreadCapture c(dir.file("two.sqlite"));
  const auto left_out = c.launched_in_step(0).first - c.launched_in_step(kMain).first;
  for (const auto projection : {NvtxProjection::Process, NvtxProjection::Thread}) {
    const Summary s = summarize(db::Reader(c.path), NameKind::Demangled, projection);
    const std::string name = to_string(projection);
    std::ostringstream text, csv, json;
    write_summary(text, s, OutputFormat::Table);
    write_summary(csv, s, OutputFormat::Csv);
    write_summary(json, s, OutputFormat::Json);
    EXPECT_NE(text.str().find("NVTX Range Summary (with GPU projection: " + name + ")"),
              std::string::npos);
    EXPECT_NE(text.str().find(nvtx_projection_note(
                  projection, projection == NvtxProjection::Thread ? left_out : 0, left_out)),
              std::string::npos)
        << text.str();
    const auto rows = test::parse_csv(csv.str().substr(csv.str().find("# nvtx")));
    ASSERT_GE(rows.size(), 3U);
    const auto& header = rows[1];
    const auto column = [&](const std::string& key) {
      return static_cast<std::size_t>(std::find(header.begin(), header.end(), key) -
                                      header.begin());
    };
    ASSERT_LT(column("projection"), header.size());
    ASSERT_LT(column("left_out_kernels"), header.size());
    for (std::size_t r = 2; r < rows.size(); ++r) {
      if (rows[r].size() != header.size()) continue;
      EXPECT_EQ(rows[r][column("projection")], name);
      if (rows[r][column("name")] == "step") {
        EXPECT_EQ(rows[r][column("left_out_kernels")],
                  std::to_string(projection == NvtxProjection::Thread ? left_out : 0));
      }
    }
    const auto doc = summary_to_json(s);
    EXPECT_EQ(doc["nvtx_projection"]["projection"], name);
    EXPECT_EQ(doc["nvtx_projection"]["left_out_kernels"],
              projection == NvtxProjection::Thread ? left_out : 0);
    EXPECT_EQ(doc["nvtx_projection"]["other_thread_kernels"], left_out);

    CompareOptions options;
    options.projection = projection;
    const db::Reader a(c.path), b(c.path);
    const CompareReport report = compare_captures(a, b, options);
    std::ostringstream compare_csv;
    write_compare(compare_csv, report, OutputFormat::Csv);
    EXPECT_NE(compare_csv.str().find(",projection,left_out_kernels"), std::string::npos);
    EXPECT_NE(
        compare_csv.str().find(std::string(",") + name + "," +
                               std::to_string(projection == NvtxProjection::Thread ? left_out : 0)),
        std::string::npos)
        << compare_csv.str();
  }
}

/// Kernels launched inside the ended ProfilerStep ranges (summed over them), counted with SQL
/// from the capture's rows: the launching call is the earliest api_call of the kernel's (pid,
/// correlation id); `same_thread` keeps only calls on the range's thread.
std::int64_t sql_count(const db::Reader& reader, bool same_thread) {
  return reader.query_int(
      std::string("WITH first_call AS (SELECT pid, correlation_id, MIN(start_ns) AS start_ns "
                  "  FROM api_call GROUP BY pid, correlation_id), "
                  "launch AS (SELECT k.id, k.pid, f.start_ns, "
                  "  (SELECT a.tid FROM api_call a WHERE a.pid = f.pid "
                  "   AND a.correlation_id = f.correlation_id AND a.start_ns = f.start_ns "
                  "   ORDER BY a.id LIMIT 1) AS tid "
                  "  FROM kernel k JOIN first_call f "
                  "  ON f.pid = k.pid AND f.correlation_id = k.correlation_id) "
                  "SELECT COUNT(*) FROM nvtx_range r JOIN strings s ON s.id = r.text_id "
                  "JOIN launch l ON l.pid = r.pid AND l.start_ns BETWEEN r.start_ns AND r.end_ns "
                  "WHERE s.value LIKE 'ProfilerStep#%' AND r.end_ns IS NOT NULL") +
      (same_thread ? " AND l.tid = r.tid" : ""));
}

TEST(NvtxProjection, ProfilerStepsOfAPyTorchCaptureHoldTheirBackwardKernels) {
  const std::string path = std::string(FUSELENS_TEST_DATA_DIR) + "/train_steps.sqlite";
  const db::Reader reader(path);
  // The ProfilerStep ranges' kernels under both projections, from the rows.
  const std::int64_t process = sql_count(reader, false);
  const std::int64_t thread = sql_count(reader, true);
  ASSERT_GT(process, thread) << "backward kernels come from autograd's thread";

  std::int64_t summary_process = 0, left_out = 0, summary_thread = 0;
  for (const auto& r : summarize(reader).nvtx) {
    if (r.name.rfind("ProfilerStep#", 0) == 0) summary_process += r.kernel_count;
  }
  for (const auto& r : summarize(reader, NameKind::Demangled, NvtxProjection::Thread).nvtx) {
    if (r.name.rfind("ProfilerStep#", 0) != 0) continue;
    summary_thread += r.kernel_count;
    left_out += r.left_out_kernels;
  }
  EXPECT_EQ(summary_process, process);
  EXPECT_EQ(summary_thread, thread);
  EXPECT_EQ(left_out, process - thread);
}

}  // namespace
}  // namespace fuselens::analyzer
