// The NVTX range projections stored when a run ends (analyzer/store/RangeProjectionStore.cpp,
// issue 21): compare's and the HTML heatmap's range statistics from them equal those from the rows
// on every committed capture; they are not used for a window, for the thread projection, after
// the rows changed, or when the stored body is damaged or hostile (each case computes from the
// rows instead, and never crashes).

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "TestSupport.h"
#include "compare/Compare.h"
#include "fuselens/db/AnalysisStore.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/Sqlite.h"
#include "store/AnalysisStore.h"

namespace fuselens::analyzer {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

void expect_same(const std::vector<RangeStats>& a, const std::vector<RangeStats>& b,
                 const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string at = what + " " + a[i].name;
    EXPECT_EQ(a[i].name, b[i].name) << at;
    EXPECT_EQ(a[i].instances, b[i].instances) << at;
    EXPECT_EQ(a[i].gpu_ns, b[i].gpu_ns) << at;
    EXPECT_EQ(a[i].span_ns, b[i].span_ns) << at;
    EXPECT_EQ(a[i].kernels_per_iter, b[i].kernels_per_iter) << at;
    EXPECT_EQ(a[i].launches_per_iter, b[i].launches_per_iter) << at;
    EXPECT_EQ(a[i].memcpy_bytes_per_iter, b[i].memcpy_bytes_per_iter) << at;
    EXPECT_EQ(a[i].memset_bytes_per_iter, b[i].memset_bytes_per_iter) << at;
    EXPECT_EQ(a[i].gpu_ns_per_iter_samples, b[i].gpu_ns_per_iter_samples) << at;
    EXPECT_EQ(a[i].span_ns_per_iter_samples, b[i].span_ns_per_iter_samples) << at;
  }
}

// A copy of committed capture `name` with the range projections stored (as prof-run stores them
// with its other results), in `dir`.
std::string stored_copy(const TempDir& dir, const std::string& name) {
  const std::string path = (dir.path() / name).string();
  fs::copy_file(std::string(FUSELENS_TEST_DATA_DIR) + "/" + name, path);
  db::Reader reader(db::Connection(path, db::Connection::Mode::ReadWrite));
  db::write_stored_analyses(reader.connection(), db::analysis_tables_to_add(reader),
                            db::table_fingerprints(reader), {range_projection_row(reader)});
  return path;
}

bool stored_used(const std::string& path) {
  const db::Reader reader(path);
  return stored_range_projection(reader, range_instances(reader).windows).has_value();
}

}  // namespace

TEST(RangeProjectionStore, StatisticsFromTheStoreEqualThoseFromTheRows) {
  int captures = 0;
  std::size_t ranges = 0;
  for (const auto& entry : fs::directory_iterator(FUSELENS_TEST_DATA_DIR)) {
    if (entry.path().extension() != ".sqlite") continue;
    const std::string name = entry.path().filename().string();
    std::vector<RangeStats> rows;
    {
      const db::Reader reader(entry.path().string());
      if (reader.schema_version() < 4) continue;  // no tables to store into
      rows = range_stats(reader);
    }
    TempDir dir;
    const std::string path = stored_copy(dir, name);
    ASSERT_TRUE(stored_used(path)) << name;
    const db::Reader reader(path);
    expect_same(range_stats(reader), rows, name);
    ++captures;
    for (const auto& r : rows) ranges += static_cast<std::size_t>(r.instances);
  }
  EXPECT_GE(captures, 15);
  EXPECT_GT(ranges, 1000u);
}

TEST(RangeProjectionStore, NotUsedForAWindowTheThreadProjectionOrChangedRows) {
  TempDir dir;
  const std::string path = stored_copy(dir, "train_steps.sqlite");
  ASSERT_TRUE(stored_used(path));
  {
    db::Reader windowed(path);
    windowed.restrict_to({{0, 1}});
    EXPECT_FALSE(stored_range_projection(windowed, range_instances(windowed).windows));
  }
  {
    // The thread projection is computed from the rows: equal to a capture without the store.
    const db::Reader stored(path);
    const db::Reader plain(std::string(FUSELENS_TEST_DATA_DIR) + "/train_steps.sqlite");
    expect_same(range_stats(stored, NvtxProjection::Thread),
                range_stats(plain, NvtxProjection::Thread), "thread projection");
  }
  // A kernel row gone after the store: the rows are read again.
  test::exec_sql(path, "DELETE FROM kernel WHERE id = (SELECT MAX(id) FROM kernel)");
  EXPECT_FALSE(stored_used(path));
}

TEST(RangeProjectionStore, DamagedOrHostileBodiesAreIgnored) {
  TempDir dir;
  const std::string path = stored_copy(dir, "train_steps.sqlite");
  std::vector<RangeStats> rows;
  {
    const db::Reader reader(std::string(FUSELENS_TEST_DATA_DIR) + "/train_steps.sqlite");
    rows = range_stats(reader);
  }
  const std::string original = [&] {
    const db::Reader reader(path);
    return db::read_stored_analysis(reader, kRangeProjectionAnalysis, "", 1 << 30)->body;
  }();
  const auto first_row_end = original.find(']', original.find("[[") + 2);
  ASSERT_NE(first_row_end, std::string::npos);
  const std::string head = original.substr(0, original.find("[[") + 2);
  const std::string rest = original.substr(first_row_end);
  // The first range's row replaced: a window that moved, negative work, an inverted span, sums
  // past 64 bits, a wrong width, a string, not JSON at all.
  const std::string first = original.substr(head.size(), first_row_end - head.size());
  const auto cut = [&](int field) {  // the text of fields [0, field) of the first row
    std::size_t at = 0;
    for (int i = 0; i < field; ++i) at = first.find(',', at) + 1;
    return first.substr(0, at);
  };
  const std::string bodies[] = {
      head + "1," + first.substr(first.find(',') + 1) + rest,           // another pid
      head + cut(4) + "-1," + first.substr(cut(5).size()) + rest,       // negative kernel records
      head + cut(16) + "1,100,99," + first.substr(cut(19).size()) + rest,  // span end < start
      head + cut(6) + "9223372036854775807," + first.substr(cut(7).size()) + rest +
          "",                                                             // gpu_ns at INT64_MAX
      head + cut(19) + "0,0" + rest,                                      // 21 columns
      head + cut(4) + "\"x\"," + first.substr(cut(5).size()) + rest,    // a string
      "{\"ranges\": 7}",
      "not json",
  };
  for (const std::string& body : bodies) {
    db::Connection c(path, db::Connection::Mode::ReadWrite);
    auto update = c.prepare("UPDATE stored_analysis SET body = ? WHERE analysis = ?");
    update.bind(1, std::string_view(body)).bind(2, std::string_view(kRangeProjectionAnalysis));
    update.run();
    const db::Reader reader(path);
    EXPECT_FALSE(stored_range_projection(reader, range_instances(reader).windows)) << body.substr(0, 80);
    expect_same(range_stats(reader), rows, "damaged body");
  }
}

}  // namespace fuselens::analyzer
