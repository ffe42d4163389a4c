// The IDX reader: hand-made files (plain and gzip) with known content, every malformed case named in
// idx.h, and the real Fashion-MNIST files of Debian's dataset-fashion-mnist (scripts/setup.sh).
#include <gtest/gtest.h>
#include <zlib.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "TempDir.h"
#include "idx.h"

namespace fm = fuselens::workloads::fmnist;
using fuselens::test::TempDir;

namespace {

std::vector<unsigned char> be32(std::uint32_t v) {
  return {static_cast<unsigned char>(v >> 24), static_cast<unsigned char>(v >> 16),
          static_cast<unsigned char>(v >> 8), static_cast<unsigned char>(v)};
}

std::vector<unsigned char> idx(std::uint32_t magic, std::vector<std::uint32_t> dims, std::size_t data_bytes,
                               unsigned char fill_base = 0) {
  std::vector<unsigned char> bytes = be32(magic);
  for (auto d : dims) {
    const auto b = be32(d);
    bytes.insert(bytes.end(), b.begin(), b.end());
  }
  for (std::size_t i = 0; i < data_bytes; ++i) bytes.push_back(static_cast<unsigned char>(fill_base + i % 7));
  return bytes;
}

void write_plain(const std::string& path, const std::vector<unsigned char>& bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                               static_cast<std::streamsize>(bytes.size()));
}

void write_gz(const std::string& path, const std::vector<unsigned char>& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  gzclose(f);
}

std::string error_of(auto&& fn) {
  try {
    fn();
  } catch (const fm::IdxError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Idx, ReadsPlainAndGzipImagesWithTheirPixels) {
  TempDir dir;
  const auto bytes = idx(0x803, {3, 2, 4}, 24);
  write_plain(dir.file("a.idx"), bytes);
  write_gz(dir.file("a.idx.gz"), bytes);
  for (const char* name : {"a.idx", "a.idx.gz"}) {
    const fm::Images images = fm::read_images(dir.file(name));
    EXPECT_EQ(images.count, 3u);
    EXPECT_EQ(images.rows, 2u);
    EXPECT_EQ(images.cols, 4u);
    ASSERT_EQ(images.pixels.size(), 24u);
    for (std::size_t i = 0; i < 24; ++i) EXPECT_EQ(images.pixels[i], i % 7) << name << " pixel " << i;
  }
}

TEST(Idx, ReadsLabels) {
  TempDir dir;
  write_gz(dir.file("l.gz"), idx(0x801, {5}, 5, 2));
  EXPECT_EQ(fm::read_labels(dir.file("l.gz")), (std::vector<std::uint8_t>{2, 3, 4, 5, 6}));
}

TEST(Idx, NamesEveryMalformedFile) {
  TempDir dir;
  EXPECT_NE(error_of([&] { (void)fm::read_images(dir.file("missing.gz")); }).find("cannot open"), std::string::npos);
  write_plain(dir.file("labels_as_images"), idx(0x801, {5}, 5));
  EXPECT_NE(error_of([&] { (void)fm::read_images(dir.file("labels_as_images")); })
                .find("not an IDX images file (magic 0x00000801, expected 0x00000803)"),
            std::string::npos);
  write_plain(dir.file("short"), idx(0x803, {2, 3, 3}, 10));
  EXPECT_NE(error_of([&] { (void)fm::read_images(dir.file("short")); })
                .find("truncated: expected 18 bytes of pixels, found 10"),
            std::string::npos);
  write_plain(dir.file("header_only"), be32(0x803));
  EXPECT_NE(error_of([&] { (void)fm::read_images(dir.file("header_only")); }).find("truncated"), std::string::npos);
  write_plain(dir.file("long"), idx(0x801, {2}, 3));
  EXPECT_NE(error_of([&] { (void)fm::read_labels(dir.file("long")); }).find("trailing bytes"), std::string::npos);
  write_plain(dir.file("zero"), idx(0x803, {0, 28, 28}, 0));
  EXPECT_NE(error_of([&] { (void)fm::read_images(dir.file("zero")); }).find("image count 0 out of range"),
            std::string::npos);
  write_plain(dir.file("bad_label"), idx(0x801, {3}, 3, 8));  // 8, 9, 10
  EXPECT_NE(error_of([&] { (void)fm::read_labels(dir.file("bad_label")); }).find("label 10 at index 2"),
            std::string::npos);
}

TEST(Idx, DatasetChecksThatImagesAndLabelsAgree) {
  TempDir dir;
  write_gz(dir.file("train-images-idx3-ubyte.gz"), idx(0x803, {4, 2, 2}, 16));
  write_gz(dir.file("train-labels-idx1-ubyte.gz"), idx(0x801, {3}, 3));
  write_plain(dir.file("t10k-images-idx3-ubyte"), idx(0x803, {2, 2, 2}, 8));
  write_plain(dir.file("t10k-labels-idx1-ubyte"), idx(0x801, {2}, 2));
  EXPECT_NE(error_of([&] { (void)fm::load_dataset(dir.path()); }).find("3 labels for 4 images"), std::string::npos);
  write_gz(dir.file("train-labels-idx1-ubyte.gz"), idx(0x801, {4}, 4));
  const fm::Dataset data = fm::load_dataset(dir.path());  // .gz for train, plain files for test
  EXPECT_EQ(data.train.images.count, 4u);
  EXPECT_EQ(data.test.labels.size(), 2u);
}

// The real dataset: 60,000 + 10,000 images of 28×28, ten classes of exactly 6,000 / 1,000 each.
TEST(Idx, ReadsDebiansFashionMnist) {
  if (!std::filesystem::exists(std::filesystem::path(fm::kDefaultDataDir) / "train-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << "dataset-fashion-mnist not installed (scripts/setup.sh installs it)";
  }
  const fm::Dataset data = fm::load_dataset(fm::kDefaultDataDir);
  EXPECT_EQ(data.train.images.count, 60000u);
  EXPECT_EQ(data.test.images.count, 10000u);
  EXPECT_EQ(data.train.images.rows, 28u);
  EXPECT_EQ(data.train.images.cols, 28u);
  std::array<int, 10> train{}, test{};
  for (auto l : data.train.labels) ++train[l];
  for (auto l : data.test.labels) ++test[l];
  for (int c = 0; c < 10; ++c) {
    EXPECT_EQ(train[static_cast<std::size_t>(c)], 6000) << c;
    EXPECT_EQ(test[static_cast<std::size_t>(c)], 1000) << c;
  }
  // Not blank: the mean pixel of Fashion-MNIST's training set is about 72.9 (0.286 × 255).
  const double mean = std::accumulate(data.train.images.pixels.begin(), data.train.images.pixels.end(), 0.0) /
                      static_cast<double>(data.train.images.pixels.size());
  EXPECT_NEAR(mean, 72.94, 0.5);
}

}  // namespace
