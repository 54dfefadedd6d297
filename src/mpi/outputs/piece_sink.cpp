#include "piece_sink.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "extshuffle/errors.hpp"
#include "extshuffle/formats/npy_rows.hpp"
#include "extshuffle/io/positioned_write.hpp"

namespace extshuffle::mpi {

// One piece's part of this rank's range: through its codec (kNone passes
// bytes on) to the piece at a known offset, or to the spool.
struct PieceSink::Part {
  std::size_t piece = 0;
  std::unique_ptr<RangeWriter> range;  // null: spooled
  std::uint64_t offset = 0;            // in its piece's file (in place)
  std::unique_ptr<io::CompressingWriter> codec;
  std::uint64_t stored_bytes = 0;
};

PieceSink::PieceSink(const PiecePlan& plan, const PieceForm& form, SharedPieces& files, int rank,
                     std::uint64_t first_record, std::uint64_t end_record, std::uint64_t first_byte,
                     std::uint64_t head_bytes)
    : plan_(plan), form_(form), files_(files), rank_(rank), cursor_(std::min(first_record, plan.records)),
      end_record_(std::min(end_record, plan.records)), first_byte_(first_byte), head_bytes_(head_bytes),
      cutter_(form.record_size, form.syntax) {}

PieceSink::PieceSink(const PiecePlan& plan, const PieceForm& form, SharedPieces& files, int rank,
                     std::uint64_t first_record, std::uint64_t end_record, std::uint64_t first_byte,
                     const PiecePoint& point)
    : PieceSink(plan, form, files, rank, first_record, end_record, first_byte, point.head_bytes) {
  carried_bytes_ = point.piece_bytes;
}

PieceSink::~PieceSink() = default;

std::string PieceSink::piece_header(std::size_t piece) const {
  return form_.npy ? formats::npy_header_with_rows(form_.header, plan_.pieces[piece].records) : form_.header;
}

void PieceSink::begin_part(std::size_t piece) {
  const Piece& p = plan_.pieces[piece];
  part_ = std::make_unique<Part>();
  part_->piece = piece;
  const io::Codec codec = io::codec_for_path(p.path);
  const bool starts = cursor_ == p.first_record;
  std::uint64_t offset = 0;
  bool known = starts;
  if (!starts && codec == io::Codec::kNone && !tar()) {
    // Where this rank's first record lies in the piece, when that needs no
    // other rank's bytes.
    if (!plan_.several_files) {
      offset = first_byte_, known = true;
    } else if (form_.record_size > 0) {
      offset = piece_header(piece).size() + (cursor_ - p.first_record) * form_.record_size, known = true;
    } else if (head_bytes_ != kUnknown) {
      offset = piece_header(piece).size() + head_bytes_, known = true;
    }
  }
  Part* part = part_.get();
  // A resumed sink's first part continues the bytes written before.
  if (!starts) part->stored_bytes = carried_bytes_;
  carried_bytes_ = 0;
  if (known) {
    part->offset = offset - part->stored_bytes;
    part->range = std::make_unique<RangeWriter>(files_.file(piece), offset);
  } else {
    spool_ = io::BlockFile::create_scratch(form_.spool_directory);
    spooled_piece_ = piece;
  }
  part->codec = std::make_unique<io::CompressingWriter>(
      codec,
      [this, part](const void* data, std::size_t bytes) {
        if (part->range) {
          part->range->write(static_cast<const std::byte*>(data), bytes);
        } else {
          spool_->write_now(data, spooled_bytes_, bytes);
          spooled_bytes_ += bytes;
        }
        part->stored_bytes += bytes;
      },
      form_.threads);
  if (starts) {
    const std::string header = piece_header(piece);
    part->codec->write(header.data(), header.size());
  }
}

void PieceSink::end_part() {
  part_->codec->finish();
  if (part_->range) part_->range->finish();
  last_piece_ = part_->piece;
  last_piece_bytes_ = part_->stored_bytes;
  stored_bytes_ += part_->stored_bytes;
  part_.reset();
}

std::optional<PiecePoint> PieceSink::point() {
  if (spool_ || tar()) return std::nullopt;
  if (!part_) return PiecePoint{};  // the next record starts a piece
  if (!part_->range || io::codec_for_path(plan_.pieces[part_->piece].path) != io::Codec::kNone) return std::nullopt;
  part_->range->finish();  // kNone passes every write straight on
  const std::uint64_t header_bytes = piece_header(part_->piece).size();
  return PiecePoint{part_->offset + part_->stored_bytes - header_bytes, part_->stored_bytes};
}

void PieceSink::write(const std::byte* data, std::size_t bytes) {
  while (bytes > 0 && cursor_ < end_record_) {
    if (!part_) begin_part(plan_.piece_of(cursor_));
    const Piece& p = plan_.pieces[part_->piece];
    const std::uint64_t left = p.first_record + p.records - cursor_;
    // The last piece takes the rest: its records need not be found.
    const bool last = part_->piece + 1 == plan_.pieces.size();
    const dataset::RecordCutter::Cut cut =
        last ? dataset::RecordCutter::Cut{bytes, 0} : cutter_.take_records(data, bytes, left);
    write_records(data, cut.bytes);
    data += cut.bytes;
    bytes -= cut.bytes;
    if (last) return;
    cursor_ += cut.records;
    if (cut.records == left) {
      part_->codec->write(form_.trailer.data(), form_.trailer.size());
      end_part();
    }
  }
}

void PieceSink::write_records(const std::byte* data, std::size_t bytes) {
  if (!tar()) {
    part_->codec->write(data, bytes);
    return;
  }
  tar_frames_.write(data, bytes, [this](const std::byte* sample, std::size_t n) { part_->codec->write(sample, n); });
}

void PieceSink::write_whole_piece(std::size_t piece) {
  const std::uint64_t cursor = cursor_;
  cursor_ = plan_.pieces[piece].first_record;  // it starts here
  begin_part(piece);
  part_->codec->write(form_.trailer.data(), form_.trailer.size());
  cursor_ = cursor;
  const std::uint64_t last = last_piece_, last_bytes = last_piece_bytes_;
  end_part();
  last_piece_ = last, last_piece_bytes_ = last_bytes;  // not this rank's range
}

void PieceSink::finish() {
  // The last piece's records are not counted (write()): it ends with the output's last record.
  if (part_ && part_->piece + 1 == plan_.pieces.size() && end_record_ == plan_.records) {
    part_->codec->write(form_.trailer.data(), form_.trailer.size());
  }
  if (part_) end_part();
  if (rank_ != 0) return;
  for (std::size_t k = 0; k < plan_.pieces.size(); ++k) {
    if (plan_.pieces[k].records == 0) write_whole_piece(k);
  }
}

void PieceSink::place(Communicator& comm) {
  struct Tail {
    std::uint64_t piece, bytes;
  };
  const std::vector<Tail> tails = comm.all_gather(Tail{last_piece_, last_piece_bytes_});
  if (!spool_) return;
  // The ranks before this one that wrote into the spooled piece: its first
  // parts, in rank order.
  std::uint64_t offset = 0;
  for (int q = 0; q < rank_; ++q) {
    if (tails[q].piece == spooled_piece_) offset += tails[q].bytes;
  }
  SharedOutput& file = files_.file(spooled_piece_);
  std::vector<std::byte> buffer(std::size_t{1} << 20);
  for (std::uint64_t done = 0; done < spooled_bytes_;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), spooled_bytes_ - done));
    spool_->read_now(buffer.data(), done, n);
    io::write_at(file.descriptor(), buffer.data(), n, offset + done, plan_.pieces[spooled_piece_].path);
    done += n;
  }
  spool_.reset();
}

}  // namespace extshuffle::mpi
