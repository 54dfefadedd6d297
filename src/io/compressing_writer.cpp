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
#include "codec_support.hpp"

namespace extshuffle::io {

using namespace codec_support;

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
