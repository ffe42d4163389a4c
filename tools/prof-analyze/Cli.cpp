#include "Cli.h"

#include <algorithm>
#include <iostream>
#include <map>

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
  std::cerr << "prof-analyze: error: " << line << std::endl;
  return code;
}

CLI::App* add_command(CLI::App& app, const std::string& name, const std::string& description) {
  CLI::App* command = app.add_subcommand(name, description);
  command->footer(kFooter);
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
