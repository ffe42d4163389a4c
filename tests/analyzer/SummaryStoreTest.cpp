// The summary's stored aggregates (SummaryStore.h): stored once, they give the same summary as the
// rows, on the synthetic reference capture and on real H100 captures; they are ignored when the
// rows changed after they were stored or when a stored value is implausible; and a reader that
// deferred the large tables' timestamp check still catches a damaged kernel row when it reads it.

#include "summary/SummaryStore.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "TestSupport.h"
#include "compare/Compare.h"
#include "fuselens/db/Writer.h"
#include "summary/SummaryFormat.h"

namespace fuselens::analyzer {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

void exec(const std::string& path, const std::string& sql) { test::exec_sql(path, sql); }

/// The whole summary as JSON text, `names` kernel names, through a reader that defers the large
/// tables' timestamp check (as prof-analyze summary opens captures).
std::string summary_json(const std::string& path, NameKind names, bool* stored = nullptr) {
  const db::Reader reader(path, db::TimestampCheck::DeferLargeTables);
  const Summary s = summarize(reader, names);
  if (stored != nullptr) *stored = s.from_stored_aggregates;
  std::ostringstream out;
  write_summary(out, s, OutputFormat::Json);
  return out.str();
}

void expect_same_summary_after_store(const std::string& path) {
  bool stored = true;
  const std::string demangled = summary_json(path, NameKind::Demangled, &stored);
  EXPECT_FALSE(stored);
  const std::string short_names = summary_json(path, NameKind::Short);
  store_summary_aggregates(path);
  EXPECT_EQ(summary_json(path, NameKind::Demangled, &stored), demangled);
  EXPECT_TRUE(stored);
  EXPECT_EQ(summary_json(path, NameKind::Short, &stored), short_names);  // stored, by short name
  EXPECT_TRUE(stored);
}

TEST(SummaryStoreTest, ReferenceCaptureGivesTheSameSummaryFromStoredAggregates) {
  TempDir dir;
  const std::string path = (dir.path() / "ref.sqlite").string();
  test::write_reference_capture(path);
  expect_same_summary_after_store(path);
  const db::Reader reader(path);
  const auto a = load_summary_aggregates(reader);
  ASSERT_TRUE(a.has_value());
  EXPECT_FALSE(a->kernels_by_demangled_name.empty());
  EXPECT_FALSE(a->api_by_name.empty());
}

// Real H100 captures of schema version 3 (the store adds the version-4 tables to them).
class RealCaptureStore : public ::testing::TestWithParam<const char*> {};

TEST_P(RealCaptureStore, GivesTheSameSummaryFromStoredAggregates) {
  TempDir dir;
  const std::string path = (dir.path() / GetParam()).string();
  fs::copy_file(std::string(FUSELENS_TEST_DATA_DIR) + "/" + GetParam(), path);
  expect_same_summary_after_store(path);
  const db::Reader reader(path);
  const auto a = load_summary_aggregates(reader);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->nvtx_work.size(), static_cast<std::size_t>(reader.query_int(
                                     "SELECT COUNT(*) FROM nvtx_range WHERE end_ns IS NOT NULL")));
  std::int64_t kernels = 0;
  for (const auto& [id, stats] : a->kernels_by_demangled_name) kernels += stats.count;
  EXPECT_EQ(kernels, reader.query_int("SELECT COUNT(*) FROM kernel"));
  // The short names' statistics too (compare's default names, `summary --names short`).
  ASSERT_TRUE(a->kernels_by_short_name.has_value());
  std::int64_t short_kernels = 0;
  for (const auto& [id, stats] : *a->kernels_by_short_name) short_kernels += stats.count;
  EXPECT_EQ(short_kernels, kernels);
  // The process projection stored too (the store added every newer table to this version-3
  // capture), equal to the one computed from the rows.
  ASSERT_TRUE(a->nvtx_process.has_value());
  const auto computed = project_nvtx_ranges(reader, NvtxProjection::Process);
  ASSERT_EQ(a->nvtx_process->size(), computed.size());
  for (const auto& [id, w] : computed) {
    ASSERT_EQ(a->nvtx_process->count(id), 1u) << id;
    EXPECT_EQ(a->nvtx_process->at(id).kernels, w.kernels) << id;
    EXPECT_EQ(a->nvtx_process->at(id).gpu_ns, w.gpu_ns) << id;
  }
}

INSTANTIATE_TEST_SUITE_P(H100, RealCaptureStore,
                         ::testing::Values("cct_torch.sqlite", "fusion_bench_args.sqlite"));

TEST(SummaryStoreTest, RefusesSchemaVersionsBeforeThree) {
  TempDir dir;
  const std::string path = (dir.path() / "v2.sqlite").string();
  fs::copy_file(std::string(FUSELENS_TEST_DATA_DIR) + "/fusion_bench.sqlite", path);
  EXPECT_THROW(store_summary_aggregates(path), db::Error);
  bool stored = true;
  summary_json(path, NameKind::Demangled, &stored);
  EXPECT_FALSE(stored);
}

class StoredReference : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_reference_capture(path_);
    store_summary_aggregates(path_);
  }
  bool uses_stored() const {
    const db::Reader reader(path_);
    return load_summary_aggregates(reader).has_value();
  }
  TempDir dir_;
  std::string path_ = (dir_.path() / "ref.sqlite").string();
};

TEST_F(StoredReference, AKernelAddedAfterTheStoreIsSeen) {
  ASSERT_TRUE(uses_stored());
  const std::int64_t before = summarize(db::Reader(path_)).totals.kernel_count;
  exec(path_,
       "INSERT INTO kernel SELECT id + 1000000, pid, start_ns, end_ns, device_id, context_id,"
       " stream_id, correlation_id, grid_x, grid_y, grid_z, block_x, block_y, block_z,"
       " registers_per_thread, static_shared_bytes, dynamic_shared_bytes, local_memory_per_thread,"
       " short_name_id, demangled_name_id, mangled_name_id, graph_id, graph_node_id FROM kernel"
       " ORDER BY id LIMIT 1");
  EXPECT_FALSE(uses_stored());
  const Summary s = summarize(db::Reader(path_));
  EXPECT_FALSE(s.from_stored_aggregates);
  EXPECT_EQ(s.totals.kernel_count, before + 1);
}

TEST_F(StoredReference, AnEndedRangeAddedAfterTheStoreIsSeen) {
  exec(path_,
       "INSERT INTO nvtx_range (pid, tid, domain_id, text_id, start_ns, end_ns, depth)"
       " SELECT pid, tid, domain_id, text_id, start_ns, end_ns, depth FROM nvtx_range"
       " WHERE end_ns IS NOT NULL LIMIT 1");
  EXPECT_FALSE(uses_stored());
}

TEST_F(StoredReference, ImplausibleStoredValuesAreIgnored) {
  for (const char* damage :
       {"UPDATE summary_duration SET min_ns = -5",
        "UPDATE summary_duration SET median_ns = max_ns + 1",
        "UPDATE summary_duration SET count = count + 1",
        "UPDATE summary_duration SET stddev_ns = -1", "UPDATE summary_nvtx_work SET kernels = -1",
        "DELETE FROM summary_nvtx_work", "DELETE FROM summary_source WHERE table_name = 'api_call'",
        "UPDATE summary_source SET max_id = max_id + 1 WHERE table_name = 'kernel'"}) {
    SCOPED_TRACE(damage);
    store_summary_aggregates(path_);  // fresh, then damaged
    const std::string good = summary_json(path_, NameKind::Demangled);
    exec(path_, damage);
    EXPECT_FALSE(uses_stored());
    bool stored = true;
    EXPECT_EQ(summary_json(path_, NameKind::Demangled, &stored), good);
    EXPECT_FALSE(stored);
  }
}

TEST_F(StoredReference, DamagedShortNameStatisticsAreReadFromTheRows) {
  const std::string good = summary_json(path_, NameKind::Short);
  for (const char* damage :
       {"UPDATE summary_duration SET count = count + 1 WHERE source = 'kernel_short'",
        "UPDATE summary_duration SET min_ns = -5 WHERE source = 'kernel_short'",
        "DELETE FROM summary_duration WHERE source = 'kernel_short'"}) {
    SCOPED_TRACE(damage);
    store_summary_aggregates(path_);  // fresh, then damaged
    exec(path_, damage);
    {
      const db::Reader reader(path_);
      const auto a = load_summary_aggregates(reader);
      ASSERT_TRUE(a.has_value());  // the rest of the aggregates still answer
      EXPECT_FALSE(a->kernels_by_short_name.has_value());
    }
    EXPECT_EQ(summary_json(path_, NameKind::Short), good);
  }
}

TEST(SummaryStoreTest, CompareReadsTheStoredKernelStatisticsWithTheSameResult) {
  // compare's kernel diff (short names by default, demangled on request) from the stored
  // statistics equals the one from the rows.
  TempDir dir;
  const std::string a = (dir.path() / "a.sqlite").string();
  const std::string b = (dir.path() / "b.sqlite").string();
  fs::copy_file(std::string(FUSELENS_TEST_DATA_DIR) + "/fusion_bench_args.sqlite", a);
  fs::copy_file(std::string(FUSELENS_TEST_DATA_DIR) + "/cct_torch.sqlite", b);
  for (const NameKind names : {NameKind::Short, NameKind::Demangled}) {
    CompareOptions options;
    options.kernel_names = names;
    const auto before = compare_captures(db::Reader(a), db::Reader(b), options).kernel_diff;
    store_summary_aggregates(a);
    store_summary_aggregates(b);
    {
      const db::Reader ra(a);
      ASSERT_TRUE(load_summary_aggregates(ra).has_value());
    }
    const auto after = compare_captures(db::Reader(a), db::Reader(b), options).kernel_diff;
    ASSERT_EQ(before.size(), after.size());
    ASSERT_FALSE(before.empty());
    for (std::size_t i = 0; i < before.size(); ++i) {
      EXPECT_EQ(before[i].name, after[i].name);
      EXPECT_EQ(before[i].baseline_count, after[i].baseline_count) << before[i].name;
      EXPECT_EQ(before[i].candidate_count, after[i].candidate_count) << before[i].name;
      EXPECT_EQ(before[i].baseline_median_ns, after[i].baseline_median_ns) << before[i].name;
      EXPECT_EQ(before[i].candidate_median_ns, after[i].candidate_median_ns) << before[i].name;
      EXPECT_EQ(before[i].baseline_total_ns, after[i].baseline_total_ns) << before[i].name;
      EXPECT_EQ(before[i].change_percent, after[i].change_percent) << before[i].name;
    }
    // What compare read is the stored statistics: a plausible change to them shows.
    exec(a, std::string("UPDATE summary_duration SET median_ns = max_ns WHERE source = '") +
                (names == NameKind::Short ? "kernel_short" : "kernel") + "' AND max_ns > min_ns");
    const auto tampered = compare_captures(db::Reader(a), db::Reader(b), options).kernel_diff;
    bool moved = false;
    for (std::size_t i = 0; i < before.size() && i < tampered.size(); ++i)
      moved = moved || tampered[i].baseline_median_ns != before[i].baseline_median_ns;
    EXPECT_TRUE(moved);
    exec(a, "DELETE FROM summary_source");  // back to the rows for the next names
    exec(b, "DELETE FROM summary_source");
  }
}

TEST_F(StoredReference, TheStoredProcessProjectionIsWhatTheSummaryReads) {
  ASSERT_GT(db::Reader(path_).query_int("SELECT COUNT(*) FROM summary_nvtx_process"), 0);
  const std::string good = summary_json(path_, NameKind::Demangled);
  exec(path_, "UPDATE summary_nvtx_process SET kernels = 777777");
  bool stored = false;
  const std::string tampered = summary_json(path_, NameKind::Demangled, &stored);
  EXPECT_TRUE(stored);
  EXPECT_NE(tampered.find("777777"), std::string::npos);  // read, not computed
  EXPECT_EQ(good.find("777777"), std::string::npos);
}

TEST_F(StoredReference, AMissingOrDamagedProcessProjectionIsComputedFromTheRows) {
  const std::string good = summary_json(path_, NameKind::Demangled);
  for (const char* damage :
       {"UPDATE summary_nvtx_process SET gpu_ns = -1",
        "DELETE FROM summary_nvtx_process WHERE range_id = (SELECT MIN(range_id) FROM "
        "summary_nvtx_process)",
        "DELETE FROM summary_nvtx_process", "DROP TABLE summary_nvtx_process"}) {
    SCOPED_TRACE(damage);
    exec(path_, damage);
    {
      const db::Reader reader(path_);
      const auto a = load_summary_aggregates(reader);
      ASSERT_TRUE(a.has_value());  // the other aggregates are still used
      EXPECT_FALSE(a->nvtx_process.has_value());
    }
    bool stored = false;
    EXPECT_EQ(summary_json(path_, NameKind::Demangled, &stored), good);
    EXPECT_TRUE(stored);
    store_summary_aggregates(path_);  // fresh again; a capture without the table gets it
  }
  const db::Reader reader(path_);
  ASSERT_TRUE(reader.has_table("summary_nvtx_process"));
  const auto a = load_summary_aggregates(reader);
  ASSERT_TRUE(a.has_value());
  EXPECT_TRUE(a->nvtx_process.has_value());
}

TEST(SummaryStoreTest, DeferredTimestampCheckRunsWhenTheKernelRowsAreRead) {
  TempDir dir;
  const std::string path = (dir.path() / "bad.sqlite").string();
  test::write_reference_capture(path);
  exec(path, "UPDATE kernel SET end_ns = start_ns - 1 WHERE id = (SELECT MIN(id) FROM kernel)");
  // Opening with the check deferred succeeds; reading the kernel rows (no stored aggregates)
  // then fails with the constructor's message.
  const db::Reader deferred(path, db::TimestampCheck::DeferLargeTables);
  try {
    summarize(deferred);
    FAIL() << "the damaged kernel row was not caught";
  } catch (const db::Error& e) {
    EXPECT_NE(std::string(e.what()).find("implausible timestamp: kernel row"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(db::Reader{path}, db::Error);  // the default still checks at open
  // The store reads every row, so it refuses the damaged capture as well.
  EXPECT_THROW(store_summary_aggregates(path), db::Error);
}

}  // namespace
}  // namespace fuselens::analyzer

namespace fuselens::analyzer {
namespace {

void expect_same_work(const std::unordered_map<std::int64_t, RangeWork>& got,
                      const std::unordered_map<std::int64_t, RangeWork>& want,
                      const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (const auto& [id, w] : want) {
    ASSERT_EQ(got.count(id), 1u) << what << " range " << id;
    EXPECT_EQ(got.at(id).kernels, w.kernels) << what << " range " << id;
    EXPECT_EQ(got.at(id).gpu_ns, w.gpu_ns) << what << " range " << id;
  }
}

// The summary and the stored aggregates take both NVTX projections from one pass over the
// launches: the same work, range by range, as one pass per projection, on every committed capture
// that has ended ranges, whole and in a window (the reader restricted to the capture's middle).
TEST(SummaryStoreTest, BothProjectionsInOnePassEqualOnePassEach) {
  int compared = 0;
  for (const auto& entry : fs::directory_iterator(FUSELENS_TEST_DATA_DIR)) {
    if (entry.path().extension() != ".sqlite") continue;
    const std::string path = entry.path().string();
    db::Reader reader(path);
    if (reader.schema_version() < 4) continue;  // before the summary's aggregates
    for (const bool windowed : {false, true}) {
      if (windowed) {
        const std::int64_t first = reader.query_int("SELECT MIN(start_ns) FROM api_call");
        const std::int64_t last = reader.query_int("SELECT MAX(start_ns) FROM api_call");
        reader.restrict_to({{first + (last - first) / 4, last - (last - first) / 4}});
      }
      const NvtxWorkBoth both = project_nvtx_ranges_both(reader);
      const std::string what = path + (windowed ? " (window)" : "");
      expect_same_work(both.thread, project_nvtx_ranges(reader, NvtxProjection::Thread), what);
      expect_same_work(both.process, project_nvtx_ranges(reader, NvtxProjection::Process), what);
      if (!both.thread.empty()) ++compared;
    }
  }
  EXPECT_GE(compared, 10);  // the captures with NVTX ranges, each whole and windowed
}

}  // namespace
}  // namespace fuselens::analyzer
