#include "staged_input.hpp"

#include <mpi.h>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "extshuffle/dataset/tar_frames.hpp"

#include "extshuffle/errors.hpp"
#include "extshuffle/mpi/rank_failure.hpp"

namespace extshuffle::mpi {
namespace {

// The terminator a text file's last record lacks, as one byte in memory.
const std::byte kStagedTerminators[2] = {std::byte{'\n'}, std::byte{'\0'}};
// The tag of the staging messages (no other message is in flight meanwhile).
constexpr int kStageTag = 7;

// Bytes [begin, end) of file `file`'s data; the byte at its
// file_data_bytes(), when inside, is the terminator it lacks.
struct FileRange {
  std::size_t file = 0;
  std::uint64_t begin = 0, end = 0;
};

std::vector<FileRange> pieces_of(const DatasetFiles& d, std::uint64_t from, std::uint64_t to) {
  std::vector<FileRange> pieces;
  for (std::size_t k = 0; k < d.files.size(); ++k) {
    const DatasetFile& f = d.files[k];
    const std::uint64_t lo = std::max(from, f.data_begin), hi = std::min(to, f.data_begin + f.data_bytes());
    if (lo < hi) pieces.push_back({k, lo - f.data_begin, hi - f.data_begin});
  }
  return pieces;
}

class Stager {
 public:
  Stager(DatasetFiles& d, bool contiguous, const std::string& scratch_directory, Communicator& comm)
      : d_(d), contiguous_(contiguous), comm_(comm), buffer_(kStageBlockBytes) {
    staged_.file = io::BlockFile::create_scratch(scratch_directory);
  }

  // FileRange `p` of rank `to`'s bytes, inside the bytes read by rank
  // `reader` (`to` itself, unless the reads are shared apart from the
  // ranks' bytes): moved, read in place, or copied, as its file and
  // `contiguous` want. Another reader takes the bytes from the file (a
  // compressed file's or an archive's from its holder) and sends them on.
  void stage(const FileRange& p, int to, int reader) {
    const DatasetFile& f = d_.files[p.file];
    const std::uint64_t stored_end = std::min(p.end, f.file_data_bytes());
    const int me = comm_.rank();
    // Only the holder can read a compressed file's bytes or an archive's
    // frames; a holder that is `to` itself reads them, whoever the reader.
    const bool holder_only = f.compressed || f.tar();
    if (reader != to && (!holder_only || f.holder != to)) {
      through_reader(p, stored_end, to, reader);
      if (me == to && p.end > stored_end) add_terminator(f);
      return;
    }
    const bool moved = holder_only && f.holder != to;
    if (moved && f.holder == me) send(p.file, p.begin, stored_end, to);
    if (to != me) return;
    if (moved) {
      receive(p.begin, stored_end, f.holder);
    } else if (contiguous_ || f.tar()) {
      // An archive's frames are copied too: the held records are then one
      // range of a file, as the run maps and digests them.
      copy(p.file, p.begin, stored_end);
    } else if (p.begin < stored_end) {
      staged_.data.append({&source(p.file), offset_of(p.file, p.begin), stored_end - p.begin});
    }
    if (p.end > stored_end) add_terminator(f);
  }

  StagedInput finish() { return std::move(staged_); }

 private:
  // Bytes [p.begin, stored_end) of file p.file taken in by `reader` (read
  // in place, or received from the file's holder) and sent on to `to`.
  void through_reader(const FileRange& p, std::uint64_t stored_end, int to, int reader) {
    const DatasetFile& f = d_.files[p.file];
    const int me = comm_.rank();
    const bool from_holder = (f.compressed || f.tar()) && f.holder != reader;
    if (from_holder && me == f.holder) send(p.file, p.begin, stored_end, reader);
    if (me == reader) {
      if (from_holder) {
        relay(p.begin, stored_end, f.holder, to);
      } else {
        send(p.file, p.begin, stored_end, to);
      }
      staged_.bytes_read_for_others += stored_end - p.begin;
    }
    if (me != to) return;
    receive(p.begin, stored_end, reader);
    staged_.bytes_from_readers += stored_end - p.begin;
  }

  // Where file `k`'s data byte `at` lies in source(k).
  std::uint64_t offset_of(std::size_t k, std::uint64_t at) {
    const std::uint64_t start = d_.held[k] ? d_.held[k]->data_offset() : 0;
    return start + d_.files[k].layout.data_offset + at;
  }
  // File k's bytes: its holder's opened source, or the plain file opened in place.
  io::BlockFile& source(std::size_t k) {
    if (d_.held[k]) return d_.held[k]->data();
    auto [at, added] = opened_.try_emplace(k, staged_.opened.size());
    if (added) staged_.opened.push_back(io::BlockFile::open_input(d_.files[k].path));
    return *staged_.opened[at->second];
  }
  // Bytes [begin, end) of file k's data are read next, `n` at a time by
  // read(): a tar archive's frames through a reader of the samples there
  // (begin and end are frame boundaries).
  void start_reading(std::size_t k, std::uint64_t begin, std::uint64_t end) {
    const DatasetFile& f = d_.files[k];
    frames_.reset();
    if (!f.tar()) return;
    const auto& starts = f.tar_frame_begin;
    const auto sample = [&](std::uint64_t at) {
      const auto found = std::lower_bound(starts.begin(), starts.end(), at);
      if (found == starts.end() || *found != at) throw std::logic_error("staging: a range between tar frames");
      return static_cast<std::uint64_t>(found - starts.begin());
    };
    frames_ = std::make_unique<dataset::TarFrameReader>(source(k), offset_of(k, 0), *f.layout.tar_index, sample(begin),
                                                        sample(end));
  }
  void read(std::size_t k, std::uint64_t at, std::size_t n) {
    if (!frames_) {
      source(k).read_now(buffer_.data(), offset_of(k, at), n);
    } else if (frames_->read(buffer_.data(), n) != n) {
      throw std::logic_error("staging: fewer tar frames than counted");
    }
  }
  void send(std::size_t k, std::uint64_t begin, std::uint64_t end, int to) {
    start_reading(k, begin, end);
    for (std::uint64_t at = begin; at < end;) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kStageBlockBytes, end - at));
      read(k, at, n);
      MPI_Send(buffer_.data(), static_cast<int>(n), MPI_BYTE, to, kStageTag, MPI_COMM_WORLD);
      at += n;
    }
  }
  // Bytes [begin, end) of a piece, filled into the buffer a block at a
  // time by `fill(at, n)`, appended to the staged file.
  template <class Fill>
  void write_blocks(std::uint64_t begin, std::uint64_t end, Fill fill) {
    if (begin == end) return;
    for (std::uint64_t at = begin; at < end;) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kStageBlockBytes, end - at));
      fill(at, n);
      staged_.file->write_now(buffer_.data(), staged_.file_bytes + (at - begin), n);
      at += n;
    }
    staged_.data.append({staged_.file.get(), staged_.file_bytes, end - begin});
    staged_.file_bytes += end - begin;
  }
  void receive(std::uint64_t begin, std::uint64_t end, int from) {
    write_blocks(begin, end, [&](std::uint64_t, std::size_t n) {
      MPI_Recv(buffer_.data(), static_cast<int>(n), MPI_BYTE, from, kStageTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    });
  }
  // Bytes [begin, end) from rank `from`, sent on to rank `to` a block at a time.
  void relay(std::uint64_t begin, std::uint64_t end, int from, int to) {
    for (std::uint64_t at = begin; at < end;) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kStageBlockBytes, end - at));
      MPI_Recv(buffer_.data(), static_cast<int>(n), MPI_BYTE, from, kStageTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buffer_.data(), static_cast<int>(n), MPI_BYTE, to, kStageTag, MPI_COMM_WORLD);
      at += n;
    }
  }
  void copy(std::size_t k, std::uint64_t begin, std::uint64_t end) {
    start_reading(k, begin, end);
    write_blocks(begin, end, [&](std::uint64_t at, std::size_t n) { read(k, at, n); });
  }
  void add_terminator(const DatasetFile& f) {
    const std::byte* terminator = &kStagedTerminators[f.layout.syntax.terminator == '\n' ? 0 : 1];
    if (!contiguous_) {
      staged_.data.append({nullptr, 0, 1, terminator});
      return;
    }
    staged_.file->write_now(terminator, staged_.file_bytes, 1);
    staged_.data.append({staged_.file.get(), staged_.file_bytes, 1});
    staged_.file_bytes += 1;
  }

  DatasetFiles& d_;
  bool contiguous_;
  Communicator& comm_;
  std::vector<std::byte> buffer_;
  StagedInput staged_;
  std::map<std::size_t, std::size_t> opened_;  // file -> its index in staged_.opened
  std::unique_ptr<dataset::TarFrameReader> frames_;  // the archive being read, if one is
};

}  // namespace

StagedInput stage_input(DatasetFiles& files, const std::vector<std::uint64_t>& byte_begin, bool contiguous,
                        const std::string& scratch_directory, Communicator& comm,
                        const std::vector<std::uint64_t>& read_begin) {
  std::unique_ptr<Stager> stager;
  checkpoint(comm, [&] { stager = std::make_unique<Stager>(files, contiguous, scratch_directory, comm); });
  try {
    // Every rank walks every rank's pieces in the same order, taking its part.
    // A rank's bytes are cut where the readers' bytes begin, in order.
    for (int to = 0; to < comm.size(); ++to) {
      for (int reader = 0; reader < comm.size(); ++reader) {
        const bool own = read_begin.empty();
        if (own && reader != to) continue;
        const std::uint64_t from = own ? byte_begin[to] : std::max(byte_begin[to], read_begin[reader]);
        const std::uint64_t end = own ? byte_begin[to + 1] : std::min(byte_begin[to + 1], read_begin[reader + 1]);
        if (from >= end) continue;
        for (const FileRange& p : pieces_of(files, from, end)) stager->stage(p, to, reader);
      }
    }
  } catch (...) {
    abort_job(std::current_exception());
  }
  return stager->finish();
}

}  // namespace extshuffle::mpi
