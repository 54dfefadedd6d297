// The output file, written under a temporary name beside the destination and
// renamed into place only by the commit: the destination never holds a partial
// file. A regular file is written behind (io/write_behind.hpp: two buffers of
// kBufferBytes taking turns, writeback started as each lands), so output IO
// overlaps the shuffling; standard output is written sequentially with
// write(2). An uncommitted temporary is removed by the destructor, and by the
// signal handlers of cleanup_registry.hpp if the process is interrupted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <sys/types.h>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "extshuffle/io/aligned_buffer.hpp"
#include "extshuffle/io/block_file.hpp"
#include "extshuffle/io/publication.hpp"

namespace extshuffle::io {

class WriteBehind;

// The mode, owner and group of the regular file an output replaces: carried
// over at the commit, as sort -o keeps them when it truncates the file in
// place. Both tools' outputs (OutputFile, extshuffle-mpi's partial outputs).
struct ReplacedFile {
  mode_t mode;
  uid_t owner;
  gid_t group;
};

// Gives the temporary file `fd` an output's final mode before its rename:
// the replaced file's (and, for root, its owner and group); without one, a
// new file's 0666 less the umask when `created_owner_only` (else the mode it
// was created with stays). Throws IoError naming `destination`.
void give_final_mode(int fd, const std::optional<ReplacedFile>& replaced, bool created_owner_only,
                     const std::string& destination);

// An output's temporary as a checkpoint keeps it (docs/cli.md "Resuming a
// run"): its hidden name beside the destination, which file it is, and the
// bytes synced into it.
struct ResumableOutput {
  std::string temporary;
  std::uint64_t device = 0, inode = 0;
  std::uint64_t bytes = 0;
};

class OutputFile {
 public:
  // "-" writes to standard output directly (sequential writes, nothing to
  // rename); so is a destination that names an open descriptor
  // (/dev/stdout, /dev/fd/N: named_descriptor()) or is a character or block
  // device, a FIFO, a socket or a terminal (written into, as shuf -o does). Otherwise follows the destination's symbolic links to the file
  // they name (created if missing), checks its directory and creates the
  // temporary file there; the commit gives it the replaced file's mode (and,
  // for root, owner and group). `buffers`: the write buffers of an earlier
  // OutputFile (take_buffers()), so that a run writing many files touches
  // fresh memory once; empty: allocated here (kBufferBytes twice). Throws
  // IoError / UsageError.
  explicit OutputFile(const std::string& destination, AlignedBuffer buffers = {});
  // With `resumable` (--checkpoint): the temporary has a hidden name from
  // the start (never an anonymous file), so that a resumed run finds it
  // again; a destination written in place (standard output, a device, a
  // FIFO) is refused with UsageError, since a resumed run could not
  // continue it.
  OutputFile(const std::string& destination, AlignedBuffer buffers, bool resumable);
  // The temporary a checkpoint kept, continued (`finished`: as a file
  // complete already, nothing more to write): opened by its name in the
  // destination's directory, checked to be that file (device and inode, a
  // regular file of ours, at least state.bytes long), cut to state.bytes;
  // writes go on after them. A finished file whose temporary is gone while
  // `published` (its final name) is that very file was renamed into place
  // by the commit the checkpointed run began: it stays as it is, committed.
  // Throws Error when it is not that file, IoError.
  static std::unique_ptr<OutputFile> resume(const std::string& destination, const ResumableOutput& state, bool finished,
                                            const std::string& published = "");
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Appends bytes; throws IoError (ENOSPC included, possibly on a later call
  // or on commit, since writes complete in the background). A closed pipe on
  // standard output throws BrokenPipe.
  void write(const void* data, std::size_t bytes);
  // Before the first write(): a regular file's whole pages are written
  // unbuffered (O_DIRECT), its tail through the page cache
  // (io/unbuffered_writes.hpp); same bytes, same fsync before the rename.
  // Where the file system refuses O_DIRECT, or for standard output and
  // other destinations written in place, the file stays buffered. Returns
  // whether it is unbuffered now. Throws IoError.
  bool prefer_unbuffered();
  // Hands every byte to the file system and lets go of the write buffers
  // and the IO object; the file keeps one descriptor until the commit. After
  // it, write() must not be called. Later calls do nothing.
  void finish();
  // finish(), then fsync. A run writing many files finishes each as it
  // ends and syncs them all at the end, so that no fsync stalls the
  // writing of the next file. Later calls do nothing.
  void sync();
  // A resumable file's bytes so far handed to the file system, every write
  // complete, and what a resumed run needs to continue it. From now on the
  // temporary is kept when the run fails (the checkpoint's journal names
  // it). The caller syncs descriptor() before it journals the state.
  ResumableOutput checkpoint();
  // The descriptor of the temporary (or of the destination written in place),
  // until the commit: the checkpoint syncs it; a piece's record index takes
  // its size, time and fingerprint after finish() (dataset/piece_index.hpp).
  int descriptor() const { return fd_; }
  // After finish(): the write buffers, for the next OutputFile.
  AlignedBuffer take_buffers() { return std::move(buffers_); }
  // Before the commit: the file is to be renamed to `destination` instead
  // (names known only once every file is written). Its symbolic links are
  // followed as the constructor does; its directory should be on the same
  // file system (else the rename fails with EXDEV). Throws IoError.
  void rename_destination(const std::string& destination);
  // Everything of the commit that can fail for want of space or rights: sync
  // (every byte on disk), the replaced file's mode and owner, and the
  // temporary's hidden name beside the destination (a link; the descriptor
  // is then closed); the destination is untouched. A run writing many files
  // prepares them all before it renames the first (io/publication.hpp).
  // Later calls do nothing.
  void prepare_commit();
  // After prepare_commit(): the rename that publishes this file (none for a
  // file written in place), for the commit's io::Publication, and
  // published() once it is done: the file is the destination's now.
  std::optional<PendingRename> pending_rename() const;
  void published();

  bool is_stdout() const { return destination_ == "-"; }
  // Written in place with write(2): standard output, or a device, FIFO,
  // socket or terminal named as the destination (never replaced).
  bool is_direct() const { return direct_; }
  // Whether prefer_unbuffered() took effect.
  bool is_unbuffered() const { return unbuffered_; }
  std::uint64_t bytes_written() const;
  const std::string& destination() const { return destination_; }

 private:
  // 1 MiB: the kernel copies each write into the page cache, and a buffer
  // that still sits in the CPU's caches copies faster. 2 GiB of JSONL in
  // RAM, input cached: 3.2 s median with 1 MiB, 5.2 s with 8 MiB (five
  // alternating runs each); 256 KiB and 2 MiB within noise of 1 MiB.
  static constexpr std::size_t kBufferBytes = std::size_t{1} << 20;
  void open_writer(const std::string& path, bool unbuffered = false);
  // Follows `destination`'s links and checks its directory: sets target_,
  // replaced_ and directory_.
  void resolve_target(const std::string& destination);
  void open_special();
  void name_temporary();
  void create_named_temporary();
  // An empty object for resume() to fill.
  OutputFile(const std::string& destination, AlignedBuffer buffers, std::nullopt_t);

  std::string destination_;  // as the user named it (messages)
  std::string target_;       // what is replaced: the destination with its symbolic links followed
  std::optional<ReplacedFile> replaced_;
  std::string directory_;  // of the target
  int directory_fd_ = -1;  // its descriptor (io/destination_directory.hpp): every name is made relative to it
  std::string temporary_;  // the hidden name, once the output has one
  int fd_ = -1;  // standard output, or our descriptor of the temporary file (for fsync)
  std::unique_ptr<BlockFile> file_;
  AlignedBuffer buffers_;
  std::unique_ptr<WriteBehind> writer_;  // a regular file's, until finish(); declared after what it uses
  int cleanup_slot_ = -1;
  bool finished_ = false;
  bool synced_ = false;
  bool committed_ = false;
  bool prepared_ = false;
  bool direct_ = false;   // see is_direct()
  bool special_ = false;  // the destination exists and is not a regular file
  bool unbuffered_ = false;          // see prefer_unbuffered()
  bool kept_ = false;                // a checkpoint's: not removed when the run fails
  std::uint64_t device_ = 0, inode_ = 0;  // of a resumable temporary
  std::uint64_t bytes_written_ = 0;  // a direct destination's; a regular file's once finished
};

// The file a write to `path` lands on, as shuf -o and sort -o see it:
// symbolic links are followed (at most 40, as the kernel does), a relative
// link target is taken from the link's directory, and a dangling link
// yields its missing target, which is then created. As the kernel's
// protected_symlinks rule, a link in a sticky world-writable directory
// owned by neither the caller nor the directory's owner is not followed.
// Throws IoError (ELOOP, EACCES).
std::string final_target(const std::string& path);

// A fresh hidden name for a temporary beside `target` in `directory` (its
// descriptor): ".NAME.extshuffle-SUFFIX", SUFFIX 16 random hex digits, a
// name the next run into the same destination recognises as a leftover
// (dataset/stale_pieces.hpp); NAME cut short where the whole would not fit
// the file system's name length, so that any name the destination may have
// works. Both tools' temporaries: extshuffle's and extshuffle-mpi's
// partial outputs.
std::string temporary_name(int directory, const std::string& target);

// The descriptor `path` names (/dev/stdout, /dev/stderr, /dev/fd/N,
// /proc/self/fd/N, directly or through symbolic links), or -1. Such a
// destination is written into through the descriptor, never replaced.
int named_descriptor(const std::string& path);

// Thrown when standard output is a pipe whose reader has gone (head -n):
// the run ends quietly.
class BrokenPipe : public std::exception {
 public:
  const char* what() const noexcept override { return "standard output closed"; }
};

}  // namespace extshuffle::io
