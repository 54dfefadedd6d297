// The records each rank holds before the run, gathered where they can be
// read (docs/mpi.md, "Datasets"): rank r is given bytes [begin[r],
// begin[r + 1]) of the dataset's data (every file's records, in order, each
// file's missing final terminator added). Bytes of a plain file are read in
// place, on the file system every rank sees, and so are an archive's
// frames, through windows of its holder's index (archive_windows.hpp);
// bytes of a compressed file, which only its holder decompressed, are read
// by the holder. Whoever reads bytes for another rank sends them to it
// directly over MPI, in blocks of kStageBlockBytes, into a file in the
// receiving rank's own scratch space. Every transfer is one sender and one
// receiver (and an archive's holder, which sends the reader its windows
// first), taken in one order that every rank knows, so the first
// unfinished one always has its ranks at it.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "dataset_files.hpp"
#include "input_reads.hpp"
#include "extshuffle/io/block_file.hpp"
#include "extshuffle/io/byte_extents.hpp"
#include "extshuffle/mpi/communicator.hpp"

namespace extshuffle::mpi {

// The most bytes of a piece in memory at once, sending or receiving.
inline constexpr std::size_t kStageBlockBytes = std::size_t{4} << 20;

struct StagedInput {
  std::unique_ptr<io::BlockFile> file;  // in this rank's scratch: what it received (or, contiguous, everything)
  std::uint64_t file_bytes = 0;         // how much of `file` that is
  std::vector<std::unique_ptr<io::BlockFile>> opened;  // the plain files read in place
  io::ByteExtents data;  // this rank's bytes, in order
  // The bytes of `data` received from the rank that read them (a reader
  // apart, stage_input's read_begin, or a compressed file's holder), and
  // those this rank read and sent to others.
  std::uint64_t bytes_from_readers = 0, bytes_read_for_others = 0;
  // The bytes of files this rank does not hold that it read in place (a
  // dataset's staging; --verify checks them against their holders).
  InputReads reads;
  // The bytes this rank read from the input's files (in place, or a
  // compressed file it holds, decompressed), for itself or for others.
  std::uint64_t bytes_read() const { return data.bytes - bytes_from_readers + bytes_read_for_others; }
};

// Gives each rank its bytes [byte_begin[rank], byte_begin[rank + 1]) of the
// dataset's data (P + 1 entries, the same on every rank). `contiguous`: all
// of them copied into `file` from its offset 0, so that one file range holds
// them (what a root run by one rank reads). `read_begin` (P + 1 entries, or
// none): rank s reads bytes [read_begin[s], read_begin[s + 1]) for
// everyone, and sends each rank the part of its bytes that lies there (an
// archive's frames too, read in place), so that the reads are shared apart
// from what each rank is given (docs/mpi.md, "How the work is shared"); a
// compressed file's bytes are read by its holder, wherever they lie, and
// sent to the rank they are for directly. A
// failure while bytes move ends the job (abort_job: the ranks can no
// longer meet). Collective.
StagedInput stage_input(DatasetFiles& files, const std::vector<std::uint64_t>& byte_begin, bool contiguous,
                        const std::string& scratch_directory, Communicator& comm,
                        const std::vector<std::uint64_t>& read_begin = {});

}  // namespace extshuffle::mpi
