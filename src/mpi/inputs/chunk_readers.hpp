// The chunks of one plain file read apart from the ranks that scatter
// them (docs/mpi.md, "How the work is shared"): whole chunks shared by
// bytes leave a rank off its 1/P of the bytes by up to its largest chunk,
// which can be most of the data when the records' sizes drift far along
// the file. So rank s reads the bytes in its 1/P of the file's data and
// sends each rank the part of its chunks that lies there; a chunk's
// scatter, and so the permutation, is unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "extshuffle/io/block_file.hpp"
#include "extshuffle/mpi/communicator.hpp"
#include "staged_input.hpp"

namespace extshuffle::mpi {

// This rank's bytes [want[me], want[me + 1]) of `source` (offsets in the
// file, P + 1 entries the same on every rank), where rank s reads [read[s],
// read[s + 1]): those in its own reads in place, the others received from
// their readers into a file in `scratch_directory`, a block of
// kStageBlockBytes at a time. A failure while bytes move ends the job
// (abort_job). Collective.
StagedInput read_chunks_by_readers(io::BlockFile& source, const std::vector<std::uint64_t>& want,
                                   const std::vector<std::uint64_t>& read, const std::string& scratch_directory,
                                   Communicator& comm);

}  // namespace extshuffle::mpi
