#include "fuselens/collector/LaunchFilter.h"

#include <re2/re2.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdint>
#include <cstdio>

#include "fuselens/db/Writer.h"  // demangle, short_kernel_name

namespace fuselens::collector {
namespace {

constexpr std::int16_t kStar = -1;  // `*` in a name: any run of characters
constexpr std::int16_t kOne = -2;   // `?`: one character
constexpr std::uint64_t kAccepted = 1ull << 63;
constexpr std::uint64_t kMaxLaunchNumber = 1'000'000'000'000'000ull;

/// A name pattern with its escapes resolved: characters, kStar and kOne.
struct Glob {
  std::vector<std::int16_t> tokens;
  bool any_ranges = false;  // the path element `*`: zero or more ranges of any name
};

/// Iterative glob match (back to the last star on a mismatch): O(|pattern| x |text|), no
/// recursion, no allocation.
bool glob_match(const std::vector<std::int16_t>& pattern, std::string_view text) noexcept {
  std::size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() &&
        (pattern[p] == kOne ||
         (pattern[p] >= 0 && pattern[p] == static_cast<unsigned char>(text[t])))) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == kStar) {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == kStar) ++p;
  return p == pattern.size();
}

std::string quoted(std::string_view option, std::string_view text) {
  std::string shown(text.substr(0, 80));
  for (char& c : shown) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return std::string(option) + " '" + shown + (text.size() > 80 ? "...'" : "'");
}

}  // namespace

struct LaunchFilter::Regex {
  static RE2::Options options() {
    RE2::Options o;
    o.set_log_errors(false);
    o.set_max_mem(8 << 20);  // a compiled program of at most 8 MiB (RE2 refuses larger ones)
    return o;
  }
  explicit Regex(std::string_view pattern)
      : re(re2::StringPiece(pattern.data(), pattern.size()), options()) {}
  RE2 re;
};

struct LaunchFilter::Expression {
  bool include = true;
  int slot = 0;           // domain slot (0: the default domain)
  bool push_pop = false;  // else a start/end range
  bool bottom = false, top = false;
  std::vector<Glob> path;  // push/pop: the names, outermost first
  Glob range;              // start/end: the name
};

namespace {

/// Parses one NVTX expression (LaunchFilter.h) into `e` and its domain name; throws ConfigError.
void parse_expression(std::string_view option, std::string_view text, LaunchFilter::Expression& e,
                      std::string& domain) {
  auto bad = [&](const std::string& why) -> ConfigError {
    return ConfigError(quoted(option, text) + ": " + why);
  };
  if (text.empty()) throw bad("expected RANGE, RANGE/ or DOMAIN@RANGE/");
  if (text.size() > kMaxNvtxExpression) {
    throw bad("longer than " + std::to_string(kMaxNvtxExpression) + " bytes");
  }
  // Split on unescaped '@' (the first), '/'; note '[' at the start and ']' at the end.
  std::vector<std::vector<std::int16_t>> parts(1);
  std::vector<bool> literal_only(1, true);
  std::vector<bool> escaped_star(1, false);
  bool have_domain = false, saw_slash = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\') {
      if (i + 1 == text.size()) throw bad("ends in a lone '\\'");
      const char next = text[++i];
      parts.back().push_back(static_cast<unsigned char>(next));
      if (next == '*') escaped_star.back() = true;
      continue;
    }
    if (c == '@' && !have_domain && !saw_slash) {
      if (parts.size() != 1) throw bad("'@' after a '/'");
      std::string unescaped;
      for (std::size_t k = 0; k < i; ++k) {
        if (text[k] == '\\' && k + 1 < i) ++k;
        unescaped += text[k];
      }
      domain = unescaped;
      if (domain.empty()) throw bad("empty DOMAIN before '@'");
      if (domain.find('[') == 0) throw bad("'[' belongs after DOMAIN@");
      parts.back().clear();
      literal_only.back() = true;
      escaped_star.back() = false;
      have_domain = true;
      continue;
    }
    if (c == '/') {
      saw_slash = true;
      parts.emplace_back();
      literal_only.push_back(true);
      escaped_star.push_back(false);
      continue;
    }
    if (c == '[' && parts.size() == 1 && parts.back().empty() && !e.bottom) {
      e.bottom = true;
      continue;
    }
    if (c == ']' && i + 1 == text.size()) {
      e.top = true;
      continue;
    }
    if (c == '[' || c == ']')
      throw bad("'[' only at the start, ']' only at the end (\\[ \\] for names)");
    if (c == '*') {
      parts.back().push_back(kStar);
      literal_only.back() = false;
    } else if (c == '?') {
      parts.back().push_back(kOne);
      literal_only.back() = false;
    } else {
      parts.back().push_back(static_cast<unsigned char>(c));
    }
  }
  e.push_pop = saw_slash || e.bottom || e.top;
  if (!e.push_pop) {
    if (parts.front().empty()) throw bad("empty RANGE");
    e.range.tokens = std::move(parts.front());
    return;
  }
  if (saw_slash && parts.back().empty() && !e.top) parts.pop_back();  // the trailing '/'
  if (parts.empty()) throw bad("no range name");
  if (parts.size() > kMaxNvtxNames) {
    throw bad("more than " + std::to_string(kMaxNvtxNames) + " names");
  }
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].empty()) throw bad("an empty range name (two '/' in a row, or '/]')");
    Glob g;
    g.any_ranges = parts[i].size() == 1 && parts[i][0] == kStar && !escaped_star[i];
    g.tokens = std::move(parts[i]);
    e.path.push_back(std::move(g));
  }
}

}  // namespace

std::string progress_name(std::string name) {
  if (name.size() > kProgressName) {
    std::size_t cut = kProgressName;
    while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;
    name.resize(cut);
  }
  for (char& c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f || c == '"') c = '?';
  }
  return name;
}

std::size_t format_progress_line(char (&line)[kProgressLine], std::string_view name,
                                 std::uint64_t index, std::int64_t passes, bool application,
                                 std::uint32_t group) noexcept {
  const int shown = static_cast<int>(std::min(name.size(), kProgressName));
  const unsigned long long i = index;
  const long long p = passes;
  const int n =
      application
          ? std::snprintf(line, sizeof line,
                          "==FuseLens== Profiling \"%.*s\" - %llu: counter group %llu of %lld "
                          "(application replay)\n",
                          shown, name.data(), i, static_cast<unsigned long long>(group) + 1, p)
          : std::snprintf(line, sizeof line,
                          "==FuseLens== Profiling \"%.*s\" - %llu: %lld passes\n", shown,
                          name.data(), i, p);
  if (n <= 0) return 0;
  const auto length = std::min(static_cast<std::size_t>(n), sizeof line - 1);
  line[length - 1] = '\n';  // also when snprintf cut the line
  return length;
}

KernelNameBase parse_kernel_name_base(std::string_view text) {
  if (text == "function") return KernelNameBase::Function;
  if (text == "demangled") return KernelNameBase::Demangled;
  if (text == "mangled") return KernelNameBase::Mangled;
  throw ConfigError(quoted("--kernel-name-base", text) +
                    ": expected function, demangled or mangled");
}

const char* kernel_name_base_name(KernelNameBase base) {
  switch (base) {
    case KernelNameBase::Demangled:
      return "demangled";
    case KernelNameBase::Mangled:
      return "mangled";
    case KernelNameBase::Function:
      break;
  }
  return "function";
}

std::uint64_t parse_launch_number(std::string_view option, std::string_view text) {
  std::uint64_t value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value > kMaxLaunchNumber ||
      text.front() == '+' || text.front() == '-') {
    throw ConfigError(quoted(option, text) + ": expected a whole number from 0 to 10^15");
  }
  return value;
}

LaunchFilter::LaunchFilter(const LaunchFilterSpec& spec) : spec_(spec) {
  const std::string& k = spec_.kernel_name;
  if (k.size() > kMaxFilterPattern) {
    throw ConfigError("--kernel-name is longer than " + std::to_string(kMaxFilterPattern) +
                      " bytes");
  }
  if (k.find('\0') != std::string::npos || k.find('\n') != std::string::npos) {
    throw ConfigError("--kernel-name must not hold a NUL or a line break");
  }
  if (k.rfind("regex:", 0) == 0) {
    const std::string_view pattern = std::string_view(k).substr(6);
    if (pattern.empty()) throw ConfigError("--kernel-name 'regex:': the expression is empty");
    regex_ = std::make_unique<Regex>(pattern);
    if (!regex_->re.ok()) {
      throw ConfigError(quoted("--kernel-name", k) +
                        ": bad regular expression: " + regex_->re.error());
    }
  }
  if (spec_.launch_skip > kMaxLaunchNumber || spec_.launch_count > kMaxLaunchNumber ||
      spec_.launch_skip_before_match > kMaxLaunchNumber) {
    throw ConfigError(
        "--launch-skip, --launch-skip-before-match and --launch-count must be at most 10^15");
  }
  if (spec_.nvtx_include.size() + spec_.nvtx_exclude.size() > kMaxNvtxExpressions) {
    throw ConfigError("at most " + std::to_string(kMaxNvtxExpressions) +
                      " --nvtx-include and --nvtx-exclude expressions in all");
  }
  domain_names_.emplace_back();  // slot 0: the default domain
  auto add = [&](const std::string& text, bool include) {
    const char* option = include ? "--nvtx-include" : "--nvtx-exclude";
    if (text.find('\0') != std::string::npos || text.find('\n') != std::string::npos) {
      throw ConfigError(std::string(option) + " must not hold a NUL or a line break");
    }
    Expression e;
    e.include = include;
    std::string domain;
    parse_expression(option, text, e, domain);
    std::size_t slot = 0;
    if (!domain.empty()) {
      while (slot < domain_names_.size() && domain_names_[slot] != domain) ++slot;
      if (slot == domain_names_.size() || slot == 0) {
        if (domain_names_.size() >= kMaxNvtxDomains) {
          throw ConfigError(quoted(option, text) + ": more than " +
                            std::to_string(kMaxNvtxDomains - 1) + " named domains in all");
        }
        domain_names_.push_back(domain);
        slot = domain_names_.size() - 1;
      }
    }
    e.slot = static_cast<int>(slot);
    exprs_.push_back(std::move(e));
  };
  for (const auto& text : spec_.nvtx_include) add(text, true);
  for (const auto& text : spec_.nvtx_exclude) add(text, false);
  for (auto& s : domain_slots_) s.store(-1, std::memory_order_relaxed);
  if (!exprs_.empty()) open_.resize(kMaxOpenRanges);
}

LaunchFilter::~LaunchFilter() = default;

std::string LaunchFilter::name_of(std::string_view mangled) const {
  const std::string name(mangled);
  switch (spec_.name_base) {
    case KernelNameBase::Mangled:
      return name;
    case KernelNameBase::Demangled:
      return db::demangle(name);
    case KernelNameBase::Function:
      break;
  }
  return db::short_kernel_name(db::demangle(name));
}

bool LaunchFilter::name_matches(std::string_view name) const {
  if (spec_.kernel_name.empty()) return true;
  if (regex_) return RE2::PartialMatch(re2::StringPiece(name.data(), name.size()), regex_->re);
  return name == spec_.kernel_name;
}

void LaunchFilter::domain_created(const void* handle, std::string_view name) noexcept {
  if (!handle) return;
  int slot = -1;
  for (std::size_t i = 1; i < domain_names_.size(); ++i) {
    if (domain_names_[i] == name) slot = static_cast<int>(i);
  }
  if (slot < 0) return;                  // no expression names this domain: its ranges are ignored
  std::lock_guard lock(domains_mutex_);  // writers only (domain creation is rare)
  const std::size_t i = domain_count_.load(std::memory_order_relaxed);
  if (i >= domain_handles_.size()) return;
  domain_slots_[i].store(slot, std::memory_order_relaxed);
  domain_handles_[i].store(handle, std::memory_order_relaxed);
  domain_count_.store(i + 1, std::memory_order_release);
}

int LaunchFilter::slot_of(const void* domain) const noexcept {
  if (!domain) return 0;
  const std::size_t n = domain_count_.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < n; ++i) {
    if (domain_handles_[i].load(std::memory_order_relaxed) == domain) {
      return domain_slots_[i].load(std::memory_order_relaxed);
    }
  }
  return -1;
}

namespace {

/// The NFA states reachable from `states` by ranges of any name only (the `*` elements).
std::uint64_t closure(const LaunchFilter::Expression& e, std::uint64_t states) noexcept {
  for (std::size_t i = 0; i < e.path.size(); ++i) {
    if ((states >> i & 1) && e.path[i].any_ranges) states |= 1ull << (i + 1);
  }
  return states;
}

/// The level above `below` once a range named `message` was pushed.
std::uint64_t step(const LaunchFilter::Expression& e, std::uint64_t below,
                   const char* message) noexcept {
  const std::size_t k = e.path.size();
  std::uint64_t next = 0;
  const std::string_view name = message ? std::string_view(message) : std::string_view();
  for (std::size_t i = 0; i < k; ++i) {
    if (!(below >> i & 1)) continue;
    const Glob& g = e.path[i];
    if (g.any_ranges) {
      next |= 1ull << i;  // absorbs this range, stays
      next |= 1ull << (i + 1);
    } else if (message && glob_match(g.tokens, name)) {
      next |= 1ull << (i + 1);
    }
  }
  if (!e.bottom) next |= 1;  // a match may begin at any depth
  next = closure(e, next);
  const bool accepted = (next >> k & 1) != 0;
  if (!e.top && (accepted || (below & kAccepted))) next |= kAccepted;
  return next;
}

std::uint64_t initial(const LaunchFilter::Expression& e) noexcept {
  const std::uint64_t s = closure(e, 1);
  return (!e.top && (s >> e.path.size() & 1)) ? (s | kAccepted) : s;
}

}  // namespace

void LaunchFilter::init(NvtxThreadState& t) const noexcept {
  t.owner = this;
  t.depth.fill(0);
  for (std::size_t x = 0; x < exprs_.size(); ++x) {
    if (exprs_[x].push_pop)
      t.levels[static_cast<std::size_t>(exprs_[x].slot)][0][x] = initial(exprs_[x]);
  }
}

void LaunchFilter::push(NvtxThreadState& t, const void* domain,
                        const char* message) const noexcept {
  if (exprs_.empty()) return;
  if (t.owner != this) init(t);
  const int slot = slot_of(domain);
  if (slot < 0) return;
  const auto s = static_cast<std::size_t>(slot);
  const std::uint32_t level = t.depth[s];
  if (level == UINT32_MAX) return;
  t.depth[s] = level + 1;
  if (level >= kMaxNvtxDepth) return;
  auto& below = t.levels[s][level];
  auto& above = t.levels[s][level + 1];
  for (std::size_t x = 0; x < exprs_.size(); ++x) {
    const Expression& e = exprs_[x];
    if (e.push_pop && e.slot == slot) above[x] = step(e, below[x], message);
  }
}

void LaunchFilter::pop(NvtxThreadState& t, const void* domain) const noexcept {
  if (exprs_.empty()) return;
  if (t.owner != this) init(t);
  const int slot = slot_of(domain);
  if (slot < 0) return;
  auto& depth = t.depth[static_cast<std::size_t>(slot)];
  if (depth > 0) --depth;  // a pop without a push we saw is ignored
}

void LaunchFilter::range_start(const void* domain, const char* message, std::uint64_t id) noexcept {
  if (id == 0 || exprs_.empty()) return;
  const int slot = slot_of(domain);
  if (slot < 0) return;
  std::uint32_t mask = 0;
  for (std::size_t x = 0; x < exprs_.size(); ++x) {
    const Expression& e = exprs_[x];
    if (!e.push_pop && e.slot == slot && message && glob_match(e.range.tokens, message)) {
      mask |= 1u << x;
    }
  }
  if (mask == 0) return;
  std::lock_guard lock(ranges_mutex_);
  for (auto& r : open_) {
    if (r.id != 0) continue;
    r.id = id;
    r.mask = mask;
    for (std::size_t x = 0; x < exprs_.size(); ++x) {
      if (mask >> x & 1) open_count_[x].fetch_add(1, std::memory_order_relaxed);
    }
    return;
  }
  dropped_.fetch_add(1, std::memory_order_relaxed);
}

void LaunchFilter::range_end(std::uint64_t id) noexcept {
  if (id == 0 || exprs_.empty()) return;
  std::lock_guard lock(ranges_mutex_);
  for (auto& r : open_) {
    if (r.id != id) continue;
    for (std::size_t x = 0; x < exprs_.size(); ++x) {
      if (r.mask >> x & 1) open_count_[x].fetch_sub(1, std::memory_order_relaxed);
    }
    r = OpenRange{};
    return;
  }
}

bool LaunchFilter::nvtx_matches(NvtxThreadState& t) const noexcept {
  if (exprs_.empty()) return true;
  if (t.owner != this) init(t);
  bool any_include = false, included = false;
  for (std::size_t x = 0; x < exprs_.size(); ++x) {
    const Expression& e = exprs_[x];
    bool match = false;
    if (e.push_pop) {
      const auto s = static_cast<std::size_t>(e.slot);
      const std::size_t level = std::min<std::size_t>(t.depth[s], kMaxNvtxDepth);
      const std::uint64_t states = t.levels[s][level][x];
      match = e.top ? (states >> e.path.size() & 1) != 0 : (states & kAccepted) != 0;
    } else {
      match = open_count_[x].load(std::memory_order_relaxed) > 0;
    }
    if (!e.include && match) return false;
    if (e.include) {
      any_include = true;
      included = included || match;
    }
  }
  return !any_include || included;
}

bool LaunchFilter::admit() noexcept {
  const std::uint64_t index = matching_++;  // 0-based among the matching launches
  if (index < spec_.launch_skip || exhausted()) return false;
  ++admitted_;
  return true;
}

std::uint64_t LaunchFilter::nvtx_ranges_dropped() const noexcept {
  return dropped_.load(std::memory_order_relaxed);
}

}  // namespace fuselens::collector
