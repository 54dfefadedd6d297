// The record index of one output piece (--index; dataset/record_index.hpp),
// written while the piece is: the records the sink cuts into the piece
// pass through here too, their places found by the record cutter
// (record_cutter.hpp) or, for tar samples, by the tar scanner over the
// samples' bytes as written, so the index is what --index-only would write
// for the finished piece, at no extra read of it. The index goes to its own
// temporary output file beside the piece's, committed with the pieces
// (sharded_output.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "extshuffle/dataset/record_cutter.hpp"
#include "extshuffle/dataset/record_index.hpp"
#include "extshuffle/dataset/record_index_writer.hpp"
#include "extshuffle/formats/tar.hpp"
#include "extshuffle/io/aligned_buffer.hpp"

namespace extshuffle::io {
class OutputFile;
}

namespace extshuffle::dataset {

class PieceIndex {
 public:
  // The index of the piece `piece_name`, written to a temporary beside it
  // (its final name index_path_beside() of the piece's final name, given at
  // the commit). `record_size` > 0: fixed-size records, no arrays; else
  // framed records of `syntax` after `header_bytes` of header. `buffers`:
  // write buffers of an earlier output file, or empty. Throws what
  // io::OutputFile throws.
  PieceIndex(const std::string& piece_name, std::size_t record_size, const formats::RecordSyntax& syntax,
             std::uint64_t header_bytes, io::AlignedBuffer buffers);
  ~PieceIndex();
  PieceIndex(const PieceIndex&) = delete;
  PieceIndex& operator=(const PieceIndex&) = delete;

  // The piece's next bytes of whole records, as written to it (tar: the
  // samples' bytes, their frames' prefixes stripped).
  void add(const std::byte* data, std::size_t bytes);

  // After the piece's last record: the index's header (the piece's facts,
  // `reading`, `records`) written, the index file finished (to be committed
  // with the piece). Throws Error when the index does not hold `records`.
  std::unique_ptr<io::OutputFile> finish(const IndexedFile& piece, const IndexReading& reading, std::uint64_t records);

 private:
  std::unique_ptr<io::OutputFile> file_;
  std::unique_ptr<RecordIndexWriter> writer_;
  std::size_t record_size_;
  RecordCutter cutter_;
  std::uint64_t header_bytes_;
  std::uint64_t position_;  // of the next byte in the piece
  std::optional<formats::TarScanner> tar_;
};

// The facts of a finished output file as an index records them: its size,
// modification time and fingerprint, read through `fd` (its temporary's).
// Throws IoError naming `name`.
IndexedFile written_file_facts(int fd, const std::string& name);

}  // namespace extshuffle::dataset
