#include "extshuffle/io/compression.hpp"

#include <isa-l/igzip_lib.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstring>
#include <stdexcept>
#include <vector>

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

  // gzip: ISA-L's igzip (docs/benchmarks.md, "gzip engines"), its level
  // buffer, and whether the member header has been written.
  isal_zstream gzip{};
  std::vector<std::uint8_t> gzip_level_buffer;
  bool gzip_header_written = false;
  ZSTD_CCtx* zstd = nullptr;

  State(Codec codec_in, Sink sink_in) : codec(codec_in), sink(std::move(sink_in)) {}

  ~State() { ZSTD_freeCCtx(zstd); }

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

  // igzip's output depends on how its input is cut (unlike zlib's), so it
  // only ever gets whole kBufferBytes pieces (and the stream's tail): the
  // compressed bytes then depend on the data alone. The member header is
  // ours (mtime 0, OS Unix, as gzip -n writes it); igzip adds the trailer.
  void compress_gzip(const std::byte* data, std::size_t bytes, bool end) {
    if (!gzip_header_written) {
      std::memcpy(output + output_fill, kGzipHeader, sizeof kGzipHeader);
      output_fill += sizeof kGzipHeader;
      gzip_header_written = true;
    }
    gzip.next_in = const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(data));
    gzip.avail_in = static_cast<std::uint32_t>(bytes);
    gzip.end_of_stream = end ? 1 : 0;
    for (;;) {
      gzip.next_out = reinterpret_cast<std::uint8_t*>(output + output_fill);
      gzip.avail_out = static_cast<std::uint32_t>(kBufferBytes - output_fill);
      const int rc = isal_deflate(&gzip);
      output_fill = kBufferBytes - gzip.avail_out;
      if (rc != COMP_OK) throw std::logic_error("isal_deflate: error " + std::to_string(rc));
      if (output_fill == kBufferBytes) emit_output();
      if (end ? gzip.internal_state.state == ZSTATE_END : gzip.avail_in == 0) return;
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
    isal_deflate_init(&s.gzip);
    s.gzip.level = kIgzipLevel;
    s.gzip_level_buffer.resize(kIgzipLevelBufferBytes);
    s.gzip.level_buf = s.gzip_level_buffer.data();
    s.gzip.level_buf_size = static_cast<std::uint32_t>(s.gzip_level_buffer.size());
    s.gzip.gzip_flag = IGZIP_GZIP_NO_HDR;
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
  if (s.codec == Codec::kGzip) {
    // Whole stages only (see compress_gzip): top the stage up, then whole
    // pieces straight from the caller, then stage the rest.
    const std::size_t top_up = std::min(bytes, kBufferBytes - s.stage_fill);
    std::memcpy(s.stage + s.stage_fill, p, top_up);
    s.stage_fill += top_up;
    p += top_up;
    bytes -= top_up;
    if (s.stage_fill < kBufferBytes) return;
    s.flush_stage();
    for (; bytes >= kBufferBytes; p += kBufferBytes, bytes -= kBufferBytes) s.compress(p, kBufferBytes, false);
    std::memcpy(s.stage, p, bytes);
    s.stage_fill = bytes;
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
  if (s.codec == Codec::kGzip) bytes += sizeof(isal_zstream) + s.gzip_level_buffer.size();
  if (s.zstd) bytes += ZSTD_sizeof_CCtx(s.zstd);
  return bytes;
}

}  // namespace extshuffle::io
