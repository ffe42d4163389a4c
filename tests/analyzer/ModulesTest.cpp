// The module view (analyzer/modules), the NVTX filter of FuseLens's own ranges in the user-facing
// NVTX views, the calling-context link of module backward ranges, and `prof-analyze modules`, on
// a synthetic capture shaped like a PyTorch training step recorded by prof-run's module view:
//   main thread (tid 1):     train_step [0, 1200 us] (a user range)
//     fwd:model [0, 1000]
//       fwd:model.features [10, 400]
//         fwd:model.features.conv [20, 200]   conv_fwd    call 30,  100 us
//         (features' own)                     relu        call 250,  20 us
//       fwd:model.head [500, 900]             gemm_fwd    call 600,  50 us
//       (model's own)                         a 1 MB copy call 949,  10 us
//     (outside)                               loss        call 1100,  5 us
//   autograd thread (tid 2): bwd:model.head [2000, 2100]           gemm_bwd call 2010, 80 us
//                            bwd:model.features.conv [2200, 2400]  conv_bwd call 2210, 150 us
//                            (outside)                             reduce   call 2500, 30 us
//   a 1 MB device allocation held from 100 us to 300 us.
// Backward work: 260 us, of which 230 us in modules.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "Subprocess.h"
#include "TestSupport.h"
#include "cct/CallingContext.h"
#include "compare/Compare.h"
#include "flags/FlagsTrace.h"
#include "fuselens/db/Instrumentation.h"
#include "fuselens/db/Reader.h"
#include "modules/Modules.h"
#include "modules/ModulesFormat.h"
#include "steps/Steps.h"
#include "summary/Summary.h"

#ifndef PROF_ANALYZE_PATH
#error "PROF_ANALYZE_PATH must name the prof-analyze binary"
#endif

using namespace fuselens;
using namespace fuselens::analyzer;
using fuselens::analyzer::test::FlagsCapture;
using fuselens::analyzer::test::TempDir;
using fuselens::analyzer::test::us;
namespace support = fuselens::analyzer::test;

namespace {

constexpr std::uint32_t kMain = support::kFlagsTid, kAutograd = 2;
const std::vector<std::string> kEngine = {"start_thread", "torch::autograd::Engine::thread_main",
                                          "launch"};

FlagsCapture module_capture(bool with_modules = true) {
  FlagsCapture c;
  c.range("train_step", 0, us(1200));
  if (with_modules) {
    c.range("fuselens:module:fwd:model", 0, us(1000), kMain, 1);
    c.range("fuselens:module:fwd:model.features", us(10), us(400), kMain, 2);
    c.range("fuselens:module:fwd:model.features.conv", us(20), us(200), kMain, 3);
    c.range("fuselens:module:fwd:model.head", us(500), us(900), kMain, 2);
    c.range("fuselens:module:bwd:model.head", us(2000), us(2100), kAutograd);
    c.range("fuselens:module:bwd:model.features.conv", us(2200), us(2400), kAutograd);
  }
  const auto conv = c.kernel("conv_fwd", us(40), us(100), us(30), us(2));
  const auto relu = c.kernel("relu", us(260), us(20), us(250), us(2));
  const auto gemm = c.kernel("gemm_fwd", us(610), us(50), us(600), us(2));
  c.copy(db::MemcpyKind::HostToDevice, 1'000'000, us(950), us(10), true, db::MemoryKind::Pinned,
         db::MemoryKind::Device);
  const auto loss = c.kernel("loss", us(1110), us(5), us(1100), us(2));
  const auto gemm_bwd = c.kernel("gemm_bwd", us(2020), us(80), us(2010), us(2), kAutograd);
  const auto conv_bwd = c.kernel("conv_bwd", us(2220), us(150), us(2210), us(2), kAutograd);
  const auto reduce = c.kernel("reduce", us(2510), us(30), us(2500), us(2), kAutograd);
  c.allocation(0x1000, 1'000'000, us(100), us(300));
  c.context(conv, {"main", "train", "conv_forward"});
  c.context(relu, {"main", "train", "relu_forward"});
  c.context(gemm, {"main", "train", "head_forward"});
  c.context(loss, {"main", "train", "loss"});
  for (const std::uint32_t corr : {gemm_bwd, conv_bwd, reduce}) c.context(corr, kEngine);
  return c;
}

struct Written {
  TempDir dir;
  std::string path = dir.file("modules.sqlite");
  explicit Written(const FlagsCapture& c) { c.write(path); }
};

std::map<std::string, ModuleRow> by_path(const ModulesReport& r) {
  std::map<std::string, ModuleRow> out;
  for (const auto& row : r.rows) out.emplace(row.path, row);
  return out;
}

}  // namespace

TEST(Modules, BuildsTheTreeFromPathSegmentsHeaviestFirst) {
  Written w(module_capture());
  db::Reader reader(w.path);
  const auto report = module_report(reader);
  ASSERT_TRUE(report.available);
  std::vector<std::string> order;
  for (const auto& row : report.rows) order.push_back(row.path);
  EXPECT_EQ(order, (std::vector<std::string>{"model", "model.features", "model.features.conv",
                                             "model.head"}));
  const auto rows = by_path(report);
  EXPECT_EQ(rows.at("model.features.conv").name, "conv");
  EXPECT_EQ(rows.at("model.features.conv").depth, 2);
  EXPECT_EQ(report.rows[static_cast<std::size_t>(rows.at("model.head").parent)].path, "model");
  EXPECT_EQ(rows.at("model").calls, 1);
}

TEST(Modules, SplitsForwardAndBackwardInclusiveAndExclusive) {
  Written w(module_capture());
  db::Reader reader(w.path);
  const auto rows = by_path(module_report(reader));
  const auto& model = rows.at("model");
  EXPECT_EQ(model.forward_exclusive.gpu_ns, us(10));  // the copy
  EXPECT_EQ(model.forward_exclusive.bytes, 1'000'000);
  EXPECT_EQ(model.forward_inclusive.gpu_ns, us(100 + 20 + 50 + 10));
  EXPECT_EQ(model.forward_inclusive.launches, 4);
  EXPECT_EQ(model.backward_exclusive.gpu_ns, 0);
  EXPECT_EQ(model.backward_inclusive.gpu_ns, us(80 + 150));
  const auto& features = rows.at("model.features");
  EXPECT_EQ(features.forward_exclusive.gpu_ns, us(20));
  EXPECT_EQ(features.forward_inclusive.gpu_ns, us(120));
  EXPECT_EQ(features.backward_inclusive.gpu_ns, us(150));
  EXPECT_EQ(rows.at("model.features.conv").backward_exclusive.gpu_ns, us(150));
  EXPECT_EQ(rows.at("model.head").backward_exclusive.launches, 1);
}

TEST(Modules, ReportsTheBackwardShareAttributedAndWorkOutside) {
  Written w(module_capture());
  db::Reader reader(w.path);
  const auto report = module_report(reader);
  EXPECT_EQ(report.backward_total.gpu_ns, us(260));
  EXPECT_EQ(report.backward_outside.gpu_ns, us(30));  // reduce: engine frames, no range
  EXPECT_EQ(report.forward_outside.gpu_ns, us(5));    // loss
  EXPECT_DOUBLE_EQ(report.backward_attributed_share(), 230.0 / 260.0);
}

TEST(Modules, WorkOnAnAutogradThreadIsBackwardWithoutContexts) {
  FlagsCapture c;
  c.range("fuselens:module:fwd:net", 0, us(100));
  c.kernel("fwd", us(10), us(20), us(5), us(2));
  c.kernel("grad", us(210), us(40), us(200), us(2), kAutograd);  // outside every range
  c.thread(kAutograd, "pt_autograd_0");
  Written w(c);
  db::Reader reader(w.path);
  const auto report = module_report(reader);
  EXPECT_EQ(report.backward_total.gpu_ns, us(40));
  EXPECT_EQ(report.backward_outside.gpu_ns, us(40));
  EXPECT_EQ(report.forward_outside.gpu_ns, 0);
  EXPECT_DOUBLE_EQ(report.backward_attributed_share(), 0.0);
  ASSERT_EQ(report.rows.size(), 1u);
  EXPECT_EQ(report.rows[0].forward_inclusive.gpu_ns, us(20));
  EXPECT_EQ(report.rows[0].peak_forward_bytes, -1);  // no memory events
}

TEST(Modules, PeakMemoryWhileTheRangesAreOpen) {
  Written w(module_capture());
  db::Reader reader(w.path);
  const auto rows = by_path(module_report(reader));
  EXPECT_EQ(rows.at("model.features.conv").peak_forward_bytes, 1'000'000);  // allocated inside
  EXPECT_EQ(rows.at("model.head").peak_forward_bytes, 0);                   // released before
  EXPECT_EQ(rows.at("model").peak_forward_bytes, 1'000'000);
  EXPECT_EQ(rows.at("model.head").peak_backward_bytes, 0);
}

TEST(Modules, HonoursTheWindow) {
  Written w(module_capture());
  db::Reader reader(w.path);
  reader.restrict_to(
      {db::TimeSpan{support::kFlagsT0, support::kFlagsT0 + us(1500)}});  // the forward pass only
  const auto report = module_report(reader);
  ASSERT_TRUE(report.available);
  const auto rows = by_path(report);
  EXPECT_EQ(rows.at("model").forward_inclusive.gpu_ns, us(180));
  EXPECT_EQ(rows.at("model").backward_inclusive.gpu_ns, 0);
  EXPECT_EQ(report.backward_total.gpu_ns, 0);
  EXPECT_EQ(rows.at("model.features.conv").peak_forward_bytes, 1'000'000);
}

TEST(Modules, CaptureWithoutModuleRangesIsUnavailable) {
  Written w(module_capture(/*with_modules=*/false));
  db::Reader reader(w.path);
  EXPECT_FALSE(module_report(reader).available);
}

TEST(Modules, CsvAndJsonCarryTheStableColumns) {
  Written w(module_capture());
  db::Reader reader(w.path);
  const auto report = module_report(reader);
  std::ostringstream csv, json;
  write_modules(csv, report, OutputFormat::Csv, /*max_depth=*/1);
  const auto table = support::parse_csv(csv.str());
  ASSERT_EQ(table.size(), 4u);  // header, model, features, head (conv is deeper than 1)
  EXPECT_EQ(table[0][0], "path");
  EXPECT_EQ(table[0].back(), "peak_bwd_bytes");
  EXPECT_EQ(table[2][0], "model.features");
  EXPECT_EQ(table[2][3], "model");
  write_modules(json, report, OutputFormat::Json);
  const auto doc = nlohmann::json::parse(json.str());
  EXPECT_DOUBLE_EQ(doc["backward_attributed_share"].get<double>(), 230.0 / 260.0);
  EXPECT_EQ(doc["rows"].size(), 4u);
  EXPECT_EQ(doc["rows"][0]["bwd_incl_gpu_time_ns"].get<std::int64_t>(), us(230));
}

// --- the NVTX filter -------------------------------------------------------------------------

TEST(InstrumentationFilter, RecognisesFuseLensTextsOnly) {
  EXPECT_TRUE(db::is_fuselens_instrumentation("fuselens:module:fwd:model"));
  EXPECT_TRUE(db::is_fuselens_instrumentation("fuselens:inductor:{}"));
  EXPECT_FALSE(db::is_fuselens_instrumentation("FuseLens:x"));
  EXPECT_FALSE(db::is_fuselens_instrumentation("train_step"));
  EXPECT_FALSE(db::is_fuselens_instrumentation("fuselens"));
}

TEST(InstrumentationFilter, NvtxSummaryShowsOnlyTheUsersRanges) {
  Written w(module_capture());
  db::Reader reader(w.path);
  const auto summary = summarize(reader);
  ASSERT_EQ(summary.nvtx.size(), 1u);
  EXPECT_EQ(summary.nvtx[0].name, "train_step");
  EXPECT_EQ(summary.totals.nvtx_range_count, 1);
}

TEST(InstrumentationFilter, StepRangePatternsDoNotMatchThem) {
  Written w(module_capture());
  db::Reader reader(w.path);
  StepOptions options;
  options.range_glob = "*model*";
  EXPECT_THROW(analyze_steps(reader, options), StepError);
  options.range_glob = "*step*";
  EXPECT_EQ(analyze_steps(reader, options).steps.size(), 1u);
}

TEST(InstrumentationFilter, CompareRangesAndFlagsIgnoreThem) {
  Written w(module_capture());
  db::Reader reader(w.path);
  const auto stats = range_stats(reader);
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].name, "train_step");
  const auto trace = load_flags_trace(reader);
  ASSERT_EQ(trace.ranges.size(), 1u);
  for (const auto& call : trace.calls) {  // every main-thread launch: inside train_step
    if (call.tid == kMain && call.start_ns < support::kFlagsT0 + us(1200)) {
      EXPECT_EQ(call.range, 0);
    }
  }
}

// --- the calling-context link ----------------------------------------------------------------

TEST(ModulesCct, BackwardInsideAModuleRangeGoesUnderTheForwardLaunch) {
  Written w(module_capture());
  db::Reader reader(w.path);
  CctOptions options;
  const auto report = calling_context_report(reader, options);
  ASSERT_TRUE(report.available);
  EXPECT_EQ(report.backward_linked, 2);    // gemm_bwd, conv_bwd
  EXPECT_EQ(report.backward_unlinked, 1);  // reduce
  // conv_bwd sits below conv_forward's frame, beside the forward kernel.
  std::map<std::string, const CctRow*> by_label;
  bool found = false;
  for (const auto& row : report.rows) {
    if (row.label.find("conv_bwd") == std::string::npos) continue;
    std::string path;
    for (int a = row.parent; a > 0; a = report.rows[static_cast<std::size_t>(a)].parent)
      path = report.rows[static_cast<std::size_t>(a)].label + " / " + path;
    EXPECT_NE(path.find("conv_forward"), std::string::npos) << path;
    EXPECT_EQ(path.find("thread_main"), std::string::npos) << path;
    found = true;
  }
  EXPECT_TRUE(found);
}

TEST(ModulesCct, WithoutModuleRangesBackwardStaysUnderItsThread) {
  Written w(module_capture(/*with_modules=*/false));
  db::Reader reader(w.path);
  const auto report = calling_context_report(reader, CctOptions{});
  EXPECT_EQ(report.backward_linked, 0);
  EXPECT_EQ(report.backward_unlinked, 3);
}

// --- prof-analyze modules --------------------------------------------------------------------

TEST(ModulesCli, PrintsTheTreeAndTheShare) {
  Written w(module_capture());
  const auto r = fuselens::test::run({PROF_ANALYZE_PATH, "modules", w.path, "--window", "all"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Backward GPU time in modules: 88.5 %"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("    conv"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Window: "), std::string::npos) << r.out;
}

TEST(ModulesCli, DepthAndCsv) {
  Written w(module_capture());
  const auto r = fuselens::test::run(
      {PROF_ANALYZE_PATH, "modules", w.path, "--window", "all", "--depth", "0", "--format", "csv"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto table = support::parse_csv(r.out);
  ASSERT_GE(table.size(), 2u);
  EXPECT_EQ(table[1][0], "model");
  EXPECT_EQ(table[0].back(), "window");
}

TEST(ModulesCli, NoModuleRangesIsOneLineAndStatusOne) {
  Written w(module_capture(/*with_modules=*/false));
  const auto r = fuselens::test::run({PROF_ANALYZE_PATH, "modules", w.path, "--window", "all"});
  EXPECT_EQ(r.status, 1);
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_NE(r.err.find("no module ranges"), std::string::npos);
  EXPECT_NE(r.err.find("--torch-modules"), std::string::npos);
}

TEST(ModulesCli, UsageErrors) {
  Written w(module_capture());
  EXPECT_EQ(fuselens::test::run({PROF_ANALYZE_PATH, "modules", w.path, "--depth", "-1"}).status, 2);
  EXPECT_EQ(fuselens::test::run({PROF_ANALYZE_PATH, "modules", w.path, "--format", "xml"}).status,
            2);
  EXPECT_EQ(fuselens::test::run({PROF_ANALYZE_PATH, "modules"}).status, 2);
  EXPECT_EQ(
      fuselens::test::run({PROF_ANALYZE_PATH, "modules", w.dir.file("missing.sqlite")}).status, 1);
  // FuseLens's own ranges are no window either.
  EXPECT_EQ(fuselens::test::run(
                {PROF_ANALYZE_PATH, "modules", w.path, "--window", "range:fuselens:module*"})
                .status,
            4);
}

TEST(ModulesCli, CommittedCapturesWithoutModuleRangesSaySo) {
  // Recorded before the module view (train_steps: the PyTorch CNN) and by the first schema.
  for (const char* name : {"train_steps.sqlite", "fusion_bench_schema_v1.sqlite"}) {
    const auto r = fuselens::test::run(
        {PROF_ANALYZE_PATH, "modules", std::string(FUSELENS_TEST_DATA_DIR) + "/" + name});
    EXPECT_EQ(r.status, 1) << name << ": " << r.err;
    ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
    EXPECT_NE(r.err.find("no module ranges"), std::string::npos) << r.err;
  }
}
