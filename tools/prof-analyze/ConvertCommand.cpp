// prof-analyze convert --layout lean -o OUT [--force] CAPTURE
//
// Rewrites a capture in the lean trace layout (issue 21; db/include/fuselens/db/Layout.h,
// convert_to_lean): kernels and API calls interned and delta-coded, without their indexes, about
// a quarter of their size; every analysis gives the same output on the result. OUT is written
// through a temporary file renamed into place (analyzer::ExportFile), as merge writes.

#include <sys/stat.h>

#include <iostream>
#include <memory>
#include <string>

#include "Cli.h"
#include "export/ExportFile.h"
#include "fuselens/db/Layout.h"
#include "fuselens/db/Printable.h"

namespace fuselens::cli {
namespace {

constexpr const char* kConvertFooter =
    "Exit status:\n"
    "  0  converted\n"
    "  1  the capture cannot be read (missing, not a FuseLens capture, corrupt, written by a\n"
    "     newer FuseLens), is lean already, or holds a row the lean layout cannot store\n"
    "  2  command-line error: a layout other than lean, OUT is the capture or not a regular\n"
    "     file, or OUT exists and --force was not given";

struct ConvertOptions {
  std::string input, output, layout;
  bool force = false;
};

int run_convert(const ConvertOptions& options) {
  if (options.layout != "lean") {
    return fail("convert: --layout " + db::printable(options.layout) +
                    ": expected lean (a capture is written in the full layout unless prof-run "
                    "--layout lean)",
                kExitUsage);
  }
  if (options.output == "-") {
    return fail("convert: -o - is not possible: a capture is a file; name one", kExitUsage);
  }
  struct stat st {};
  if (::lstat(options.output.c_str(), &st) == 0 && !options.force && S_ISREG(st.st_mode)) {
    return fail(
        "convert: '" + db::printable(options.output) + "' exists; pass --force to replace it",
        kExitUsage);
  }
  std::unique_ptr<analyzer::ExportFile> out;
  try {
    out = std::make_unique<analyzer::ExportFile>(options.output,
                                                 std::vector<std::string>{options.input});
  } catch (const analyzer::ExportError& e) {
    return fail(std::string("convert: ") + e.what(), kExitUsage);
  }
  try {
    db::convert_to_lean(options.input, out->temporary_path());
  } catch (const db::Error& e) {
    return fail(std::string("convert: ") + e.what(), kExitCapture);
  }
  out->commit();
  struct stat before {
  }, after{};
  ::stat(options.input.c_str(), &before);
  ::stat(options.output.c_str(), &after);
  std::cout << "Wrote '" << db::printable(options.output)
            << "' in the lean layout: " << after.st_size << " bytes (from " << before.st_size
            << ")\n";
  return kExitOk;
}

}  // namespace

Runner add_convert_command(CLI::App& app) {
  auto options = std::make_shared<ConvertOptions>();
  auto* command = add_command(
      app, "convert",
      "Rewrite a capture in the lean trace layout (as prof-run --layout lean writes it): "
      "smaller, same analyses");
  command->footer(footer("convert", kConvertFooter));
  command->add_option("CAPTURE", options->input, "The capture to convert")->required();
  command->add_option("-o,--output", options->output, "The capture to write")->required();
  command->add_option("--layout", options->layout, "The layout to write: lean")->required();
  command->add_flag("--force", options->force, "Replace OUT when it exists");
  return [options] { return run_convert(*options); };
}

}  // namespace fuselens::cli
