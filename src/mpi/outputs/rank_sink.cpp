#include "rank_sink.hpp"

#include "extshuffle/dataset/verification.hpp"
#include "extshuffle/io/input_source.hpp"
#include "extshuffle/mpi/rank_failure.hpp"

namespace extshuffle::mpi {

RankSink::RankSink(RankOutputs outputs, int rank, std::uint64_t first_record, std::uint64_t end_record,
                   std::uint64_t first_byte)
    : out_(outputs), rank_(rank), first_record_(first_record), end_record_(end_record), first_byte_(first_byte) {
  if (out_.plan.cut_by_bytes) {
    spool_ = std::make_unique<RangeSpool>(io::scratch_directory(out_.config.tmpdir));
  } else {
    open_pieces(PieceSink::kUnknown);
  }
}

void RankSink::open_pieces(std::uint64_t head_bytes) {
  const DistributedInput::State& in = out_.in;
  const bool tar = in.text && in.syntax.framing == formats::RecordFraming::kTarSample;
  PieceForm form{in.text ? 0 : in.record_size, in.syntax, in.header,
                 tar ? std::string(formats::kTarTrailerBytes, '\0') : std::string(),
                 !in.text && !in.header.empty() && in.records > 0, out_.config.threads,
                 io::scratch_directory(out_.config.tmpdir)};
  pieces_.emplace(out_.plan, form, *out_.files, rank_, first_record_, end_record_, first_byte_, head_bytes);
}

void RankSink::write(const std::byte* data, std::size_t bytes) {
  if (out_.config.verify) {
    if (out_.in.text) {
      dataset::add_text_records(written_, data, bytes, out_.in.syntax);
    } else {
      written_.add_fixed(data, bytes, out_.in.record_size);
    }
  }
  if (spool_) {
    spool_->write(data, bytes);
  } else {
    pieces_->write(data, bytes);
  }
}

void RankSink::finish() {
  if (spool_) {
    spool_->finish();
  } else {
    pieces_->finish();
  }
}

void RankSink::place(Communicator& comm) {
  if (spool_) {
    const dataset::RecordCutter cutter(0, out_.in.syntax);
    const std::uint64_t head_bytes =
        cut_pieces_by_bytes(out_.plan, out_.config, out_.pattern, *spool_, cutter, first_record_, end_record_, comm);
    std::vector<std::string> paths;
    for (const Piece& piece : out_.plan.pieces) paths.push_back(piece.path);
    out_.files = SharedPieces::open(paths, comm);
    checkpoint(comm, [&] {
      open_pieces(head_bytes);
      spool_->replay([&](const std::byte* data, std::size_t bytes) { pieces_->write(data, bytes); });
      spool_.reset();
      pieces_->finish();
    });
  }
  checkpoint(comm, [&] { pieces_->place(comm); });
}

}  // namespace extshuffle::mpi
