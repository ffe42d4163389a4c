#include "Cli.h"

#include <algorithm>
#include <iostream>
#include <map>

#include "Color.h"
#include "ProgressLine.h"
#include "fuselens/db/Printable.h"

namespace fuselens::cli {

int fail(std::string message, int code) {
  std::replace(message.begin(), message.end(), '\n', ' ');
  std::replace(message.begin(), message.end(), '\r', ' ');
  while (!message.empty() && message.back() == ' ') message.pop_back();
  // Messages quote user input and capture strings: other control characters (ESC sequences, NUL,
  // BEL, tabs, DEL, C1) and invalid UTF-8 are escaped (db::printable) so that nothing reaches
  // the terminal raw.
  const std::string line = db::printable(message);  // a capture string cannot drive the terminal
  tools::ProgressLine::erase_open_line();           // the error starts on a clean line
  std::cerr << tools::diagnostic_prefix("prof-analyze", tools::Tone::Error) << line << std::endl;
  return code;
}

const char* examples(const std::string& command) {
  // Two to four real commands per subcommand, shown first in the footer of its --help.
  static const std::map<std::string, const char*> kExamples{
      {"",
       "Examples:\n"
       "  prof-analyze summary run.sqlite\n"
       "  prof-analyze flags run.sqlite --fail-on launch_short\n"
       "  prof-analyze export run.sqlite --format html -o report.html\n"
       "  prof-analyze compare before.sqlite after.sqlite --fail-if-slower 5"},
      {"summary",
       "Examples:\n"
       "  prof-analyze summary run.sqlite\n"
       "  prof-analyze summary run.sqlite --report cuda_gpu_kern_sum --names short\n"
       "  prof-analyze summary run.sqlite --format csv -o stats   (stats_<report>.csv)\n"
       "  prof-analyze summary run.sqlite --window all --format json"},
      {"cct",
       "Examples:\n"
       "  prof-analyze cct run.sqlite\n"
       "  prof-analyze cct run.sqlite --view bottom-up --min-percent 1\n"
       "  prof-analyze cct run.sqlite --phase backward --frames python --depth 6"},
      {"export",
       "Examples:\n"
       "  prof-analyze export run.sqlite --format html -o report.html\n"
       "  prof-analyze export run.sqlite --format chrome-trace -o trace.json.gz\n"
       "  prof-analyze export ddp.sqlite --format chrome-trace --rank 0 -o rank0.json.gz\n"
       "  prof-analyze export before.sqlite after.sqlite --format html -o side_by_side.html"},
      {"flags",
       "Examples:\n"
       "  prof-analyze flags run.sqlite\n"
       "  prof-analyze flags --list\n"
       "  prof-analyze flags run.sqlite --threshold launch_short.runtime_cutoff_us=50\n"
       "  prof-analyze flags run.sqlite --fail-on launch_short,fusion_chain --format json"},
      {"compare",
       "Examples:\n"
       "  prof-analyze compare before.sqlite after.sqlite\n"
       "  prof-analyze compare before.sqlite after.sqlite --fail-if-slower 5\n"
       "  prof-analyze compare bench.sqlite --baseline 'gemm_bias_relu/unfused/*' "
       "--candidate 'gemm_bias_relu/fused/*'\n"
       "  prof-analyze compare eager.sqlite compiled.sqlite --by op"},
      {"roofline",
       "Examples:\n"
       "  prof-run --metrics roofline -o run.sqlite -- ./app\n"
       "  prof-analyze roofline run.sqlite\n"
       "  prof-analyze roofline run.sqlite --peaks measured --format csv"},
      {"steps",
       "Examples:\n"
       "  prof-analyze steps run.sqlite\n"
       "  prof-analyze steps run.sqlite --step-range 'train_step*'\n"
       "  prof-analyze steps run.sqlite --auto --format json"},
      {"modules",
       "Examples:\n"
       "  prof-analyze modules run.sqlite\n"
       "  prof-analyze modules run.sqlite --depth 2 --format csv"},
      {"convert",
       "Examples:\n"
       "  prof-analyze convert run.sqlite --layout lean -o run.lean.sqlite\n"
       "  prof-analyze convert big.sqlite --layout lean -o big.lean.sqlite --force"},
      {"merge",
       "Examples:\n"
       "  prof-analyze merge rank0.sqlite rank1.sqlite -o ddp.sqlite\n"
       "  prof-analyze merge run.*.sqlite -o run.sqlite --force"},
      {"ranks",
       "Examples:\n"
       "  prof-analyze ranks ddp.sqlite\n"
       "  prof-analyze ranks ddp.sqlite --window all --format json"},
  };
  const auto it = kExamples.find(command);
  return it == kExamples.end() ? nullptr : it->second;
}

std::string footer(const std::string& command, const std::string& exit_status) {
  const char* lines = examples(command);
  return lines == nullptr ? exit_status : std::string(lines) + "\n\n" + exit_status;
}

CLI::App* add_command(CLI::App& app, const std::string& name, const std::string& description) {
  CLI::App* command = app.add_subcommand(name, description);
  command->footer(footer(name));
  return command;
}

analyzer::NameKind name_kind(const std::string& names) {
  static const std::map<std::string, analyzer::NameKind> kinds{
      {"demangled", analyzer::NameKind::Demangled},
      {"short", analyzer::NameKind::Short},
      {"mangled", analyzer::NameKind::Mangled}};
  return kinds.at(names);
}

analyzer::OutputFormat output_format(const std::string& format) {
  static const std::map<std::string, analyzer::OutputFormat> formats{
      {"table", analyzer::OutputFormat::Table},
      {"csv", analyzer::OutputFormat::Csv},
      {"json", analyzer::OutputFormat::Json}};
  return formats.at(format);
}

CLI::Option* add_names_option(CLI::App* command, std::string& names, const std::string& help) {
  return command->add_option("--names", names, help)
      ->check(CLI::IsMember({"demangled", "short", "mangled"}))
      ->capture_default_str();
}

CLI::Option* add_format_option(CLI::App* command, std::string& format) {
  return command->add_option("--format", format, "Output format")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
}

CLI::Option* add_nvtx_projection_option(CLI::App* command, std::string& projection) {
  return command
      ->add_option("--nvtx-projection", projection,
                   "GPU work of an NVTX range: kernels launched inside it by any thread of its "
                   "process (process), or by its own thread only (thread, as Nsight Systems' "
                   "nvtx_gpu_proj_sum)")
      ->check(CLI::IsMember({"process", "thread"}))
      ->capture_default_str();
}

analyzer::NvtxProjection nvtx_projection(const std::string& projection) {
  return analyzer::parse_nvtx_projection(projection).value_or(analyzer::NvtxProjection::Process);
}

CLI::Option* add_frames_option(CLI::App* command, std::string& frames) {
  return command
      ->add_option("--frames", frames,
                   "Frames in call paths: user (your own frames, framework frames folded into "
                   "one per op, [torch: aten::linear], or library), python (every Python frame, "
                   "native ones folded), native (native frames only), all (every frame); auto: "
                   "user for a capture with Python frames, else native")
      ->check(CLI::IsMember({"auto", "user", "python", "native", "all"}))
      ->capture_default_str();
}

}  // namespace fuselens::cli
