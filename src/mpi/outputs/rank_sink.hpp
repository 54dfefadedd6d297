// The sink behind a rank's walk: its contiguous range of the output stream,
// from output record `first_record` and stream byte `first_byte`, into the
// pieces (piece_sink.hpp), each record digested on its way with --verify.
// Text cut by --shard-size is spooled first: the pieces are known only once
// every rank has scanned its range (byte_cut_pieces.hpp), and their files
// are opened then.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "byte_cut_pieces.hpp"
#include "inputs/distributed_input.hpp"
#include "extshuffle/dataset/record_digest.hpp"
#include "piece_sink.hpp"

namespace extshuffle::mpi {

class RankSink {
 public:
  // What every rank's sink shares: `plan`, the pieces of the output
  // `pattern` names, and `files`, theirs (opened here, late, when the
  // pieces are cut by bytes); `in`, the records' format.
  RankSink(const JobOptions& options, const std::string& pattern, const DistributedInput::State& in, PiecePlan& plan,
           std::unique_ptr<SharedPieces>& files, int rank, std::uint64_t first_record, std::uint64_t end_record,
           std::uint64_t first_byte);
  // Bytes of whole records, in output order.
  void write(const std::byte* data, std::size_t bytes);
  // --checkpoint (docs/mpi.md "A killed job"): where the range written so
  // far can be resumed (piece_sink.hpp), with --verify's digest of it;
  // nothing when it cannot (spooled: text cut by bytes, or a part that is).
  // Throws IoError.
  struct Point {
    PiecePoint piece;
    std::string written_state;
  };
  std::optional<Point> point();
  // Before the first write: the range continued from `point`, at record
  // `first_record` and stream byte `first_byte`.
  void resume(const Point& point, std::uint64_t first_record, std::uint64_t first_byte);
  // After the walk, inside its checkpoint.
  void finish();
  // Collective, after a checkpoint that every rank's finish() passed: the
  // pieces cut by bytes written from the spools, then every spooled part at
  // its place. Throws RankFailure on every rank.
  void place(Communicator& comm);
  const dataset::RecordDigest& written() const { return written_; }
  std::uint64_t bytes_written() const { return pieces_ ? pieces_->bytes_written() : 0; }

 private:
  void open_pieces(std::uint64_t head_bytes, const PiecePoint* resumed = nullptr);
  PieceForm form() const;
  const JobOptions& options_;
  const std::string& pattern_;
  const DistributedInput::State& in_;
  PiecePlan& plan_;
  std::unique_ptr<SharedPieces>& files_;
  int rank_;
  std::uint64_t first_record_, end_record_, first_byte_;
  std::optional<PieceSink> pieces_;
  std::unique_ptr<RangeSpool> spool_;  // cut by bytes
  dataset::RecordDigest written_;
};

}  // namespace extshuffle::mpi
