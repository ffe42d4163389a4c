#include "idx.h"

#include <zlib.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <memory>

namespace fuselens::workloads::fmnist {
namespace {

constexpr std::uint32_t kImagesMagic = 0x00000803;
constexpr std::uint32_t kLabelsMagic = 0x00000801;
constexpr std::uint32_t kMaxCount = 100'000'000;
constexpr std::uint32_t kMaxSide = 65'536;

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};

/// A gzip (or plain) file with exact reads and one-line errors that name it.
class Reader {
 public:
  explicit Reader(const std::filesystem::path& path) : path_(path.string()) {
    errno = 0;
    file_.reset(gzopen(path_.c_str(), "rb"));
    if (!file_) {
      throw IdxError("cannot open " + path_ + ": " +
                     (errno ? std::strerror(errno) : "gzopen failed"));
    }
  }

  std::uint32_t u32(const char* what) {
    std::array<unsigned char, 4> b{};
    exact(b.data(), b.size(), what);
    return (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) |
           b[3];
  }

  void exact(void* data, std::size_t bytes, const char* what) {
    std::size_t done = 0;
    auto* out = static_cast<unsigned char*>(data);
    while (done < bytes) {
      const auto chunk = static_cast<unsigned>(std::min<std::size_t>(bytes - done, 1u << 30));
      const int n = gzread(file_.get(), out + done, chunk);
      if (n < 0) {
        int code = 0;
        throw IdxError(path_ + ": read error: " + gzerror(file_.get(), &code));
      }
      if (n == 0) break;
      done += static_cast<std::size_t>(n);
    }
    if (done != bytes) {
      throw IdxError(path_ + ": truncated: expected " + std::to_string(bytes) + " bytes of " +
                     what + ", found " + std::to_string(done));
    }
  }

  void expect_end() {
    unsigned char extra = 0;
    if (gzread(file_.get(), &extra, 1) > 0)
      throw IdxError(path_ + ": trailing bytes after the data");
  }

  void expect_magic(std::uint32_t expected, const char* kind) {
    const std::uint32_t magic = u32("header");
    if (magic != expected) {
      char buffer[96];
      std::snprintf(buffer, sizeof buffer, "not an IDX %s file (magic 0x%08x, expected 0x%08x)",
                    kind, magic, expected);
      throw IdxError(path_ + ": " + buffer);
    }
  }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::unique_ptr<gzFile_s, GzCloser> file_;
};

void check_range(const std::string& path, const char* what, std::uint32_t value,
                 std::uint32_t max) {
  if (value == 0 || value > max) {
    throw IdxError(path + ": " + what + " " + std::to_string(value) + " out of range [1, " +
                   std::to_string(max) + "]");
  }
}

std::filesystem::path pick(const std::filesystem::path& dir, const std::string& stem) {
  const auto gz = dir / (stem + ".gz");
  return std::filesystem::exists(gz) ? gz : dir / stem;
}

}  // namespace

Images read_images(const std::filesystem::path& path) {
  Reader in(path);
  in.expect_magic(kImagesMagic, "images");
  Images images;
  images.count = in.u32("header");
  images.rows = in.u32("header");
  images.cols = in.u32("header");
  check_range(in.path(), "image count", images.count, kMaxCount);
  check_range(in.path(), "rows", images.rows, kMaxSide);
  check_range(in.path(), "cols", images.cols, kMaxSide);
  images.pixels.resize(std::size_t{images.count} * images.pixels_per_image());
  in.exact(images.pixels.data(), images.pixels.size(), "pixels");
  in.expect_end();
  return images;
}

std::vector<std::uint8_t> read_labels(const std::filesystem::path& path, unsigned classes) {
  Reader in(path);
  in.expect_magic(kLabelsMagic, "labels");
  const std::uint32_t count = in.u32("header");
  check_range(in.path(), "label count", count, kMaxCount);
  std::vector<std::uint8_t> labels(count);
  in.exact(labels.data(), labels.size(), "labels");
  in.expect_end();
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] >= classes) {
      throw IdxError(in.path() + ": label " + std::to_string(labels[i]) + " at index " +
                     std::to_string(i) + " is not below " + std::to_string(classes));
    }
  }
  return labels;
}

Dataset load_dataset(const std::filesystem::path& dir) {
  Dataset data;
  auto load = [&](Split& split, const std::string& prefix) {
    const auto images_path = pick(dir, prefix + "-images-idx3-ubyte");
    const auto labels_path = pick(dir, prefix + "-labels-idx1-ubyte");
    split.images = read_images(images_path);
    split.labels = read_labels(labels_path);
    if (split.labels.size() != split.images.count) {
      throw IdxError(labels_path.string() + ": " + std::to_string(split.labels.size()) +
                     " labels for " + std::to_string(split.images.count) + " images in " +
                     images_path.string());
    }
  };
  load(data.train, "train");
  load(data.test, "t10k");
  if (data.train.images.rows != data.test.images.rows ||
      data.train.images.cols != data.test.images.cols) {
    throw IdxError(dir.string() + ": train and test images differ in size");
  }
  return data;
}

}  // namespace fuselens::workloads::fmnist
