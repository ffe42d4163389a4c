#include "export/ExportChromeTrace.h"

#include <gtest/gtest.h>

#include <sqlite3.h>
#include <zlib.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "Subprocess.h"
#include "TestSupport.h"
#include "export/ExportFile.h"
#include "export/ExportJsonWriter.h"
#include "fuselens/db/Writer.h"

namespace fuselens::analyzer {
namespace {

using nlohmann::json;
using test::TempDir;

std::string trace_text(const std::string& path, ChromeTraceCounts* counts = nullptr,
                       const ChromeTraceOptions& options = {}) {
  std::ostringstream out;
  const auto c = write_chrome_trace(out, db::Reader(path), options);
  if (counts) *counts = c;
  return out.str();
}

std::vector<json> events_where(const json& trace, const std::string& ph,
                               const std::string& cat = "") {
  std::vector<json> out;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == ph && (cat.empty() || e.value("cat", "") == cat)) out.push_back(e);
  }
  return out;
}

/// Every flow: its events ("s", "t"..., "f") in file order, keyed by (cat, name, id).
std::map<std::string, std::string> flow_phases(const json& trace) {
  std::map<std::string, std::string> flows;
  for (const auto& e : trace["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph != "s" && ph != "t" && ph != "f") continue;
    flows[e["cat"].get<std::string>() + "/" + e["name"].get<std::string>() + "/" +
          e["id"].dump()] += ph;
  }
  return flows;
}

class ReferenceTrace : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_reference_capture(path_);
    text_ = trace_text(path_, &counts_);
    trace_ = json::parse(text_);
  }
  TempDir dir_;
  std::string path_ = dir_.file("reference.sqlite");
  std::string text_;
  json trace_;
  ChromeTraceCounts counts_;
};

TEST_F(ReferenceTrace, IsAJsonObjectWithNanosecondDisplayAndCuptiOrigin) {
  EXPECT_EQ(trace_["schemaVersion"], 1);
  EXPECT_EQ(trace_["displayTimeUnit"], "ns");
  EXPECT_EQ(trace_["baseTimeNanoseconds"], trace_["otherData"]["origin_utc_ns"]);
  EXPECT_EQ(trace_["otherData"]["clock"], "CUPTI");
  EXPECT_EQ(trace_["otherData"]["origin_ns"], 0);  // the NVTX range "outer" starts at 0
  EXPECT_EQ(trace_["otherData"]["capture"], path_);
  ASSERT_TRUE(trace_["traceEvents"].is_array());
}

TEST_F(ReferenceTrace, EveryEventHasTheRequiredFields) {
  for (const auto& e : trace_["traceEvents"]) {
    for (const char* key : {"ph", "pid", "tid", "ts"}) EXPECT_TRUE(e.contains(key)) << e.dump();
    EXPECT_TRUE(e["pid"].is_number_integer()) << e.dump();
    EXPECT_TRUE(e["tid"].is_number_integer()) << e.dump();
    if (e["ph"] == "X") {
      ASSERT_TRUE(e.contains("dur")) << e.dump();
      EXPECT_GE(e["dur"].get<double>(), 0) << e.dump();
    }
    if (e["ph"] != "M") {
      EXPECT_TRUE(e.contains("name") && e.contains("cat")) << e.dump();
    }
  }
}

TEST_F(ReferenceTrace, CompleteEventsPerCategoryMatchTheRowCounts) {
  EXPECT_EQ(events_where(trace_, "X", "kernel").size(), 7U);
  EXPECT_EQ(events_where(trace_, "X", "gpu_memcpy").size(), 3U);
  EXPECT_EQ(events_where(trace_, "X", "gpu_memset").size(), 2U);
  EXPECT_EQ(events_where(trace_, "X", "cuda_runtime").size() +
                events_where(trace_, "X", "cuda_driver").size(),
            10U);
  EXPECT_EQ(events_where(trace_, "X", "user_annotation").size(), 6U);
  EXPECT_EQ(counts_.kernels, 7);
  EXPECT_EQ(counts_.api_calls, 10);
  EXPECT_EQ(counts_.nvtx_ranges, 6);
}

TEST_F(ReferenceTrace, TimestampsAreMicrosecondsWithThreeDecimals) {
  // gemm<64> correlation 1: start 2000 ns, 100 ns long.
  EXPECT_NE(text_.find("\"ts\":2.000,\"dur\":0.100"), std::string::npos);
  // The unterminated "inner" range (from 20000) lasts to the last timestamp (memset end 30300).
  for (const auto& e : events_where(trace_, "X", "user_annotation")) {
    if (e["args"].contains("unterminated")) {
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 20.0);
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 10.3);
    }
  }
}

TEST_F(ReferenceTrace, KernelsCarryTheirLaunchArguments) {
  const auto kernels = events_where(trace_, "X", "kernel");
  const auto it = std::find_if(kernels.begin(), kernels.end(),
                               [](const json& e) { return e["args"]["correlation"] == 7; });
  ASSERT_NE(it, kernels.end());
  const json& k = *it;
  EXPECT_EQ(k["name"], test::kGemm128);
  EXPECT_EQ(k["pid"], kGpuPidBase);
  EXPECT_EQ(k["tid"], 7);
  EXPECT_EQ(k["args"]["grid"], json::array({1, 1, 1}));
  EXPECT_EQ(k["args"]["block"], json::array({128, 1, 1}));
  for (const char* key :
       {"registers per thread", "shared memory", "static shared memory", "dynamic shared memory",
        "local memory per thread", "device", "context", "stream", "correlation"}) {
    EXPECT_TRUE(k["args"].contains(key)) << key;
  }
  EXPECT_EQ(k["args"]["stream"], 7);
  EXPECT_EQ(k["args"]["shared memory"].get<std::int64_t>(),
            k["args"]["static shared memory"].get<std::int64_t>() +
                k["args"]["dynamic shared memory"].get<std::int64_t>());
  // The quoted, <T>-templated name comes back byte for byte.
  EXPECT_TRUE(std::any_of(kernels.begin(), kernels.end(),
                          [](const json& e) { return e["name"] == test::kQuoted; }));
  for (const auto& m : events_where(trace_, "X", "gpu_memcpy")) {
    EXPECT_TRUE(m["args"].contains("bytes"));
    EXPECT_TRUE(m["args"].contains("copy_kind"));
    // The PyTorch profiler's name: "Memcpy <kind> (<source> -> <destination>)".
    EXPECT_EQ(m["name"].get<std::string>().rfind("Memcpy ", 0), 0U) << m.dump();
    EXPECT_NE(m["name"].get<std::string>().find(" -> "), std::string::npos) << m.dump();
    const double dur_ns = m["dur"].get<double>() * 1000.0;
    if (dur_ns > 0) {
      EXPECT_NEAR(m["args"]["memory bandwidth (GB/s)"].get<double>(),
                  m["args"]["bytes"].get<double>() / dur_ns, 1e-9);
    }
  }
  for (const auto& m : events_where(trace_, "X", "gpu_memset")) {
    EXPECT_EQ(m["name"].get<std::string>().rfind("Memset (", 0), 0U) << m.dump();
  }
  // API calls carry no "stream" (HTA tells host events from GPU work by it).
  for (const auto& a : events_where(trace_, "X", "cuda_runtime")) {
    EXPECT_FALSE(a["args"].contains("stream"));
    EXPECT_TRUE(a["args"].contains("correlation"));
    EXPECT_TRUE(a["args"].contains("cbid"));
  }
}

TEST_F(ReferenceTrace, HostAndGpuTracksAreNamed) {
  std::set<std::string> names;
  for (const auto& e : events_where(trace_, "M")) {
    if (e["name"] == "process_name" || e["name"] == "thread_name") {
      names.insert(e["name"].get<std::string>() + ":" + std::to_string(e["pid"].get<int64_t>()) +
                   ":" + e["args"]["name"].get<std::string>());
    }
  }
  EXPECT_TRUE(names.count("process_name:100:bench")) << json(names).dump();
  EXPECT_TRUE(names.count("process_name:" + std::to_string(kGpuPidBase) + ":GPU 0"));
  EXPECT_TRUE(names.count("thread_name:" + std::to_string(kGpuPidBase) + ":stream 7"));
}

TEST_F(ReferenceTrace, EveryFlowStartsInItsLaunchCallAndFinishesInItsKernel) {
  const auto flows = flow_phases(trace_);
  EXPECT_EQ(flows.size(), 7U);  // kernels 1-7; the copies and memsets have no correlation
  for (const auto& [id, phases] : flows) EXPECT_EQ(phases, "sf") << id;
  for (const auto& f : events_where(trace_, "f")) {
    EXPECT_EQ(f["bp"], "e");
    EXPECT_EQ(f["cat"], "ac2g");
    EXPECT_EQ(f["pid"], kGpuPidBase);
  }
  // Correlation 5 has a runtime call (tid 1, 9500-10200) and a driver call inside it: the flow
  // starts in the middle of the earlier one.
  for (const auto& s : events_where(trace_, "s")) {
    if (s["id"] != 5) continue;
    EXPECT_EQ(s["pid"], 100);
    EXPECT_EQ(s["tid"], 1);
    EXPECT_DOUBLE_EQ(s["ts"].get<double>(), 9.85);
  }
  EXPECT_EQ(counts_.flows, 7);
}

TEST_F(ReferenceTrace, DeviceMemoryIsACounterPerGpu) {
  std::map<std::int64_t, std::vector<std::int64_t>> samples;
  for (const auto& c : events_where(trace_, "C", "memory")) {
    samples[c["pid"].get<std::int64_t>()].push_back(c["args"]["bytes"].get<std::int64_t>());
  }
  EXPECT_EQ(samples[kGpuPidBase], (std::vector<std::int64_t>{1000, 1500, 500, 2500, 2000}));
  EXPECT_EQ(samples[kGpuPidBase + 1], (std::vector<std::int64_t>{10}));
}

db::KernelRecord kernel(std::uint32_t pid, std::uint32_t correlation, std::uint64_t start) {
  db::KernelRecord k;
  k.pid = pid;
  k.correlation_id = correlation;
  k.start_ns = start;
  k.end_ns = start + 100;
  k.stream_id = 3;
  k.mangled_name = "_Z1kv";
  return k;
}

db::ApiCallRecord launch(std::uint32_t pid, std::uint32_t correlation, std::uint64_t start) {
  db::ApiCallRecord a;
  a.pid = a.tid = pid;
  a.name = "cudaGraphLaunch";
  a.correlation_id = correlation;
  a.start_ns = start;
  a.end_ns = start + 50;
  return a;
}

TEST(ChromeTrace, OneCallLaunchingSeveralKernelsIsOneChainedFlow) {
  TempDir dir;
  const auto path = dir.file("graph.sqlite");
  {
    auto writer = db::Writer::create(path, {});
    db::ProcessInfo p;
    p.pid = 10;
    writer.write_process(p);
    db::RecordBatch batch;
    batch.api_calls = {launch(10, 42, 100)};
    batch.kernels = {kernel(10, 42, 400), kernel(10, 42, 200), kernel(10, 42, 300),
                     kernel(10, 0, 500)};  // no correlation: no flow
    writer.write(batch);
    writer.finalize({db::EndReason::Exited, 0, std::nullopt, 1});
  }
  const json trace = json::parse(trace_text(path));
  const auto flows = flow_phases(trace);
  ASSERT_EQ(flows.size(), 1U);
  EXPECT_EQ(flows.begin()->second, "sttf");
  // Steps follow the kernels in start order: the finish is in the last kernel (400-500).
  EXPECT_DOUBLE_EQ(events_where(trace, "f").at(0)["ts"].get<double>(), 0.35);
  EXPECT_EQ(events_where(trace, "X", "kernel").size(), 4U);
}

TEST(ChromeTrace, FlowIdsOfDifferentProcessesDoNotCollide) {
  TempDir dir;
  const auto path = dir.file("two_processes.sqlite");
  {
    auto writer = db::Writer::create(path, {});
    for (const std::uint32_t pid : {10U, 20U}) {
      db::ProcessInfo p;
      p.pid = pid;
      writer.write_process(p);
    }
    db::RecordBatch batch;
    batch.api_calls = {launch(10, 1, 100), launch(20, 1, 100)};
    batch.kernels = {kernel(10, 1, 200), kernel(20, 1, 200)};
    writer.write(batch);
    writer.finalize({db::EndReason::Exited, 0, std::nullopt, 1});
  }
  const json trace = json::parse(trace_text(path));
  const auto flows = flow_phases(trace);
  ASSERT_EQ(flows.size(), 2U);
  for (const auto& [id, phases] : flows) EXPECT_EQ(phases, "sf") << id;
  std::set<std::int64_t> gpu_pids;
  for (const auto& k : events_where(trace, "X", "kernel"))
    gpu_pids.insert(k["pid"].get<std::int64_t>());
  EXPECT_EQ(gpu_pids, (std::set<std::int64_t>{kGpuPidBase, kGpuPidBase + 1000}));
}

TEST(ChromeTrace, InvalidUtf8AndControlCharactersStillMakeValidJson) {
  TempDir dir;
  const auto path = dir.file("bytes.sqlite");
  {
    auto writer = db::Writer::create(path, {});
    db::ProcessInfo p;
    p.pid = 10;
    writer.write_process(p);
    db::RecordBatch batch;
    db::NvtxRangeRecord r;
    r.pid = r.tid = 10;
    r.text = std::string("bad \xff\xfe byte, tab\t, quote \" and \x01");
    r.start_ns = 0;
    r.end_ns = 10;
    batch.nvtx_ranges = {r};
    writer.write(batch);
    writer.finalize({db::EndReason::Exited, 0, std::nullopt, 1});
  }
  const json trace = json::parse(trace_text(path));  // throws on invalid UTF-8
  const auto ranges = events_where(trace, "X", "user_annotation");
  ASSERT_EQ(ranges.size(), 1U);
  // Capture strings are read in their printable form (db/Printable.h, issue 22): invalid bytes
  // and control characters arrive as "\xHH" text, the quote as is.
  EXPECT_EQ(ranges[0]["name"], "bad \\xff\\xfe byte, tab\\x09, quote \" and \\x01");
}

TEST_F(ReferenceTrace, OneUnrankedProcessIsRankZeroOfOneOnALineHtaFinds) {
  EXPECT_EQ(trace_["distributedInfo"], json::parse(R"({"rank": 0, "world_size": 1})"));
  // HTA reads the file line by line for "rank":\s+(\d+) (space required) before parsing it.
  std::istringstream lines(text_);
  std::string line;
  bool found = false;
  const std::regex hta_rank(R"re("rank":\s+(\d+))re");
  while (std::getline(lines, line) && !found) {
    std::smatch m;
    if (std::regex_search(line, m, hta_rank)) {
      found = true;
      EXPECT_EQ(m[1], "0");
      EXPECT_EQ(line.find("traceEvents"), std::string::npos);
    }
  }
  EXPECT_TRUE(found);
}

TEST_F(ReferenceTrace, DevicePropertiesComeFromTheDeviceTable) {
  const auto devices = db::Reader(path_).devices();
  ASSERT_FALSE(devices.empty());
  ASSERT_EQ(trace_["deviceProperties"].size(), devices.size());
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const json& d = trace_["deviceProperties"][i];
    EXPECT_EQ(d["id"], devices[i].id);
    EXPECT_EQ(d["name"], devices[i].name);
    EXPECT_EQ(d["numSms"], devices[i].sm_count);
    EXPECT_EQ(d["computeMajor"], devices[i].cc_major);
    EXPECT_EQ(d["totalGlobalMem"], devices[i].global_memory_bytes);
  }
}

TEST_F(ReferenceTrace, KernelsOnADeviceWithKnownSmsCarryBlocksAndWarpsPerSm) {
  std::map<std::int64_t, int> sms;
  for (const auto& d : db::Reader(path_).devices()) sms[d.id] = d.sm_count;
  int checked = 0;
  for (const auto& k : events_where(trace_, "X", "kernel")) {
    const auto it = sms.find(k["args"]["device"].get<std::int64_t>());
    if (it == sms.end() || it->second <= 0) {
      EXPECT_FALSE(k["args"].contains("blocks per SM")) << k.dump();
      continue;
    }
    const auto& g = k["args"]["grid"];
    const auto& b = k["args"]["block"];
    const double blocks = g[0].get<double>() * g[1].get<double>() * g[2].get<double>() / it->second;
    const double warps =
        std::ceil(b[0].get<double>() * b[1].get<double>() * b[2].get<double>() / 32.0);
    EXPECT_DOUBLE_EQ(k["args"]["blocks per SM"].get<double>(), blocks);
    EXPECT_DOUBLE_EQ(k["args"]["warps per SM"].get<double>(), blocks * warps);
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

/// Two processes of a distributed run: pid 10 is rank 0, pid 20 rank 1 (world size 2); each
/// launches one kernel with correlation id 1.
std::string write_two_ranks(const TempDir& dir) {
  const auto path = dir.file("two_ranks.sqlite");
  auto writer = db::Writer::create(path, {});
  for (const std::uint32_t pid : {10U, 20U}) {
    db::ProcessInfo p;
    p.pid = pid;
    writer.write_process(p);
    db::ProcessRank r;
    r.pid = pid;
    r.rank = pid == 10 ? 0 : 1;
    r.world_size = 2;
    r.launcher = "torch";
    writer.write_process_rank(r);
  }
  db::RecordBatch batch;
  batch.api_calls = {launch(10, 1, 100), launch(20, 1, 100)};
  batch.kernels = {kernel(10, 1, 200), kernel(20, 1, 200)};
  writer.write(batch);
  writer.finalize({db::EndReason::Exited, 0, std::nullopt, 1});
  return path;
}

TEST(ChromeTrace, OneRanksProcessesMakeThatRanksTrace) {
  TempDir dir;
  const auto path = write_two_ranks(dir);
  ChromeTraceOptions options;
  options.pids = {20};
  const json trace = json::parse(trace_text(path, nullptr, options));
  EXPECT_EQ(trace["distributedInfo"]["rank"], 1);
  EXPECT_EQ(trace["distributedInfo"]["world_size"], 2);
  EXPECT_EQ(trace["distributedInfo"]["launcher"], "torch");
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" || e["pid"].get<std::int64_t>() >= kGpuPidBase) continue;
    EXPECT_EQ(e["pid"], 20) << e.dump();
  }
  // One process: correlation ids as captured, and the flow id is the correlation.
  const auto kernels = events_where(trace, "X", "kernel");
  ASSERT_EQ(kernels.size(), 1U);
  EXPECT_EQ(kernels[0]["args"]["correlation"], 1);
  EXPECT_EQ(kernels[0]["pid"], kGpuPidBase + 1000);  // the second process's GPU track
  const auto flows = flow_phases(trace);
  ASSERT_EQ(flows.size(), 1U);
  EXPECT_EQ(flows.begin()->first, "ac2g/ac2g/1");
  EXPECT_EQ(events_where(trace, "X", "cuda_runtime").size(), 1U);
}

TEST(ChromeTrace, SeveralRanksInOneFileHaveNoRankAndDistinctCorrelations) {
  TempDir dir;
  const auto path = write_two_ranks(dir);
  const json trace = json::parse(trace_text(path));
  EXPECT_FALSE(trace.contains("distributedInfo"));
  std::set<std::int64_t> kernel_ids, call_ids;
  for (const auto& k : events_where(trace, "X", "kernel"))
    kernel_ids.insert(k["args"]["correlation"].get<std::int64_t>());
  for (const auto& a : events_where(trace, "X", "cuda_runtime"))
    call_ids.insert(a["args"]["correlation"].get<std::int64_t>());
  // Correlation 1 of process index 0 and of process index 1 (+ 2^32).
  const std::set<std::int64_t> want{1, 1 + (std::int64_t{1} << 32)};
  EXPECT_EQ(kernel_ids, want);
  EXPECT_EQ(call_ids, want);
}

std::string gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  EXPECT_NE(f, nullptr);
  std::string out;
  char buf[4096];
  int n = 0;
  while (f && (n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  if (f) gzclose(f);
  return out;
}

TEST(ExportFile, AGzPathIsWrittenCompressedAndComplete) {
  TempDir dir;
  const auto path = dir.file("out.json.gz");
  std::string text;
  for (int i = 0; text.size() < 3 * GzipStreamBuf::kChunkBytes + 17; ++i) {
    text += "{\"i\":" + std::to_string(i * 7919 % 100003) + "},\n";
  }
  {
    ExportFile file(path);
    file.stream() << text;
    file.commit();
  }
  const std::string raw = fuselens::test::slurp(path);
  ASSERT_GE(raw.size(), 2U);
  EXPECT_EQ(static_cast<unsigned char>(raw[0]), 0x1f);  // gzip magic
  EXPECT_EQ(static_cast<unsigned char>(raw[1]), 0x8b);
  EXPECT_LT(raw.size(), text.size());
  EXPECT_EQ(gunzip(path), text);
}

TEST(ExportFile, AnUncommittedGzOutputLeavesNothing) {
  TempDir dir;
  const auto path = dir.file("out.json.gz");
  {
    ExportFile file(path);
    file.stream() << std::string(100000, 'x');
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(ChromeTrace, DamagedSharedMemorySizesSaturateInsteadOfOverflowing) {
  TempDir dir;
  const auto path = dir.file("damaged.sqlite");
  test::write_reference_capture(path);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "UPDATE kernel SET static_shared_bytes = 9223372036854775807, "
                         "dynamic_shared_bytes = 4096 WHERE correlation_id = 7",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  const json trace = json::parse(trace_text(path));
  bool found = false;
  for (const auto& k : events_where(trace, "X", "kernel")) {
    if (k["args"]["correlation"] != 7) continue;
    found = true;
    EXPECT_EQ(k["args"]["shared memory"].get<std::int64_t>(),
              std::numeric_limits<std::int64_t>::max());
  }
  EXPECT_TRUE(found);
}

TEST(JsonWriter, WritesExactMicrosecondsAndEscapedStrings) {
  std::ostringstream out;
  {
    JsonWriter w(out);
    w.microseconds(0).raw(" ").microseconds(1).raw(" ").microseconds(123456789);
    w.raw(" ").microseconds(-1005).raw(" ").string("a\"b\\c\n").raw(" ").real(0.5);
    w.raw(" ").real(std::nan(""));
  }
  EXPECT_EQ(out.str(), "0.000 0.001 123456.789 -1.005 \"a\\\"b\\\\c\\n\" 0.5 null");
}

}  // namespace
}  // namespace fuselens::analyzer
