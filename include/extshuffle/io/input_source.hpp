// The input as the walk reads it (docs/conventions.md, Rooms: "io owns every byte on
// disk"): the user's file, read in place at random offsets, or, for standard
// input and compressed files, a spool of its bytes in the run's scratch
// file, since neither a pipe nor a compressed stream can be read at random
// offsets.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "extshuffle/io/block_file.hpp"

namespace extshuffle::io {

class InputSource {
 public:
  // Opens `path` ("-": standard input) and the run's scratch file in
  // `scratch_directory` (see scratch_directory()). Standard input, inputs
  // that cannot be read at offsets (FIFOs, pipes such as /dev/stdin or
  // bash's <(...), character devices, sockets: anything but a regular file
  // or a block device), files whose size is not their length (the kernel's
  // pseudo files: /proc, /sys) and files named *.gz, *.zst or *.zstd are
  // copied (decompressed) into the scratch file first: one sequential read
  // of the input and one write of its bytes, in 16 MiB of buffers, the
  // decoder's window held within `memory_bytes` (the run's budget; 0: none
  // given; io/compression.hpp). Throws IoError (missing or unreadable
  // input, a bad scratch directory), InputError (corrupt compressed data)
  // and BudgetError (a zstd window the budget cannot hold).
  InputSource(const std::string& path, const std::string& scratch_directory, std::uint64_t memory_bytes = 0);
  // The same with a scratch file shared by several inputs (io/input_set.hpp):
  // a spool goes to `shared_scratch` from `spool_offset` (a multiple of 4096)
  // on; `shared_scratch` must outlive this source.
  InputSource(const std::string& path, BlockFile& shared_scratch, std::uint64_t spool_offset,
              std::uint64_t memory_bytes = 0);

  // Where the records are read: the input file itself or its spool, whose
  // byte 0 lies at data_offset() of data().
  BlockFile& data() { return *data_; }
  std::uint64_t data_offset() const { return spooled_ ? spool_offset_ : 0; }
  // The run's scratch file; bytes below scratch_offset() hold the spool.
  BlockFile& scratch() { return *scratch_; }
  std::uint64_t scratch_offset() const { return scratch_offset_; }
  // Bytes of the (decompressed) input.
  std::uint64_t bytes() const { return bytes_; }
  // Bytes of the input as stored: the file's size (compressed, for a
  // compressed file), or the bytes read from a stream.
  std::uint64_t stored_bytes() const { return stored_bytes_; }
  // Whether the input was copied to scratch space (its bytes then count as written).
  bool spooled() const { return spooled_; }
  const std::string& path() const { return path_; }

  // The first min(bytes(), wanted) bytes of the input. Cost: one read.
  std::string read_head(std::uint64_t wanted);

  // Throws InputError when an input read in place is no longer the size it
  // had when it was opened (a writer appending to it, a truncation): the
  // output would hold neither the old records nor the new ones. A spooled
  // input was read whole at the start: nothing to check. Cost: one stat().
  void check_unchanged() const;

 private:
  // Opens path_; without a shared scratch file, creates one in `scratch_directory`.
  void open(const std::string& scratch_directory, std::uint64_t spool_offset);

  std::string path_;
  std::unique_ptr<BlockFile> file_;
  std::unique_ptr<BlockFile> own_scratch_;
  BlockFile* scratch_ = nullptr;
  BlockFile* data_ = nullptr;
  std::uint64_t bytes_ = 0;
  std::uint64_t stored_bytes_ = 0;
  std::uint64_t spool_offset_ = 0;
  std::uint64_t scratch_offset_ = 0;
  std::uint64_t file_bytes_ = 0;  // the input file's size when opened
  std::uint64_t memory_bytes_ = 0;  // the run's budget, for a decoder's window
  bool spooled_ = false;
};

// The scratch directory of a run: `tmpdir` (-T) when given, else $TMPDIR,
// else /tmp.
std::string scratch_directory(const std::string& tmpdir);

}  // namespace extshuffle::io
