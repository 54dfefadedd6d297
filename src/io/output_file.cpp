#include "extshuffle/io/output_file.hpp"

#include <fcntl.h>
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
#include "extshuffle/io/write_behind.hpp"

namespace extshuffle::io {
namespace {

std::string directory_of(const std::string& path) {
  const auto parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

}  // namespace

std::string final_target(const std::string& path) {
  std::string current = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (::lstat(current.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return current;
    std::string target(PATH_MAX, '\0');
    const ssize_t length = ::readlink(current.c_str(), target.data(), target.size());
    if (length < 0) throw IoError("cannot write output", path, errno);
    target.resize(static_cast<std::size_t>(length));
    current = target.front() == '/' ? target : (std::filesystem::path(directory_of(current)) / target).string();
  }
  throw IoError("cannot write output", path, ELOOP);
}

void OutputFile::resolve_target(const std::string& destination) {
  // Through a symbolic link, the link's final target is written and
  // renamed over, so the link stays a link.
  target_ = final_target(destination);
  replaced_.reset();
  struct stat st {};
  if (stat(target_.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw IoError("cannot write output", destination, EISDIR);
    if (S_ISREG(st.st_mode)) replaced_ = ReplacedFile{st.st_mode & 0777, st.st_uid, st.st_gid};
  }
  const std::string directory = directory_of(target_);
  if (stat(directory.c_str(), &st) != 0) throw IoError("cannot write output", destination, errno);
  if (!S_ISDIR(st.st_mode)) throw IoError("cannot write output", destination, ENOTDIR);
  directory_ = directory;
}

OutputFile::OutputFile(const std::string& destination, AlignedBuffer buffers)
    : destination_(destination), buffers_(std::move(buffers)) {
  if (destination == "-") {
    fd_ = 1;
    return;
  }
  resolve_target(destination);
  install_cleanup_handlers();
  // An anonymous file in the destination's directory (O_TMPFILE): it has no
  // name until commit() links it, so not even kill -9 leaves a partial file.
  // File systems without O_TMPFILE get a hidden name, removed on failure and
  // on signals, which only kill -9 can leave behind. Read-write, for read_back().
  fd_ = ::open(directory_.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
  if (fd_ >= 0) {
    open_writer("/proc/self/fd/" + std::to_string(fd_));
    return;
  }
  // A hidden name in the same directory, so rename() is atomic.
  const std::string base = std::filesystem::path(target_).filename().string();
  std::random_device entropy;
  for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
    char suffix[17];
    std::snprintf(suffix, sizeof suffix, "%08x%08x", entropy(), entropy());
    temporary_ = directory_ + "/." + base + ".extshuffle-" + suffix;
    cleanup_slot_ = register_cleanup_path(temporary_);
    fd_ = ::open(temporary_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0) {
      const int error = errno;
      forget_cleanup_path(cleanup_slot_);
      cleanup_slot_ = -1;
      if (error != EEXIST) throw IoError("cannot write output", destination, error);
    }
  }
  if (fd_ < 0) throw IoError("cannot write output", destination, EEXIST);
  open_writer(temporary_);
}

// The temporary file at `path` (fd_'s) opened for the writes, and its writer.
void OutputFile::open_writer(const std::string& path) {
  file_ = BlockFile::open_output(path, destination_);
  if (!buffers_) buffers_ = allocate_aligned(2 * kBufferBytes);
  WriteBehind::Target target;
  target.file = file_.get();
  target.writeback_fd = fd_;
  writer_ = std::make_unique<WriteBehind>(std::move(target), buffers_.get(), kBufferBytes);
}

OutputFile::~OutputFile() {
  writer_.reset();  // waits for writes in flight before the file goes
  file_.reset();
  if (fd_ > 1) ::close(fd_);
  if (!committed_ && !temporary_.empty()) ::unlink(temporary_.c_str());
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
      if (errno == EPIPE && is_stdout()) throw BrokenPipe();
      throw IoError("cannot write output", is_stdout() ? "standard output" : destination_, errno);
    }
    p += n;
    bytes -= static_cast<std::size_t>(n);
    bytes_written_ += static_cast<std::uint64_t>(n);
  }
}

std::uint64_t OutputFile::bytes_written() const { return writer_ ? writer_->bytes() : bytes_written_; }

void OutputFile::finish() {
  if (is_stdout() || finished_) return;
  writer_->finish();  // the tail's writeback started too: sync() then finds little left to wait for
  bytes_written_ = writer_->bytes();
  writer_.reset();
  file_.reset();
  finished_ = true;
}

void OutputFile::sync() {
  if (is_stdout() || synced_) return;
  finish();
  // fsync before rename: after a crash the destination is the old file or the whole new one.
  if (::fsync(fd_) != 0) throw IoError("cannot write output", destination_, errno);
  synced_ = true;
}

void OutputFile::read_back(const std::function<void(const std::byte* data, std::size_t bytes)>& consume) const {
  constexpr std::size_t kPiece = std::size_t{1} << 20;
  const AlignedBuffer piece = allocate_aligned(kPiece);
  for (std::uint64_t offset = 0; offset < bytes_written_;) {
    const ssize_t got = ::pread(fd_, piece.get(), std::min<std::uint64_t>(kPiece, bytes_written_ - offset),
                                static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) throw IoError("cannot read back output", destination_, got < 0 ? errno : EIO);
    consume(piece.get(), static_cast<std::size_t>(got));
    offset += static_cast<std::uint64_t>(got);
  }
}

void OutputFile::rename_destination(const std::string& destination) {
  if (is_stdout() || destination == destination_) return;
  resolve_target(destination);
  destination_ = destination;
}

void OutputFile::commit() {
  if (is_stdout()) return;
  sync();
  // A replaced file's permissions (and, for root, its owner and group) carry
  // over, as they do when sort -o truncates it in place; a new file keeps
  // the 0666 & ~umask it was created with. Known only now: the destination
  // may have been renamed since finish() (a second fsync makes them durable).
  if (replaced_) {
    if (::geteuid() == 0 && ::fchown(fd_, replaced_->owner, replaced_->group) != 0) {
      throw IoError("cannot set the owner of output", destination_, errno);
    }
    if (::fchmod(fd_, replaced_->mode) != 0) throw IoError("cannot set the mode of output", destination_, errno);
    if (::fsync(fd_) != 0) throw IoError("cannot write output", destination_, errno);
  }
  if (temporary_.empty()) {
    // Name the anonymous file beside the destination, then rename it over
    // the destination (atomic); a name taken meanwhile means try another.
    const std::string base = std::filesystem::path(target_).filename().string();
    const std::string descriptor = "/proc/self/fd/" + std::to_string(fd_);
    std::random_device entropy;
    for (int attempt = 0; attempt < 100 && temporary_.empty(); ++attempt) {
      char suffix[17];
      std::snprintf(suffix, sizeof suffix, "%08x%08x", entropy(), entropy());
      const std::string name = directory_ + "/." + base + ".extshuffle-" + suffix;
      cleanup_slot_ = register_cleanup_path(name);
      if (::linkat(AT_FDCWD, descriptor.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0) {
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
  if (::rename(temporary_.c_str(), target_.c_str()) != 0) {
    throw IoError("cannot rename output into place", destination_, errno);
  }
  committed_ = true;
  // Its name is the destination's now: nothing to remove on a signal, and
  // the registry's slot is free for the next file (a run may write many).
  forget_cleanup_path(cleanup_slot_);
  cleanup_slot_ = -1;
}

}  // namespace extshuffle::io
