#include "veil/io/codec.h"

#include <zlib.h>
#include <zstd.h>

#include "veil/backend/device.h"

#include <algorithm>
#include <limits>
#include <memory>

namespace veil::io {

std::string to_string(Compression c) {
  switch (c) {
    case Compression::none: return "none";
    case Compression::zlib: return "zlib";
    case Compression::zstd: return "zstd";
  }
  return "unknown";
}

Compression compression_from_string(const std::string& s) {
  if (s == "none") return Compression::none;
  if (s == "zlib") return Compression::zlib;
  if (s == "zstd") return Compression::zstd;
  throw InvalidArgument("compression: expected 'none', 'zlib' or 'zstd', got '" + s + "'");
}

namespace {

struct CCtxDeleter {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct DCtxDeleter {
  void operator()(ZSTD_DCtx* c) const { ZSTD_freeDCtx(c); }
};
struct DStreamDeleter {
  void operator()(ZSTD_DStream* c) const { ZSTD_freeDStream(c); }
};

[[noreturn]] void corrupt(const std::string& what, const std::string& why) {
  throw InvalidArgument(what + ": " + why);
}

// Output grows in steps of at most this much, so memory follows the data actually produced.
constexpr std::size_t kGrowStep = std::size_t(64) << 20;

}  // namespace

Bytes zstd_compress(ByteView in, int level) {
  if (level < 1 || level > ZSTD_maxCLevel()) {
    throw InvalidArgument("compression_level: expected 1.." + std::to_string(ZSTD_maxCLevel()) +
                          " for zstd, got " + std::to_string(level));
  }
  std::unique_ptr<ZSTD_CCtx, CCtxDeleter> cctx(ZSTD_createCCtx());
  if (!cctx) throw OutOfMemory("zstd: cannot allocate a compression context");
  ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_compressionLevel, level);
  ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_contentSizeFlag, 1);
  // Large bodies (keys reach gigabytes) compress on the CPU backend's threads; the output is
  // one ordinary frame either way. Builds of libzstd without threads ignore the request.
  if (in.size >= (std::size_t(8) << 20)) {
    ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_nbWorkers, std::min(num_threads(), 16));
  }
  Bytes out(ZSTD_compressBound(in.size));
  const std::size_t r = ZSTD_compress2(cctx.get(), out.data(), out.size(), in.data, in.size);
  if (ZSTD_isError(r)) throw RuntimeError(std::string("zstd: ") + ZSTD_getErrorName(r));
  out.resize(r);
  return out;
}

void zstd_decompress_exact(ByteView in, std::uint8_t* out, std::size_t expected,
                           const std::string& what) {
  const std::size_t frame = ZSTD_findFrameCompressedSize(in.data, in.size);
  if (ZSTD_isError(frame)) corrupt(what, std::string("not a zstd frame (") + ZSTD_getErrorName(frame) + ")");
  if (frame != in.size) corrupt(what, "trailing bytes after the zstd frame");
  const unsigned long long content = ZSTD_getFrameContentSize(in.data, in.size);
  if (content != expected) {
    corrupt(what, "zstd frame holds " +
                      (content == ZSTD_CONTENTSIZE_UNKNOWN || content == ZSTD_CONTENTSIZE_ERROR
                           ? std::string("an unknown number of")
                           : std::to_string(content)) +
                      " bytes, expected " + std::to_string(expected));
  }
  std::unique_ptr<ZSTD_DCtx, DCtxDeleter> ctx(ZSTD_createDCtx());
  if (!ctx) throw OutOfMemory("zstd: cannot allocate a decompression context");
  const std::size_t r = ZSTD_decompressDCtx(ctx.get(), out, expected, in.data, in.size);
  if (ZSTD_isError(r)) corrupt(what, std::string("corrupt zstd data (") + ZSTD_getErrorName(r) + ")");
  if (r != expected) {
    corrupt(what, "zstd data decompressed to " + std::to_string(r) + " bytes, expected " +
                      std::to_string(expected));
  }
}

Bytes zstd_decompress_bounded(ByteView in, std::size_t max_out, const std::string& what) {
  std::unique_ptr<ZSTD_DStream, DStreamDeleter> ds(ZSTD_createDStream());
  if (!ds) throw OutOfMemory("zstd: cannot allocate a decompression stream");
  ZSTD_initDStream(ds.get());
  Bytes out;
  ZSTD_inBuffer ib{in.data, in.size, 0};
  std::size_t produced = 0;
  while (true) {
    if (produced == out.size()) {
      if (out.size() >= max_out) corrupt(what, "decompresses to more than " + std::to_string(max_out) + " bytes");
      out.resize(std::min(max_out, out.size() + std::min(kGrowStep, std::max<std::size_t>(out.size(), 1 << 16))));
    }
    ZSTD_outBuffer ob{out.data() + produced, out.size() - produced, 0};
    const std::size_t r = ZSTD_decompressStream(ds.get(), &ob, &ib);
    if (ZSTD_isError(r)) corrupt(what, std::string("corrupt zstd data (") + ZSTD_getErrorName(r) + ")");
    produced += ob.pos;
    if (r == 0) break;  // frame complete
    if (ib.pos == ib.size && ob.pos < ob.size) corrupt(what, "truncated zstd data");
  }
  if (ib.pos != ib.size) corrupt(what, "trailing bytes after the zstd frame");
  out.resize(produced);
  return out;
}

Bytes zlib_compress(ByteView in, int level) {
  if (level < 0 || level > 9) {
    throw InvalidArgument("compression_level: expected 0..9 for zlib, got " + std::to_string(level));
  }
  if (in.size > std::numeric_limits<uLong>::max()) throw InvalidArgument("zlib: input too large");
  uLongf bound = compressBound(static_cast<uLong>(in.size));
  Bytes out(bound);
  const int r = compress2(out.data(), &bound, in.data, static_cast<uLong>(in.size), level);
  if (r != Z_OK) throw RuntimeError("zlib: compression failed (" + std::to_string(r) + ")");
  out.resize(bound);
  return out;
}

Bytes zlib_decompress_bounded(ByteView in, std::size_t max_out, const std::string& what) {
  z_stream zs{};
  if (inflateInit(&zs) != Z_OK) throw OutOfMemory("zlib: cannot allocate an inflate stream");
  struct End {
    z_stream* z;
    ~End() { inflateEnd(z); }
  } end{&zs};
  Bytes out;
  std::size_t consumed = 0, produced = 0;
  int r = Z_OK;
  while (r != Z_STREAM_END) {
    if (produced == out.size()) {
      if (out.size() >= max_out) corrupt(what, "inflates to more than " + std::to_string(max_out) + " bytes");
      out.resize(std::min(max_out, out.size() + std::min(kGrowStep, std::max<std::size_t>(out.size(), 1 << 16))));
    }
    const std::size_t in_chunk = std::min<std::size_t>(in.size - consumed, 1u << 30);
    const std::size_t out_chunk = std::min<std::size_t>(out.size() - produced, 1u << 30);
    zs.next_in = const_cast<Bytef*>(in.data + consumed);
    zs.avail_in = static_cast<uInt>(in_chunk);
    zs.next_out = out.data() + produced;
    zs.avail_out = static_cast<uInt>(out_chunk);
    r = inflate(&zs, Z_NO_FLUSH);
    consumed += in_chunk - zs.avail_in;
    produced += out_chunk - zs.avail_out;
    if (r == Z_STREAM_END) break;
    if (r == Z_BUF_ERROR && zs.avail_out != 0) corrupt(what, "truncated zlib data");
    if (r != Z_OK && r != Z_BUF_ERROR) {
      corrupt(what, std::string("corrupt zlib data (") + (zs.msg ? zs.msg : "inflate error") + ")");
    }
  }
  if (consumed != in.size) corrupt(what, "trailing bytes after the zlib stream");
  out.resize(produced);
  return out;
}

std::uint32_t crc32(ByteView in, std::uint32_t crc) {
  uLong c = crc;
  std::size_t done = 0;
  while (done < in.size) {
    const std::size_t chunk = std::min<std::size_t>(in.size - done, 1u << 30);
    c = ::crc32(c, in.data + done, static_cast<uInt>(chunk));
    done += chunk;
  }
  return static_cast<std::uint32_t>(c);
}

}  // namespace veil::io
