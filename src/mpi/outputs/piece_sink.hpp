// A rank's output range, cut into the pieces of the output (piece_plan.hpp)
// as it arrives: the sink behind a rank's walk, constructed from the
// range's first output record and its byte offset in the output stream.
//
// Each piece the range touches gets one part: the rank's records of that
// piece, compressed (a .gz or .zst piece) as one stream of its own, so a
// compressed piece is the concatenation of its ranks' frames. A part that
// starts its piece goes to offset 0, header first (the CSV header lines, or
// a .npy header with the piece's rows), and so does every later part. Only
// the first part of a range can continue a piece begun by an earlier rank:
// its offset is known up front when its bytes are (one uncompressed file:
// the stream offset; fixed-size records: arithmetic); otherwise it is
// spooled to scratch space and placed once the ranks have said how many
// bytes each wrote into that piece (place()). Pieces of no records are
// written by rank 0. Tar samples lose their frames' prefixes on the way
// (the stream's offsets count them: a tar part is placed as a spooled one),
// and the rank that writes a piece's last record adds its trailer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "extshuffle/dataset/record_cutter.hpp"
#include "extshuffle/formats/record_syntax.hpp"
#include "extshuffle/formats/tar.hpp"
#include "extshuffle/io/block_file.hpp"
#include "extshuffle/io/compression.hpp"
#include "extshuffle/mpi/communicator.hpp"
#include "piece_plan.hpp"
#include "shared_pieces.hpp"

namespace extshuffle::mpi {

struct PieceForm {
  std::size_t record_size = 0;  // 0: text records of `syntax`
  formats::RecordSyntax syntax;
  std::string header;  // on top of every piece
  std::string trailer;  // at the end of every piece: a tar archive's two zero blocks
  bool npy = false;    // `header` is a .npy header: each piece's says its rows
  int threads = 1;     // compression workers
  std::string spool_directory;  // this rank's scratch space
};

// Where a rank's range can be resumed (--checkpoint, docs/mpi.md "A killed
// job"): its written bytes flushed into the piece it is writing, which a
// resumed sink continues in place.
struct PiecePoint {
  std::uint64_t head_bytes = 0;   // the records' bytes of that piece before the next record
  std::uint64_t piece_bytes = 0;  // this rank's bytes in that piece so far (0: the next record starts a piece)
};

class PieceSink {
 public:
  // This rank writes output records [first_record, end_record), the first
  // at byte `first_byte` of the output stream; `head_bytes`, when known,
  // are the records' bytes of the piece before the first record.
  PieceSink(const PiecePlan& plan, const PieceForm& form, SharedPieces& files, int rank, std::uint64_t first_record,
            std::uint64_t end_record, std::uint64_t first_byte, std::uint64_t head_bytes = kUnknown);
  // A sink resumed at `point` (one point() returned): the range from record
  // `first_record` at stream byte `first_byte` continues the piece it was
  // writing in place.
  PieceSink(const PiecePlan& plan, const PieceForm& form, SharedPieces& files, int rank, std::uint64_t first_record,
            std::uint64_t end_record, std::uint64_t first_byte, const PiecePoint& point);
  static constexpr std::uint64_t kUnknown = UINT64_MAX;
  ~PieceSink();
  // Bytes of whole records, in output order.
  void write(const std::byte* data, std::size_t bytes);
  // Between two writes: what is written so far handed to its files (not
  // synced), and where a resumed sink would go on; nothing when the range
  // cannot be resumed in place (a part spooled, compressed or of tar
  // samples). Throws IoError.
  std::optional<PiecePoint> point();
  // Ends the part being written and writes the pieces of no records (rank 0).
  void finish();
  // Collective, after finish(): the spooled part at its place. Throws IoError.
  void place(Communicator& comm);
  std::uint64_t bytes_written() const { return stored_bytes_; }

 private:
  struct Part;
  void begin_part(std::size_t piece);
  void end_part();
  std::string piece_header(std::size_t piece) const;
  void write_whole_piece(std::size_t piece);
  void write_records(const std::byte* data, std::size_t bytes);
  bool tar() const { return form_.syntax.framing == formats::Framing::kTarSample; }

  const PiecePlan& plan_;
  PieceForm form_;
  SharedPieces& files_;
  int rank_;
  std::uint64_t cursor_, end_record_, first_byte_, head_bytes_;
  dataset::RecordCutter cutter_;
  std::size_t piece_ = 0;
  std::unique_ptr<Part> part_;
  std::unique_ptr<io::BlockFile> spool_;
  std::uint64_t spooled_bytes_ = 0;
  std::uint64_t spooled_piece_ = UINT64_MAX;      // the piece the spool continues
  std::uint64_t last_piece_ = UINT64_MAX, last_piece_bytes_ = 0;  // this rank's bytes in its last piece
  std::uint64_t stored_bytes_ = 0;
  std::uint64_t carried_bytes_ = 0;       // a resumed sink: its first part's bytes before the resume
  formats::TarFrameStripper tar_frames_;  // tar samples: the frames' prefixes are not written
};

}  // namespace extshuffle::mpi
