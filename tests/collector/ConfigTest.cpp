#include <gtest/gtest.h>

#include <stdlib.h>
#include <string>

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
  for (const char* v : {kEnvOutput, kEnvTrace, kEnvBufferKiB, kEnvMaxBuffers, kEnvFlushMs})
    unsetenv(v);
}

// How the API selection is made and how windows switch it: defaults, each value, and refusals.
TEST(Config, ReadsHowTheApiSelectionIsMadeAndSwitched) {
  unsetenv(kEnvApiSelect);
  unsetenv(kEnvControlApi);
  const auto defaults = CollectorConfig::from_environment();
  EXPECT_EQ(defaults.api_select, CollectorConfig::ApiSelect::kKind);
  EXPECT_EQ(defaults.window_api, CollectorConfig::WindowApi::kRuntime);
  setenv(kEnvApiSelect, "ids", 1);
  setenv(kEnvControlApi, "both", 1);
  auto c = CollectorConfig::from_environment();
  EXPECT_EQ(c.api_select, CollectorConfig::ApiSelect::kIds);
  EXPECT_EQ(c.window_api, CollectorConfig::WindowApi::kBoth);
  setenv(kEnvApiSelect, "kind", 1);
  setenv(kEnvControlApi, "filter", 1);
  c = CollectorConfig::from_environment();
  EXPECT_EQ(c.api_select, CollectorConfig::ApiSelect::kKind);
  EXPECT_EQ(c.window_api, CollectorConfig::WindowApi::kFilter);
  setenv(kEnvControlApi, "runtime", 1);
  EXPECT_EQ(CollectorConfig::from_environment().window_api, CollectorConfig::WindowApi::kRuntime);
  setenv(kEnvControlApi, "driver-ids", 1);
  EXPECT_EQ(CollectorConfig::from_environment().window_api, CollectorConfig::WindowApi::kDriverIds);
  for (const char* bad : {"", "perid", "Runtime", "runtime ", "switch"}) {
    setenv(kEnvControlApi, bad, 1);
    EXPECT_THROW(CollectorConfig::from_environment(), ConfigError) << '"' << bad << '"';
  }
  unsetenv(kEnvControlApi);
  for (const char* bad : {"", "KIND", "id", "kind,ids"}) {
    setenv(kEnvApiSelect, bad, 1);
    EXPECT_THROW(CollectorConfig::from_environment(), ConfigError) << '"' << bad << '"';
  }
  unsetenv(kEnvApiSelect);
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

TEST(Config, TorchModulesFramesByDefaultHooksAndOffRecordNone) {
  setenv(kEnvOutput, "/tmp/x.sqlite", 1);
  unsetenv(kEnvTorchModules);
  EXPECT_TRUE(CollectorConfig::from_environment().torch_module_frames);
  for (const char* on : {"frames", "on", "1"}) {
    setenv(kEnvTorchModules, on, 1);
    EXPECT_TRUE(CollectorConfig::from_environment().torch_module_frames) << on;
  }
  for (const char* off : {"hooks", "off", "0"}) {
    setenv(kEnvTorchModules, off, 1);
    EXPECT_FALSE(CollectorConfig::from_environment().torch_module_frames) << off;
  }
  setenv(kEnvTorchModules, "maybe", 1);
  EXPECT_THROW(CollectorConfig::from_environment(), ConfigError);
  for (const char* v : {kEnvOutput, kEnvTorchModules}) unsetenv(v);
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
  EXPECT_EQ(per_process_output("/tmp/.run", 7), "/tmp/.run.7");  // a hidden file, no extension
  EXPECT_EQ(per_process_output("run.sqlite", 1), "run.1.sqlite");
}

TEST(Config, PerProcessPidRecognizesOnlyThatRunsFiles) {
  const std::string out = "/tmp/run.sqlite";
  EXPECT_EQ(per_process_pid(out, "/tmp/run.4242.sqlite"), 4242u);
  EXPECT_EQ(per_process_pid(out, per_process_output(out, 4294967295u)), 4294967295u);
  for (const char* other :
       {"/tmp/run.sqlite", "/tmp/run..sqlite", "/tmp/run.x1.sqlite", "/tmp/run.01.sqlite",
        "/tmp/run.-1.sqlite", "/tmp/run.42.sqlite-wal", "/tmp/run.42.db", "/tmp/rung.42.sqlite",
        "/tmp/run.4294967296.sqlite", "/other/run.42.sqlite", "/tmp/run.1.2.sqlite"}) {
    EXPECT_FALSE(per_process_pid(out, other).has_value()) << other;
  }
  EXPECT_EQ(per_process_pid("/tmp/run", "/tmp/run.12"), 12u);
}

// Capture control (docs/capture-control.md): the values prof-run and the collector parse.
TEST(Config, ParsesCaptureControl) {
  const auto nvtx = parse_capture_range("nvtx:train");
  EXPECT_EQ(nvtx.kind, CaptureRange::Kind::Nvtx);
  EXPECT_EQ(nvtx.name, "train");
  EXPECT_EQ(nvtx.domain, "");
  const auto in_domain = parse_capture_range("nvtx:step@my@lib");  // the last @ splits
  EXPECT_EQ(in_domain.name, "step@my");
  EXPECT_EQ(in_domain.domain, "lib");
  EXPECT_EQ(parse_capture_range("nvtx:a@*").domain, "*");
  EXPECT_EQ(parse_capture_range("cudaProfilerApi").kind, CaptureRange::Kind::ProfilerApi);
  for (const char* bad : {"", "nvtx", "nvtx:", "nvtx:@d", "nvtx:a@", "cudaprofilerapi", "hw"})
    EXPECT_THROW(parse_capture_range(bad), ConfigError) << bad;
  EXPECT_EQ(parse_capture_range_end("stop"), 1u);
  EXPECT_EQ(parse_capture_range_end("repeat"), 0u);
  EXPECT_EQ(parse_capture_range_end("repeat:3"), 3u);
  for (const char* bad : {"", "repeat:", "repeat:0", "repeat:-1", "repeat:x", "again"})
    EXPECT_THROW(parse_capture_range_end(bad), ConfigError) << bad;
  const auto s = parse_steps("5:2:3:4");
  EXPECT_EQ(s.wait, 5u);
  EXPECT_EQ(s.warmup, 2u);
  EXPECT_EQ(s.active, 3u);
  EXPECT_EQ(s.repeat, 4u);
  EXPECT_EQ(parse_steps("0:0:1").repeat, 0u);
  for (const char* bad :
       {"", "1:1", "1:1:0", "1:1:1:1:1", "a:1:1", "-1:1:1", "1::1", "1:1:1:", "1000000000:0:1"})
    EXPECT_THROW(parse_steps(bad), ConfigError) << bad;
}

TEST(Config, CaptureControlKindsDoNotMix) {
  CollectorConfig c;
  c.capture_range = parse_capture_range("nvtx:a");
  c.validate();
  EXPECT_TRUE(c.controlled());
  c.steps = parse_steps("1:1:1");
  EXPECT_THROW(c.validate(), ConfigError);  // a range and --steps
  c.capture_range = {};
  c.validate();
  c.delay_ms = 10;
  EXPECT_THROW(c.validate(), ConfigError);  // --delay and --steps
  c.steps.reset();
  c.validate();
  c.capture_range_windows = 3;
  EXPECT_THROW(c.validate(), ConfigError);  // a window count without a range
  c.capture_range_windows = 1;
  c.metrics = "roofline";
  EXPECT_THROW(c.validate(), ConfigError);  // counters under capture control
  EXPECT_FALSE(CollectorConfig{}.controlled());
}

TEST(Config, GlobMatchesLikeTheAnalyzer) {
  EXPECT_TRUE(glob_match_nocase("ProfilerStep#*", "profilerstep#12"));
  EXPECT_TRUE(glob_match_nocase("*step*", "train/STEP3"));
  EXPECT_TRUE(glob_match_nocase("a?c", "abc"));
  EXPECT_FALSE(glob_match_nocase("a?c", "ac"));
  EXPECT_TRUE(glob_match_nocase("*", ""));
  EXPECT_FALSE(glob_match_nocase("step", "step2"));
  // Many stars against a long text: linear backtracking, no recursion (issue 22's crash recipe).
  const std::string stars(60000, '*');
  EXPECT_TRUE(glob_match_nocase(stars + "Z", std::string(5000, 'a') + "z"));
  EXPECT_FALSE(glob_match_nocase("********Z", std::string(20000, 'a')));
}

TEST(Config, ReadsCaptureControlFromTheEnvironment) {
  setenv(kEnvCaptureRange, "nvtx:train@lib", 1);
  setenv(kEnvCaptureRangeEnd, "repeat:2", 1);
  auto c = CollectorConfig::from_environment();
  EXPECT_EQ(c.capture_range.name, "train");
  EXPECT_EQ(c.capture_range_windows, 2u);
  setenv(kEnvCaptureRange, "", 1);  // prof-run sets it empty when unused
  setenv(kEnvCaptureRangeEnd, "stop", 1);
  setenv(kEnvSteps, "2:1:3", 1);
  setenv(kEnvStepRange, "iter*", 1);
  c = CollectorConfig::from_environment();
  EXPECT_EQ(c.capture_range.kind, CaptureRange::Kind::None);
  ASSERT_TRUE(c.steps.has_value());
  EXPECT_EQ(c.steps->active, 3u);
  EXPECT_EQ(c.step_range, "iter*");
  setenv(kEnvDelayMs, "ten", 1);
  EXPECT_THROW(CollectorConfig::from_environment(), ConfigError);
  for (const char* v :
       {kEnvCaptureRange, kEnvCaptureRangeEnd, kEnvSteps, kEnvStepRange, kEnvDelayMs})
    unsetenv(v);
}

TEST(Config, ReadsTheModeAndRefusesAggregatingCounters) {
  unsetenv(kEnvMode);
  unsetenv(kEnvAggregateKeepTrace);
  EXPECT_FALSE(CollectorConfig::from_environment().aggregate);
  setenv(kEnvMode, "aggregate", 1);
  setenv(kEnvAggregateKeepTrace, "1", 1);
  auto c = CollectorConfig::from_environment();
  EXPECT_TRUE(c.aggregate);
  EXPECT_TRUE(c.aggregate_keep_trace);
  c.metrics = "roofline";
  EXPECT_THROW(c.validate(), ConfigError);
  setenv(kEnvMode, "trace", 1);
  EXPECT_FALSE(CollectorConfig::from_environment().aggregate);
  setenv(kEnvMode, "", 1);  // prof-run's "unset"
  EXPECT_FALSE(CollectorConfig::from_environment().aggregate);
  for (const char* bad : {"Aggregate", "aggregate ", "agg", "trace,aggregate"}) {
    setenv(kEnvMode, bad, 1);
    EXPECT_THROW(CollectorConfig::from_environment(), ConfigError) << '"' << bad << '"';
  }
  setenv(kEnvMode, "trace", 1);
  setenv(kEnvAggregateKeepTrace, "yes", 1);
  EXPECT_THROW(CollectorConfig::from_environment(), ConfigError);
  unsetenv(kEnvMode);
  unsetenv(kEnvAggregateKeepTrace);
}

// --sample 1/N (docs/capture-control.md, "Sampled tracing").
TEST(Config, ParsesSampleOneInN) {
  EXPECT_EQ(parse_sample("1/10"), 10u);
  EXPECT_EQ(parse_sample("1/1"), 1u);
  EXPECT_EQ(parse_sample("1/1000000"), 1000000u);
  for (const char* bad : {"",       "1/",   "1/0",  "1/01",  "1/-3",      "1/+3",
                          "1/ 3",   "1/3 ", "2/10", "1/1.5", "1/1000001", "1/99999999999999999999",
                          "1/10/2", "/10",  "10",   "1//10", "1/0x10",    "1/10\n",
                          "1/nan",  "1/inf"}) {
    EXPECT_THROW(parse_sample(bad), ConfigError) << bad;
  }
  // A time duty cycle is named as not supported rather than as malformed.
  try {
    parse_sample("10ms/100ms");
    ADD_FAILURE() << "accepted a duty cycle";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("time duty cycle"), std::string::npos) << e.what();
  }
  // The message shows a hostile value in printable form, on one line.
  try {
    parse_sample("1/\x1b[2J\n");
    ADD_FAILURE();
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_EQ(m.find('\x1b'), std::string::npos) << m;
  }
}

TEST(Config, SampleIsCaptureControlAndMixesWithNoOtherKind) {
  CollectorConfig c;
  c.sample_every = 10;
  c.validate();
  EXPECT_TRUE(c.controlled());
  c.step_range = "iter*";  // --step-range goes with --sample too
  c.validate();
  c.steps = parse_steps("1:0:1");
  EXPECT_THROW(c.validate(), ConfigError);
  c.steps.reset();
  c.capture_range = parse_capture_range("nvtx:a");
  EXPECT_THROW(c.validate(), ConfigError);
  c.capture_range = {};
  c.duration_ms = 5;
  EXPECT_THROW(c.validate(), ConfigError);
  c.duration_ms = 0;
  c.metrics = "roofline";
  EXPECT_THROW(c.validate(), ConfigError);  // counters are not windowed
  c.metrics.clear();
  c.sample_every = 2'000'000;  // set directly, past the parser
  EXPECT_THROW(c.validate(), ConfigError);
}

TEST(Config, SampleReadFromTheEnvironmentIdlesInDriverIdsUnlessAsked) {
  setenv(kEnvSample, "1/4", 1);
  unsetenv(kEnvControlApi);
  auto c = CollectorConfig::from_environment();
  EXPECT_EQ(c.sample_every, 4u);
  EXPECT_EQ(c.window_api, CollectorConfig::WindowApi::kDriverIds);
  setenv(kEnvControlApi, "runtime", 1);  // an explicit choice is kept
  c = CollectorConfig::from_environment();
  EXPECT_EQ(c.window_api, CollectorConfig::WindowApi::kRuntime);
  unsetenv(kEnvControlApi);
  setenv(kEnvSample, "", 1);  // prof-run sets it empty when unused
  c = CollectorConfig::from_environment();
  EXPECT_EQ(c.sample_every, 0u);
  EXPECT_EQ(c.window_api, CollectorConfig::WindowApi::kRuntime);
  setenv(kEnvSample, "1/0", 1);
  EXPECT_THROW(CollectorConfig::from_environment(), ConfigError);
  setenv(kEnvSample, "1/3", 1);
  setenv(kEnvSteps, "0:0:1", 1);
  EXPECT_THROW(CollectorConfig::from_environment(), ConfigError);
  unsetenv(kEnvSteps);
  unsetenv(kEnvSample);
}
