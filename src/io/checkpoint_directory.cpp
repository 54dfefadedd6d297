#include "extshuffle/io/checkpoint_directory.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "extshuffle/errors.hpp"

namespace extshuffle::io {
namespace {

constexpr const char* kLockName = "lock";

std::string checkpoint_named(const std::string& path) { return "--checkpoint '" + path + "'"; }

// DIR as a descriptor, checked: a directory reached without a symbolic
// link, ours, writable by no one else (who could plant names in it); then
// 0700. -1 when missing and `missing_ok`.
int open_checkpoint_directory(const std::string& path, bool missing_ok) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT && missing_ok) return -1;
    if (error == ELOOP || error == ENOTDIR) {
      throw UsageError(checkpoint_named(path) +
                       ": is not a directory (a symbolic link, or a file): name a directory of yours");
    }
    throw IoError("cannot open checkpoint directory", path, error);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    throw IoError("cannot open checkpoint directory", path, error);
  }
  if (st.st_uid != ::geteuid()) {
    ::close(fd);
    throw UsageError(checkpoint_named(path) + ": belongs to another user: a checkpoint directory must be yours alone");
  }
  if ((st.st_mode & 022) != 0) {
    ::close(fd);
    throw UsageError(checkpoint_named(path) +
                     ": is writable by others: a checkpoint directory must be yours alone (chmod 700)");
  }
  if ((st.st_mode & 0777) != 0700 && ::fchmod(fd, 0700) != 0) {
    const int error = errno;
    ::close(fd);
    throw IoError("cannot set the mode of checkpoint directory", path, error);
  }
  return fd;
}

void make_checkpoint_directory(const std::string& path) {
  if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    throw IoError("cannot create checkpoint directory", path, errno);
  }
}

// A file of DIR, checked as ours and regular (O_NOFOLLOW refuses a link).
int open_checkpoint_file(int directory, const std::string& dir_path, const std::string& name, int flags) {
  const int fd = ::openat(directory, name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == ENOENT && (flags & O_CREAT) == 0) return -1;
    if (errno == ELOOP)
      throw Error(checkpoint_named(dir_path) + ": '" + name + "' is a symbolic link, not a file of this run");
    throw IoError("cannot open checkpoint file", dir_path + "/" + name, errno);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
    ::close(fd);
    throw Error(checkpoint_named(dir_path) + ": '" + name + "' is not a regular file of yours: not a file of this run");
  }
  if ((st.st_mode & 0777) != 0600) (void)::fchmod(fd, 0600);
  return fd;
}

}  // namespace

CheckpointDirectory::CheckpointDirectory(const std::string& path, bool create) : path_(path) {
  if (create) make_checkpoint_directory(path);
  fd_ = open_checkpoint_directory(path, false);
  lock_fd_ = open_checkpoint_file(fd_, path_, kLockName, O_RDWR | O_CREAT);
  // A write lock of an open file description: held until the process ends
  // (kill -9 included), and taken only through a descriptor open for writing.
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  if (::fcntl(lock_fd_, F_OFD_SETLK, &lock) != 0) {
    const int error = errno;
    ::close(lock_fd_);
    ::close(fd_);
    lock_fd_ = fd_ = -1;
    if (error == EAGAIN || error == EACCES) {
      throw Error(checkpoint_named(path) +
                  ": in use by another run (it holds the directory's lock): wait for it to end");
    }
    throw IoError("cannot lock checkpoint directory", path, error);
  }
}

CheckpointDirectory CheckpointDirectory::look(const std::string& path) {
  CheckpointDirectory directory;
  directory.path_ = path;
  directory.fd_ = open_checkpoint_directory(path, true);
  return directory;
}

CheckpointDirectory::~CheckpointDirectory() {
  if (lock_fd_ >= 0) ::close(lock_fd_);
  if (fd_ >= 0) ::close(fd_);
}

CheckpointDirectory::CheckpointDirectory(CheckpointDirectory&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)), lock_fd_(std::exchange(other.lock_fd_, -1)) {}

int CheckpointDirectory::open_file(const std::string& name, bool create) const {
  if (fd_ < 0) return -1;
  return open_checkpoint_file(fd_, path_, name, O_RDWR | (create ? O_CREAT : 0));
}

std::uint64_t CheckpointDirectory::file_bytes(const std::string& name) const {
  struct stat st {};
  if (fd_ < 0 || ::fstatat(fd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) return 0;
  return static_cast<std::uint64_t>(st.st_size);
}

void CheckpointDirectory::remove_files(const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (::unlinkat(fd_, name.c_str(), 0) != 0 && errno != ENOENT) {
      throw IoError("cannot remove checkpoint file", path_ + "/" + name, errno);
    }
  }
  if (::unlinkat(fd_, kLockName, 0) != 0 && errno != ENOENT) {
    throw IoError("cannot remove checkpoint file", path_ + "/" + kLockName, errno);
  }
  (void)::fsync(fd_);
}

}  // namespace extshuffle::io
