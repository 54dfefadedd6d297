#include "extshuffle/io/output_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <random>

#include "extshuffle/errors.hpp"
#include "extshuffle/io/cleanup_registry.hpp"
#include "extshuffle/io/destination_directory.hpp"
#include "extshuffle/io/unbuffered_writes.hpp"
#include "extshuffle/io/write_behind.hpp"

namespace extshuffle::io {
namespace {

std::string directory_of(const std::string& path) {
  const auto parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

}  // namespace

std::string temporary_name(int directory, const std::string& target) {
  static constexpr std::size_t kExtra = 1 + 12 + 16;  // ".", ".extshuffle-", the suffix
  std::string base = name_part(target);
  const long name_max = ::fpathconf(directory, _PC_NAME_MAX);
  const std::size_t room = name_max > 0 ? static_cast<std::size_t>(name_max) : 255;
  if (base.size() + kExtra > room) base.resize(room > kExtra ? room - kExtra : 0);
  std::random_device entropy;
  char suffix[17];
  std::snprintf(suffix, sizeof suffix, "%08x%08x", entropy(), entropy());
  return "." + base + ".extshuffle-" + suffix;
}

void give_final_mode(int fd, const std::optional<ReplacedFile>& replaced, bool created_owner_only,
                     const std::string& destination) {
  if (replaced && ::geteuid() == 0 && ::fchown(fd, replaced->owner, replaced->group) != 0) {
    throw IoError("cannot set the owner of output", destination, errno);
  }
  mode_t mode = 0;
  if (replaced) {
    mode = replaced->mode;
  } else if (created_owner_only) {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  } else {
    return;
  }
  if (::fchmod(fd, mode) != 0) throw IoError("cannot set the mode of output", destination, errno);
}

// The descriptor a destination names, as the kernel opens it: /dev/stdout,
// /dev/stderr, /dev/fd/N, /proc/self/fd/N (or our own /proc/PID/fd/N),
// reached directly or through symbolic links; -1 when it names none.
// Written into where it is, as shuf does: renaming a file over such a name
// would replace the file the descriptor holds with a new inode.
int named_descriptor(const std::string& path) {
  std::string current = path;
  const std::string own = "/proc/" + std::to_string(::getpid()) + "/fd/";
  for (int hops = 0; hops < 40; ++hops) {
    if (current == "/dev/stdout") return 1;
    if (current == "/dev/stderr") return 2;
    for (const std::string& prefix : {std::string("/dev/fd/"), std::string("/proc/self/fd/"), own}) {
      if (current.size() > prefix.size() && current.compare(0, prefix.size(), prefix) == 0 &&
          current.find_first_not_of("0123456789", prefix.size()) == std::string::npos && current.size() - prefix.size() < 9) {
        return std::stoi(current.substr(prefix.size()));
      }
    }
    struct stat st {};
    if (::lstat(current.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return -1;
    std::string target(PATH_MAX, '\0');
    const ssize_t length = ::readlink(current.c_str(), target.data(), target.size());
    if (length <= 0) return -1;
    target.resize(static_cast<std::size_t>(length));
    current = target.front() == '/' ? target : (std::filesystem::path(directory_of(current)) / target).string();
  }
  return -1;
}

namespace {

// Whether `st` is the file behind descriptor `fd`.
bool same_file(const struct stat& st, int fd) {
  struct stat other {};
  return ::fstat(fd, &other) == 0 && other.st_dev == st.st_dev && other.st_ino == st.st_ino;
}

}  // namespace

namespace {

// The kernel's protected_symlinks rule, which resolving links by hand would
// sidestep: in a sticky world-writable directory (/tmp), a link is followed
// only if its owner is the follower or the directory's owner; another
// user's link there may point anywhere the run can write (EACCES, as open(2)).
void check_protected_link(const std::string& link, const struct stat& link_st, const std::string& path) {
  struct stat dir {};
  if (::stat(directory_of(link).c_str(), &dir) != 0) return;
  const bool sticky_world_writable = (dir.st_mode & S_ISVTX) != 0 && (dir.st_mode & S_IWOTH) != 0;
  if (sticky_world_writable && link_st.st_uid != ::geteuid() && link_st.st_uid != dir.st_uid) {
    throw IoError("cannot write output", path, EACCES);
  }
}

}  // namespace

std::string final_target(const std::string& path) {
  std::string current = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (::lstat(current.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return current;
    check_protected_link(current, st, path);
    std::string target(PATH_MAX, '\0');
    const ssize_t length = ::readlink(current.c_str(), target.data(), target.size());
    if (length < 0) throw IoError("cannot write output", path, errno);
    target.resize(static_cast<std::size_t>(length));
    current = target.front() == '/' ? target : (std::filesystem::path(directory_of(current)) / target).string();
  }
  throw IoError("cannot write output", path, ELOOP);
}

void OutputFile::resolve_target(const std::string& destination) {
  // A device, FIFO, socket or terminal is opened by the name given, the
  // kernel following its links (/dev/stdout's /proc/self/fd/1 included).
  struct stat named {};
  if (::stat(destination.c_str(), &named) == 0 && !S_ISREG(named.st_mode) && !S_ISDIR(named.st_mode)) {
    target_ = destination;
    special_ = true;
    return;
  }
  // Through a symbolic link, the link's final target is written and
  // renamed over, so the link stays a link.
  target_ = final_target(destination);
  replaced_.reset();
  struct stat st {};
  if (stat(target_.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw IoError("cannot write output", destination, EISDIR);
    if (S_ISREG(st.st_mode)) replaced_ = ReplacedFile{st.st_mode & 0777, st.st_uid, st.st_gid};
    special_ = !S_ISREG(st.st_mode);
  }
  const std::string directory = directory_of(target_);
  if (stat(directory.c_str(), &st) != 0) throw IoError("cannot write output", destination, errno);
  if (!S_ISDIR(st.st_mode)) throw IoError("cannot write output", destination, ENOTDIR);
  directory_ = directory;
  directory_fd_ = directory_descriptor(directory_, destination);
}

OutputFile::OutputFile(const std::string& destination, AlignedBuffer buffers)
    : OutputFile(destination, std::move(buffers), false) {}

namespace {

[[noreturn]] void refuse_in_place(const std::string& destination) {
  throw UsageError("--checkpoint: output '" + destination + "' is written in place (standard output, a device, a " +
                   "FIFO): a resumed run could not continue it; name a file");
}

}  // namespace

OutputFile::OutputFile(const std::string& destination, AlignedBuffer buffers, bool resumable)
    : destination_(destination), buffers_(std::move(buffers)) {
  if (destination == "-") {
    if (resumable) refuse_in_place(destination);
    fd_ = 1;
    direct_ = true;
    return;
  }
  if (const int named = named_descriptor(destination); named >= 0) {
    if (resumable) refuse_in_place(destination);
    fd_ = ::fcntl(named, F_DUPFD_CLOEXEC, 3);
    if (fd_ < 0) throw IoError("cannot write output", destination, errno);
    direct_ = special_ = true;
    return;
  }
  resolve_target(destination);
  if (special_) {
    if (resumable) refuse_in_place(destination);
    open_special();
    return;
  }
  install_cleanup_handlers();
  // An anonymous file in the destination's directory (O_TMPFILE): it has no
  // name until prepare_commit() links it, so not even kill -9 leaves a partial file.
  // File systems without O_TMPFILE get a hidden name, removed on failure and
  // on signals, which only kill -9 can leave behind. Read-write, for --verify's read back (io/file_digest.hpp).
  // A resumable output has that name from the start: a resumed run opens it.
  if (!resumable) {
    fd_ = ::openat(directory_fd_, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
    if (fd_ >= 0) {
      open_writer("/proc/self/fd/" + std::to_string(fd_));
      return;
    }
  }
  create_named_temporary();
  if (!resumable) return;
  // The name itself durable: a resumed run opens the temporary by it.
  (void)::fsync(directory_fd_);
  struct stat st {};
  if (::fstat(fd_, &st) != 0) throw IoError("cannot write output", destination, errno);
  device_ = st.st_dev;
  inode_ = st.st_ino;
}

// A hidden name in the same directory, so the rename is atomic; locked
// while this run holds it, so that another run's sweep of leftovers
// (dataset/stale_pieces.hpp) leaves it alone.
void OutputFile::create_named_temporary() {
  const std::string& destination = destination_;
  for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
    temporary_ = temporary_name(directory_fd_, target_);
    cleanup_slot_ = register_cleanup_path(directory_ + "/" + temporary_);
    fd_ = ::openat(directory_fd_, temporary_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ >= 0) (void)::flock(fd_, LOCK_EX | LOCK_NB);
    if (fd_ < 0) {
      const int error = errno;
      forget_cleanup_path(cleanup_slot_);
      cleanup_slot_ = -1;
      if (error != EEXIST) throw IoError("cannot write output", destination, error);
    }
  }
  if (fd_ < 0) throw IoError("cannot write output", destination, EEXIST);
  open_writer("/proc/self/fd/" + std::to_string(fd_));
}

// The temporary file at `path` (fd_'s) opened for the writes, and its writer.
void OutputFile::open_writer(const std::string& path, bool unbuffered) {
  writer_.reset();
  file_ = BlockFile::open_output(path, destination_, unbuffered ? fd_ : -1);
  if (!buffers_) buffers_ = allocate_aligned(2 * kBufferBytes);
  WriteBehind::Target target;
  target.file = file_.get();
  target.writeback_fd = fd_;
  writer_ = std::make_unique<WriteBehind>(std::move(target), buffers_.get(), kBufferBytes);
}

// A device, FIFO, socket or terminal is written into where it is, as shuf -o
// does: no temporary, no rename (which would replace the node with a file).
// Standard output or error named by another name (/dev/stdout, a socket
// that cannot be opened again) is written through its descriptor.
void OutputFile::open_special() {
  direct_ = true;
  struct stat st {};
  if (::stat(target_.c_str(), &st) == 0) {
    for (const int standard : {1, 2}) {
      if (same_file(st, standard)) {
        fd_ = ::fcntl(standard, F_DUPFD_CLOEXEC, 3);
        if (fd_ < 0) throw IoError("cannot write output", destination_, errno);
        return;
      }
    }
  }
  fd_ = ::open(target_.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd_ < 0) throw IoError("cannot write output", destination_, errno);
}

OutputFile::~OutputFile() {
  writer_.reset();  // waits for writes in flight before the file goes
  file_.reset();
  if (fd_ >= 0 && !is_stdout()) ::close(fd_);
  if (!committed_ && !kept_ && !temporary_.empty()) ::unlinkat(directory_fd_, temporary_.c_str(), 0);
  forget_cleanup_path(cleanup_slot_);
}

void OutputFile::write(const void* data, std::size_t bytes) {
  if (writer_) {
    writer_->write(static_cast<const std::byte*>(data), bytes);
    return;
  }
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::write(fd_, p, bytes);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE && (is_stdout() || special_)) throw BrokenPipe();
      throw IoError("cannot write output", is_stdout() ? "standard output" : destination_, errno);
    }
    p += n;
    bytes -= static_cast<std::size_t>(n);
    bytes_written_ += static_cast<std::uint64_t>(n);
  }
}

bool OutputFile::prefer_unbuffered() {
  if (unbuffered_ || direct_ || !writer_ || writer_->bytes() > 0) return unbuffered_;
  // The probe's page: the first page of the write buffers, not yet used.
  if (!accepts_unbuffered_writes(fd_, buffers_.get(), destination_)) return false;
  try {
    open_writer("/proc/self/fd/" + std::to_string(fd_), true);
    unbuffered_ = true;
  } catch (const IoError& e) {
    if (e.error_number() != EINVAL) throw;
    open_writer("/proc/self/fd/" + std::to_string(fd_), false);
  }
  return unbuffered_;
}

std::uint64_t OutputFile::bytes_written() const { return writer_ ? writer_->bytes() : bytes_written_; }

void OutputFile::finish() {
  if (direct_ || finished_) return;
  writer_->finish();  // the tail's writeback started too: sync() then finds little left to wait for
  bytes_written_ = writer_->bytes();
  writer_.reset();
  file_.reset();
  finished_ = true;
}

void OutputFile::sync() {
  if (direct_ || synced_) return;
  finish();
  // fsync before rename: after a crash the destination is the old file or the whole new one.
  if (::fsync(fd_) != 0) throw IoError("cannot write output", destination_, errno);
  synced_ = true;
}

void OutputFile::rename_destination(const std::string& destination) {
  if (direct_ || committed_ || destination == destination_) return;
  resolve_target(destination);
  destination_ = destination;
}

void OutputFile::prepare_commit() {
  if (direct_ || prepared_) return;
  sync();
  // A replaced file's permissions (and, for root, its owner and group) carry
  // over, as they do when sort -o truncates it in place; a new file keeps
  // the 0666 & ~umask it was created with. Known only now: the destination
  // may have been renamed since finish() (a second fsync makes them durable).
  if (replaced_) {
    give_final_mode(fd_, replaced_, false, destination_);
    if (::fsync(fd_) != 0) throw IoError("cannot write output", destination_, errno);
  }
  // The hidden name's link can fail for want of space too (a directory
  // entry): before any rename of the commit.
  name_temporary();
  prepared_ = true;
}

// The anonymous file gets its hidden name beside the destination, and its
// descriptor is let go (a run may write more files than descriptors).
void OutputFile::name_temporary() {
  if (temporary_.empty()) {
    // A name taken meanwhile means try another.
    const std::string descriptor = "/proc/self/fd/" + std::to_string(fd_);
    for (int attempt = 0; attempt < 100 && temporary_.empty(); ++attempt) {
      const std::string name = temporary_name(directory_fd_, target_);
      cleanup_slot_ = register_cleanup_path(directory_ + "/" + name);
      if (::linkat(AT_FDCWD, descriptor.c_str(), directory_fd_, name.c_str(), AT_SYMLINK_FOLLOW) == 0) {
        temporary_ = name;
      } else {
        const int error = errno;
        forget_cleanup_path(cleanup_slot_);
        cleanup_slot_ = -1;
        if (error != EEXIST) throw IoError("cannot write output", destination_, error);
      }
    }
    if (temporary_.empty()) throw IoError("cannot write output", destination_, EEXIST);
  }
  if (::close(fd_) != 0) {
    fd_ = -1;
    throw IoError("cannot write output", destination_, errno);
  }
  fd_ = -1;
}

std::optional<PendingRename> OutputFile::pending_rename() const {
  if (direct_ || committed_ || !prepared_) return std::nullopt;
  return PendingRename{directory_fd_, directory_ + "/", temporary_, name_part(target_), destination_};
}

void OutputFile::published() {
  if (direct_ || committed_) return;
  committed_ = true;
  // Its name is the destination's now: nothing to remove on a signal, and
  // the registry's slot is free for the next file (a run may write many).
  forget_cleanup_path(cleanup_slot_);
  cleanup_slot_ = -1;
}

}  // namespace extshuffle::io
