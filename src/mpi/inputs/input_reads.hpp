// The bytes of the input's files a rank read in place, on the file system
// every rank sees (docs/mpi.md, "Failures": what --verify checks). Ranks
// that see other bytes under one name (another mount, a stale cache, a file
// rewritten in place) would mix two inputs into one output; the sampled
// fingerprints compared before the run (input_agreement.hpp) find most of
// them, and --verify finds the rest in what was used: each range recorded
// here is checked, a block at a time, against the file's holder's bytes
// (check_reads_against_holders, outputs/distributed_verify.hpp).
//
// Recorded where the reads are planned: a dataset's staging
// (staged_input.hpp: a plain file's bytes read in place, an archive's
// members through its holder's windows), and one plain file's counting
// range, the chunks or held records each rank reads in place and the bytes
// it reads for others (distributed_input.cpp, chunk_readers.hpp). A file's
// holder reads its own files: only other ranks' reads are recorded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "extshuffle/io/block_file.hpp"

namespace extshuffle::mpi {

// The blocks in which reads are checked: a range read is checked as the
// blocks it touches, so that a holder digests each block once for every
// rank that read any of it.
inline constexpr std::uint64_t kCheckedBlockBytes = std::uint64_t{4} << 20;

class InputReads {
 public:
  // One file's reads on this rank: `file` is this rank's view of it (the
  // file as stored, byte 0 at offset 0), named `path` in messages.
  struct File {
    io::BlockFile* file = nullptr;
    std::string path;
    int holder = 0;                                               // the rank whose bytes are the reference
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;  // [begin, end), as recorded
  };

  // Bytes [begin, end) of input file `index` (its place among the dataset's
  // files; 0 for one plain file) read in place through `file`. Empty
  // ranges are left out.
  void add(std::size_t index, io::BlockFile& file, const std::string& path, int holder, std::uint64_t begin,
           std::uint64_t end);
  const std::map<std::size_t, File>& files() const { return files_; }
  // The blocks of kCheckedBlockBytes that file `index`'s ranges touch, in
  // order, each once.
  std::vector<std::uint64_t> blocks(std::size_t index) const;

 private:
  std::map<std::size_t, File> files_;
};

// The XXH3-128 digest of block `block` of `file`'s first `file_bytes`
// bytes (the last block is shorter; past the end, empty), as two words.
// `buffer` holds kCheckedBlockBytes. Throws IoError (the file's read).
// Cost: one read of the block.
std::pair<std::uint64_t, std::uint64_t> digest_block(io::BlockFile& file, std::uint64_t file_bytes, std::uint64_t block,
                                                     std::vector<std::byte>& buffer);

}  // namespace extshuffle::mpi
