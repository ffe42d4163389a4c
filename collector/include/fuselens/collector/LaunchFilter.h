#pragma once
// LaunchFilter: which kernel launches get counters under `prof-run --metrics` (issue 22), after
// Nsight Compute's filters --kernel-name, --kernel-name-base, --launch-skip, --launch-count,
// --nvtx-include and --nvtx-exclude (docs/counters.md, "Choosing the launches"). Pure logic: no
// CUDA, no CUPTI; the range profiler (collector/src/RangeProfiler.cpp, CounterFilter.h) feeds it
// each launch's kernel name and the NVTX calls it observes, and tests feed it synthetic ones.
//
// Order, as Nsight Compute applies it: a launch is *matching* when its kernel name passes
// --kernel-name and the NVTX state at the launch passes the NVTX expressions; --launch-skip N
// and --launch-count C then count among the matching launches only (the first N matching
// launches are skipped, the next C are profiled, later ones are not). --launch-skip-before-match
// M comes first: the first M launches of any kernel are neither profiled nor matched (ncu's
// option of that name). Counting is per process, over all devices and contexts (ncu's default
// --filter-mode global).
//
// Kernel names (--kernel-name-base, default "function" as in ncu): "function" is the bare
// function name of the demangled signature (db::short_kernel_name: no return type, namespaces,
// template arguments or parameters: "void ns::gemm<64>(float*)" -> "gemm"), "demangled" the full
// demangled signature, "mangled" the name as the driver reports it. --kernel-name NAME must equal
// that name; --kernel-name regex:RE matches when RE (RE2 syntax, linear time) matches anywhere in
// it (an unanchored search, as ncu's "regex:Bar" selects kernels with "Bar" in their name).
//
// NVTX expressions (the subset of ncu's syntax FuseLens supports; each NVTX domain has its own
// push/pop stack per thread, as in NVTX itself):
//   [DOMAIN@]RANGE        a start/end range (nvtxRangeStart*) named RANGE is open, on any thread
//   [DOMAIN@]A/           a push/pop range named A is on the launching thread's stack
//   [DOMAIN@]A/B/         ... with B pushed directly inside A (any number of names)
//   [DOMAIN@]A/*/B/       ... with zero or more ranges of any name between A and B
//   [A/...                A is the bottom of the stack (the outermost range)
//   .../B]                B is the top of the stack (the innermost range)
// Without DOMAIN the default domain (nvtxRangePush*, nvtxRangeStart*); DOMAIN is the name given to
// nvtxDomainCreateA. In names `*` matches any run of characters and `?` one character (a name
// that is only `*` is the "zero or more ranges" element); `\` makes the next character literal
// (`\/`, `\@`, `\*`, `\?`, `\[`, `\]`, `\\`). Names compare case-sensitively. A launch passes
// when it matches at least one --nvtx-include (or none was given) and no --nvtx-exclude.
// A push/pop message that is not ASCII (registered or wide strings) matches only the `*` path
// element; such a start/end range matches nothing.
//
// Limits (hostile input gets a ConfigError naming the limit): a kernel name or regex of at most
// 4,096 bytes, at most 8 NVTX expressions of at most 1,024 bytes and 32 names each, at most 4
// distinct domains. Push/pop stacks are followed to depth 64 per domain; deeper ranges are
// counted but not matched (a launch deeper than 64 is judged by its 64 outermost ranges). At most
// 1,024 matching start/end ranges are open at once; more are counted in nvtx_ranges_dropped().
//
// Threads: the NVTX push/pop state of a thread lives in a NvtxThreadState the caller keeps per
// thread (thread_local in the collector); push()/pop()/nvtx_matches() touch only that state and
// the filter's immutable expressions, so they take no lock and allocate nothing. Start/end ranges
// are process-wide (they may end on another thread) and take an internal lock. admit() is not
// thread-safe: the caller serializes launches (the range profiler's launch gate).

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "fuselens/collector/Config.h"

namespace fuselens::collector {

/// Parses "function", "demangled" or "mangled". Throws ConfigError otherwise.
KernelNameBase parse_kernel_name_base(std::string_view text);
/// The canonical spelling of `base`.
const char* kernel_name_base_name(KernelNameBase base);
/// A launch count or skip: decimal digits only (no sign, no spaces), at most 10^15. `option`
/// names it in the error. Throws ConfigError.
std::uint64_t parse_launch_number(std::string_view option, std::string_view text);

/// The kernel name as a progress line shows it (CounterFilter.h, "Progress"): control characters,
/// DEL and '"' replaced by '?', cut at kProgressName bytes (not inside a UTF-8 sequence).
std::string progress_name(std::string name);
inline constexpr std::size_t kProgressName = 120;
inline constexpr std::size_t kProgressLine = 512;  ///< bytes of a progress line, at most
/// Writes one progress line into `line`: `==FuseLens== Profiling "NAME" - INDEX: PASSES passes`,
/// or `... - INDEX: counter group GROUP+1 of PASSES (application replay)` when `application`;
/// ends in '\n' (also when cut to fit). Returns its length. No allocation (the launch path).
std::size_t format_progress_line(char (&line)[kProgressLine], std::string_view name,
                                 std::uint64_t index, std::int64_t passes, bool application,
                                 std::uint32_t group) noexcept;

inline constexpr std::size_t kMaxFilterPattern = 4096;   ///< bytes of --kernel-name
inline constexpr std::size_t kMaxNvtxExpressions = 8;    ///< --nvtx-include + --nvtx-exclude
inline constexpr std::size_t kMaxNvtxExpression = 1024;  ///< bytes of one expression
inline constexpr std::size_t kMaxNvtxNames = 32;         ///< names of one push/pop path
inline constexpr std::size_t kMaxNvtxDomains = 4;        ///< distinct domains (default included)
inline constexpr std::size_t kMaxNvtxDepth = 64;         ///< push/pop levels followed per domain
inline constexpr std::size_t kMaxOpenRanges = 1024;      ///< matching start/end ranges open at once

class LaunchFilter;

/// One thread's NVTX push/pop state for one LaunchFilter (zero-initialised storage is valid: the
/// filter initialises it on first use). About 17 KiB; keep it thread_local or on the heap.
struct NvtxThreadState {
  const LaunchFilter* owner = nullptr;  ///< the filter whose expressions `levels` follows
  std::array<std::uint32_t, kMaxNvtxDomains> depth{};
  /// Per domain slot and level (0 = empty stack), per expression: the NFA states reached (bit i:
  /// the first i names of the path match the innermost ranges) and, in bit 63, whether the whole
  /// path matched at this level or an outer one.
  std::array<std::array<std::array<std::uint64_t, kMaxNvtxExpressions>, kMaxNvtxDepth + 1>,
             kMaxNvtxDomains>
      levels{};
};

class LaunchFilter {
 public:
  /// Compiles `spec` (the regex with RE2, the NVTX expressions). Throws ConfigError with one line
  /// naming the bad value: an empty NAME or RE, a regex RE2 rejects, a limit above exceeded, an
  /// NVTX expression with an empty name or domain, a stray `[`/`]`, a trailing `\`.
  explicit LaunchFilter(const LaunchFilterSpec& spec);
  ~LaunchFilter();
  LaunchFilter(const LaunchFilter&) = delete;
  LaunchFilter& operator=(const LaunchFilter&) = delete;

  const LaunchFilterSpec& spec() const { return spec_; }
  /// True when NVTX expressions were given (the collector then follows NVTX calls).
  bool needs_nvtx() const { return !exprs_.empty(); }

  /// The form of `mangled` that --kernel-name matches (per --kernel-name-base). Allocates: call
  /// once per kernel function and cache the result (the collector keys it by CUfunction).
  std::string name_of(std::string_view mangled) const;
  /// Whether `name` (from name_of) passes --kernel-name (true when none was given).
  bool name_matches(std::string_view name) const;

  /// nvtxDomainCreateA returned `handle` for `name`. Domains no expression names are ignored.
  /// Thread-safe (a lock among creations; push/pop read the table without one).
  void domain_created(const void* handle, std::string_view name) noexcept;
  /// A push/pop range `message` (null: not ASCII) pushed / popped on `domain` (null: the default
  /// domain) by the thread whose state is `t`.
  void push(NvtxThreadState& t, const void* domain, const char* message) const noexcept;
  void pop(NvtxThreadState& t, const void* domain) const noexcept;
  /// A start/end range `id` began / ended (any thread). Ids 0 are ignored.
  void range_start(const void* domain, const char* message, std::uint64_t id) noexcept;
  void range_end(std::uint64_t id) noexcept;
  /// Whether a launch made now by the thread of `t` passes the NVTX expressions.
  bool nvtx_matches(NvtxThreadState& t) const noexcept;

  /// Call once per launch, in launch order, before matching it: true while it is among the first
  /// --launch-skip-before-match launches (it is then neither matched nor profiled).
  bool skipped_before_match() noexcept { return seen_++ < spec_.launch_skip_before_match; }
  /// Call once per matching launch, in launch order: true when it is to be profiled (past
  /// --launch-skip and within --launch-count).
  bool admit() noexcept;
  /// True once --launch-count launches were admitted: no later launch will be.
  bool exhausted() const noexcept {
    return spec_.launch_count > 0 && admitted_ >= spec_.launch_count;
  }
  std::uint64_t matching() const noexcept { return matching_; }  ///< launches given to admit()
  std::uint64_t admitted() const noexcept { return admitted_; }
  std::uint64_t nvtx_ranges_dropped() const noexcept;

  struct Expression;  // LaunchFilter.cpp

 private:
  int slot_of(const void* domain) const noexcept;
  void init(NvtxThreadState& t) const noexcept;

  LaunchFilterSpec spec_;
  struct Regex;
  std::unique_ptr<Regex> regex_;  // --kernel-name regex:RE
  std::vector<Expression> exprs_;
  std::vector<std::string> domain_names_;  // slot 0: the default domain ("")
  std::array<std::atomic<const void*>, 64> domain_handles_{};
  std::array<std::atomic<int>, 64> domain_slots_{};
  std::atomic<std::size_t> domain_count_{0};  // entries [0, count) written
  std::mutex domains_mutex_;                  // serializes domain_created()
  mutable std::mutex ranges_mutex_;           // guards open_ and open_count_
  struct OpenRange {
    std::uint64_t id = 0;
    std::uint32_t mask = 0;  // expressions it matches
  };
  std::vector<OpenRange> open_;  // kMaxOpenRanges slots, allocated at construction
  std::array<std::atomic<std::int64_t>, kMaxNvtxExpressions> open_count_{};
  std::atomic<std::uint64_t> dropped_{0};
  std::uint64_t seen_ = 0, matching_ = 0, admitted_ = 0;
};

}  // namespace fuselens::collector
