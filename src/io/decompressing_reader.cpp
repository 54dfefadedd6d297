#include "extshuffle/io/compression.hpp"

#include <isa-l/igzip_lib.h>
#include <unistd.h>
// ZSTD_getFrameHeader: the window a refused frame asks for, for its message.
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <bit>
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

  // gzip: ISA-L's igzip, about twice zlib's speed (docs/benchmarks.md,
  // "gzip engines"); it parses each member's header and checks its trailer.
  std::unique_ptr<inflate_state> gzip;
  GzipPhase gzip_phase = GzipPhase::kBeforeFirst;

  ZSTD_DCtx* zstd = nullptr;
  std::uint64_t memory_bytes = 0;  // the run's budget; 0: none given (libzstd's default window limit)
  std::size_t zstd_hint = 0;  // ZSTD_decompressStream's last result: 0 at a frame boundary
  std::size_t frame_start = SIZE_MAX;  // where the frame being decoded starts in `input`, when it does
  bool zstd_started = false;  // some input has been given to the decoder
  bool zstd_frame_done = false;  // at least one frame decoded whole

  State(int fd_in, Codec codec_in, std::string name_in, std::uint64_t memory_in)
      : fd(fd_in), codec(codec_in), name(std::move(name_in)), memory_bytes(memory_in) {}

  ~State() { ZSTD_freeDCtx(zstd); }

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
    // A pseudo file (/proc/sys) allocates what a read asks for in the
    // kernel, and refuses more than it can (ENOMEM): at most a buffer a
    // read, halved while the kernel refuses.
    std::size_t piece = kBufferBytes;
    while (done < bytes && !input_eof) {
      const ssize_t n = ::read(fd, to + done, std::min(piece, bytes - done));
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == ENOMEM && piece > 4096) {
          piece /= 2;
          continue;
        }
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
          isal_inflate_reset(gzip.get());
          gzip->crc_flag = ISAL_GZIP;
        }
        gzip_phase = GzipPhase::kInMember;
      }
      // 2. Inflate straight into the caller's buffer.
      inflate_state& z = *gzip;
      z.next_in = reinterpret_cast<std::uint8_t*>(input.get() + input_pos);
      z.avail_in = static_cast<std::uint32_t>(input_end - input_pos);
      z.next_out = reinterpret_cast<std::uint8_t*>(to + done);
      z.avail_out = clamp_uint(bytes - done);
      const std::uint32_t in_before = z.avail_in;
      const std::uint32_t out_before = z.avail_out;
      const int rc = isal_inflate(&z);
      input_pos = input_end - z.avail_in;
      done += out_before - z.avail_out;
      if (rc != ISAL_DECOMP_OK) fail(igzip_reason(rc));
      if (z.block_state == ISAL_BLOCK_FINISH) {
        gzip_phase = GzipPhase::kBetween;
      } else if (in_before == z.avail_in && out_before == z.avail_out) {
        // No progress: the member needs input that is not there.
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
      if (zstd_hint == 0) frame_start = input_pos;
      ZSTD_inBuffer in{input.get(), input_end, input_pos};
      const std::size_t out_before = out.pos;
      const std::size_t rc = ZSTD_decompressStream(zstd, &out, &in);
      const bool consumed = in.pos != input_pos;
      input_pos = in.pos;
      if (ZSTD_isError(rc)) {
        if (ZSTD_getErrorCode(rc) == ZSTD_error_prefix_unknown) {
          fail(zstd_frame_done ? "trailing garbage after zstd data" : "not in zstd format");
        }
        if (ZSTD_getErrorCode(rc) == ZSTD_error_frameParameter_windowTooLarge) refuse_window();
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

  // The window a frame may ask for: what the budget holds (at least 8 MiB,
  // zstd -19's window, which any budget's fixed allowance covers), at most
  // zstd's 2 GiB; without a budget, libzstd's default (128 MiB).
  std::uint64_t window_limit_bytes() const {
    if (memory_bytes == 0) return std::uint64_t{1} << ZSTD_WINDOWLOG_LIMIT_DEFAULT;
    return std::clamp<std::uint64_t>(memory_bytes, std::uint64_t{8} << 20, std::uint64_t{1} << 31);
  }

  // A frame whose window the budget cannot hold: refused, naming the budget
  // that reads it when the frame's header says its window. Without a budget,
  // returns (libzstd's limit, zstd_reason()'s words).
  void refuse_window() const {
    if (memory_bytes == 0) return;
    ZSTD_frameHeader header{};
    const bool known = frame_start < input_end &&
                       ZSTD_getFrameHeader(&header, input.get() + frame_start, input_end - frame_start) == 0;
    const std::string budget = std::to_string(window_limit_bytes() >> 20) + " MiB";
    if (!known) {
      throw BudgetError("input '" + name + "': a zstd frame needs a window larger than the " + budget +
                        " the memory budget holds (written with zstd --long?): raise --memory");
    }
    const std::uint64_t mib = (header.windowSize + (1 << 20) - 1) >> 20;
    throw BudgetError("input '" + name + "': its zstd window of " + std::to_string(mib) +
                      " MiB (written with zstd --long?) does not fit in the " + budget +
                      " the memory budget holds: --memory must be at least " + std::to_string(mib) + "M to read it");
  }
};

DecompressingReader::DecompressingReader(int fd, Codec codec, std::string display_name, std::uint64_t memory_bytes)
    : state_(std::make_unique<State>(fd, codec, std::move(display_name), memory_bytes)) {
  State& s = *state_;
  if (codec == Codec::kNone) return;
  s.input = allocate_aligned(kBufferBytes);
  if (codec == Codec::kGzip) {
    s.gzip = std::make_unique<inflate_state>();
    isal_inflate_init(s.gzip.get());
    s.gzip->crc_flag = ISAL_GZIP;
  } else {
    s.zstd = ZSTD_createDCtx();
    if (!s.zstd) throw std::bad_alloc();
    // The window is the decoder's largest buffer: held within the budget.
    const int window_log = std::bit_width(s.window_limit_bytes()) - 1;
    ZSTD_DCtx_setParameter(s.zstd, ZSTD_d_windowLogMax, window_log);
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
  if (s.gzip) bytes += sizeof(inflate_state);  // its window and tables are inside
  if (s.zstd) bytes += ZSTD_sizeof_DCtx(s.zstd);
  return bytes;
}

}  // namespace extshuffle::io
