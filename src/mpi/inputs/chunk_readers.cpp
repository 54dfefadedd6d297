#include "chunk_readers.hpp"

#include <mpi.h>

#include <algorithm>

#include "extshuffle/mpi/rank_failure.hpp"

namespace extshuffle::mpi {
namespace {

// The tag of these messages (no other message is in flight meanwhile).
constexpr int kChunkReadTag = 8;

// Bytes [begin, end) of `source` read by this rank and sent to rank `to`.
void send_range(io::BlockFile& source, std::uint64_t begin, std::uint64_t end, int to, std::vector<std::byte>& buffer) {
  for (std::uint64_t at = begin; at < end;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kStageBlockBytes, end - at));
    source.read_now(buffer.data(), at, n);
    MPI_Send(buffer.data(), static_cast<int>(n), MPI_BYTE, to, kChunkReadTag, MPI_COMM_WORLD);
    at += n;
  }
}

// Bytes [begin, end) received from rank `from`, appended to `staged`'s file.
void receive_range(StagedInput& staged, std::uint64_t begin, std::uint64_t end, int from,
                   std::vector<std::byte>& buffer) {
  for (std::uint64_t at = begin; at < end;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kStageBlockBytes, end - at));
    MPI_Recv(buffer.data(), static_cast<int>(n), MPI_BYTE, from, kChunkReadTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    staged.file->write_now(buffer.data(), staged.file_bytes + (at - begin), n);
    at += n;
  }
  staged.data.append({staged.file.get(), staged.file_bytes, end - begin});
  staged.file_bytes += end - begin;
}

}  // namespace

StagedInput read_chunks_by_readers(io::BlockFile& source, const std::vector<std::uint64_t>& want,
                                   const std::vector<std::uint64_t>& read, const std::string& scratch_directory,
                                   Communicator& comm) {
  StagedInput staged;
  std::vector<std::byte> buffer;
  checkpoint(comm, [&] {
    staged.file = io::BlockFile::create_scratch(scratch_directory);
    buffer.resize(kStageBlockBytes);
  });
  const int me = comm.rank(), ranks = comm.size();
  try {
    // Every rank walks every (receiver, reader) pair in the same order,
    // taking its part: one sender and one receiver at a time.
    for (int to = 0; to < ranks; ++to) {
      for (int reader = 0; reader < ranks; ++reader) {
        const std::uint64_t begin = std::max(want[to], read[reader]), end = std::min(want[to + 1], read[reader + 1]);
        if (begin >= end) continue;
        if (reader == to) {
          if (me == to) staged.data.append({&source, begin, end - begin});
        } else if (me == reader) {
          send_range(source, begin, end, to, buffer);
          staged.bytes_read_for_others += end - begin;
        } else if (me == to) {
          receive_range(staged, begin, end, reader, buffer);
          staged.bytes_from_readers += end - begin;
        }
      }
    }
  } catch (...) {
    abort_job(std::current_exception());
  }
  return staged;
}

}  // namespace extshuffle::mpi
