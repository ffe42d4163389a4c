// LaunchFilter (collector/include/fuselens/collector/LaunchFilter.h): which launches get counters
// under --kernel-name, --launch-skip, --launch-count, --nvtx-include and --nvtx-exclude, fed
// synthetic launches and NVTX calls. No GPU.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "fuselens/collector/Config.h"
#include "fuselens/collector/LaunchFilter.h"

using namespace fuselens::collector;

namespace {

// Mangled names of `gemm_kernel(float const*, float const*, float*, int, int, int)`,
// `gemm_bias_relu_fused_kernel(...)` and `void ns::foo<4>(int)`.
constexpr const char* kGemm = "_Z11gemm_kernelPKfS0_Pfiii";
constexpr const char* kFused = "_Z27gemm_bias_relu_fused_kernelPKfS0_S0_Pfiii";
constexpr const char* kFoo = "_ZN2ns3fooILi4EEEvi";

LaunchFilterSpec name_spec(std::string name, KernelNameBase base = KernelNameBase::Function) {
  LaunchFilterSpec s;
  s.kernel_name = std::move(name);
  s.name_base = base;
  return s;
}

bool selects(const LaunchFilter& f, const char* mangled) {
  return f.name_matches(f.name_of(mangled));
}

LaunchFilterSpec nvtx_spec(std::vector<std::string> include,
                           std::vector<std::string> exclude = {}) {
  LaunchFilterSpec s;
  s.nvtx_include = std::move(include);
  s.nvtx_exclude = std::move(exclude);
  return s;
}

/// A thread's NVTX state on the heap (it is about 17 KiB).
std::unique_ptr<NvtxThreadState> thread_state() { return std::make_unique<NvtxThreadState>(); }

std::string first_error(const LaunchFilterSpec& spec) {
  try {
    LaunchFilter f(spec);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(LaunchFilter, NamesAreTheFunctionNameByDefaultAsInNsightCompute) {
  const LaunchFilter f(name_spec("gemm_kernel"));
  EXPECT_EQ(f.name_of(kGemm), "gemm_kernel");
  EXPECT_EQ(f.name_of(kFoo), "foo");
  EXPECT_TRUE(selects(f, kGemm));
  EXPECT_FALSE(selects(f, kFused));  // exact: "gemm_kernel" is not a prefix match
  EXPECT_FALSE(selects(LaunchFilter(name_spec("gemm")), kGemm));
  EXPECT_TRUE(selects(LaunchFilter(name_spec("foo")), kFoo));
}

TEST(LaunchFilter, NameBaseDemangledAndMangledMatchThoseForms) {
  const LaunchFilter demangled(name_spec("void ns::foo<4>(int)", KernelNameBase::Demangled));
  EXPECT_EQ(demangled.name_of(kFoo), "void ns::foo<4>(int)");
  EXPECT_TRUE(selects(demangled, kFoo));
  EXPECT_FALSE(selects(LaunchFilter(name_spec("foo", KernelNameBase::Demangled)), kFoo));
  const LaunchFilter mangled(name_spec(kFoo, KernelNameBase::Mangled));
  EXPECT_EQ(mangled.name_of(kFoo), kFoo);
  EXPECT_TRUE(selects(mangled, kFoo));
  EXPECT_FALSE(selects(LaunchFilter(name_spec("foo", KernelNameBase::Mangled)), kFoo));
  EXPECT_EQ(parse_kernel_name_base("mangled"), KernelNameBase::Mangled);
  EXPECT_STREQ(kernel_name_base_name(parse_kernel_name_base("demangled")), "demangled");
  EXPECT_THROW(parse_kernel_name_base("Function"), ConfigError);
  EXPECT_THROW(parse_kernel_name_base(""), ConfigError);
}

TEST(LaunchFilter, RegexSearchesAnywhereInTheNameWithRe2) {
  const LaunchFilter bias(name_spec("regex:bias"));
  EXPECT_TRUE(selects(bias, kFused));
  EXPECT_FALSE(selects(bias, kGemm));
  const LaunchFilter anchored(name_spec("regex:^gemm_kernel$"));
  EXPECT_TRUE(selects(anchored, kGemm));
  EXPECT_FALSE(selects(anchored, kFused));
  const LaunchFilter either(name_spec("regex:foo|relu"));
  EXPECT_TRUE(selects(either, kFoo));
  EXPECT_TRUE(selects(either, kFused));
  EXPECT_FALSE(selects(either, kGemm));
  // No filter: every kernel.
  const LaunchFilter all(LaunchFilterSpec{});
  EXPECT_TRUE(selects(all, kGemm));
  EXPECT_TRUE(all.name_matches(""));
}

TEST(LaunchFilter, RefusesBadNamesAndRegexesInOneLine) {
  EXPECT_NE(first_error(name_spec("regex:(unclosed")).find("bad regular expression"),
            std::string::npos);
  EXPECT_NE(first_error(name_spec("regex:")).find("empty"), std::string::npos);
  EXPECT_NE(first_error(name_spec(std::string(5000, 'a'))).find("longer than 4096"),
            std::string::npos);
  EXPECT_NE(first_error(name_spec("a\nb")).find("line break"), std::string::npos);
  EXPECT_NE(first_error(name_spec(std::string("a\0b", 3))).find("NUL"), std::string::npos);
  // A program RE2 refuses to build (over 8 MiB) is an error, not an allocation of gigabytes.
  EXPECT_NE(first_error(name_spec("regex:((a{100}){100}){100}")).find("bad regular expression"),
            std::string::npos);
  for (const auto& message : {first_error(name_spec("regex:(unclosed")),
                              first_error(name_spec(std::string(5000, 'a')))}) {
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(LaunchFilter, RegexOnAHugeNameTakesLinearTime) {
  const LaunchFilter f(name_spec("regex:(a*)*b"));  // catastrophic for backtracking engines
  const std::string name(1 << 20, 'a');
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(f.name_matches(name));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

TEST(LaunchFilter, SkipAndCountCountAmongTheMatchingLaunchesOnly) {
  LaunchFilterSpec spec = name_spec("regex:fused");
  spec.launch_skip = 1;
  spec.launch_count = 2;
  LaunchFilter f(spec);
  const std::vector<const char*> launches = {kGemm,  kFused, kGemm, kFused, kFoo,
                                             kFused, kFused, kGemm, kFused};
  // The reference, derived from the launches: the matching ones in order, then [skip, skip+count).
  std::vector<std::size_t> matching;
  for (std::size_t i = 0; i < launches.size(); ++i) {
    if (std::string(launches[i]).find("fused") != std::string::npos) matching.push_back(i);
  }
  const std::vector<std::size_t> expected(matching.begin() + 1, matching.begin() + 3);
  std::vector<std::size_t> profiled;
  for (std::size_t i = 0; i < launches.size(); ++i) {
    if (selects(f, launches[i]) && f.admit()) profiled.push_back(i);
  }
  EXPECT_EQ(profiled, expected);
  EXPECT_EQ(f.admitted(), 2u);
  EXPECT_EQ(f.matching(), matching.size());
  EXPECT_TRUE(f.exhausted());
}

TEST(LaunchFilter, SkipBeforeMatchLeavesOutTheFirstLaunchesOfAnyKernel) {
  LaunchFilterSpec spec = name_spec("regex:fused");
  spec.launch_skip_before_match = 2;
  spec.launch_skip = 1;
  spec.launch_count = 1;
  LaunchFilter f(spec);
  const std::vector<const char*> launches = {kFused, kGemm, kFused, kFused, kFused};
  // The reference: drop the first 2 launches, then the matching ones, then [skip, skip+count).
  std::vector<std::size_t> matching;
  for (std::size_t i = 2; i < launches.size(); ++i) {
    if (launches[i] == kFused) matching.push_back(i);
  }
  const std::vector<std::size_t> expected = {matching[1]};
  std::vector<std::size_t> profiled;
  for (std::size_t i = 0; i < launches.size(); ++i) {
    if (!f.skipped_before_match() && selects(f, launches[i]) && f.admit()) profiled.push_back(i);
  }
  EXPECT_EQ(profiled, expected);
  EXPECT_EQ(f.matching(), matching.size());  // the skipped fused launch was never matched
}

TEST(LaunchFilter, CountZeroIsUnlimitedAndAHugeSkipProfilesNothing) {
  LaunchFilterSpec spec;
  spec.launch_skip = 3;
  LaunchFilter f(spec);
  int profiled = 0;
  for (int i = 0; i < 10; ++i) profiled += f.admit() ? 1 : 0;
  EXPECT_EQ(profiled, 7);
  EXPECT_FALSE(f.exhausted());
  spec.launch_skip = 1'000'000'000'000'000ull;
  LaunchFilter none(spec);
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(none.admit());
  spec.launch_skip = 1'000'000'000'000'001ull;
  EXPECT_NE(first_error(spec).find("at most 10^15"), std::string::npos);
}

TEST(LaunchFilter, ParsesLaunchNumbersStrictly) {
  EXPECT_EQ(parse_launch_number("--launch-skip", "0"), 0u);
  EXPECT_EQ(parse_launch_number("--launch-skip", "42"), 42u);
  EXPECT_EQ(parse_launch_number("--launch-count", "1000000000000000"), 1'000'000'000'000'000ull);
  for (const char* bad : {"", "-1", "+1", " 1", "1 ", "1e3", "0x10", "ten", "1000000000000001",
                          "99999999999999999999999"}) {
    EXPECT_THROW(parse_launch_number("--launch-skip", bad), ConfigError) << bad;
  }
  try {
    parse_launch_number("--launch-count", "-5");
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--launch-count '-5'"), std::string::npos) << e.what();
  }
}

TEST(LaunchFilter, PushPopRangeAnywhereOnTheThreadsStack) {
  LaunchFilter f(nvtx_spec({"train/"}));
  ASSERT_TRUE(f.needs_nvtx());
  auto t = thread_state();
  EXPECT_FALSE(f.nvtx_matches(*t));  // empty stack
  f.push(*t, nullptr, "epoch");
  EXPECT_FALSE(f.nvtx_matches(*t));
  f.push(*t, nullptr, "train");
  EXPECT_TRUE(f.nvtx_matches(*t));
  f.push(*t, nullptr, "forward");
  EXPECT_TRUE(f.nvtx_matches(*t));  // inside train, at any depth
  f.pop(*t, nullptr);
  f.pop(*t, nullptr);
  EXPECT_FALSE(f.nvtx_matches(*t));  // back in epoch only
  // Another thread's stack is its own.
  auto other = thread_state();
  f.push(*other, nullptr, "train");
  EXPECT_TRUE(f.nvtx_matches(*other));
  EXPECT_FALSE(f.nvtx_matches(*t));
}

TEST(LaunchFilter, PathsAreContiguousUnlessAStarSitsBetween) {
  LaunchFilter direct(nvtx_spec({"a/b/"}));
  LaunchFilter star(nvtx_spec({"a/*/b/"}));
  auto stack = [](const LaunchFilter& f, std::vector<const char*> names) {
    auto t = thread_state();
    for (const char* n : names) f.push(*t, nullptr, n);
    return f.nvtx_matches(*t);
  };
  EXPECT_TRUE(stack(direct, {"a", "b"}));
  EXPECT_TRUE(stack(direct, {"x", "a", "b", "y"}));
  EXPECT_FALSE(stack(direct, {"a", "x", "b"}));
  EXPECT_FALSE(stack(direct, {"b", "a"}));
  EXPECT_TRUE(stack(star, {"a", "b"}));  // zero ranges between
  EXPECT_TRUE(stack(star, {"a", "x", "y", "b"}));
  EXPECT_FALSE(stack(star, {"a", "x"}));
}

TEST(LaunchFilter, BracketsAnchorAtTheBottomAndTopOfTheStack) {
  LaunchFilter bottom(nvtx_spec({"[outer/"}));
  LaunchFilter top(nvtx_spec({"inner]"}));
  LaunchFilter both(nvtx_spec({"[outer/inner]"}));
  auto t = thread_state(), u = thread_state(), v = thread_state();
  bottom.push(*t, nullptr, "outer");
  EXPECT_TRUE(bottom.nvtx_matches(*t));
  auto w = thread_state();
  bottom.push(*w, nullptr, "x");
  bottom.push(*w, nullptr, "outer");
  EXPECT_FALSE(bottom.nvtx_matches(*w));  // outer is not the bottom
  top.push(*u, nullptr, "inner");
  EXPECT_TRUE(top.nvtx_matches(*u));
  top.push(*u, nullptr, "deeper");
  EXPECT_FALSE(top.nvtx_matches(*u));  // inner is no longer the top
  top.pop(*u, nullptr);
  EXPECT_TRUE(top.nvtx_matches(*u));
  both.push(*v, nullptr, "outer");
  EXPECT_FALSE(both.nvtx_matches(*v));
  both.push(*v, nullptr, "inner");
  EXPECT_TRUE(both.nvtx_matches(*v));
}

TEST(LaunchFilter, NamesTakeGlobsAndEscapes) {
  LaunchFilter glob(nvtx_spec({"step*/"}));
  LaunchFilter slash(nvtx_spec({"gemm\\/fused\\/M64/"}));  // a range named "gemm/fused/M64"
  LaunchFilter literal_star(nvtx_spec({"\\*/"}));          // a range named "*"
  auto t = thread_state(), u = thread_state(), v = thread_state();
  glob.push(*t, nullptr, "Step#3");
  EXPECT_FALSE(glob.nvtx_matches(*t));  // case-sensitive
  glob.push(*t, nullptr, "step#3");
  EXPECT_TRUE(glob.nvtx_matches(*t));
  slash.push(*u, nullptr, "gemm/fused/M128");
  EXPECT_FALSE(slash.nvtx_matches(*u));
  slash.push(*u, nullptr, "gemm/fused/M64");
  EXPECT_TRUE(slash.nvtx_matches(*u));
  literal_star.push(*v, nullptr, "x");
  EXPECT_FALSE(literal_star.nvtx_matches(*v));
  literal_star.push(*v, nullptr, "*");
  EXPECT_TRUE(literal_star.nvtx_matches(*v));
  // A message that is not ASCII (null here) matches only the any-ranges element.
  LaunchFilter any(nvtx_spec({"a/*/"}));
  auto w = thread_state();
  any.push(*w, nullptr, "a");
  any.push(*w, nullptr, nullptr);
  EXPECT_TRUE(any.nvtx_matches(*w));
}

TEST(LaunchFilter, DomainsHaveTheirOwnStacks) {
  LaunchFilter f(nvtx_spec({"lib@work/"}));
  const int lib_handle = 0, other_handle = 0;
  f.domain_created(&lib_handle, "lib");
  f.domain_created(&other_handle, "other");
  auto t = thread_state();
  f.push(*t, nullptr, "work");  // default domain: not lib's range
  EXPECT_FALSE(f.nvtx_matches(*t));
  f.push(*t, &other_handle, "work");
  EXPECT_FALSE(f.nvtx_matches(*t));
  f.push(*t, &lib_handle, "work");
  EXPECT_TRUE(f.nvtx_matches(*t));
  f.pop(*t, nullptr);  // pops the default domain's stack, not lib's
  EXPECT_TRUE(f.nvtx_matches(*t));
  f.pop(*t, &lib_handle);
  EXPECT_FALSE(f.nvtx_matches(*t));
}

TEST(LaunchFilter, DomainsCreatedOnSeveralThreadsAreAllKnown) {
  LaunchFilter f(nvtx_spec({"lib@work/"}));
  std::vector<int> handles(40);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i)
        f.domain_created(&handles[static_cast<std::size_t>(t * 10 + i)], "lib");
    });
  }
  for (auto& t : threads) t.join();
  for (auto& h : handles) {
    auto t = thread_state();
    f.push(*t, &h, "work");
    EXPECT_TRUE(f.nvtx_matches(*t));
  }
}

TEST(LaunchFilter, StartEndRangesCountOnAnyThread) {
  LaunchFilter f(nvtx_spec({"phase"}));
  auto t = thread_state();
  EXPECT_FALSE(f.nvtx_matches(*t));
  f.range_start(nullptr, "other", 7);
  EXPECT_FALSE(f.nvtx_matches(*t));
  f.range_start(nullptr, "phase", 8);
  EXPECT_TRUE(f.nvtx_matches(*t));
  f.range_start(nullptr, "phase", 9);
  f.range_end(8);
  EXPECT_TRUE(f.nvtx_matches(*t));  // 9 still open
  f.range_end(9);
  f.range_end(9);  // ended twice: no underflow
  f.range_end(12345);
  EXPECT_FALSE(f.nvtx_matches(*t));
  // A push/pop range of that name does not open a start/end expression.
  f.push(*t, nullptr, "phase");
  EXPECT_FALSE(f.nvtx_matches(*t));
}

TEST(LaunchFilter, IncludesAreAlternativesAndExcludesWin) {
  LaunchFilter f(nvtx_spec({"a/", "b/"}, {"skip/"}));
  auto in_a = thread_state(), in_b = thread_state(), none = thread_state();
  f.push(*in_a, nullptr, "a");
  f.push(*in_b, nullptr, "b");
  f.push(*none, nullptr, "c");
  EXPECT_TRUE(f.nvtx_matches(*in_a));
  EXPECT_TRUE(f.nvtx_matches(*in_b));
  EXPECT_FALSE(f.nvtx_matches(*none));
  f.push(*in_a, nullptr, "skip");
  EXPECT_FALSE(f.nvtx_matches(*in_a));
  // Only excludes: everything outside them.
  LaunchFilter only(nvtx_spec({}, {"warmup/"}));
  auto t = thread_state();
  EXPECT_TRUE(only.nvtx_matches(*t));
  only.push(*t, nullptr, "warmup");
  EXPECT_FALSE(only.nvtx_matches(*t));
}

TEST(LaunchFilter, DeepStacksAndStrayPopsAreSafe) {
  LaunchFilter f(nvtx_spec({"[root/"}));
  auto t = thread_state();
  f.pop(*t, nullptr);  // a pop without a push
  f.push(*t, nullptr, "root");
  for (int i = 0; i < 1000; ++i) f.push(*t, nullptr, "x");
  EXPECT_TRUE(f.nvtx_matches(*t));  // judged by its 64 outermost ranges
  for (int i = 0; i < 1000; ++i) f.pop(*t, nullptr);
  EXPECT_TRUE(f.nvtx_matches(*t));
  f.pop(*t, nullptr);
  EXPECT_FALSE(f.nvtx_matches(*t));
}

TEST(LaunchFilter, TooManyOpenStartEndRangesAreCountedNotStored) {
  LaunchFilter f(nvtx_spec({"r"}));
  for (std::uint64_t id = 1; id <= kMaxOpenRanges + 5; ++id) f.range_start(nullptr, "r", id);
  EXPECT_EQ(f.nvtx_ranges_dropped(), 5u);
  auto t = thread_state();
  EXPECT_TRUE(f.nvtx_matches(*t));
}

TEST(LaunchFilter, RefusesMalformedNvtxExpressions) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "expected RANGE"},
      {"@a/", "empty DOMAIN"},
      {"dom@", "empty RANGE"},
      {"a//b/", "empty range name"},
      {"a/[b/", "'[' only at the start"},
      {"a]/b", "'[' only at the start"},
      {"a\\", "lone '\\'"},
      {"a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u/v/w/x/y/z/1/2/3/4/5/6/7/", "more than 32"},
      {std::string(2000, 'a'), "longer than 1024"},
      {"a\nb/", "line break"},
  };
  for (const auto& [text, fragment] : cases) {
    const auto message = first_error(nvtx_spec({text}));
    EXPECT_NE(message.find(fragment), std::string::npos) << "'" << text << "': " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  EXPECT_NE(first_error(nvtx_spec({"a/", "b/", "c/", "d/", "e/"}, {"f/", "g/", "h/", "i/"}))
                .find("at most 8"),
            std::string::npos);
  EXPECT_NE(first_error(nvtx_spec({"d1@a/", "d2@a/", "d3@a/", "d4@a/"})).find("named domains"),
            std::string::npos);
}

TEST(LaunchFilter, AHostileGlobStaysFast) {
  const std::string stars(1000, '*');
  LaunchFilter f(nvtx_spec({stars + "Z/"}));
  auto t = thread_state();
  const std::string name(100000, 'a');
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 64; ++i) f.push(*t, nullptr, name.c_str());
  EXPECT_FALSE(f.nvtx_matches(*t));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
}

TEST(LaunchFilter, ConfigReadsTheFiltersAndRefusesThemWithoutCounters) {
  setenv(kEnvMetrics, "roofline", 1);
  setenv(kEnvKernelName, "regex:gemm", 1);
  setenv(kEnvKernelNameBase, "demangled", 1);
  setenv(kEnvLaunchSkip, "1", 1);
  setenv(kEnvLaunchSkipBeforeMatch, "5", 1);
  setenv(kEnvLaunchCount, "2", 1);
  setenv(kEnvNvtxInclude, "a/\nlib@b/", 1);
  setenv(kEnvNvtxExclude, "", 1);
  setenv(kEnvProgress, "1", 1);
  auto c = CollectorConfig::from_environment();
  EXPECT_EQ(c.filter.kernel_name, "regex:gemm");
  EXPECT_EQ(c.filter.name_base, KernelNameBase::Demangled);
  EXPECT_EQ(c.filter.launch_skip, 1u);
  EXPECT_EQ(c.filter.launch_count, 2u);
  EXPECT_EQ(c.filter.launch_skip_before_match, 5u);
  EXPECT_EQ(c.filter.nvtx_include, (std::vector<std::string>{"a/", "lib@b/"}));
  EXPECT_TRUE(c.filter.nvtx_exclude.empty());
  EXPECT_EQ(c.progress, std::optional<bool>(true));
  setenv(kEnvLaunchCount, "0", 1);
  EXPECT_THROW(CollectorConfig::from_environment(), ConfigError);
  setenv(kEnvLaunchCount, "-2", 1);
  EXPECT_THROW(CollectorConfig::from_environment(), ConfigError);
  setenv(kEnvLaunchCount, "2", 1);
  setenv(kEnvKernelName, "regex:(", 1);
  EXPECT_THROW(CollectorConfig::from_environment(), ConfigError);
  setenv(kEnvKernelName, "gemm", 1);
  setenv(kEnvProgress, "yes", 1);
  EXPECT_THROW(CollectorConfig::from_environment(), ConfigError);
  setenv(kEnvProgress, "auto", 1);
  EXPECT_FALSE(CollectorConfig::from_environment().progress.has_value());
  // The tools' names for the same choices (tools/common/ProgressLine.h) mean the same here.
  setenv(kEnvProgress, "always", 1);
  EXPECT_EQ(CollectorConfig::from_environment().progress, std::optional<bool>(true));
  setenv(kEnvProgress, "never", 1);
  EXPECT_EQ(CollectorConfig::from_environment().progress, std::optional<bool>(false));
  setenv(kEnvProgress, "0", 1);
  EXPECT_EQ(CollectorConfig::from_environment().progress, std::optional<bool>(false));
  setenv(kEnvProgress, "", 1);
  EXPECT_FALSE(CollectorConfig::from_environment().progress.has_value());
  setenv(kEnvProgress, "Never", 1);
  EXPECT_THROW(CollectorConfig::from_environment(), ConfigError);
  setenv(kEnvProgress, "auto", 1);
  unsetenv(kEnvMetrics);
  try {
    (void)CollectorConfig::from_environment();
    ADD_FAILURE() << "filters without counters were accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("need --metrics"), std::string::npos) << e.what();
  }
  for (const char* v : {kEnvKernelName, kEnvKernelNameBase, kEnvLaunchSkip, kEnvLaunchCount,
                        kEnvLaunchSkipBeforeMatch, kEnvNvtxInclude, kEnvNvtxExclude, kEnvProgress})
    unsetenv(v);
  EXPECT_FALSE(CollectorConfig::from_environment().filter.any());
}

TEST(LaunchFilter, ProgressLinesLookLikeNsightComputesAndStayOneLine) {
  char line[kProgressLine];
  std::size_t n = format_progress_line(line, "gemm_kernel", 3, 5, false, 0);
  EXPECT_EQ(std::string(line, n), "==FuseLens== Profiling \"gemm_kernel\" - 3: 5 passes\n");
  n = format_progress_line(line, "gemm_kernel", 0, 4, true, 1);
  EXPECT_EQ(
      std::string(line, n),
      "==FuseLens== Profiling \"gemm_kernel\" - 0: counter group 2 of 4 (application replay)\n");
  // A hostile name: control characters (ESC, CR, LF), quotes and 10,000 bytes.
  const std::string shown = progress_name("k\x1b]0;x\r\n\"" + std::string(10000, 'a'));
  EXPECT_EQ(shown.size(), kProgressName);
  EXPECT_EQ(shown.substr(0, 8), "k?]0;x??");
  EXPECT_EQ(shown[8], '?');  // the quote
  n = format_progress_line(line, shown, UINT64_MAX, INT64_MIN, false, 0);
  const std::string text(line, n);
  EXPECT_LE(n, kProgressLine);
  EXPECT_EQ(text.find('\n'), n - 1);  // one line, ending in its newline
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  // Cut at 120 bytes, never inside a UTF-8 sequence ("é" is two bytes).
  std::string accents;
  for (int i = 0; i < 100; ++i) accents += "\xc3\xa9";
  const std::string cut = progress_name("x" + accents);
  EXPECT_LE(cut.size(), kProgressName);
  EXPECT_EQ(cut.size() % 2, 1u) << "cut inside a character";
  // An over-long name given straight to the formatter is cut, and the line still ends in '\n'.
  n = format_progress_line(line, std::string(2000, 'n'), 1, 5, false, 0);
  EXPECT_EQ(line[n - 1], '\n');
  EXPECT_EQ(std::string(line, n).find("5 passes"), n - 9);
}
