#pragma once
// GzipStreamBuf: a write-only std::streambuf that gzip-compresses (RFC 1952, zlib's deflate)
// what is written to it and hands the compressed bytes to another std::ostream. ExportFile uses
// it for outputs whose name ends in ".gz" ("trace.json.gz"), so large exports are written
// compressed directly, never as an uncompressed file first.
//
// Memory: two fixed buffers (kChunkBytes each) and zlib's deflate state (about 256 kB at the
// default level), whatever the size of the output.
//
// Errors: a deflate or downstream write failure makes overflow()/sync() report failure (the
// std::ostream writing through it goes bad); finish() returns false. Nothing throws.

#include <zlib.h>

#include <array>
#include <cstddef>
#include <ostream>
#include <streambuf>

namespace fuselens::analyzer {

class GzipStreamBuf : public std::streambuf {
 public:
  static constexpr std::size_t kChunkBytes = 1 << 16;

  /// Compresses into `sink` at zlib `level` (Z_DEFAULT_COMPRESSION: 6).
  explicit GzipStreamBuf(std::ostream& sink, int level = Z_DEFAULT_COMPRESSION);
  ~GzipStreamBuf() override;
  GzipStreamBuf(const GzipStreamBuf&) = delete;
  GzipStreamBuf& operator=(const GzipStreamBuf&) = delete;

  /// Compresses what is buffered, writes the gzip trailer (CRC-32 and size) and flushes `sink`.
  /// Call once after the last write; returns false when compression or the sink failed. Writes
  /// after finish() fail.
  bool finish();

 protected:
  int_type overflow(int_type ch) override;
  int sync() override;

 private:
  /// Deflates the pending input with `flush` (Z_NO_FLUSH, Z_FINISH) into the sink.
  bool deflate_pending(int flush);

  std::ostream& sink_;
  z_stream zs_{};
  bool initialized_ = false;
  bool ok_ = false;
  bool finished_ = false;
  std::array<char, kChunkBytes> in_{};
  std::array<char, kChunkBytes> out_{};
};

}  // namespace fuselens::analyzer
