#include "cct/RegexFilter.h"

#include <re2/re2.h>

namespace fuselens::analyzer {

RegexFilter::RegexFilter(const std::string& pattern) : pattern_(pattern) {
  if (pattern.empty()) throw RegexError("empty pattern");
  if (pattern.size() > kMaxPatternBytes) {
    throw RegexError("pattern of " + std::to_string(pattern.size()) + " bytes; at most " +
                     std::to_string(kMaxPatternBytes));
  }
  RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(kMaxProgramBytes);
  re_ = std::make_unique<re2::RE2>(pattern, options);
  if (!re_->ok()) {
    std::string why = re_->error();
    if (re_->error_code() == RE2::ErrorPatternTooLarge) {
      why += " (its program exceeds " + std::to_string(kMaxProgramBytes >> 20) + " MiB)";
    }
    throw RegexError(why);
  }
}

RegexFilter::~RegexFilter() = default;
RegexFilter::RegexFilter(RegexFilter&&) noexcept = default;
RegexFilter& RegexFilter::operator=(RegexFilter&&) noexcept = default;

bool RegexFilter::search(std::string_view text) const {
  return RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), *re_);
}

}  // namespace fuselens::analyzer
