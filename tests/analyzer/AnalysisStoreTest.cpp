// The stored results of cct and flags (analyzer/store/AnalysisStore.h): stored once, they give
// the same output as the rows on the committed real captures (PyTorch phases and frames, CUDA
// graphs, two ranks, torch.compile, steps) and on a synthetic one; they are ignored when the
// rows changed after they were stored, when the window differs, or when a stored value is
// damaged or hostile, and a view standing in for their table is refused with one line.

#include "store/AnalysisStore.h"

#include <gtest/gtest.h>

#include <limits>
#include <optional>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "Subprocess.h"
#include "TestSupport.h"
#include "cct/CallingContextFormat.h"
#include "compiled/Compiled.h"
#include "flags/FlagsFormat.h"
#include "fuselens/db/AnalysisStore.h"
#include "fuselens/db/Layout.h"
#include "fuselens/db/TimelineLodStore.h"
#include "fuselens/db/Writer.h"
#include "steps/Steps.h"

namespace fuselens::analyzer {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

void exec(const std::string& path, const std::string& sql) { test::exec_sql(path, sql); }

// Appends a copy of `table`'s last row (by id) under a new id.
void duplicate_last_row(const std::string& path, const std::string& table) {
  exec(path, "CREATE TEMP TABLE copied AS SELECT * FROM " + table +
                 " ORDER BY id DESC LIMIT 1; UPDATE temp.copied SET id = id + 100000000;"
                 " INSERT INTO main." +
                 table + " SELECT * FROM temp.copied;");
}

// As prof-run ends a run: the steps (when not stored yet), then cct's and flags' results.
void store_all(const std::string& path) {
  {
    db::Reader reader(db::Connection(path, db::Connection::Mode::ReadWrite));
    if (!stored_step_report(reader)) store_steps(reader);
  }
  store_analyses(path);
}

std::vector<CctOptions> cct_cases() {
  std::vector<CctOptions> cases;
  for (const CctView view : {CctView::TopDown, CctView::BottomUp, CctView::Flat}) {
    for (const CctMetric metric : {CctMetric::GpuTime, CctMetric::Launches}) {
      CctOptions o;
      o.view = view;
      o.metric = metric;
      cases.push_back(o);
    }
  }
  CctOptions split;
  split.split_phase = true;
  split.frames = FramesMode::All;
  cases.push_back(split);
  CctOptions backward;
  backward.phase = CctPhase::Backward;
  backward.show_internal = true;
  backward.metric = CctMetric::Bytes;
  cases.push_back(backward);
  CctOptions user;
  user.view = CctView::BottomUp;
  user.frames = FramesMode::User;
  user.phase = CctPhase::Forward;
  cases.push_back(user);
  return cases;
}

std::string cct_json(const CctReport& report) {
  std::ostringstream out;
  write_cct(out, report, OutputFormat::Json, CctDisplay{});
  return out.str();
}

std::string flags_text(const FlagsReport& report) {
  std::ostringstream out;
  write_flags(out, report, OutputFormat::Json);
  write_flags(out, report, OutputFormat::Table);
  write_flags(out, report, OutputFormat::Csv);
  return out.str();
}

// The outputs from the rows, as the commands compute them: the default window applied.
struct RowOutputs {
  std::vector<std::string> cct;  // one per cct_cases(); empty without calling contexts
  std::string flags;
};

RowOutputs row_outputs(const std::string& path) {
  db::Reader reader(path);
  RowOutputs out;
  const auto sources = compiled_kernel_sources(reader);
  const Window window = resolve_window(reader, parse_window(kStoredWindowSpec));
  apply_window(reader, window);
  if (!cct::calling_contexts_missing(reader)) {
    for (CctOptions o : cct_cases()) {
      o.kernel_sources = sources;
      out.cct.push_back(cct_json(calling_context_report(reader, o)));
    }
  }
  out.flags = flags_text(run_flags(reader, FlagsConfig(), NameKind::Short, &window));
  return out;
}

RowOutputs stored_outputs(const std::string& path) {
  const db::Reader reader(path, db::TimestampCheck::DeferLargeTables);
  RowOutputs out;
  const auto sources = compiled_kernel_sources(reader);
  const auto window = stored_results_window(reader, parse_window(kStoredWindowSpec), {});
  if (!window) {
    ADD_FAILURE() << "no stored results window";
    return out;
  }
  if (!cct::calling_contexts_missing(reader)) {
    const auto groups = load_stored_cct(reader, *window);
    EXPECT_TRUE(groups.has_value());
    for (CctOptions o : cct_cases()) {
      o.kernel_sources = sources;
      if (groups) out.cct.push_back(cct_json(cct::report_from_groups(reader, *groups, o)));
    }
  }
  const auto flags = load_stored_flags(reader, *window);
  EXPECT_TRUE(flags.has_value());
  if (flags) out.flags = flags_text(*flags);
  return out;
}

void expect_same_outputs_after_store(const std::string& path) {
  store_all(path);
  const RowOutputs rows = row_outputs(path);
  const RowOutputs stored = stored_outputs(path);
  ASSERT_EQ(stored.cct.size(), rows.cct.size());
  for (std::size_t i = 0; i < rows.cct.size(); ++i) EXPECT_EQ(stored.cct[i], rows.cct[i]) << i;
  EXPECT_EQ(stored.flags, rows.flags);
  EXPECT_FALSE(rows.flags.empty());
}

// Real captures of schema versions 6 to 9 (steps stored when they were written).
class RealCaptureAnalysisStore : public ::testing::TestWithParam<const char*> {};

TEST_P(RealCaptureAnalysisStore, GivesTheSameCctAndFlagsFromStoredResults) {
  TempDir dir;
  const std::string path = (dir.path() / GetParam()).string();
  fs::copy_file(std::string(FUSELENS_TEST_DATA_DIR) + "/" + GetParam(), path);
  expect_same_outputs_after_store(path);
}

INSTANTIATE_TEST_SUITE_P(Captures, RealCaptureAnalysisStore,
                         ::testing::Values("cnn_eager_frames.sqlite", "cnn_compiled.sqlite",
                                           "graph_replay.sqlite", "ddp_2rank.sqlite",
                                           "train_steps.sqlite", "step_loop.sqlite",
                                           "no_repetition.sqlite"));

// The HTML report (prof-analyze export --format html) takes the stored cct and flags of its
// window: the same report as the one computed from the rows of a copy without them.
TEST_P(RealCaptureAnalysisStore, GivesTheSameHtmlReportFromStoredResults) {
  TempDir stored_dir, rows_dir;
  const std::string stored = (stored_dir.path() / GetParam()).string();
  const std::string rows = (rows_dir.path() / GetParam()).string();
  fs::copy_file(std::string(FUSELENS_TEST_DATA_DIR) + "/" + GetParam(), stored);
  store_all(stored);
  fs::copy_file(stored, rows);
  exec(rows, "DELETE FROM stored_analysis WHERE analysis IN ('cct', 'flags')");
  for (const std::string& path : {stored, rows}) {
    const auto r = fuselens::test::run_cli(
        stored_dir, {"export", path, "--format", "html", "-o", path + ".html"});
    ASSERT_EQ(r.status, 0) << r.err;
  }
  std::string from_rows = fuselens::test::slurp(rows + ".html");
  for (std::size_t at = 0;
       (at = from_rows.find(rows_dir.path().string(), at)) != std::string::npos;)
    from_rows.replace(at, rows_dir.path().string().size(), stored_dir.path().string());
  EXPECT_EQ(fuselens::test::slurp(stored + ".html"), from_rows);
}

TEST(AnalysisStoreTest, TheHtmlReportReadsTheStoredFlags) {
  TempDir dir;
  const std::string path = (dir.path() / "ref.sqlite").string();
  test::write_reference_capture(path);
  store_all(path);
  // Advice no analysis writes: only a report that read the stored flags shows it.
  exec(path,
       "UPDATE stored_analysis SET body = replace(body, '\"advice\":\"', '\"advice\":\"Stored: ') "
       "WHERE analysis = 'flags'");
  const auto r =
      fuselens::test::run_cli(dir, {"export", path, "--format", "html", "-o", path + ".html"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(fuselens::test::slurp(path + ".html").find("Stored: "), std::string::npos);
}

TEST(AnalysisStoreTest, ReferenceCaptureGivesTheSameCctAndFlags) {
  TempDir dir;
  const std::string path = (dir.path() / "ref.sqlite").string();
  test::write_reference_capture(path);
  expect_same_outputs_after_store(path);
}

// A stored copy of a real capture with steps, contexts and every rule's inputs.
class StoredCapture : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::copy_file(std::string(FUSELENS_TEST_DATA_DIR) + "/train_steps.sqlite", path_);
    store_all(path_);
  }
  // {cct stored and fresh, flags stored and fresh}
  std::pair<bool, bool> used() const {
    const db::Reader reader(path_, db::TimestampCheck::DeferLargeTables);
    const auto window = stored_results_window(reader, parse_window(kStoredWindowSpec), {});
    if (!window) return {false, false};
    return {load_stored_cct(reader, *window).has_value(),
            load_stored_flags(reader, *window).has_value()};
  }
  // Replaces stored_analysis by a table without types or keys holding the same rows.
  void untyped_table() const {
    exec(path_,
         "ALTER TABLE stored_analysis RENAME TO old_results;"
         "CREATE TABLE stored_analysis (analysis, window_spec, window_key, body);"
         "INSERT INTO stored_analysis SELECT * FROM old_results; DROP TABLE old_results;");
  }
  void set_body(const std::string& analysis, const std::string& sql_value) const {
    exec(path_,
         "UPDATE stored_analysis SET body = " + sql_value + " WHERE analysis = '" + analysis + "'");
  }
  TempDir dir_;
  std::string path_ = (dir_.path() / "train_steps.sqlite").string();
};

TEST_F(StoredCapture, IsUsedWhenFresh) { EXPECT_EQ(used(), std::make_pair(true, true)); }

TEST_F(StoredCapture, AKernelAddedAfterTheStoreIsSeen) {
  exec(path_,
       "INSERT INTO kernel SELECT id + 1000000, pid, start_ns, end_ns, device_id, context_id, "
       "stream_id, correlation_id, short_name_id, demangled_name_id, mangled_name_id, grid_x, "
       "grid_y, grid_z, block_x, block_y, block_z, registers_per_thread, static_shared_bytes, "
       "dynamic_shared_bytes, local_memory_per_thread, graph_id, graph_node_id FROM kernel "
       "ORDER BY id DESC LIMIT 1");
  EXPECT_EQ(used(), std::make_pair(false, false));
}

TEST_F(StoredCapture, ALaunchContextAddedAfterTheStoreIsSeen) {
  // api_context is WITHOUT ROWID: its fingerprint is its row count.
  exec(path_,
       "INSERT INTO api_context (pid, correlation_id, tid, cct_node_id) SELECT pid, "
       "correlation_id + 100000000, tid, cct_node_id FROM api_context LIMIT 1");
  EXPECT_EQ(used(), std::make_pair(false, false));
}

TEST_F(StoredCapture, AnotherWindowKeyIsNotUsed) {
  exec(path_, "UPDATE stored_analysis SET window_key = replace(window_key, 'steady', 'Steady')");
  EXPECT_EQ(used(), std::make_pair(false, false));
}

TEST_F(StoredCapture, DamagedFingerprintsAreNotUsed) {
  exec(path_,
       "UPDATE stored_analysis_source SET fingerprint = fingerprint + 1 WHERE table_name = 'step'");
  EXPECT_EQ(used(), std::make_pair(false, false));
}

TEST_F(StoredCapture, NullsAndWrongTypesAreNotUsed) {
  untyped_table();
  ASSERT_EQ(used(), std::make_pair(true, true));  // the same rows in an untyped table still read
  set_body("cct", "NULL");
  set_body("flags", "42");
  EXPECT_EQ(used(), std::make_pair(false, false));
}

TEST_F(StoredCapture, AFingerprintOfTheWrongTypeIsNotUsed) {
  exec(path_,
       "ALTER TABLE stored_analysis_source RENAME TO old_sources;"
       "CREATE TABLE stored_analysis_source (table_name, fingerprint);"
       "INSERT INTO stored_analysis_source SELECT table_name, CAST(fingerprint AS TEXT) FROM "
       "old_sources; DROP TABLE old_sources;");
  EXPECT_EQ(used(), std::make_pair(false, false));
}

TEST_F(StoredCapture, TwoRowsForOneResultAreNotUsed) {
  untyped_table();
  exec(path_, "INSERT INTO stored_analysis SELECT * FROM stored_analysis");
  EXPECT_EQ(used(), std::make_pair(false, false));
}

TEST_F(StoredCapture, ImplausibleCctGroupsAreNotUsed) {
  const std::pair<const char*, const char*> edits[] = {
      {"launches", "json_set(body, '$[0].launches', 0)"},
      {"negative time", "json_set(body, '$[0].gpu_time_ns', -5)"},
      {"unknown node", "json_set(body, '$[0].node', 987654321)"},
      {"phase", "json_set(body, '$[0].phase', 7)"},
      {"overflow",
       "json_set(json_set(body, '$[0].gpu_time_ns', 9223372036854775807), "
       "'$[1].gpu_time_ns', 9223372036854775807)"},
      {"huge", "json_set(body, '$[0].bytes', 1e300)"},
      {"control text", "json_set(body, '$[0].label', char(27) || '[31mred')"},
      {"not json", "'[{\"label\": '"},
      {"object", "'{}'"},
      {"deep", "printf('%.*c', 100000, '[') || printf('%.*c', 100000, ']')"},
  };
  for (const auto& [what, value] : edits) {
    exec(path_, "SAVEPOINT edit");
    exec(path_,
         "DROP TABLE IF EXISTS kept; CREATE TABLE kept AS SELECT body FROM stored_analysis "
         "WHERE analysis = 'cct'");
    set_body("cct", value);
    EXPECT_FALSE(used().first) << what;
    EXPECT_TRUE(used().second) << what;
    exec(path_,
         "UPDATE stored_analysis SET body = (SELECT body FROM kept) WHERE analysis = 'cct';"
         "DROP TABLE kept");
    ASSERT_TRUE(used().first) << what;
  }
}

TEST_F(StoredCapture, ImplausibleFlagsReportsAreNotUsed) {
  const std::pair<const char*, const char*> edits[] = {
      {"unknown rule", "json_set(body, '$.hits[0].rule', 'no_such_rule')"},
      {"negative count", "json_set(body, '$.hits[0].count', -1)"},
      {"null metric", "json_set(body, '$.hits[0].metrics[0][1]', json('null'))"},
      {"thresholds", "json_set(body, '$.thresholds[0][1]', 123456)"},
      {"rules", "json_remove(body, '$.rules_run[0]')"},
      {"window steps", "json_set(body, '$.window.steps', 99999)"},
      {"window label", "json_set(body, '$.window.label', 'elsewhere')"},
      {"stream id", "json_set(body, '$.hits[0].stream_id', 4294967296)"},
      {"verdict", "json_remove(body, '$.verdict.kind')"},
  };
  for (const auto& [what, value] : edits) {
    exec(path_,
         "DROP TABLE IF EXISTS kept; CREATE TABLE kept AS SELECT body FROM stored_analysis "
         "WHERE analysis = 'flags'");
    set_body("flags", value);
    EXPECT_TRUE(used().first) << what;
    EXPECT_FALSE(used().second) << what;
    exec(path_,
         "UPDATE stored_analysis SET body = (SELECT body FROM kept) WHERE analysis = "
         "'flags'; DROP TABLE kept");
    ASSERT_TRUE(used().second) << what;
  }
}

TEST_F(StoredCapture, AViewStandingInForTheTableIsRefusedWithOneLine) {
  exec(path_,
       "DROP TABLE stored_analysis; CREATE VIEW stored_analysis AS SELECT 'cct' AS analysis, "
       "'steady' AS window_spec, '' AS window_key, '[]' AS body");
  try {
    const db::Reader reader(path_, db::TimestampCheck::DeferLargeTables);
    FAIL() << "a view was accepted";
  } catch (const db::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("holds a view 'stored_analysis'"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
}

TEST_F(StoredCapture, OtherWindowsAndOptionsReadTheRows) {
  const db::Reader reader(path_, db::TimestampCheck::DeferLargeTables);
  EXPECT_FALSE(stored_results_window(reader, parse_window("all"), {}).has_value());
  StepOptions automatic;
  automatic.automatic = true;
  EXPECT_FALSE(stored_results_window(reader, parse_window("steady"), automatic).has_value());
  FlagsConfig changed;
  changed.set("launch_delay.cutoff_us=10");
  EXPECT_FALSE(stored_flags_config(changed, NameKind::Short, FramesMode::Auto));
  FlagsConfig some;
  some.select_rules({"launch_short"});
  EXPECT_FALSE(stored_flags_config(some, NameKind::Short, FramesMode::Auto));
  EXPECT_FALSE(stored_flags_config(FlagsConfig(), NameKind::Demangled, FramesMode::Auto));
  EXPECT_TRUE(stored_flags_config(FlagsConfig(), NameKind::Short, FramesMode::Auto));
}

// A lean capture (Layout.h): the stored results give the same outputs, and since its kernel and
// api_call are views, a kernel added to kernel_lean after the store must still be seen.
TEST(AnalysisStoreTest, LeanCaptureGivesTheSameCctAndFlags) {
  TempDir dir;
  const std::string full = (dir.path() / "ref.sqlite").string();
  const std::string lean = (dir.path() / "ref_lean.sqlite").string();
  test::write_reference_capture(full);
  db::convert_to_lean(full, lean);
  expect_same_outputs_after_store(lean);
}

TEST(AnalysisStoreTest, AKernelAddedToALeanCaptureAfterTheStoreIsSeen) {
  TempDir dir;
  const std::string full = (dir.path() / "train_steps.sqlite").string();
  const std::string lean = (dir.path() / "train_steps_lean.sqlite").string();
  fs::copy_file(std::string(FUSELENS_TEST_DATA_DIR) + "/train_steps.sqlite", full);
  db::convert_to_lean(full, lean);
  store_all(lean);
  const auto used = [&] {
    const db::Reader reader(lean, db::TimestampCheck::DeferLargeTables);
    EXPECT_TRUE(reader.lean());
    const auto window = stored_results_window(reader, parse_window(kStoredWindowSpec), {});
    if (!window) return std::make_pair(false, false);
    return std::make_pair(load_stored_cct(reader, *window).has_value(),
                          load_stored_flags(reader, *window).has_value());
  };
  ASSERT_EQ(used(), std::make_pair(true, true));
  exec(lean,
       "INSERT INTO kernel_lean SELECT id + 1000000, config_id, correlation_delta - 1000000, "
       "start_ns, duration_ns, graph_id, graph_node_id FROM kernel_lean ORDER BY id DESC LIMIT 1");
  EXPECT_EQ(used(), std::make_pair(false, false));
}

// The capture's extent (db::stored_capture_extent): stored with the results, read instead of the
// four-table scan while fresh, and the rows read again once it is stale, damaged or absent.
class StoredExtent : public StoredCapture {
 protected:
  std::pair<std::int64_t, std::int64_t> extent() const {
    const db::Reader reader(path_, db::TimestampCheck::DeferLargeTables);
    return capture_extent(reader);
  }
  std::pair<std::int64_t, std::int64_t> from_rows() const {
    const std::string copy = (dir_.path() / "rows.sqlite").string();
    fs::remove(copy);
    fs::copy_file(path_, copy);
    exec(copy, "DELETE FROM stored_analysis WHERE analysis = 'extent'");
    const db::Reader reader(copy, db::TimestampCheck::DeferLargeTables);
    return capture_extent(reader);
  }
};

TEST_F(StoredExtent, IsStoredAndReadInsteadOfTheRows) {
  const auto rows = from_rows();
  EXPECT_GT(rows.second, rows.first);
  EXPECT_EQ(extent(), rows);
  set_body("extent", "'1 2'");  // a fresh stored value is what is read
  EXPECT_EQ(extent(), std::make_pair(std::int64_t{1}, std::int64_t{2}));
}

TEST_F(StoredExtent, StaleOrDamagedValuesAreNotUsed) {
  const auto rows = from_rows();
  for (const char* body : {"'2 1'", "'-1 5'", "'x'", "'1 2 3'", "' 1 2'", "'1  2'", "'1'", "''",
                           "'1 4611686018427387905'", "'1 99999999999999999999'", "NULL", "7"}) {
    untyped_table();
    set_body("extent", body);
    EXPECT_EQ(extent(), rows) << body;
  }
  set_body("extent", "'1 2'");
  exec(path_, "UPDATE stored_analysis SET window_key = 'x' WHERE analysis = 'extent'");
  EXPECT_EQ(extent(), rows);
  exec(path_, "UPDATE stored_analysis SET window_key = '' WHERE analysis = 'extent'");
  ASSERT_EQ(extent(), std::make_pair(std::int64_t{1}, std::int64_t{2}));
  duplicate_last_row(path_, "memcpy");
  EXPECT_EQ(extent(), rows);  // a row added after the store: the rows are read again
}

TEST_F(StoredExtent, StaysFreshWhileTheTablesItIsReadFromDo) {
  // prof-run stores the steps after the extent, and the results it computes then resolve their
  // windows from it: rows added to tables the extent is not read from leave it in use, a row
  // added to any table it is read from (both layouts) does not.
  set_body("extent", "'1 2'");
  const std::pair<std::int64_t, std::int64_t> stored{1, 2};
  duplicate_last_row(path_, "step");
  exec(path_,
       "INSERT INTO api_context (pid, correlation_id, tid, cct_node_id) SELECT pid, "
       "correlation_id + 100000000, tid, cct_node_id FROM api_context LIMIT 1");
  {
    const db::Reader reader(path_, db::TimestampCheck::DeferLargeTables);
    ASSERT_EQ(reader.query_int("SELECT COUNT(*) FROM step WHERE id > 100000000"), 1);
    EXPECT_FALSE(db::stored_analyses_fresh(reader));  // the other results are stale
  }
  EXPECT_EQ(extent(), stored);
  const std::string original = (dir_.path() / "original.sqlite").string();
  fs::copy_file(path_, original);
  for (const char* table : {"kernel", "memcpy", "api_call"}) {
    fs::copy_file(original, path_, fs::copy_options::overwrite_existing);
    duplicate_last_row(path_, table);
    EXPECT_NE(extent(), stored) << table;
  }
  const std::string lean = (dir_.path() / "lean.sqlite").string();
  fs::copy_file(std::string(FUSELENS_TEST_DATA_DIR) + "/train_steps.sqlite", original,
                fs::copy_options::overwrite_existing);
  db::convert_to_lean(original, lean);
  store_all(lean);
  exec(lean, "UPDATE stored_analysis SET body = '1 2' WHERE analysis = 'extent'");
  const auto lean_extent = [&] {
    const db::Reader reader(lean, db::TimestampCheck::DeferLargeTables);
    return capture_extent(reader);
  };
  ASSERT_EQ(lean_extent(), stored);
  exec(lean,
       "INSERT INTO kernel_lean SELECT id + 1000000, config_id, correlation_delta - 1000000, "
       "start_ns, duration_ns, graph_id, graph_node_id FROM kernel_lean ORDER BY id DESC LIMIT 1");
  EXPECT_NE(lean_extent(), stored);
}

TEST(AnalysisStoreTest, TheTimelinesSpanTakesTheStoredExtentForTheLargeTables) {
  // The level of detail's span (db::timeline_time_span): the same from the stored extent as from
  // the rows, in both layouts, and the stored extent is what it reads for the four large tables.
  TempDir dir;
  const std::string full = (dir.path() / "train_steps.sqlite").string();
  const std::string lean = (dir.path() / "train_steps_lean.sqlite").string();
  fs::copy_file(std::string(FUSELENS_TEST_DATA_DIR) + "/train_steps.sqlite", full);
  db::convert_to_lean(full, lean);
  for (const std::string& path : {full, lean}) {
    const auto span = [&] {
      const db::Reader reader(path, db::TimestampCheck::DeferLargeTables);
      return db::timeline_time_span(reader);
    };
    const auto rows = span();
    EXPECT_LT(rows.first, rows.second) << path;
    store_all(path);
    EXPECT_EQ(span(), rows) << path;
    exec(path, "UPDATE stored_analysis SET body = '1 2' WHERE analysis = 'extent'");
    EXPECT_EQ(span().first, 1) << path;
    exec(path, "UPDATE stored_analysis SET body = '0 0' WHERE analysis = 'extent'");
    EXPECT_EQ(span(), rows) << path;  // "0 0": the rows are read
  }
}

TEST(AnalysisStoreTest, TheExtentAloneIsStoredForALargeRun) {
  TempDir dir;
  const std::string path = (dir.path() / "train_steps.sqlite").string();
  fs::copy_file(std::string(FUSELENS_TEST_DATA_DIR) + "/train_steps.sqlite", path);
  std::pair<std::int64_t, std::int64_t> rows;
  {
    const db::Reader reader(path, db::TimestampCheck::DeferLargeTables);
    rows = capture_extent(reader);
  }
  {
    db::Reader reader(db::Connection(path, db::Connection::Mode::ReadWrite),
                      db::TimestampCheck::DeferLargeTables);
    store_extent(reader);
  }
  const db::Reader reader(path, db::TimestampCheck::DeferLargeTables);
  const auto stored = db::stored_capture_extent(reader);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(*stored, rows);
  EXPECT_FALSE(db::read_stored_analysis(reader, "cct", kStoredWindowSpec, 1 << 20).has_value());
  EXPECT_FALSE(db::read_stored_analysis(reader, "flags", kStoredWindowSpec, 1 << 20).has_value());
}

TEST(AnalysisStoreTest, ALargeRunKeepsCctWhenItsGroupsStream) {
  // Above kMaxStoredAnalysisRecords prof-run stores what bounded memory computes: the extent and
  // cct when no link between launches needs them all (train_steps: PyTorch with Python frames,
  // phases from the frames), not flags; a capture whose phases link launches leaves cct to the
  // rows too (cnn_eager_frames: autograd sequence numbers).
  for (const auto& [name, streams] : {std::pair<const char*, bool>{"train_steps.sqlite", true},
                                      {"step_loop.sqlite", true},
                                      {"cnn_eager_frames.sqlite", false}}) {
    TempDir dir;
    const std::string path = (dir.path() / name).string();
    fs::copy_file(std::string(FUSELENS_TEST_DATA_DIR) + "/" + name, path);
    {
      db::Reader reader(db::Connection(path, db::Connection::Mode::ReadWrite),
                        db::TimestampCheck::DeferLargeTables);
      if (!stored_step_report(reader)) store_steps(reader);
      EXPECT_EQ(store_bounded_analyses(reader), streams) << name;
    }
    const db::Reader reader(path, db::TimestampCheck::DeferLargeTables);
    EXPECT_TRUE(db::stored_capture_extent(reader).has_value()) << name;
    EXPECT_FALSE(db::read_stored_analysis(reader, "flags", kStoredWindowSpec, 1 << 20)) << name;
    const auto window = stored_results_window(reader, parse_window(kStoredWindowSpec), {});
    ASSERT_TRUE(window.has_value()) << name;
    const auto stored = load_stored_cct(reader, *window);
    ASSERT_EQ(stored.has_value(), streams) << name;
    if (!streams) continue;
    // The same report as from the rows, in every view.
    db::Reader rows(path, db::TimestampCheck::DeferLargeTables);
    apply_window(rows, *window);
    for (const CctOptions& o : cct_cases()) {
      std::ostringstream a, b;
      write_cct(a, cct::report_from_groups(reader, *stored, o), OutputFormat::Json, CctDisplay{});
      write_cct(b, calling_context_report(rows, o), OutputFormat::Json, CctDisplay{});
      EXPECT_EQ(a.str(), b.str()) << name;
    }
  }
}

TEST(AnalysisStoreTest, CapturesBeforeVersionFourAreRefused) {
  TempDir dir;
  const std::string path = (dir.path() / "v2.sqlite").string();
  fs::copy_file(std::string(FUSELENS_TEST_DATA_DIR) + "/fusion_bench.sqlite", path);
  EXPECT_THROW(store_analyses(path), db::Error);
}

// prof-run stores flags up to kMaxStoredAnalysisRecords GPU records at any memory; above it when
// kFlagsBytesPerRecord a record fit in half the available memory; never when that is unknown.
TEST(AnalysisStoreTest, FlagsAreStoredAboveTheRecordBoundWhenHalfTheMemoryHoldsThem) {
  const std::int64_t bound = kMaxStoredAnalysisRecords;
  EXPECT_TRUE(flags_fit(bound, std::nullopt));
  EXPECT_TRUE(flags_fit(bound, 0));
  EXPECT_FALSE(flags_fit(bound + 1, std::nullopt));
  EXPECT_FALSE(flags_fit(bound + 1, 0));
  EXPECT_FALSE(flags_fit(bound + 1, -1));
  const std::int64_t ten_million = 10'000'000;
  const std::int64_t needed = ten_million * kFlagsBytesPerRecord;  // 3.2 GB
  EXPECT_TRUE(flags_fit(ten_million, 2 * needed));
  EXPECT_FALSE(flags_fit(ten_million, 2 * needed - 2 * kFlagsBytesPerRecord));
  EXPECT_FALSE(flags_fit(std::numeric_limits<std::int64_t>::max(),
                         std::numeric_limits<std::int64_t>::max()));
  EXPECT_TRUE(flags_fit(5, std::nullopt, 5));  // prof-run's bound, lowered in tests
  EXPECT_FALSE(flags_fit(6, std::nullopt, 5));
}

}  // namespace
}  // namespace fuselens::analyzer
