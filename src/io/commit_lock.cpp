// The commit's lock (io/commit_lock.hpp).
#include "extshuffle/io/commit_lock.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <tuple>

#include "extshuffle/errors.hpp"
#include "extshuffle/io/cleanup_registry.hpp"
#include "extshuffle/io/destination_directory.hpp"

namespace extshuffle::io {
namespace {

constexpr const char* kLockMark = ".extshuffle-lock";

// Calls `tell` once if not cancelled (destroyed) within a second.
class AfterASecond {
 public:
  explicit AfterASecond(std::function<void()> tell) {
    if (!tell) return;
    thread_ = std::thread([this, tell = std::move(tell)] {
      std::unique_lock lock(mutex_);
      if (!done_changed_.wait_for(lock, std::chrono::seconds(1), [this] { return done_; })) tell();
    });
  }
  ~AfterASecond() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    done_changed_.notify_all();
    thread_.join();
  }
  AfterASecond(const AfterASecond&) = delete;
  AfterASecond& operator=(const AfterASecond&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable done_changed_;
  bool done_ = false;
  std::thread thread_;
};

// The lock file's mode: its owner's, and the classes that may write its
// directory, none of them in a sticky directory (where only a file's owner
// may replace it); root gives it the directory's owner and group, so that
// the directory's owner can take it after a killed root run.
mode_t lock_mode(int directory) {
  struct stat dir {};
  if (::fstat(directory, &dir) != 0 || (dir.st_mode & S_ISVTX) != 0) return 0600;
  return 0600 | ((dir.st_mode & S_IWGRP) != 0 ? 0060 : 0) | ((dir.st_mode & S_IWOTH) != 0 ? 0006 : 0);
}

void give_lock_owner_and_mode(int fd, int directory, mode_t mode) {
  struct stat dir {};
  if (::fstat(directory, &dir) == 0) {
    if (::geteuid() == 0) {
      (void)::fchown(fd, dir.st_uid, dir.st_gid);
    } else if ((mode & 0060) != 0) {
      (void)::fchown(fd, static_cast<uid_t>(-1), dir.st_gid);  // best effort: a group we belong to
    }
  }
  (void)::fchmod(fd, mode);  // the umask may have narrowed it
}

// Opens (or creates) the lock file for writing; loops while its holder removes it.
int open_lock_file(int directory, const std::string& name, const std::string& shown) {
  const mode_t mode = lock_mode(directory);
  for (;;) {
    const int flags = O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
    int fd = ::openat(directory, name.c_str(), flags | O_CREAT | O_EXCL, mode);
    if (fd >= 0) {
      give_lock_owner_and_mode(fd, directory, mode);
      return fd;
    }
    if (errno != EEXIST) throw IoError("cannot create the commit lock", shown, errno);
    fd = ::openat(directory, name.c_str(), flags);
    if (fd >= 0) return fd;
    if (errno == ENOENT) continue;  // its holder removed it meanwhile: create it
    if (errno == EACCES || errno == EPERM) {
      throw Error("cannot open the commit lock '" + shown + "' for writing: " + std::strerror(errno) +
                  " (another user's: a run of theirs into the same files holds it, or was killed and left it)");
    }
    throw IoError("cannot open the commit lock", shown, errno);
  }
}

bool is_named(int fd, int directory, const std::string& name) {
  struct stat mine {};
  struct stat named {};
  return ::fstat(fd, &mine) == 0 && ::fstatat(directory, name.c_str(), &named, AT_SYMLINK_NOFOLLOW) == 0 &&
         mine.st_dev == named.st_dev && mine.st_ino == named.st_ino;
}

enum class Locked { kYes, kNoLocks };

// A write lock on the whole of `fd`, waited for; after a second `tell`.
Locked lock_file(int fd, const std::string& shown, const std::function<void()>& tell) {
  struct flock whole {};
  whole.l_type = F_WRLCK;
  whole.l_whence = SEEK_SET;
  if (::fcntl(fd, F_OFD_SETLK, &whole) == 0) return Locked::kYes;
  if (errno == EAGAIN || errno == EACCES) {
    const AfterASecond waiting(tell);
    while (::fcntl(fd, F_OFD_SETLKW, &whole) != 0) {
      if (errno != EINTR) throw IoError("cannot take the commit lock", shown, errno);
    }
    return Locked::kYes;
  }
  if (errno == ENOLCK || errno == EOPNOTSUPP || errno == ENOSYS) return Locked::kNoLocks;
  throw IoError("cannot take the commit lock", shown, errno);
}

}  // namespace

std::string lock_file_name(int directory, const std::string& destination) {
  std::string base = name_part(destination);
  const long name_max = ::fpathconf(directory, _PC_NAME_MAX);
  const std::size_t room = name_max > 0 ? static_cast<std::size_t>(name_max) : 255;
  const std::size_t extra = 1 + std::strlen(kLockMark);
  if (base.size() + extra > room) base.resize(room > extra ? room - extra : 0);
  return "." + base + kLockMark;
}

CommitLock::CommitLock(const std::vector<LockPlace>& places, const WaitNotice& notice) {
  struct Place {
    dev_t device;
    ino_t inode;
    std::string name;
    int directory;
    std::string directory_path;  // "" or ending in '/'
    std::string shown;           // the lock file's path
    std::string destination;
  };
  std::vector<Place> order;
  for (const LockPlace& place : places) {
    const int directory = directory_descriptor(place.directory.empty() ? "." : place.directory, place.destination);
    struct stat st {};
    if (::fstat(directory, &st) != 0) throw IoError("cannot write output", place.destination, errno);
    const std::string name = lock_file_name(directory, place.destination);
    order.push_back(
        {st.st_dev, st.st_ino, name, directory, place.directory, place.directory + name, place.destination});
  }
  const auto key = [](const Place& p) { return std::tie(p.device, p.inode, p.name); };
  std::sort(order.begin(), order.end(), [&](const Place& a, const Place& b) { return key(a) < key(b); });
  order.erase(std::unique(order.begin(), order.end(), [&](const Place& a, const Place& b) { return key(a) == key(b); }),
              order.end());
  try {
    for (const Place& p : order) {
      const std::string message = "waiting for another run's commit into '" + p.destination +
                                  "' to end (it holds the commit lock '" + p.shown + "')";
      const auto tell = notice ? std::function<void()>([&] { notice(message); }) : std::function<void()>();
      for (;;) {
        const int fd = open_lock_file(p.directory, p.name, p.shown);
        held_.push_back({p.directory, fd, p.name});
        struct stat st {};
        if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
          throw Error("cannot take the commit lock '" + p.shown + "': it is not a regular file");
        }
        const Locked locked = lock_file(fd, p.shown, tell);
        held_.back().locked = true;
        if (locked == Locked::kNoLocks) {
          warnings_.push_back("the file system of '" +
                              (p.directory_path.empty() ? std::string(".") : p.directory_path) +
                              "' takes no locks: this commit into '" + p.destination +
                              "' is not ordered with other runs into the same files");
          break;
        }
        // Its holder removes it before letting go: locked, it must still be
        // the file named. Held, it goes on a signal too (removed, then let
        // go as the process ends: what release() does).
        if (is_named(fd, p.directory, p.name)) {
          held_.back().cleanup_slot = register_cleanup_path(p.shown);
          break;
        }
        ::close(fd);
        held_.pop_back();
      }
    }
  } catch (...) {
    release();
    throw;
  }
}

CommitLock::~CommitLock() { release(); }

void CommitLock::release() noexcept {
  for (auto h = held_.rbegin(); h != held_.rend(); ++h) {
    forget_cleanup_path(h->cleanup_slot);
    // Only a lock this run holds is removed: never one another run waits on.
    if (h->locked && is_named(h->fd, h->directory, h->name)) (void)::unlinkat(h->directory, h->name.c_str(), 0);
    ::close(h->fd);
  }
  held_.clear();
}

}  // namespace extshuffle::io
