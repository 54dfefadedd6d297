#include "shared_output.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "extshuffle/errors.hpp"
#include "extshuffle/io/cleanup_registry.hpp"
#include "extshuffle/io/destination_directory.hpp"
#include "extshuffle/io/output_file.hpp"

namespace extshuffle::mpi {
namespace {

std::uint64_t inode_of(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 ? static_cast<std::uint64_t>(st.st_ino) : 0;
}

std::uint64_t inode_at(int directory, const std::string& name) {
  return static_cast<std::uint64_t>(io::file_key_in(directory, name).second);
}

}  // namespace

SharedOutput::SharedOutput(const std::string& destination)
    : destination_(destination), target_(io::final_target(destination)),
      directory_(io::directory_descriptor(io::directory_part(target_), destination)) {}

void SharedOutput::name_hidden(const std::string& name) {
  hidden_name_ = name;
  hidden_ = io::directory_part(target_) + "/" + name;
  cleanup_slot_ = io::register_cleanup_path(hidden_);
}

void SharedOutput::check_destination() {
  struct stat st {};
  if (::stat(target_.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw IoError("cannot write output", destination_, EISDIR);
    // The commit renames the hidden file over the destination: over a
    // device, a pipe or a socket it would replace the node itself.
    if (!S_ISREG(st.st_mode)) {
      throw UsageError("-o '" + destination_ +
                       "': a device, pipe or socket cannot be written in parts by several ranks (give a file)");
    }
    replaced_ = io::ReplacedFile{st.st_mode & 0777, st.st_uid, st.st_gid};
  }
}

std::unique_ptr<SharedOutput> SharedOutput::create(const std::string& destination) {
  std::unique_ptr<SharedOutput> output(new SharedOutput(destination));
  output->owner_ = true;
  output->check_destination();
  io::install_cleanup_handlers();
  // A hidden file of a fresh name, exclusively: a second job into the same
  // destination writes its own, and the commit's lock orders the two
  // publishes. Readable by its owner alone until the commit gives it its
  // final mode: it holds the records of inputs that may be private. Locked
  // while this job runs, so that another run's sweep of leftovers
  // (dataset/stale_pieces.hpp) leaves it alone.
  const int dir = output->directory_;
  for (int attempt = 0; attempt < 100 && output->fd_ < 0; ++attempt) {
    output->name_hidden(io::temporary_name(dir, output->target_));
    output->fd_ = ::openat(dir, output->hidden_name_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (output->fd_ >= 0) {
      (void)::flock(output->fd_, LOCK_EX | LOCK_NB);
      break;
    }
    const int error = errno;
    io::forget_cleanup_path(output->cleanup_slot_);
    output->cleanup_slot_ = -1;
    if (error != EEXIST) throw IoError("cannot write output", destination, error);
  }
  if (output->fd_ < 0) throw IoError("cannot write output", destination, EEXIST);
  output->inode_ = inode_of(output->fd_);
  output->file_ = io::BlockFile::open_output("/proc/self/fd/" + std::to_string(output->fd_), destination);
  return output;
}

std::unique_ptr<SharedOutput> SharedOutput::join(const std::string& destination, const std::string& hidden_name,
                                                 std::uint64_t inode) {
  std::unique_ptr<SharedOutput> output(new SharedOutput(destination));
  io::install_cleanup_handlers();
  output->name_hidden(hidden_name);
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

std::unique_ptr<SharedOutput> SharedOutput::reopen(const std::string& destination, const std::string& hidden_name,
                                                   std::uint64_t inode) {
  std::unique_ptr<SharedOutput> output(new SharedOutput(destination));
  output->owner_ = true;
  output->check_destination();
  output->hidden_name_ = hidden_name;
  output->hidden_ = io::directory_part(output->target_) + "/" + hidden_name;
  output->fd_ = ::openat(output->directory_, hidden_name.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  if (output->fd_ < 0) throw IoError("cannot open the partial output", output->hidden_, errno);
  struct stat st {};
  if (::fstat(output->fd_, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() ||
      static_cast<std::uint64_t>(st.st_ino) != inode || ::flock(output->fd_, LOCK_EX | LOCK_NB) != 0) {
    throw IoError("cannot open the partial output (not the file the checkpointed job wrote, or in use)",
                  output->hidden_, ESTALE);
  }
  output->inode_ = inode;
  output->kept_ = true;
  output->file_ = io::BlockFile::open_output("/proc/self/fd/" + std::to_string(output->fd_), destination);
  return output;
}

void SharedOutput::keep() {
  kept_ = true;
  io::forget_cleanup_path(cleanup_slot_);
  cleanup_slot_ = -1;
}

SharedOutput::~SharedOutput() {
  file_.reset();
  if (owner_ && !committed_ && !kept_ && inode_ != 0 && inode_at(directory_, hidden_name_) == inode_) {
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
  // The final mode, as extshuffle's outputs get it: the replaced file's,
  // or a new file's (it was created 0600).
  io::give_final_mode(fd_, replaced_, true, destination_);
  if (inode_at(directory_, hidden_name_) != inode_) {
    throw IoError("cannot rename output into place (its partial output was replaced meanwhile)", destination_, ESTALE);
  }
}

io::PendingRename SharedOutput::pending_rename() const {
  return {directory_, io::directory_part(target_) + "/", hidden_name_, io::name_part(target_), destination_};
}

void SharedOutput::published() {
  committed_ = true;
  io::forget_cleanup_path(cleanup_slot_);
  cleanup_slot_ = -1;
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
