#include "extshuffle/io/block_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>
#include <stxxl/io>

#include "extshuffle/errors.hpp"
#include "extshuffle/io/aligned_buffer.hpp"
#include "extshuffle/io/cleanup_registry.hpp"
#include "extshuffle/io/positioned_write.hpp"
#include "extshuffle/io/unbuffered_writes.hpp"

namespace extshuffle::io {
namespace {

// STXXL reports failures as io_error whose text embeds strerror(errno) after
// "rc=<n> : "; recover errno from it so the user sees one clean line.
int errno_from_stxxl(const std::exception& e) {
  const std::string text = e.what();
  for (int code : {ENOSPC, EIO, EDQUOT, EFBIG, EACCES, EROFS, EBADF, EINVAL, ENOENT, ESPIPE, ENXIO, ENODEV, EOVERFLOW,
                   EISDIR, EPERM, ESTALE}) {
    if (text.find(std::strerror(code)) != std::string::npos) return code;
  }
  return EIO;
}

// Each role gets its own STXXL disk queue, hence its own IO thread. With
// the default queue, shared by every file, one thread made every read(2) and
// write(2) of the run, and its kernel copies (4 per byte for two passes)
// bounded the streaming passes; the roles use different files and can run
// side by side.
constexpr int kInputQueue = 1;
constexpr int kScratchQueue = 2;
constexpr int kOutputQueue = 3;
// In-memory scratch (BlockFile::in_memory) keeps STXXL's default queue.
constexpr int kInMemoryQueue = stxxl::file::DEFAULT_QUEUE;

// Every request is handed to STXXL under this lock. STXXL 1.4's
// disk_queues::add_request finds (and on a queue's first request, inserts)
// the queue in a std::map without a lock, so two threads submitting at once
// (bucket writers flushing on all threads during a scatter) could corrupt
// the map: seen as a crash in disk_queued_file::awrite in about 1 run in 150
// at -S 8K. Only the submission is serialised; the IO itself stays
// asynchronous on the queue's thread.
std::mutex submission_mutex;

}  // namespace

// STXXL's logger opens each of these names with std::ofstream (O_CREAT |
// O_TRUNC; "stxxl.log" and "stxxl.errlog" in the working directory when
// unset). "/dev/null" created a regular file where the node is missing (a
// bare container); the empty name cannot be opened at all, so no file is
// created and the log streams stay closed: STXXL's writes to them are
// dropped (it also prints its messages on std::cerr, which the CLI mutes).
void quiet_stxxl() {
  setenv("STXXLLOGFILE", "", 1);
  setenv("STXXLERRLOGFILE", "", 1);
}

struct PendingIo::State {
  stxxl::request_ptr request;
  std::string what;
  std::string path;
};

PendingIo::PendingIo() = default;
PendingIo::PendingIo(PendingIo&&) noexcept = default;
PendingIo& PendingIo::operator=(PendingIo&& other) noexcept {
  if (this != &other) {
    try {
      if (pending()) state_->request->wait();
    } catch (...) {
    }
    state_ = std::move(other.state_);
  }
  return *this;
}
PendingIo::~PendingIo() {
  try {
    if (pending()) state_->request->wait();
  } catch (...) {
  }
}

bool PendingIo::pending() const { return state_ && state_->request.valid(); }

void PendingIo::wait() {
  if (!pending()) return;
  stxxl::request_ptr request = std::move(state_->request);
  state_->request = stxxl::request_ptr();
  try {
    request->wait();
  } catch (const std::exception& e) {
    throw IoError(state_->what, state_->path, errno_from_stxxl(e));
  }
}

BlockFile::BlockFile(std::unique_ptr<stxxl::file> file, std::string path, std::string role)
    : file_(std::move(file)), path_(std::move(path)), role_(std::move(role)) {}

BlockFile::~BlockFile() {
  if (side_fd_ >= 0) ::close(side_fd_);
}

std::unique_ptr<BlockFile> BlockFile::open_input(const std::string& path) {
  quiet_stxxl();
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw IoError("cannot open input", path, errno);
  if (S_ISDIR(st.st_mode)) throw IoError("cannot read input", path, EISDIR);
  // Probe with open(2) first: STXXL's own message for a failed open is long.
  // It is kept open beside STXXL's: a text input that fits in RAM is mapped
  // through it (io/mapped_bytes.hpp).
  const int probe = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (probe < 0) throw IoError("cannot open input", path, errno);
  std::unique_ptr<stxxl::file> file;
  try {
    file = std::make_unique<stxxl::syscall_file>(path, stxxl::file::RDONLY | stxxl::file::NO_LOCK, kInputQueue);
  } catch (const std::exception& e) {
    ::close(probe);
    throw IoError("cannot open input", path, errno_from_stxxl(e));
  }
  auto result = std::unique_ptr<BlockFile>(new BlockFile(std::move(file), path, "input"));
  result->side_fd_ = probe;
  return result;
}

namespace {

// A scratch file's descriptor opened by STXXL through /proc/self/fd: the
// same open file, never its name again (a name in a shared -T that another
// user could swap for a link between our open and STXXL's).
std::unique_ptr<stxxl::syscall_file> stxxl_scratch(int fd, const std::string& directory) {
  try {
    return std::make_unique<stxxl::syscall_file>("/proc/self/fd/" + std::to_string(fd),
                                                 stxxl::file::RDWR | stxxl::file::NO_LOCK, kScratchQueue);
  } catch (const std::exception& e) {
    throw IoError("cannot create scratch file in", directory, errno_from_stxxl(e));
  }
}

}  // namespace

std::unique_ptr<BlockFile> BlockFile::create_scratch(const std::string& directory) {
  quiet_stxxl();
  struct stat st {};
  if (::stat(directory.c_str(), &st) != 0) throw IoError("cannot use scratch directory", directory, errno);
  if (!S_ISDIR(st.st_mode)) throw IoError("cannot use scratch directory", directory, ENOTDIR);
  install_cleanup_handlers();
  std::random_device entropy;
  for (int attempt = 0; attempt < 100; ++attempt) {
    char name[64];
    std::snprintf(name, sizeof name, "/extshuffle-%d-%08x.scratch", static_cast<int>(::getpid()), entropy());
    const std::string path = directory + name;  // its name in messages; on disk only where O_TMPFILE is missing
    // An anonymous file (O_TMPFILE): no name at all, nothing to leave even
    // after kill -9, nothing another user could swap.
    int fd = ::open(directory.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    int slot = -1;
    if (fd < 0 && errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) {
      throw IoError("cannot create scratch file in", directory, errno);
    }
    if (fd < 0) {
      // A file system without O_TMPFILE: a name of our own, created
      // exclusively (never through a link), unlinked once opened.
      slot = register_cleanup_path(path);
      fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (fd < 0) {
        const int error = errno;
        forget_cleanup_path(slot);
        if (error == EEXIST) continue;
        throw IoError("cannot create scratch file in", directory, error);
      }
    }
    std::unique_ptr<stxxl::syscall_file> file;
    try {
      file = stxxl_scratch(fd, directory);
    } catch (...) {
      if (slot >= 0) ::unlink(path.c_str());
      forget_cleanup_path(slot);
      ::close(fd);
      throw;
    }
    if (slot >= 0) ::unlink(path.c_str());  // the name is gone, the space stays ours until exit
    forget_cleanup_path(slot);
    auto result = std::unique_ptr<BlockFile>(new BlockFile(std::move(file), path, "scratch"));
    result->side_fd_ = fd;
    return result;
  }
  throw IoError("cannot create scratch file in", directory, EEXIST);
}

std::unique_ptr<BlockFile> BlockFile::adopt_scratch(int fd, const std::string& path) {
  quiet_stxxl();
  std::unique_ptr<stxxl::syscall_file> file;
  try {
    file = stxxl_scratch(fd, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  auto result = std::unique_ptr<BlockFile>(new BlockFile(std::move(file), path, "scratch"));
  result->side_fd_ = fd;
  return result;
}

std::unique_ptr<BlockFile> BlockFile::open_output(const std::string& path, const std::string& display_name,
                                                  int cached_fd) {
  quiet_stxxl();
  const std::string& name = display_name.empty() ? path : display_name;
  // REQUIRE_DIRECT: a refused O_DIRECT fails here (the caller falls back),
  // rather than STXXL retrying buffered behind our back.
  const int unbuffered = cached_fd >= 0 ? stxxl::file::DIRECT | stxxl::file::REQUIRE_DIRECT : 0;
  std::unique_ptr<stxxl::file> file;
  try {
    file = std::make_unique<stxxl::syscall_file>(path, stxxl::file::WRONLY | stxxl::file::NO_LOCK | unbuffered,
                                                 kOutputQueue);
  } catch (const std::exception& e) {
    throw IoError("cannot write output", name, errno_from_stxxl(e));
  }
  auto result = std::unique_ptr<BlockFile>(new BlockFile(std::move(file), name, "output"));
  result->cached_fd_ = cached_fd;
  return result;
}

void start_io_threads() {
  quiet_stxxl();
  const std::lock_guard<std::mutex> lock(submission_mutex);
  alignas(4096) static char block[1];  // aligned, or STXXL says so on stderr
  for (const int queue : {kInputQueue, kScratchQueue, kOutputQueue, kInMemoryQueue}) {
    // STXXL cannot fail to start a queue's thread cleanly: the request that
    // found no thread is destroyed unfinished while its resource_error
    // unwinds, and asserts (exit 134). A thread started and joined first,
    // with the same default attributes (pthread_create with no attributes,
    // as std::thread does), throws std::system_error instead; its stack
    // stays in glibc's cache for STXXL's thread, started next.
    std::thread probe([] {});
    probe.join();
    stxxl::mem_file file(queue);
    file.aread(block, 0, 0)->wait();
  }
}

std::unique_ptr<BlockFile> BlockFile::in_memory() {
  quiet_stxxl();
  auto file = std::unique_ptr<BlockFile>(new BlockFile(std::make_unique<stxxl::mem_file>(), "(memory)", "scratch"));
  file->in_memory_ = true;
  return file;
}

PendingIo BlockFile::read(void* buffer, std::uint64_t offset, std::size_t bytes) {
  PendingIo io;
  if (bytes == 0) return io;
  io.state_ = std::make_unique<PendingIo::State>();
  io.state_->what = role_ == "input" ? "cannot read input" : "cannot read scratch file";
  io.state_->path = path_;
  try {
    const std::lock_guard<std::mutex> lock(submission_mutex);
    io.state_->request = file_->aread(buffer, offset, bytes);
  } catch (const std::exception& e) {
    throw IoError(io.state_->what, path_, errno_from_stxxl(e));
  }
  return io;
}

PendingIo BlockFile::write(const void* buffer, std::uint64_t offset, std::size_t bytes) {
  if (cached_fd_ >= 0 && bytes > 0) return write_unbuffered(buffer, offset, bytes);
  return submit_write(buffer, offset, bytes);
}

PendingIo BlockFile::submit_write(const void* buffer, std::uint64_t offset, std::size_t bytes) {
  PendingIo io;
  if (bytes == 0) return io;
  io.state_ = std::make_unique<PendingIo::State>();
  io.state_->what = role_ == "output" ? "cannot write output" : "cannot write scratch file";
  io.state_->path = path_;
  try {
    if (in_memory_) {
      // mem_file does not grow on write. Writers on several threads: grow
      // under a lock, or one could shrink the file below another's write.
      // Its set_size() reallocates to the exact size, which glibc does in
      // place (mremap) but an allocator without that (AddressSanitizer's)
      // copies: growing by doubling keeps many appends linear there.
      const std::lock_guard<std::mutex> lock(grow_mutex_);
      if (offset + bytes > file_->size()) file_->set_size(std::max<std::uint64_t>(offset + bytes, 2 * file_->size()));
      written_end_ = std::max(written_end_, offset + bytes);
    }
    const std::lock_guard<std::mutex> submission(submission_mutex);
    io.state_->request = file_->awrite(const_cast<void*>(buffer), offset, bytes);
  } catch (const std::exception& e) {
    throw IoError(io.state_->what, path_, errno_from_stxxl(e));
  }
  return io;
}

// O_DIRECT takes whole pages only, from page-aligned memory at page-aligned
// offsets: those go to STXXL; the rest (an output's last partial page, in
// practice) is written through the buffered descriptor once the pages
// before it have landed, synchronously.
PendingIo BlockFile::write_unbuffered(const void* buffer, std::uint64_t offset, std::size_t bytes) {
  const auto* from = static_cast<const std::byte*>(buffer);
  const bool aligned = reinterpret_cast<std::uintptr_t>(from) % kPageBytes == 0 && offset % kPageBytes == 0;
  const std::size_t pages = aligned ? bytes / kPageBytes * kPageBytes : 0;
  if (pages == bytes) return submit_write(buffer, offset, bytes);
  if (pages > 0) submit_write(buffer, offset, pages).wait();
  write_at(cached_fd_, from + pages, bytes - pages, offset + pages, path_);
  return PendingIo();
}

std::uint64_t BlockFile::size() const {
  if (in_memory_) {
    const std::lock_guard<std::mutex> lock(grow_mutex_);
    return written_end_;
  }
  // STXXL asks lseek(SEEK_END), which a pseudo file may refuse: its error
  // in our words, never STXXL's text.
  try {
    return file_->size();
  } catch (const std::exception& e) {
    throw IoError(role_ == "input"    ? "cannot read input"
                  : role_ == "output" ? "cannot write output"
                                      : "cannot read scratch file",
                  path_, errno_from_stxxl(e));
  }
}

void BlockFile::discard(std::uint64_t offset, std::uint64_t bytes) {
  if (side_fd_ >= 0 && bytes > 0 && role_ == "scratch") {
    // Best effort: a file system without hole punching keeps the space until exit.
    (void)::fallocate(side_fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                      static_cast<off_t>(offset), static_cast<off_t>(bytes));
  }
}

void read_sequentially(BlockFile& file, std::uint64_t offset, std::uint64_t bytes, std::size_t piece,
                       const ConsumePiece& consume) {
  const AlignedBuffer buffers = allocate_aligned(2 * piece);
  std::size_t sizes[2] = {0, 0};
  PendingIo pending[2];
  std::uint64_t next = 0;
  auto start = [&](int which) {
    sizes[which] = static_cast<std::size_t>(std::min<std::uint64_t>(piece, bytes - next));
    if (sizes[which] > 0) pending[which] = file.read(buffers.get() + which * piece, offset + next, sizes[which]);
    next += sizes[which];
  };
  start(0);
  for (int current = 0; sizes[current] > 0; current ^= 1) {
    start(current ^ 1);
    pending[current].wait();
    consume(buffers.get() + current * piece, sizes[current]);
  }
}

}  // namespace extshuffle::io
