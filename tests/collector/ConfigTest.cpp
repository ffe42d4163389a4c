#include <gtest/gtest.h>
#include <stdlib.h>

#include "fuselens/collector/Config.h"

using namespace fuselens::collector;

TEST(Config, ParsesTraceGroupsAndAll) {
  EXPECT_EQ(parse_trace("cuda"), kTraceCuda);
  EXPECT_EQ(parse_trace("cuda,nvtx"), kTraceCuda | kTraceNvtx);
  EXPECT_EQ(parse_trace("all"), kTraceAll);
  EXPECT_EQ(trace_to_string(kTraceCuda | kTraceApi | kTraceOverhead), "cuda,api,overhead");
  EXPECT_EQ(parse_trace(trace_to_string(kTraceAll)), kTraceAll);
}

TEST(Config, ArgsIsOptInAndPlusMinusChangeTheDefault) {
  EXPECT_EQ(kTraceDefault & kTraceArgs, 0u);
  EXPECT_EQ(kTraceDefault & kTraceDriver, 0u);
  EXPECT_EQ(kTraceDefault & kTraceRuntime, 0u);  // every runtime call: opt-in
  EXPECT_EQ(parse_trace("+runtime"), kTraceDefault | kTraceRuntime);
  EXPECT_EQ(trace_to_string(kTraceApi | kTraceRuntime | kTraceDriver), "api,runtime,driver");
  EXPECT_NE(kTraceAll & kTraceArgs, 0u);
  EXPECT_EQ(parse_trace("args"), kTraceArgs);
  EXPECT_EQ(parse_trace("+args"), kTraceDefault | kTraceArgs);
  EXPECT_EQ(parse_trace("+args,-context"), (kTraceDefault | kTraceArgs) & ~kTraceContext);
  EXPECT_EQ(parse_trace("-all"), 0u);
  // Synchronization records: their own group, opt-in (+sync), not in "cuda".
  EXPECT_EQ(kTraceDefault & kTraceSync, 0u);
  EXPECT_EQ(parse_trace("+sync"), kTraceDefault | kTraceSync);
  EXPECT_EQ(parse_trace("cuda") & kTraceSync, 0u);
  EXPECT_EQ(parse_trace("cuda,sync"), kTraceCuda | kTraceSync);
  EXPECT_EQ(trace_to_string(kTraceDefault | kTraceArgs),
            "cuda,memory,api,nvtx,overhead,context,args");
  EXPECT_THROW(parse_trace("cuda,+args"), ConfigError);  // one form per list
  EXPECT_THROW(parse_trace("+"), ConfigError);
  EXPECT_THROW(parse_trace("+argz"), ConfigError);
}

TEST(Config, RejectsUnknownAndEmptyGroups) {
  EXPECT_THROW(parse_trace("cuda,gpu"), ConfigError);
  EXPECT_THROW(parse_trace(""), ConfigError);
  EXPECT_THROW(parse_trace("cuda,,nvtx"), ConfigError);
}

TEST(Config, ValidatesRanges) {
  CollectorConfig c;
  EXPECT_NO_THROW(c.validate());
  c.buffer_kib = 8;
  EXPECT_THROW(c.validate(), ConfigError);
  c = CollectorConfig{};
  c.max_buffers = 1;
  EXPECT_THROW(c.validate(), ConfigError);
  c = CollectorConfig{};
  c.flush_period_ms = 0;
  EXPECT_THROW(c.validate(), ConfigError);
}

TEST(Config, ReadsTheEnvironment) {
  setenv(kEnvOutput, "/tmp/x.sqlite", 1);
  setenv(kEnvTrace, "cuda,memory", 1);
  setenv(kEnvBufferKiB, "1024", 1);
  setenv(kEnvMaxBuffers, "8", 1);
  setenv(kEnvFlushMs, "250", 1);
  const auto c = CollectorConfig::from_environment();
  EXPECT_EQ(c.output, "/tmp/x.sqlite");
  EXPECT_EQ(c.trace, kTraceCuda | kTraceMemory);
  EXPECT_EQ(c.buffer_kib, 1024u);
  EXPECT_EQ(c.max_buffers, 8u);
  EXPECT_EQ(c.flush_period_ms, 250u);
  setenv(kEnvMaxBuffers, "eight", 1);
  EXPECT_THROW(CollectorConfig::from_environment(), ConfigError);
  for (const char* v : {kEnvOutput, kEnvTrace, kEnvBufferKiB, kEnvMaxBuffers, kEnvFlushMs}) unsetenv(v);
}

TEST(Config, ReadsTheCallingContextSettings) {
  EXPECT_EQ(parse_context_method("cached"), ContextMethod::Cached);
  EXPECT_EQ(parse_context_method("unwind"), ContextMethod::Unwind);
  EXPECT_EQ(parse_context_method("none"), ContextMethod::None);
  EXPECT_THROW(parse_context_method("fp"), ConfigError);
  const CollectorConfig defaults;
  EXPECT_EQ(defaults.context_method, ContextMethod::Cached);
  EXPECT_FALSE(defaults.python_frames.has_value());  // unset: on where frames are read as memory
  EXPECT_FALSE(defaults.context_stats);
  setenv(kEnvContextMethod, "unwind", 1);
  setenv(kEnvPythonFrames, "1", 1);
  setenv(kEnvContextStats, "1", 1);
  const auto c = CollectorConfig::from_environment();
  EXPECT_EQ(c.context_method, ContextMethod::Unwind);
  EXPECT_EQ(c.python_frames, std::optional<bool>(true));
  EXPECT_TRUE(c.context_stats);
  setenv(kEnvPythonFrames, "0", 1);
  EXPECT_EQ(CollectorConfig::from_environment().python_frames, std::optional<bool>(false));
  setenv(kEnvPythonFrames, "yes", 1);
  EXPECT_THROW(CollectorConfig::from_environment(), ConfigError);
  for (const char* v : {kEnvContextMethod, kEnvPythonFrames, kEnvContextStats}) unsetenv(v);
}

TEST(Config, PerProcessIsReadFromTheEnvironmentAndOffByDefault) {
  setenv(kEnvOutput, "/tmp/x.sqlite", 1);
  EXPECT_FALSE(CollectorConfig::from_environment().per_process);
  setenv(kEnvPerProcess, "1", 1);
  EXPECT_TRUE(CollectorConfig::from_environment().per_process);
  setenv(kEnvPerProcess, "yes", 1);
  EXPECT_THROW(CollectorConfig::from_environment(), ConfigError);
  for (const char* v : {kEnvOutput, kEnvPerProcess}) unsetenv(v);
}

// prof-run --per-process: where each process's capture goes, and how prof-run finds them again.
TEST(Config, PerProcessOutputInsertsThePidBeforeTheExtension) {
  EXPECT_EQ(per_process_output("/tmp/run.sqlite", 4242), "/tmp/run.4242.sqlite");
  EXPECT_EQ(per_process_output("/tmp/a.fuselens.sqlite", 7), "/tmp/a.fuselens.7.sqlite");
  EXPECT_EQ(per_process_output("/tmp/run", 7), "/tmp/run.7");
  EXPECT_EQ(per_process_output("/tmp/v1.2/run", 7), "/tmp/v1.2/run.7");  // a dot in a folder name
  EXPECT_EQ(per_process_output("/tmp/.run", 7), "/tmp/.run.7");          // a hidden file, no extension
  EXPECT_EQ(per_process_output("run.sqlite", 1), "run.1.sqlite");
}

TEST(Config, PerProcessPidRecognizesOnlyThatRunsFiles) {
  const std::string out = "/tmp/run.sqlite";
  EXPECT_EQ(per_process_pid(out, "/tmp/run.4242.sqlite"), 4242u);
  EXPECT_EQ(per_process_pid(out, per_process_output(out, 4294967295u)), 4294967295u);
  for (const char* other : {"/tmp/run.sqlite", "/tmp/run..sqlite", "/tmp/run.x1.sqlite", "/tmp/run.01.sqlite",
                            "/tmp/run.-1.sqlite", "/tmp/run.42.sqlite-wal", "/tmp/run.42.db", "/tmp/rung.42.sqlite",
                            "/tmp/run.4294967296.sqlite", "/other/run.42.sqlite", "/tmp/run.1.2.sqlite"}) {
    EXPECT_FALSE(per_process_pid(out, other).has_value()) << other;
  }
  EXPECT_EQ(per_process_pid("/tmp/run", "/tmp/run.12"), 12u);
}
