#include "ProgressLine.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "fuselens/db/Printable.h"

namespace fuselens::tools {

namespace {

ProgressLine* g_open = nullptr;  // the line open on a terminal (erase_open_line)

int terminal_columns(std::FILE* out) {
  winsize size{};
  if (out != nullptr && ::ioctl(::fileno(out), TIOCGWINSZ, &size) == 0 && size.ws_col > 0) {
    return size.ws_col;
  }
  return 80;
}

// `text` cut to at most `columns` display cells, counting one per character (UTF-8 lead byte);
// wide characters may still wrap, which only costs a stale line.
std::string fit(const std::string& text, int columns) {
  if (columns <= 0) return text;
  int cells = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;  // continuation byte
    if (++cells > columns) return text.substr(0, i);
  }
  return text;
}

}  // namespace

ProgressLine::ProgressLine(std::FILE* out, const ProgressOptions& options, Clock clock)
    : out_(out), options_(options), clock_(std::move(clock)), started_(now()), last_(started_) {
  if (options_.terminal && options_.columns <= 0) options_.columns = terminal_columns(out_);
}

ProgressLine::~ProgressLine() { done(); }

std::chrono::steady_clock::time_point ProgressLine::now() const {
  return clock_ ? clock_() : std::chrono::steady_clock::now();
}

bool ProgressLine::due(bool force) const {
  if (out_ == nullptr || !options_.enabled) return false;
  const auto t = now();
  if (!options_.terminal) {
    return options_.log_every.count() > 0 && t - last_ >= options_.log_every;
  }
  if (t - started_ < options_.delay) return false;
  return force || !printed_ || t - last_ >= options_.interval;
}

void ProgressLine::update(std::string_view text, bool force) {
  if (!due(force)) return;
  last_ = now();
  printed_ = true;
  const std::string line = "[fuselens] " + db::printable(text, 4096);
  if (options_.terminal) {
    // Leave the last column free: a line that fills it wraps on some terminals.
    const std::string shown = fit(line, std::max(1, options_.columns - 1));
    std::fprintf(out_, "\r\033[K%s", shown.c_str());
    line_open_ = true;
    g_open = this;
  } else {
    std::fprintf(out_, "%s\n", line.c_str());
  }
  std::fflush(out_);
}

void ProgressLine::erase_open_line() {
  if (g_open != nullptr) g_open->done();
}

void ProgressLine::done() {
  if (g_open == this) g_open = nullptr;
  if (out_ == nullptr || !line_open_) return;
  std::fputs("\r\033[K", out_);
  std::fflush(out_);
  line_open_ = false;
}

std::optional<ProgressMode> parse_progress_mode(std::string_view text) {
  if (text.empty() || text == "auto") return ProgressMode::Auto;
  if (text == "1" || text == "always") return ProgressMode::Always;
  if (text == "0" || text == "never") return ProgressMode::Never;
  return std::nullopt;
}

ProgressOptions stderr_progress_options() {
  ProgressOptions options;
  options.terminal = ::isatty(STDERR_FILENO) != 0;
  if (const char* text = std::getenv("FUSELENS_PROGRESS")) {
    const auto mode = parse_progress_mode(text).value_or(ProgressMode::Auto);
    if (mode == ProgressMode::Never) options.enabled = false;
    if (mode == ProgressMode::Always) options.terminal = true;
  }
  if (const char* delay = std::getenv("FUSELENS_PROGRESS_DELAY_MS")) {
    const std::string_view text(delay);
    long long ms = -1;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), ms);
    if (error == std::errc() && end == text.data() + text.size() && ms >= 0 && ms <= 600000) {
      options.delay = std::chrono::milliseconds(ms);
    }
  }
  return options;
}

}  // namespace fuselens::tools
