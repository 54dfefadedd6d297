#include "extshuffle/io/compression.hpp"

#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstring>
#include <stdexcept>

#include "extshuffle/errors.hpp"
#include "extshuffle/io/aligned_buffer.hpp"

namespace extshuffle::io {
namespace {

constexpr int kGzipLevel = 6;  // gzip's own default
constexpr int kZstdLevel = 3;  // zstd's own default
// Input per zstd worker job (ZSTD_c_jobSize). libzstd's default at level 3 is
// 8 MiB; bench/compression_bench (64 MiB of JSONL, 2 cores) measured the same
// MB/s and ratio (4.983 vs 4.971) with 2 MiB jobs and a quarter of the memory:
// ZSTD_sizeof_CCtx 15 MiB vs 51 MiB with 1 worker, 50 MiB vs 181 MiB with 16.
constexpr int kZstdJobBytes = 2 << 20;
// zlib: 15-bit window (32 KiB), +16 for the gzip wrapper instead of zlib's.
constexpr int kGzipWindowBits = 15 + 16;
// Writes at least this large skip the staging buffer.
constexpr std::size_t kDirectWriteBytes = std::size_t{64} << 10;

bool ends_with_nocase(std::string_view text, std::string_view suffix) {
  if (text.size() < suffix.size()) return false;
  const std::string_view tail = text.substr(text.size() - suffix.size());
  return std::equal(tail.begin(), tail.end(), suffix.begin(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == b;
  });
}

// zlib counts in uInt (32 bits): larger requests go in pieces.
uInt clamp_uint(std::size_t bytes) { return static_cast<uInt>(std::min<std::size_t>(bytes, UINT_MAX)); }

// libzstd's messages start with a capital letter; ours are lower case.
std::string zstd_reason(std::size_t code) {
  switch (ZSTD_getErrorCode(code)) {
    case ZSTD_error_frameParameter_windowTooLarge:
      return "frame needs a window larger than 128 MiB (written with zstd --long?)";
    case ZSTD_error_checksum_wrong:
      return "checksum mismatch";
    default:
      break;
  }
  std::string reason = ZSTD_getErrorName(code);
  if (!reason.empty()) reason[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(reason[0])));
  return reason;
}

}  // namespace

Codec codec_for_path(std::string_view path) {
  if (ends_with_nocase(path, ".gz")) return Codec::kGzip;
  if (ends_with_nocase(path, ".zst") || ends_with_nocase(path, ".zstd")) return Codec::kZstd;
  return Codec::kNone;
}

std::string_view codec_name(Codec codec) {
  switch (codec) {
    case Codec::kGzip:
      return "gzip";
    case Codec::kZstd:
      return "zstd";
    case Codec::kNone:
      break;
  }
  return "none";
}

// ---------------------------------------------------------------------------
// DecompressingReader

struct DecompressingReader::State {
  // Where a gzip stream stands between read() calls.
  enum class GzipPhase {
    kBeforeFirst,  // nothing decoded yet: an empty file is an error
    kInMember,     // inside a member: the end of input here is truncation
    kBetween,      // after a member: another member, zero padding or the end
    kPadding,      // inside trailing zero bytes: only zeros may follow
    kDone,
  };

  int fd;
  Codec codec;
  std::string name;
  AlignedBuffer input;
  std::size_t input_pos = 0;
  std::size_t input_end = 0;
  bool input_eof = false;
  std::uint64_t compressed_bytes = 0;
  std::uint64_t produced_bytes = 0;

  z_stream gzip{};
  bool gzip_ready = false;
  GzipPhase gzip_phase = GzipPhase::kBeforeFirst;

  ZSTD_DCtx* zstd = nullptr;
  std::size_t zstd_hint = 0;  // ZSTD_decompressStream's last result: 0 at a frame boundary
  bool zstd_started = false;  // some input has been given to the decoder
  bool zstd_frame_done = false;  // at least one frame decoded whole

  State(int fd_in, Codec codec_in, std::string name_in)
      : fd(fd_in), codec(codec_in), name(std::move(name_in)) {}

  ~State() {
    if (gzip_ready) inflateEnd(&gzip);
    ZSTD_freeDCtx(zstd);
  }

  [[noreturn]] void fail(const std::string& reason) const {
    throw InputError("input '" + name + "' is not valid " + std::string(codec_name(codec)) + " data: " + reason);
  }

  // One read(2) into the empty input buffer; sets input_eof at the end.
  void refill() {
    for (;;) {
      const ssize_t n = ::read(fd, input.get(), kBufferBytes);
      if (n < 0) {
        if (errno == EINTR) continue;
        throw IoError("cannot read input", name, errno);
      }
      input_pos = 0;
      input_end = static_cast<std::size_t>(n);
      input_eof = n == 0;
      compressed_bytes += static_cast<std::uint64_t>(n);
      return;
    }
  }

  bool input_empty() const { return input_pos == input_end; }

  std::size_t read_plain(std::byte* to, std::size_t bytes) {
    std::size_t done = 0;
    while (done < bytes && !input_eof) {
      const ssize_t n = ::read(fd, to + done, bytes - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        throw IoError("cannot read input", name, errno);
      }
      if (n == 0) input_eof = true;
      done += static_cast<std::size_t>(n);
      compressed_bytes += static_cast<std::uint64_t>(n);
    }
    return done;
  }

  std::size_t read_gzip(std::byte* to, std::size_t bytes) {
    std::size_t done = 0;
    while (done < bytes && gzip_phase != GzipPhase::kDone) {
      if (input_empty() && !input_eof) refill();
      // 1. Between members: the end, zero padding, or the next member's magic.
      if (gzip_phase != GzipPhase::kInMember) {
        if (input_empty()) {
          if (gzip_phase == GzipPhase::kBeforeFirst) fail("unexpected end of stream");
          gzip_phase = GzipPhase::kDone;
          break;
        }
        const auto first = static_cast<unsigned char>(input[input_pos]);
        if (gzip_phase == GzipPhase::kBeforeFirst) {
          if (first != 0x1f) fail("not in gzip format");
        } else if (first == 0 || gzip_phase == GzipPhase::kPadding) {
          while (input_pos < input_end && input[input_pos] == std::byte{0}) ++input_pos;
          if (input_pos < input_end) fail("trailing garbage after gzip data");
          gzip_phase = GzipPhase::kPadding;
          continue;
        } else if (first != 0x1f) {
          fail("trailing garbage after gzip data");
        } else {
          inflateReset(&gzip);
        }
        gzip_phase = GzipPhase::kInMember;
      }
      // 2. Inflate straight into the caller's buffer.
      gzip.next_in = reinterpret_cast<Bytef*>(input.get() + input_pos);
      gzip.avail_in = static_cast<uInt>(input_end - input_pos);
      gzip.next_out = reinterpret_cast<Bytef*>(to + done);
      gzip.avail_out = clamp_uint(bytes - done);
      const uInt in_before = gzip.avail_in;
      const uInt out_before = gzip.avail_out;
      const int rc = inflate(&gzip, Z_NO_FLUSH);
      input_pos = input_end - gzip.avail_in;
      done += out_before - gzip.avail_out;
      if (rc == Z_STREAM_END) {
        gzip_phase = GzipPhase::kBetween;
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        fail(gzip.msg ? gzip.msg : zError(rc));
      } else if (in_before == gzip.avail_in && out_before == gzip.avail_out) {
        // No progress (Z_BUF_ERROR): zlib needs input that is not there.
        if (input_eof) fail("unexpected end of stream");
        if (!input_empty()) fail("inflate made no progress");  // never seen; avoids spinning
      }
    }
    return done;
  }

  std::size_t read_zstd(std::byte* to, std::size_t bytes) {
    ZSTD_outBuffer out{to, bytes, 0};
    while (out.pos < out.size) {
      if (input_empty() && !input_eof) refill();
      if (input_empty() && input_eof) {
        if (!zstd_started) fail("unexpected end of stream");
        if (zstd_hint == 0) break;  // every frame complete and flushed
      }
      zstd_started = true;
      ZSTD_inBuffer in{input.get(), input_end, input_pos};
      const std::size_t out_before = out.pos;
      const std::size_t rc = ZSTD_decompressStream(zstd, &out, &in);
      const bool consumed = in.pos != input_pos;
      input_pos = in.pos;
      if (ZSTD_isError(rc)) {
        if (ZSTD_getErrorCode(rc) == ZSTD_error_prefix_unknown) {
          fail(zstd_frame_done ? "trailing garbage after zstd data" : "not in zstd format");
        }
        fail(zstd_reason(rc));
      }
      zstd_hint = rc;
      if (rc == 0) zstd_frame_done = true;
      // Out of input mid-frame and the decoder had nothing left to flush.
      if (input_empty() && input_eof && rc != 0 && !consumed && out.pos == out_before) {
        fail("unexpected end of stream");
      }
    }
    return out.pos;
  }
};

DecompressingReader::DecompressingReader(int fd, Codec codec, std::string display_name)
    : state_(std::make_unique<State>(fd, codec, std::move(display_name))) {
  State& s = *state_;
  if (codec == Codec::kNone) return;
  s.input = allocate_aligned(kBufferBytes);
  if (codec == Codec::kGzip) {
    if (inflateInit2(&s.gzip, kGzipWindowBits) != Z_OK) throw std::bad_alloc();
    s.gzip_ready = true;
  } else {
    s.zstd = ZSTD_createDCtx();
    if (!s.zstd) throw std::bad_alloc();
  }
}

DecompressingReader::~DecompressingReader() = default;
DecompressingReader::DecompressingReader(DecompressingReader&&) noexcept = default;
DecompressingReader& DecompressingReader::operator=(DecompressingReader&&) noexcept = default;

std::size_t DecompressingReader::read(void* to, std::size_t bytes) {
  State& s = *state_;
  auto* out = static_cast<std::byte*>(to);
  std::size_t done = 0;
  switch (s.codec) {
    case Codec::kNone:
      done = s.read_plain(out, bytes);
      break;
    case Codec::kGzip:
      done = s.read_gzip(out, bytes);
      break;
    case Codec::kZstd:
      done = s.read_zstd(out, bytes);
      break;
  }
  s.produced_bytes += done;
  return done;
}

std::uint64_t DecompressingReader::compressed_bytes_read() const { return state_->compressed_bytes; }
std::uint64_t DecompressingReader::bytes_read() const { return state_->produced_bytes; }
Codec DecompressingReader::codec() const { return state_->codec; }

std::size_t DecompressingReader::memory_bytes() const {
  const State& s = *state_;
  std::size_t bytes = s.input ? kBufferBytes : 0;
  if (s.gzip_ready) bytes += sizeof(z_stream) + (std::size_t{1} << 15) + 7 * 1024;  // window + inflate_state
  if (s.zstd) bytes += ZSTD_sizeof_DCtx(s.zstd);
  return bytes;
}

// ---------------------------------------------------------------------------
// CompressingWriter

struct CompressingWriter::State {
  Codec codec;
  Sink sink;
  AlignedBuffer buffers;  // staging, then output: kBufferBytes each
  std::byte* stage = nullptr;
  std::byte* output = nullptr;
  std::size_t stage_fill = 0;
  std::size_t output_fill = 0;
  bool finished = false;
  bool encoder_fed = false;  // zstd has seen at least one ZSTD_e_continue call
  std::uint64_t in_bytes = 0;
  std::uint64_t out_bytes = 0;

  z_stream gzip{};
  bool gzip_ready = false;
  ZSTD_CCtx* zstd = nullptr;

  State(Codec codec_in, Sink sink_in) : codec(codec_in), sink(std::move(sink_in)) {}

  ~State() {
    if (gzip_ready) deflateEnd(&gzip);
    ZSTD_freeCCtx(zstd);
  }

  void emit_output() {
    if (output_fill == 0) return;
    sink(output, output_fill);
    out_bytes += output_fill;
    output_fill = 0;
  }

  // Compresses `bytes` at `data`; `end` finishes the stream. The sink gets
  // the output buffer whenever it is full (and at the end).
  void compress(const std::byte* data, std::size_t bytes, bool end) {
    if (codec == Codec::kGzip) {
      compress_gzip(data, bytes, end);
    } else {
      compress_zstd(data, bytes, end);
    }
    if (end) emit_output();
  }

  void compress_gzip(const std::byte* data, std::size_t bytes, bool end) {
    for (;;) {
      const uInt piece = clamp_uint(bytes);
      const bool last_piece = piece == bytes;
      gzip.next_in = const_cast<Bytef*>(reinterpret_cast<const Bytef*>(data));
      gzip.avail_in = piece;
      const int flush = end && last_piece ? Z_FINISH : Z_NO_FLUSH;
      for (;;) {
        gzip.next_out = reinterpret_cast<Bytef*>(output + output_fill);
        gzip.avail_out = static_cast<uInt>(kBufferBytes - output_fill);
        const int rc = deflate(&gzip, flush);
        output_fill = kBufferBytes - gzip.avail_out;
        if (rc == Z_STREAM_ERROR) throw std::logic_error("deflate: stream error");
        if (output_fill == kBufferBytes) emit_output();
        if (flush == Z_FINISH ? rc == Z_STREAM_END : gzip.avail_in == 0) break;
      }
      data += piece;
      bytes -= piece;
      if (last_piece) return;
    }
  }

  void compress_zstd(const std::byte* data, std::size_t bytes, bool end) {
    // A first call with ZSTD_e_end would take libzstd's one-shot path, whose
    // frame header (content size, window) differs from the streaming one:
    // feed the data with ZSTD_e_continue first so the bytes never depend on
    // how the caller split its writes.
    ZSTD_inBuffer in{data, bytes, 0};
    if (end && !encoder_fed) {
      drive_zstd(in, ZSTD_e_continue);
      in = ZSTD_inBuffer{nullptr, 0, 0};
    }
    drive_zstd(in, end ? ZSTD_e_end : ZSTD_e_continue);
  }

  void drive_zstd(ZSTD_inBuffer& in, ZSTD_EndDirective mode) {
    encoder_fed = true;
    for (;;) {
      ZSTD_outBuffer out{output, kBufferBytes, output_fill};
      const std::size_t rc = ZSTD_compressStream2(zstd, &out, &in, mode);
      if (ZSTD_isError(rc)) throw std::runtime_error(std::string("zstd compression: ") + ZSTD_getErrorName(rc));
      output_fill = out.pos;
      if (output_fill == kBufferBytes) emit_output();
      if (mode == ZSTD_e_end ? rc == 0 : in.pos == in.size) return;
    }
  }

  void flush_stage() {
    if (stage_fill == 0) return;
    compress(stage, stage_fill, false);
    stage_fill = 0;
  }
};

CompressingWriter::CompressingWriter(Codec codec, Sink sink, int threads)
    : state_(std::make_unique<State>(codec, std::move(sink))) {
  State& s = *state_;
  if (codec == Codec::kNone) return;
  s.buffers = allocate_aligned(2 * kBufferBytes);
  s.stage = s.buffers.get();
  s.output = s.buffers.get() + kBufferBytes;
  if (codec == Codec::kGzip) {
    if (deflateInit2(&s.gzip, kGzipLevel, Z_DEFLATED, kGzipWindowBits, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
      throw std::bad_alloc();
    }
    s.gzip_ready = true;
    return;
  }
  s.zstd = ZSTD_createCCtx();
  if (!s.zstd) throw std::bad_alloc();
  ZSTD_CCtx_setParameter(s.zstd, ZSTD_c_compressionLevel, kZstdLevel);
  ZSTD_CCtx_setParameter(s.zstd, ZSTD_c_checksumFlag, 1);
  ZSTD_CCtx_setParameter(s.zstd, ZSTD_c_jobSize, kZstdJobBytes);
  // Fails (and stays single-threaded) only with a libzstd built without threads.
  ZSTD_CCtx_setParameter(s.zstd, ZSTD_c_nbWorkers, std::max(1, threads));
}

CompressingWriter::~CompressingWriter() = default;
CompressingWriter::CompressingWriter(CompressingWriter&&) noexcept = default;
CompressingWriter& CompressingWriter::operator=(CompressingWriter&&) noexcept = default;

void CompressingWriter::write(const void* data, std::size_t bytes) {
  State& s = *state_;
  if (s.finished) throw std::logic_error("CompressingWriter::write after finish");
  const auto* p = static_cast<const std::byte*>(data);
  s.in_bytes += bytes;
  if (s.codec == Codec::kNone) {
    if (bytes > 0) s.sink(p, bytes);
    s.out_bytes += bytes;
    return;
  }
  if (bytes < kDirectWriteBytes) {
    if (s.stage_fill + bytes > kBufferBytes) s.flush_stage();
    std::memcpy(s.stage + s.stage_fill, p, bytes);
    s.stage_fill += bytes;
    return;
  }
  s.flush_stage();
  s.compress(p, bytes, false);
}

void CompressingWriter::finish() {
  State& s = *state_;
  if (s.finished) return;
  s.finished = true;
  if (s.codec == Codec::kNone) return;
  s.compress(s.stage, s.stage_fill, true);
  s.stage_fill = 0;
}

std::uint64_t CompressingWriter::bytes_written() const { return state_->in_bytes; }
std::uint64_t CompressingWriter::compressed_bytes_written() const { return state_->out_bytes; }
Codec CompressingWriter::codec() const { return state_->codec; }

std::size_t CompressingWriter::memory_bytes() const {
  const State& s = *state_;
  std::size_t bytes = s.buffers ? 2 * kBufferBytes : 0;
  // deflate: window 2 x 32 KiB, hash 2 x 64 KiB (memLevel 8), pending 64 KiB, state.
  if (s.gzip_ready) bytes += 2 * 32768 + 2 * 65536 + 65536 + 6 * 1024;
  if (s.zstd) bytes += ZSTD_sizeof_CCtx(s.zstd);
  return bytes;
}

}  // namespace extshuffle::io
