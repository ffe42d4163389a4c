#pragma once
// Reading the IDX files of MNIST and Fashion-MNIST (Y. LeCun's format, the standard distribution of
// both datasets; Debian's dataset-fashion-mnist installs them gzip-compressed under
// /usr/share/datasets/fashion-mnist).
//
// IDX layout (all integers big-endian): magic = 0x00 0x00 <type> <ndim>, type 0x08 = unsigned byte;
// then ndim 32-bit dimension sizes; then the data, row-major. Images: magic 0x00000803, dims
// (count, rows, cols), one byte per pixel (0 = background, 255 = ink). Labels: magic 0x00000801,
// dims (count), one byte per label.
// Files are read through zlib's gzread, so gzip-compressed and plain files both work.
//
// Errors: IdxError with one line naming the file and what is wrong (cannot open, not an IDX
// images/labels file (the magic found), dimensions out of range, truncated (bytes expected and
// found), trailing bytes, a label outside [0, classes), images and labels of different counts).

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace fuselens::workloads::fmnist {

class IdxError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Images {
  std::uint32_t count = 0, rows = 0, cols = 0;
  std::vector<std::uint8_t> pixels;  ///< count × rows × cols, row-major
  [[nodiscard]] std::size_t pixels_per_image() const { return std::size_t{rows} * cols; }
};

/// Reads an IDX images file (magic 0x00000803, 3 dimensions). Throws IdxError.
[[nodiscard]] Images read_images(const std::filesystem::path& path);

/// Reads an IDX labels file (magic 0x00000801, 1 dimension); every label must be < classes.
/// Throws IdxError.
[[nodiscard]] std::vector<std::uint8_t> read_labels(const std::filesystem::path& path,
                                                    unsigned classes = 10);

struct Split {
  Images images;
  std::vector<std::uint8_t> labels;  ///< images.count labels
};

struct Dataset {
  Split train, test;
};

/// The default directory of Debian's dataset-fashion-mnist package.
inline const char* kDefaultDataDir = "/usr/share/datasets/fashion-mnist";

/// Loads train-{images-idx3,labels-idx1}-ubyte[.gz] and t10k-... from `dir` (the .gz name first,
/// then the plain one). Checks that images and labels agree in count and that both splits have the
/// same image size. Throws IdxError.
[[nodiscard]] Dataset load_dataset(const std::filesystem::path& dir);

}  // namespace fuselens::workloads::fmnist
