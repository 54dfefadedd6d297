// Files the walk reads and writes, all through STXXL file objects
// (docs/conventions.md, Rooms, STXXL): the user's input, the per-process scratch
// file under --tmpdir, and a memory-backed file (stxxl::mem_file) with the
// same interface so the walk can be tested without disks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

namespace stxxl {
class file;
}  // namespace stxxl

namespace extshuffle::io {

// An asynchronous request in flight; wait() rethrows its failure as IoError.
class PendingIo {
 public:
  PendingIo();
  PendingIo(PendingIo&&) noexcept;
  PendingIo& operator=(PendingIo&&) noexcept;
  ~PendingIo();  // waits, swallowing errors: call wait() to see them
  void wait();
  bool pending() const;

 private:
  friend class BlockFile;
  struct State;
  std::unique_ptr<State> state_;
};

class BlockFile {
 public:
  // The user's input file, read-only. Throws IoError (missing, unreadable,
  // a directory).
  static std::unique_ptr<BlockFile> open_input(const std::string& path);
  // A new scratch file in `directory`: anonymous (O_TMPFILE), or where the
  // file system lacks it a name of our own created exclusively and unlinked
  // at once, so that nothing is left behind even if the process is killed.
  // STXXL opens it through our descriptor, never by a name another user
  // could swap. Throws IoError if the directory is missing or not writable.
  static std::unique_ptr<BlockFile> create_scratch(const std::string& directory);
  // A scratch file the caller opened and keeps under a name (--checkpoint
  // DIR's: io/checkpoint_directory.hpp), taken over with its descriptor
  // `fd`, which STXXL opens through /proc/self/fd as create_scratch() does.
  // `path` names it in messages. Throws IoError.
  static std::unique_ptr<BlockFile> adopt_scratch(int fd, const std::string& path);
  // A file in RAM (stxxl::mem_file), for tests.
  static std::unique_ptr<BlockFile> in_memory();
  // An existing file opened for writing (the output's temporary file);
  // errors name `display_name` (the destination) when it is given. With a
  // `cached_fd` (a buffered descriptor of the same file, not owned), the file
  // is opened unbuffered (O_DIRECT; io/unbuffered_writes.hpp): writes of
  // whole pages from page-aligned memory at page-aligned offsets go to the
  // disk directly, the rest of a write (its tail) through `cached_fd`.
  // Throws IoError, EINVAL where the file system refuses O_DIRECT.
  static std::unique_ptr<BlockFile> open_output(const std::string& path, const std::string& display_name = "",
                                                int cached_fd = -1);

  ~BlockFile();

  // Asynchronous transfers of exactly `bytes` at `offset`. Reads must lie
  // within the file; writes may extend it.
  PendingIo read(void* buffer, std::uint64_t offset, std::size_t bytes);
  PendingIo write(const void* buffer, std::uint64_t offset, std::size_t bytes);
  // Synchronous conveniences.
  void read_now(void* buffer, std::uint64_t offset, std::size_t bytes) { read(buffer, offset, bytes).wait(); }
  void write_now(const void* buffer, std::uint64_t offset, std::size_t bytes) {
    write(buffer, offset, bytes).wait();
  }

  std::uint64_t size() const;
  // Frees the disk space of [offset, offset + bytes) (scratch regions no longer needed).
  void discard(std::uint64_t offset, std::uint64_t bytes);
  const std::string& path() const { return path_; }
  // A POSIX descriptor of the input or scratch file, to map its bytes
  // (io/mapped_bytes.hpp); -1 for a memory file. Owned by this object.
  int descriptor() const { return side_fd_; }

 private:
  BlockFile(std::unique_ptr<stxxl::file> file, std::string path, std::string role);
  PendingIo pending(void* request, const char* what);
  PendingIo submit_write(const void* buffer, std::uint64_t offset, std::size_t bytes);
  PendingIo write_unbuffered(const void* buffer, std::uint64_t offset, std::size_t bytes);
  std::unique_ptr<stxxl::file> file_;
  int side_fd_ = -1;
  int cached_fd_ =
      -1;  // an unbuffered output's buffered descriptor, for what is not whole pages  // a POSIX descriptor of the file: discard() of scratch, mapping
  std::string path_;
  std::string role_;  // "input" or "scratch": names the file in error messages
  // Memory files only (tests): see write(). Their size is the end of what
  // was written; the memory behind it grows by doubling.
  bool in_memory_ = false;
  mutable std::mutex grow_mutex_;
  std::uint64_t written_end_ = 0;
};

// Reads [offset, offset + bytes) of `file` front to back in pieces of at
// most `piece` bytes, reading the next piece while `consume` takes this one.
using ConsumePiece = std::function<void(const std::byte* data, std::size_t bytes)>;
void read_sequentially(BlockFile& file, std::uint64_t offset, std::uint64_t bytes, std::size_t piece,
                       const ConsumePiece& consume);

// Before the first STXXL call: give STXXL's log files an empty name so it never
// writes stxxl.log into the working directory or prints on stdout.
void quiet_stxxl();

// Starts STXXL's IO threads (one per queue: inputs, scratch, outputs,
// in-memory scratch) now, while memory is plentiful: STXXL starts a queue's
// thread at its first request, and one that cannot start then (memory
// exhausted, ulimit -v) aborts the process. One that cannot start here
// throws std::system_error (resource_unavailable_try_again), which the CLIs
// report as memory exhausted.
void start_io_threads();

}  // namespace extshuffle::io
