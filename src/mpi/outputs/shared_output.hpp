// One file of a distributed run's output (a piece: shared_pieces.hpp), on
// the shared file system, written by every rank at its own offset, under a
// hidden name beside the destination until every rank has written and
// fsynced its range; then rank 0 renames it over the destination, through
// extshuffle's one commit (dataset/output_commit.hpp), so the destination
// never holds a partial file.
//
// The hidden name is a temporary's as extshuffle names its own,
// ".<name>.extshuffle-<16 hex digits>" (io/output_file.hpp temporary_name),
// drawn by rank 0 and sent to the others (an anonymous O_TMPFILE cannot be
// opened from other machines). A second job into the same destination
// draws its own, so the two write side by side and commit one after the
// other under the commit's lock (docs/cli.md "The commit"), as two
// extshuffle runs do. A file left behind by a job whose
// every rank was killed (SIGKILL, a lost node) is removed by the next
// commit into the same destination or pattern (dataset/stale_pieces.hpp's
// leftovers); rank 0 holds an flock on it while the job runs, as
// extshuffle holds its temporaries, so that no other run's sweep removes a
// running job's file. It is created 0600, as it holds records of inputs
// that may be private, and gets its final mode at the commit. A signal
// that ends the process removes it on every rank (io/cleanup_registry.hpp).
//
// The boundary with extshuffle's output side. Shared, one definition each:
// the temporary's name (io::temporary_name), the destination directory's
// descriptor and the commit's one rename (io/destination_directory.hpp),
// the final mode (io::give_final_mode), the write-behind of a range
// (io/write_behind.hpp), the digest read back through its descriptor
// (io/file_digest.hpp) and the commit itself (dataset/output_commit.hpp,
// driven by distributed_commit.hpp). Its own, because io::OutputFile is a
// file one process writes front to back: a file several processes on
// several machines open by name and write at offsets.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "extshuffle/io/aligned_buffer.hpp"
#include "extshuffle/io/block_file.hpp"
#include "extshuffle/io/output_file.hpp"
#include "extshuffle/io/publication.hpp"
#include "extshuffle/io/write_behind.hpp"

namespace extshuffle::mpi {

class SharedOutput {
 public:
  // Rank 0: checks the destination, creates and locks a hidden file of a
  // fresh name. Throws IoError (a bad directory).
  static std::unique_ptr<SharedOutput> create(const std::string& destination);
  // The other ranks, once rank 0 has created it: opens the hidden file
  // `hidden_name` (rank 0's hidden_name()) beside the destination, which
  // must be the inode rank 0 created. Throws IoError.
  static std::unique_ptr<SharedOutput> join(const std::string& destination, const std::string& hidden_name,
                                            std::uint64_t inode);
  // Rank 0 of a resumed job (--checkpoint: docs/mpi.md "A killed job"):
  // reopens the hidden file `hidden_name` its journal names, which must be
  // the regular file of ours of `inode`, and locks it. Kept (keep()).
  // Throws IoError.
  static std::unique_ptr<SharedOutput> reopen(const std::string& destination, const std::string& hidden_name,
                                              std::uint64_t inode);
  ~SharedOutput();  // rank 0: removes the hidden file unless committed or kept
  // A job with --checkpoint: the hidden file is the journal's, kept when
  // the job fails or a signal ends it, for the rerun.
  void keep();
  // The hidden file's path (as the destination's directory is named).
  const std::string& hidden_path() const { return hidden_; }
  SharedOutput(const SharedOutput&) = delete;
  SharedOutput& operator=(const SharedOutput&) = delete;

  std::uint64_t inode() const { return inode_; }
  // Its name in the destination's directory.
  const std::string& hidden_name() const { return hidden_name_; }
  // Writes this rank's bytes; a rank's output is one contiguous range.
  io::BlockFile& file() { return *file_; }
  // A descriptor of the file, for the writeback of written ranges and fsync.
  int descriptor() const { return fd_; }
  // What this rank wrote reaches the disk (fsync): every rank, before the
  // commit. Throws IoError.
  void sync();
  // Rank 0, once every rank has synced: the replaced file's mode (and, for
  // root, its owner and group), what can fail for want of rights, every
  // destination untouched. Throws IoError. Then pending_rename(), the
  // rename over the destination for the commit's io::Publication (a job of
  // several files prepares every one before it renames the first), and
  // published() once it is done.
  void prepare_commit();
  io::PendingRename pending_rename() const;
  void published();
  // Every rank, once the commit is agreed: nothing is left to remove.
  void forget();

 private:
  explicit SharedOutput(const std::string& destination);
  // Sets the hidden name, hidden_ and its cleanup registration.
  void name_hidden(const std::string& name);
  // The destination: not a directory nor a node written in place; the mode
  // of the file it replaces.
  void check_destination();
  std::string destination_;  // as the user named it (messages)
  std::string target_;       // its symbolic links followed: what the rename replaces
  std::string hidden_;       // beside the target (messages, the signal handlers)
  std::string hidden_name_;  // its name in directory_
  int directory_ = -1;       // the target's directory (io/destination_directory.hpp): every name made relative to it
  std::optional<io::ReplacedFile> replaced_;
  int fd_ = -1;         // rank 0: holds the in-use lock; every rank: for fsync
  bool owner_ = false;  // rank 0
  std::uint64_t inode_ = 0;
  std::unique_ptr<io::BlockFile> file_;
  int cleanup_slot_ = -1;
  bool committed_ = false;
  bool kept_ = false;  // --checkpoint: the journal's, left for the rerun
};

// A rank's contiguous range of the output, from `offset` on, written behind
// as io::OutputFile writes its file (io/write_behind.hpp: two buffers of
// kBufferBytes taking turns, each write's pages sent to the disk as it
// completes), so that the fsync before the commit finds little left to flush.
class RangeWriter {
 public:
  explicit RangeWriter(SharedOutput& output, std::uint64_t offset);
  void write(const std::byte* data, std::uint64_t bytes) { writer_.write(data, bytes); }
  // Writes what is buffered and waits for every write. Throws IoError.
  void finish() { writer_.finish(); }
  std::uint64_t bytes_written() const { return writer_.bytes(); }

 private:
  // 1 MiB, as io::OutputFile's (output_file.hpp: the kernel's copy into the
  // page cache is faster from a buffer still in the CPU's caches).
  static constexpr std::uint64_t kBufferBytes = std::uint64_t{1} << 20;
  io::AlignedBuffer buffers_;
  io::WriteBehind writer_;  // after the buffers it writes from
};

}  // namespace extshuffle::mpi
