// Every file of a distributed dataset's output (shared_output.hpp, one a
// piece): rank 0 creates each hidden file beside its destination, the other
// ranks join them, every rank fsyncs what it wrote, and rank 0 renames them
// all into place only once every rank has synced (distributed_commit.hpp),
// each prepared before the first is renamed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "extshuffle/mpi/communicator.hpp"
#include "shared_output.hpp"

namespace extshuffle::mpi {

class SharedPieces {
 public:
  // Collective, inside no checkpoint: rank 0 creates the hidden files of
  // `paths` (or, resuming a job, reopens `reopen`'s: each its name and
  // inode, one a path), then the others join them; `keep`: a job with
  // --checkpoint, whose files stay for the rerun when it fails (and for
  // SharedOutput::keep()). Throws RankFailure on every rank.
  static std::unique_ptr<SharedPieces> open(const std::vector<std::string>& paths, Communicator& comm,
                                            const std::vector<std::pair<std::string, std::uint64_t>>& reopen = {},
                                            bool keep = false);
  std::size_t size() const { return files_.size(); }
  SharedOutput& file(std::size_t k) { return *files_[k]; }
  // What this rank wrote reaches the disk. Throws IoError.
  void sync();
  // Rank 0, once every rank has synced (shared_output.hpp).
  void prepare_commit();
  // The renames that publish the files, in order, then published().
  std::vector<io::PendingRename> pending_renames() const;
  void published();
  // Every rank, once the commit is agreed.
  void forget();

 private:
  std::vector<std::unique_ptr<SharedOutput>> files_;
};

}  // namespace extshuffle::mpi
