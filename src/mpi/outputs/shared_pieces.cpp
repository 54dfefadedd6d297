#include "shared_pieces.hpp"

#include <cstring>

#include "extshuffle/io/input_set.hpp"
#include "extshuffle/mpi/rank_failure.hpp"

namespace extshuffle::mpi {

std::unique_ptr<SharedPieces> SharedPieces::open(const std::vector<std::string>& paths, Communicator& comm,
                                                 const std::vector<std::pair<std::string, std::uint64_t>>& reopen,
                                                 bool keep) {
  auto pieces = std::make_unique<SharedPieces>();
  std::string inodes;  // rank 0's, 8 bytes a file: one broadcast for every file
  std::string names;   // rank 0's hidden names, each ended by a NUL (no file name holds one)
  checkpoint(comm, [&] {
    if (paths.size() > 1) io::raise_open_file_limit();  // every piece keeps its descriptors until the commit
    if (comm.rank() != 0) return;
    for (std::size_t k = 0; k < paths.size(); ++k) {
      const std::string& path = paths[k];
      pieces->files_.push_back(reopen.size() == paths.size()
                                   ? SharedOutput::reopen(path, reopen[k].first, reopen[k].second)
                                   : SharedOutput::create(path));
      if (keep) pieces->files_.back()->keep();
      const std::uint64_t inode = pieces->files_.back()->inode();
      inodes.append(reinterpret_cast<const char*>(&inode), sizeof inode);
      names += pieces->files_.back()->hidden_name();
      names += '\0';
    }
  });
  inodes = comm.broadcast(inodes, 0);
  names = comm.broadcast(names, 0);
  checkpoint(comm, [&] {
    if (comm.rank() == 0) return;
    std::size_t name_at = 0;
    for (std::size_t k = 0; k < paths.size(); ++k) {
      std::uint64_t inode = 0;
      std::memcpy(&inode, inodes.data() + k * sizeof inode, sizeof inode);
      const std::size_t end = names.find('\0', name_at);
      pieces->files_.push_back(SharedOutput::join(paths[k], names.substr(name_at, end - name_at), inode));
      if (keep) pieces->files_.back()->keep();
      name_at = end + 1;
    }
  });
  return pieces;
}

void SharedPieces::sync() {
  for (auto& file : files_) file->sync();
}

void SharedPieces::prepare_commit() {
  for (auto& file : files_) file->prepare_commit();
}

std::vector<io::PendingRename> SharedPieces::pending_renames() const {
  std::vector<io::PendingRename> renames;
  for (const auto& file : files_) renames.push_back(file->pending_rename());
  return renames;
}

void SharedPieces::published() {
  for (auto& file : files_) file->published();
}

void SharedPieces::forget() {
  for (auto& file : files_) file->forget();
}

}  // namespace extshuffle::mpi
