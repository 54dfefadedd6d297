#include "shared_output.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "extshuffle/errors.hpp"
#include "extshuffle/io/cleanup_registry.hpp"
#include "extshuffle/io/destination_directory.hpp"
#include "extshuffle/io/output_file.hpp"

namespace extshuffle::mpi {
namespace {

std::string hidden_name(const std::string& target) {
  const std::filesystem::path path(target);
  const std::string directory = path.parent_path().empty() ? "." : path.parent_path().string();
  return directory + "/." + path.filename().string() + ".extshuffle-mpi-partial";
}

std::uint64_t inode_of(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 ? static_cast<std::uint64_t>(st.st_ino) : 0;
}

// Takes the lock that marks a partial output as a running job's; false when
// another process holds it. A file system without flock (Lustre mounted
// without -o flock) gives no protection, and no reason to fail.
bool lock(int fd) { return ::flock(fd, LOCK_EX | LOCK_NB) == 0 || errno != EWOULDBLOCK; }

std::uint64_t inode_at(int directory, const std::string& name) {
  return static_cast<std::uint64_t>(io::file_key_in(directory, name).second);
}

// The mode a new file gets (0666 less the umask), as io::OutputFile's.
mode_t new_file_mode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

}  // namespace

SharedOutput::SharedOutput(const std::string& destination)
    : destination_(destination),
      target_(io::final_target(destination)),
      hidden_(hidden_name(target_)),
      hidden_name_(io::name_part(hidden_)),
      directory_(io::directory_descriptor(io::directory_part(target_), destination)) {}

std::unique_ptr<SharedOutput> SharedOutput::create(const std::string& destination) {
  std::unique_ptr<SharedOutput> output(new SharedOutput(destination));
  output->owner_ = true;
  struct stat st {};
  if (::stat(output->target_.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw IoError("cannot write output", destination, EISDIR);
    // The commit renames the hidden file over the destination: over a
    // device, a pipe or a socket it would replace the node itself.
    if (!S_ISREG(st.st_mode)) {
      throw UsageError("-o '" + destination +
                       "': a device, pipe or socket cannot be written in parts by several ranks (give a file)");
    }
    output->replaced_ = ReplacedFile{st.st_mode & 0777, st.st_uid, st.st_gid};
  }
  io::install_cleanup_handlers();
  // A new hidden file, exclusively; one already there is either a killed
  // job's (unlocked: remove it and try again) or a running job's (locked).
  // Readable by its owner alone until the commit gives it its final mode:
  // it holds the records of inputs that may be private.
  const int dir = output->directory_;
  const char* hidden = output->hidden_name_.c_str();
  for (int attempt = 0; attempt < 100 && output->fd_ < 0; ++attempt) {
    output->cleanup_slot_ = io::register_cleanup_path(output->hidden_);
    const int fd = ::openat(dir, hidden, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) {
      if (!lock(fd)) {
        ::close(fd);  // another job opened it first: it is that job's now
        throw IoError("cannot write output (another job is writing it)", destination, EBUSY);
      }
      output->fd_ = fd;
      break;
    }
    io::forget_cleanup_path(output->cleanup_slot_);
    output->cleanup_slot_ = -1;
    if (errno != EEXIST) throw IoError("cannot write output", destination, errno);
    const int stale = ::openat(dir, hidden, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (stale < 0) continue;  // gone meanwhile: try again
    if (!lock(stale)) {
      ::close(stale);
      throw IoError("cannot write output (another job is writing it: its partial output '" + output->hidden_ +
                        "' is locked)",
                    destination, EBUSY);
    }
    if (inode_of(stale) == inode_at(dir, output->hidden_name_)) ::unlinkat(dir, hidden, 0);
    ::close(stale);
  }
  if (output->fd_ < 0) throw IoError("cannot write output", destination, EEXIST);
  output->inode_ = inode_of(output->fd_);
  output->file_ = io::BlockFile::open_output("/proc/self/fd/" + std::to_string(output->fd_), destination);
  return output;
}

std::unique_ptr<SharedOutput> SharedOutput::join(const std::string& destination, std::uint64_t inode) {
  std::unique_ptr<SharedOutput> output(new SharedOutput(destination));
  io::install_cleanup_handlers();
  output->cleanup_slot_ = io::register_cleanup_path(output->hidden_);
  // Read and write: with --manifest, a rank reads some finished pieces back
  // to digest them (distributed_commit.hpp).
  output->fd_ = ::openat(output->directory_, output->hidden_name_.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  if (output->fd_ < 0) throw IoError("cannot open the partial output", output->hidden_, errno);
  output->inode_ = inode_of(output->fd_);
  if (output->inode_ != inode) {
    throw IoError("cannot open the partial output (not the file rank 0 created: is the directory shared?)",
                  output->hidden_, ESTALE);
  }
  output->file_ = io::BlockFile::open_output("/proc/self/fd/" + std::to_string(output->fd_), destination);
  return output;
}

SharedOutput::~SharedOutput() {
  file_.reset();
  if (owner_ && !committed_ && inode_ != 0 && inode_at(directory_, hidden_name_) == inode_) {
    ::unlinkat(directory_, hidden_name_.c_str(), 0);
  }
  if (fd_ >= 0) ::close(fd_);
  io::forget_cleanup_path(cleanup_slot_);
}

void SharedOutput::sync() {
  if (::fsync(fd_) != 0) throw IoError("cannot write output", destination_, errno);
}

void SharedOutput::prepare_commit() {
  file_.reset();
  if (replaced_ && ::geteuid() == 0 && ::fchown(fd_, replaced_->owner, replaced_->group) != 0) {
    throw IoError("cannot set the owner of output", destination_, errno);
  }
  // The final mode: the replaced file's, or a new file's.
  if (::fchmod(fd_, replaced_ ? replaced_->mode : new_file_mode()) != 0) {
    throw IoError("cannot set the mode of output", destination_, errno);
  }
  if (inode_at(directory_, hidden_name_) != inode_) {
    throw IoError("cannot rename output into place (its partial output was replaced meanwhile)", destination_, ESTALE);
  }
}

void SharedOutput::publish() {
  io::forget_cleanup_path(cleanup_slot_);
  cleanup_slot_ = -1;
  io::rename_in(directory_, hidden_name_, io::name_part(target_), destination_);
  committed_ = true;
}

void SharedOutput::forget() {
  committed_ = true;
  io::forget_cleanup_path(cleanup_slot_);
  cleanup_slot_ = -1;
}

RangeWriter::RangeWriter(SharedOutput& output, std::uint64_t offset)
    : buffers_(io::allocate_aligned(2 * kBufferBytes)),
      writer_({.file = &output.file(), .offset = offset, .writeback_fd = output.descriptor()}, buffers_.get(),
              kBufferBytes) {}

}  // namespace extshuffle::mpi
