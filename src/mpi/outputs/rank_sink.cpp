#include "rank_sink.hpp"

#include "extshuffle/dataset/verification.hpp"
#include "extshuffle/io/input_source.hpp"
#include "extshuffle/mpi/rank_failure.hpp"

namespace extshuffle::mpi {

RankSink::RankSink(const JobOptions& options, const std::string& pattern, const DistributedInput::State& in,
                   PiecePlan& plan, std::unique_ptr<SharedPieces>& files, int rank, std::uint64_t first_record,
                   std::uint64_t end_record, std::uint64_t first_byte)
    : options_(options), pattern_(pattern), in_(in), plan_(plan), files_(files), rank_(rank),
      first_record_(first_record), end_record_(end_record), first_byte_(first_byte) {
  if (plan_.cut_by_bytes) {
    spool_ = std::make_unique<RangeSpool>(io::scratch_directory(options_.run.tmpdir));
  } else {
    open_pieces(PieceSink::kUnknown);
  }
}

PieceForm RankSink::form() const {
  const bool tar_samples = in_.syntax.framing == formats::Framing::kTarSample;
  return PieceForm{in_.framed ? 0 : in_.record_size,
                   in_.syntax,
                   in_.header,
                   tar_samples ? std::string(formats::kTarTrailerBytes, '\0') : std::string(),
                   !in_.framed && !in_.header.empty() && in_.records > 0,
                   options_.run.threads,
                   io::scratch_directory(options_.run.tmpdir)};
}

void RankSink::open_pieces(std::uint64_t head_bytes, const PiecePoint* resumed) {
  pieces_.reset();
  if (resumed) {
    pieces_.emplace(plan_, form(), *files_, rank_, first_record_, end_record_, first_byte_, *resumed);
  } else {
    pieces_.emplace(plan_, form(), *files_, rank_, first_record_, end_record_, first_byte_, head_bytes);
  }
}

std::optional<RankSink::Point> RankSink::point() {
  if (spool_) return std::nullopt;
  const std::optional<PiecePoint> piece = pieces_->point();
  if (!piece) return std::nullopt;
  return Point{*piece, written_.state()};
}

void RankSink::resume(const Point& point, std::uint64_t first_record, std::uint64_t first_byte) {
  first_record_ = first_record;
  first_byte_ = first_byte;
  written_ = dataset::RecordDigest::from_state(point.written_state);
  open_pieces(PieceSink::kUnknown, &point.piece);
}

void RankSink::write(const std::byte* data, std::size_t bytes) {
  if (options_.input.verify) {
    if (in_.framed) {
      dataset::add_text_records(written_, data, bytes, in_.syntax);
    } else {
      written_.add_fixed(data, bytes, in_.record_size);
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
    const dataset::RecordCutter cutter(0, in_.syntax);
    const std::uint64_t head_bytes =
        cut_pieces_by_bytes(plan_, options_, pattern_, *spool_, cutter, first_record_, end_record_, comm);
    std::vector<std::string> paths;
    for (const Piece& piece : plan_.pieces) paths.push_back(piece.path);
    files_ = SharedPieces::open(paths, comm);
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
