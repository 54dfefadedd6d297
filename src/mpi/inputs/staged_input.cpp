#include "staged_input.hpp"

#include <mpi.h>

#include <algorithm>
#include <map>

#include "extshuffle/errors.hpp"
#include "extshuffle/mpi/rank_failure.hpp"
#include "archive_windows.hpp"

namespace extshuffle::mpi {
namespace {

// The terminator a text file's last record lacks, as one byte in memory.
const std::byte kStagedTerminators[2] = {std::byte{'\n'}, std::byte{'\0'}};
// The tags of the staging messages (no other message is in flight meanwhile):
// bytes, and the windows of an archive's index its holder sends its reader.
constexpr int kStageTag = 7;
constexpr int kWindowTag = 9;

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
  // ranks' bytes). A plain file's bytes, and an archive's frames (from its
  // holder's index, archive_windows.hpp), are read in place by `reader`; a
  // compressed file's, which only its holder decompressed, by the holder
  // (docs/mpi.md, "Datasets"). Whoever reads them sends them straight to
  // `to`, unless that is itself: one hop at most.
  void stage(const FileRange& p, int to, int reader) {
    const DatasetFile& f = d_.files[p.file];
    const std::uint64_t stored_end = std::min(p.end, f.file_data_bytes());
    const int from = f.compressed ? f.holder : reader;
    if (from == to && !f.tar() && !contiguous_) {
      if (comm_.rank() == to && p.begin < stored_end) {
        staged_.data.append({&source(p.file), offset_of(p.file, p.begin), stored_end - p.begin});
        note_read(p.file, offset_of(p.file, p.begin), offset_of(p.file, stored_end));
      }
    } else {
      // Copied into `to`'s scratch file: an archive's frames too, so that the
      // held records are one range of a file, as the run maps and digests them.
      move(p.file, p.begin, stored_end, from, to);
    }
    if (comm_.rank() == to && p.end > stored_end) add_terminator(f);
  }

  StagedInput finish() { return std::move(staged_); }

 private:
  // Bytes [begin, end) of file k's data read by rank `from`, a block at a
  // time, and written to rank `to`'s scratch file (sent over MPI unless
  // `from` is `to`). An archive's holder takes part: it sends `from` the
  // window of its index each block needs.
  void move(std::size_t k, std::uint64_t begin, std::uint64_t end, int from, int to) {
    const int me = comm_.rank();
    const bool window_holder = d_.files[k].tar() && d_.files[k].holder == me;
    if (begin == end || (me != from && me != to && !window_holder)) return;
    for (std::uint64_t at = begin; at < end;) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kStageBlockBytes, end - at));
      if (me == from) {
        read(k, at, n);
      } else if (window_holder) {
        const std::vector<std::uint64_t> window = frame_window(k, at, n);
        MPI_Send(window.data(), static_cast<int>(window.size()), MPI_UINT64_T, from, kWindowTag, MPI_COMM_WORLD);
      }
      if (from != to && me == from) {
        MPI_Send(buffer_.data(), static_cast<int>(n), MPI_BYTE, to, kStageTag, MPI_COMM_WORLD);
      } else if (from != to && me == to) {
        MPI_Recv(buffer_.data(), static_cast<int>(n), MPI_BYTE, from, kStageTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      if (me == to) staged_.file->write_now(buffer_.data(), staged_.file_bytes + (at - begin), n);
      at += n;
    }
    if (me == from && from != to) staged_.bytes_read_for_others += end - begin;
    if (me != to) return;
    staged_.data.append({staged_.file.get(), staged_.file_bytes, end - begin});
    staged_.file_bytes += end - begin;
    if (from != to) staged_.bytes_from_readers += end - begin;
  }

  // Where file `k`'s data byte `at` lies in source(k).
  std::uint64_t offset_of(std::size_t k, std::uint64_t at) {
    const std::uint64_t start = d_.held[k] ? d_.held[k]->data_offset() : 0;
    return start + d_.files[k].layout.data_offset + at;
  }
  // File k's bytes: its holder's opened source, or the plain file opened in
  // place (an archive another rank indexed must still be the one it indexed).
  io::BlockFile& source(std::size_t k) {
    if (d_.held[k]) return d_.held[k]->data();
    auto [at, added] = opened_.try_emplace(k, staged_.opened.size());
    if (added) {
      staged_.opened.push_back(io::BlockFile::open_input(d_.files[k].path));
      const std::uint64_t now = staged_.opened.back()->size(), then = d_.files[k].stored_bytes;
      if (now != then) {
        throw InputError("input '" + d_.files[k].path + "' changed size during the run (" + std::to_string(then) +
                         " bytes at the start, " + std::to_string(now) + " now)");
      }
    }
    return *staged_.opened[at->second];
  }
  // The window of archive k's index that covers bytes [at, at + n) of its frames (its holder's).
  std::vector<std::uint64_t> frame_window(std::size_t k, std::uint64_t at, std::size_t n) {
    const DatasetFile& f = d_.files[k];
    return encode_frame_window(*f.layout.tar_index, f.tar_frame_begin, at, at + n);
  }
  // Bytes [at, at + n) of file k's data into the buffer: an archive's
  // frames through a window of its index, its holder's or received from it.
  void read(std::size_t k, std::uint64_t at, std::size_t n) {
    const DatasetFile& f = d_.files[k];
    if (!f.tar()) {
      source(k).read_now(buffer_.data(), offset_of(k, at), n);
      note_read(k, offset_of(k, at), offset_of(k, at + n));
      return;
    }
    std::vector<std::uint64_t> window;
    if (f.holder == comm_.rank()) {
      window = frame_window(k, at, n);
    } else {
      MPI_Status status;
      MPI_Probe(f.holder, kWindowTag, MPI_COMM_WORLD, &status);
      int words = 0;
      MPI_Get_count(&status, MPI_UINT64_T, &words);
      window.resize(static_cast<std::size_t>(words));
      MPI_Recv(window.data(), words, MPI_UINT64_T, f.holder, kWindowTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    read_frame_window(window, source(k), offset_of(k, 0), buffer_.data(), n);
    const auto [first, end] = frame_window_span(window);
    note_read(k, offset_of(k, first), offset_of(k, end));
  }
  // Bytes [begin, end) of file k read in place, unless this rank holds it.
  void note_read(std::size_t k, std::uint64_t begin, std::uint64_t end) {
    if (!d_.held[k]) staged_.reads.add(k, source(k), d_.files[k].path, d_.files[k].holder, begin, end);
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
