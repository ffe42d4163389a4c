#include "export/GzipStreamBuf.h"

namespace fuselens::analyzer {

GzipStreamBuf::GzipStreamBuf(std::ostream& sink, int level) : sink_(sink) {
  // windowBits 15 + 16: a gzip header and trailer instead of zlib's; memLevel 8 is the default.
  initialized_ = deflateInit2(&zs_, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK;
  ok_ = initialized_;
  setp(in_.data(), in_.data() + in_.size());
}

GzipStreamBuf::~GzipStreamBuf() {
  if (initialized_ && !finished_) deflateEnd(&zs_);
}

bool GzipStreamBuf::deflate_pending(int flush) {
  if (!ok_) return false;
  zs_.next_in = reinterpret_cast<Bytef*>(pbase());
  zs_.avail_in = static_cast<uInt>(pptr() - pbase());
  int rc = Z_OK;
  do {
    zs_.next_out = reinterpret_cast<Bytef*>(out_.data());
    zs_.avail_out = static_cast<uInt>(out_.size());
    rc = deflate(&zs_, flush);
    if (rc == Z_STREAM_ERROR) {
      ok_ = false;
      return false;
    }
    const auto produced = static_cast<std::streamsize>(out_.size() - zs_.avail_out);
    if (produced > 0 && !sink_.write(out_.data(), produced)) {
      ok_ = false;
      return false;
    }
  } while (zs_.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
  setp(in_.data(), in_.data() + in_.size());
  return true;
}

GzipStreamBuf::int_type GzipStreamBuf::overflow(int_type ch) {
  if (finished_ || !deflate_pending(Z_NO_FLUSH)) return traits_type::eof();
  if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
  *pptr() = traits_type::to_char_type(ch);
  pbump(1);
  return ch;
}

int GzipStreamBuf::sync() {
  // Only hands full input to deflate; the compressed stream is completed by finish().
  if (finished_) return 0;
  return deflate_pending(Z_NO_FLUSH) ? 0 : -1;
}

bool GzipStreamBuf::finish() {
  if (finished_) return ok_;
  const bool done = deflate_pending(Z_FINISH);
  finished_ = true;
  if (initialized_) deflateEnd(&zs_);
  setp(nullptr, nullptr);  // later writes reach overflow(), which refuses them
  sink_.flush();
  ok_ = done && static_cast<bool>(sink_);
  return ok_;
}

}  // namespace fuselens::analyzer
