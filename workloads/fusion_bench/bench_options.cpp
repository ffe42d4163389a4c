#include "bench_options.h"

#include <charconv>
#include <string_view>
#include <system_error>

namespace fuselens::workloads {
namespace {

int parse_count(std::string_view option, std::string_view text, int minimum) {
  int value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc{} || ptr != end || value < minimum) {
    throw UsageError(std::string(option) + " expects an integer >= " + std::to_string(minimum) +
                     ", got '" + std::string(text) + "'");
  }
  return value;
}

}  // namespace

BenchOptions parse_bench_options(int argc, const char* const* argv) {
  BenchOptions options;
  std::optional<int> iters;
  std::optional<int> warmup;
  bool quick = false;

  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    std::string_view name = arg;
    std::optional<std::string_view> inline_value;
    if (const auto eq = arg.find('='); arg.starts_with("--") && eq != std::string_view::npos) {
      name = arg.substr(0, eq);
      inline_value = arg.substr(eq + 1);
    }
    auto value = [&]() -> std::string_view {
      if (inline_value) {
        return *inline_value;
      }
      if (i + 1 >= argc) {
        throw UsageError(std::string(name) + " needs a value");
      }
      return argv[++i];
    };
    auto no_value = [&] {
      if (inline_value) {
        throw UsageError(std::string(name) + " takes no value");
      }
    };

    if (name == "--iters") {
      iters = parse_count(name, value(), 1);
    } else if (name == "--warmup") {
      warmup = parse_count(name, value(), 0);
    } else if (name == "--quick") {
      no_value();
      quick = true;
    } else if (name == "--only") {
      const std::string_view op = value();
      if (op.empty()) {
        throw UsageError("--only expects an op name");
      }
      options.only = std::string(op);  // checked against the registered ops by main()
    } else if (name == "--help" || name == "-h") {
      no_value();
      options.help = true;
    } else {
      throw UsageError("unknown option '" + std::string(arg) + "'");
    }
  }

  options.quick = quick;
  if (quick) {
    options.iters = 5;
    options.warmup = 2;
  }
  if (iters) {
    options.iters = *iters;
  }
  if (warmup) {
    options.warmup = *warmup;
  }
  return options;
}

std::string bench_usage() {
  return "usage: fusion_bench [--iters N] [--warmup N] [--quick] [--only OP] [--help]\n"
         "  Runs each op's unfused and fused variant on the same inputs, one NVTX range\n"
         "  '<op>/<variant>/<shape>' per variant (payload: iterations), checks the output against "
         "a\n"
         "  double-precision CPU reference and prints median microseconds per iteration.\n"
         "  --iters N    iterations per measured range (default 50)\n"
         "  --warmup N   warm-up iterations before each range, outside it (default 5)\n"
         "  --quick      iters 5, warmup 2, the smallest shapes of each op (explicit "
         "--iters/--warmup win)\n"
         "  --only OP    run one op (the list is printed by --help)\n"
         "Exit status: 0 all outputs correct, 1 a wrong output or a CUDA error, 2 bad command "
         "line,\n"
         "  77 no CUDA device.\n";
}

}  // namespace fuselens::workloads
