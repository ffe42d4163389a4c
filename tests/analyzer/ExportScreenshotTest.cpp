// Renders the HTML report of tests/data/fusion_bench.sqlite in headless Chromium: the screenshot
// must not be blank (decoded with libpng, its distinct colours and non-background pixels
// counted) and the DOM Chromium built must hold the report's tables and charts.
//
// Skips when Chromium is not installed (Debian package `chromium`, see scripts/setup.sh);
// FUSELENS_CHROMIUM names another binary. With FUSELENS_REPORT_SCREENSHOT=PATH the screenshot is
// also copied to PATH (how docs/report-example.png is made).
#include <png.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <vector>

#include "TestSupport.h"
#include "export/ExportFile.h"
#include "export/ExportHtml.h"

#ifndef FUSELENS_TEST_DATA_DIR
#error "FUSELENS_TEST_DATA_DIR must name tests/data"
#endif

namespace fuselens::analyzer {
namespace {

namespace fs = std::filesystem;

/// The Chromium binary: $FUSELENS_CHROMIUM, else `chromium` or `chromium-browser` on PATH.
std::string find_chromium() {
  if (const char* env = std::getenv("FUSELENS_CHROMIUM"); env && *env) return env;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (std::size_t start = 0; start <= dirs.size();) {
    const auto end = std::min(dirs.find(':', start), dirs.size());
    for (const char* name : {"chromium", "chromium-browser"}) {
      const fs::path candidate = fs::path(dirs.substr(start, end - start)) / name;
      if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    }
    start = end + 1;
  }
  return {};
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct Pixels {
  std::uint32_t width = 0, height = 0;
  std::vector<std::uint8_t> rgb;  ///< row-major, 3 bytes a pixel
  std::string error;
};

Pixels decode_png(const std::string& path) {
  Pixels p;
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (png_image_begin_read_from_file(&image, path.c_str()) == 0) {
    p.error = image.message;
    return p;
  }
  image.format = PNG_FORMAT_RGB;
  p.rgb.resize(PNG_IMAGE_SIZE(image));
  if (png_image_finish_read(&image, nullptr, p.rgb.data(), 0, nullptr) == 0) {
    p.error = image.message;
    return p;
  }
  p.width = image.width;
  p.height = image.height;
  return p;
}

/// Runs `command` through the shell with a time limit; returns its exit status.
int shell(const std::string& command) {
  const int status = std::system(("timeout 120 " + command).c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class Screenshot : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = find_chromium();
    if (chromium_.empty()) {
      GTEST_SKIP() << "Chromium is not installed (Debian package 'chromium', installed by "
                      "scripts/setup.sh; or set FUSELENS_CHROMIUM): the report is not rendered";
    }
    const std::string capture = std::string(FUSELENS_TEST_DATA_DIR) + "/fusion_bench.sqlite";
    ExportFile out(html_);
    make_html_report({load_export_run(db::Reader(capture), "A")}).write(out.stream());
    out.commit();
  }
  /// chromium --headless with the test's own profile directory and `args`.
  std::string chromium(const std::string& args) const {
    return "'" + chromium_ + "' --headless --no-sandbox --disable-gpu --hide-scrollbars " +
           "--user-data-dir='" + dir_.file("profile") + "' " + args;
  }

  test::TempDir dir_;
  std::string chromium_;
  std::string html_ = dir_.file("report.html");
};

TEST_F(Screenshot, ReportRendersAndIsNotBlank) {
  const std::string png = dir_.file("report.png");
  ASSERT_EQ(shell(chromium("--screenshot='" + png + "' --window-size=1280,2000 'file://" + html_ +
                           "' > '" + dir_.file("shot.log") + "' 2>&1")),
            0)
      << slurp(dir_.file("shot.log"));
  const Pixels pixels = decode_png(png);
  ASSERT_TRUE(pixels.error.empty()) << pixels.error;
  EXPECT_EQ(pixels.width, 1280U);
  EXPECT_EQ(pixels.height, 2000U);
  std::map<std::uint32_t, std::size_t> colours;
  for (std::size_t i = 0; i + 2 < pixels.rgb.size(); i += 3) {
    ++colours[static_cast<std::uint32_t>(pixels.rgb[i]) << 16 | pixels.rgb[i + 1] << 8 |
              pixels.rgb[i + 2]];
  }
  std::size_t background = 0;
  for (const auto& [colour, n] : colours) background = std::max(background, n);
  const std::size_t total = pixels.rgb.size() / 3;
  // Text, table stripes, bars and the header give many colours and cover much of the page.
  EXPECT_GT(colours.size(), 64U);
  EXPECT_GT(total - background, total / 10) << "almost every pixel is the background colour";
  if (const char* keep = std::getenv("FUSELENS_REPORT_SCREENSHOT"); keep && *keep) {
    fs::copy_file(png, keep, fs::copy_options::overwrite_existing);
  }
}

TEST_F(Screenshot, DomHoldsTheTablesAndCharts) {
  const std::string dom_path = dir_.file("dom.html");
  ASSERT_EQ(shell(chromium("--dump-dom 'file://" + html_ + "' > '" + dom_path + "' 2> '" +
                           dir_.file("dom.log") + "'")),
            0)
      << slurp(dir_.file("dom.log"));
  const std::string dom = slurp(dom_path);
  for (const char* part :
       {"<table id=\"run-table\"", "<table id=\"devices-table\"", "<table id=\"kernels\"",
        "<table id=\"memory-operations\"", "<table id=\"api\"", "<table id=\"nvtx\"",
        "<table id=\"device-memory\"", "CUDA GPU Kernel Summary", "Top kernels by total GPU time",
        "Device memory in use", "<svg", "H100", "<table id=\"peaks-table\"",
        "<table id=\"flags-table\"", "<table id=\"variant-comparison-table\"",
        "<table id=\"calling-contexts-table\"", "class=\"roof-point\"", "class=\"heat-cell\""}) {
    EXPECT_NE(dom.find(part), std::string::npos) << part;
  }
  const auto kernels = dom.find("<table id=\"kernels\"");
  ASSERT_NE(kernels, std::string::npos);
  const std::string table = dom.substr(kernels, dom.find("</table>", kernels) - kernels);
  std::size_t rows = 0;
  for (auto at = table.find("<tr>"); at != std::string::npos; at = table.find("<tr>", at + 1)) {
    ++rows;
  }
  EXPECT_GE(rows, 2U) << "the kernel table has no rows";
  EXPECT_EQ(dom.find("<script"), std::string::npos);
}

}  // namespace
}  // namespace fuselens::analyzer
