// Compressed input and output streams, gzip (zlib) and zstd (libzstd), the
// codec chosen by the file name's extension. The reader decompresses from a
// file descriptor (a file or standard input) into the caller's buffer; the
// writer compresses in front of any byte sink (the output file's write()).
// Neither allocates after construction: each holds ~1 MiB buffers plus the
// codec's own state (memory_bytes() says how much).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace extshuffle::io {

enum class Codec { kNone, kGzip, kZstd };

// By the path's extension, case-insensitively: ".gz" -> kGzip, ".zst" and
// ".zstd" -> kZstd, anything else (and "-", standard input/output) -> kNone.
Codec codec_for_path(std::string_view path);
// "none", "gzip" or "zstd" (for messages and --verbose output).
std::string_view codec_name(Codec codec);

// A decompressing reader over a file descriptor it does not own (the caller
// opens and closes it). Reads sequentially with read(2), retrying EINTR, in
// pieces of kBufferBytes.
//
// Accepts what `gzip -d` and `zstd -d` accept: multi-member gzip (`cat a.gz
// b.gz`), trailing zero bytes after gzip data (tar-style padding), and
// multi-frame zstd including skippable frames. Rejects what they reject, with
// InputError "input '<display_name>' is not valid <codec> data: <reason>":
// an empty file, a truncated stream ("unexpected end of stream"), a wrong
// header ("not in gzip format"), a checksum mismatch, corrupt blocks, and
// non-zero trailing bytes after the last gzip member or zstd frame ("trailing
// garbage after gzip data"; gzip -d only warns about those, with exit 2).
// A zstd frame's window (zstd --long) is the decoder's largest buffer: with
// `memory_bytes` (the run's budget, -S) it may take what the budget holds
// (at least 8 MiB, at most 2 GiB), and a frame asking for more is refused
// with BudgetError naming the --memory that reads it; without, frames over
// 128 MiB (zstd --long=28 and above) are refused, as zstd -d refuses them
// without --memory. A failed read(2) throws IoError "cannot read input
// '<display_name>': <errno text>".
//
// kNone reads the descriptor unchanged, so callers can use one code path.
class DecompressingReader {
 public:
  static constexpr std::size_t kBufferBytes = std::size_t{1} << 20;

  DecompressingReader(int fd, Codec codec, std::string display_name, std::uint64_t memory_bytes = 0);
  ~DecompressingReader();
  DecompressingReader(DecompressingReader&&) noexcept;
  DecompressingReader& operator=(DecompressingReader&&) noexcept;
  DecompressingReader(const DecompressingReader&) = delete;
  DecompressingReader& operator=(const DecompressingReader&) = delete;

  // Places up to `bytes` decompressed bytes at `to` and returns how many: all
  // `bytes` unless the end of the stream comes first, so a short count means
  // the end and 0 means nothing is left. Blocks on a pipe until the request
  // is filled. Throws InputError / IoError as above; after a throw the reader
  // is unusable.
  std::size_t read(void* to, std::size_t bytes);

  // Bytes taken from the descriptor so far (compressed size).
  std::uint64_t compressed_bytes_read() const;
  // Bytes returned by read() so far (decompressed size).
  std::uint64_t bytes_read() const;
  Codec codec() const;
  // Heap bytes held: the 1 MiB input buffer plus the decoder's state: gzip
  // ~40 KiB; zstd grows with the frame's window (2.5 MiB for zstd -3 output,
  // up to ~130 MiB for the largest window accepted).
  std::size_t memory_bytes() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// A compressing writer in front of a byte sink. write() stages small pieces
// and compresses; the sink receives whole kBufferBytes pieces, then the rest
// at finish(). Levels: gzip 6 (no name, mtime 0), zstd 3 with its content
// checksum (as the zstd CLI writes). zstd always runs in libzstd's
// multi-threaded mode with max(1, threads) workers (ZSTD_c_nbWorkers): its
// output is the same bytes for every worker count >= 1 (not so for 0, the
// single-threaded mode), so the compressed file does not depend on
// --threads, nor on how the caller splits its writes. gzip is
// single-threaded.
//
// kNone passes every write straight to the sink.
class CompressingWriter {
 public:
  static constexpr std::size_t kBufferBytes = std::size_t{1} << 20;
  using Sink = std::function<void(const void* data, std::size_t bytes)>;

  CompressingWriter(Codec codec, Sink sink, int threads = 1);
  ~CompressingWriter();  // without finish(), the stream is left unterminated
  CompressingWriter(CompressingWriter&&) noexcept;
  CompressingWriter& operator=(CompressingWriter&&) noexcept;
  CompressingWriter(const CompressingWriter&) = delete;
  CompressingWriter& operator=(const CompressingWriter&) = delete;

  // Exceptions of the sink propagate (IoError, BrokenPipe); after one the
  // writer is unusable. write() after finish() throws std::logic_error.
  void write(const void* data, std::size_t bytes);
  // Ends the stream and hands all remaining output to the sink. Call it
  // before the output file is committed; later calls do nothing.
  void finish();

  // Bytes given to write() so far, and bytes handed to the sink so far.
  std::uint64_t bytes_written() const;
  std::uint64_t compressed_bytes_written() const;
  Codec codec() const;
  // Heap bytes held: the two 1 MiB buffers plus the encoder's state: gzip
  // ~0.3 MiB; zstd, measured with 64 MiB written, 15 MiB with 1 worker, 20
  // with 2, 27 with 4, 50 with 16 (2 MiB jobs; see kZstdJobBytes).
  std::size_t memory_bytes() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace extshuffle::io
