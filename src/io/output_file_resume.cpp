// An output file continued by a resumed run (--checkpoint: docs/cli.md
// "Resuming a run"): the journal's state of its temporary taken, and the
// temporary found again by name, its device and inode checked.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "extshuffle/errors.hpp"
#include "extshuffle/io/cleanup_registry.hpp"
#include "extshuffle/io/output_file.hpp"
#include "extshuffle/io/write_behind.hpp"

namespace extshuffle::io {

OutputFile::OutputFile(const std::string& destination, AlignedBuffer buffers, std::nullopt_t)
    : destination_(destination), buffers_(std::move(buffers)) {}

std::unique_ptr<OutputFile> OutputFile::resume(const std::string& destination, const ResumableOutput& state,
                                               bool finished, const std::string& published) {
  std::unique_ptr<OutputFile> file(new OutputFile(destination, AlignedBuffer{}, std::nullopt));
  file->resolve_target(destination);
  const std::string shown = file->directory_ + "/" + state.temporary;
  auto not_ours = [&] {
    return Error("checkpoint: the output's temporary '" + shown +
                 "' is not the file the checkpointed run wrote (removed, replaced or cut short): not trusted; "
                 "remove the checkpoint directory's files to start over");
  };
  file->fd_ = ::openat(file->directory_fd_, state.temporary.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  struct stat at_name {};
  if (file->fd_ < 0 && errno == ENOENT && finished && !published.empty() && ::stat(published.c_str(), &at_name) == 0 &&
      at_name.st_dev == state.device && at_name.st_ino == state.inode) {
    // Renamed into place already: nothing left to do for it.
    file->destination_ = published;
    file->finished_ = file->synced_ = file->prepared_ = file->committed_ = true;
    file->bytes_written_ = state.bytes;
    return file;
  }
  if (file->fd_ < 0) throw not_ours();
  struct stat st {};
  if (::fstat(file->fd_, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() || st.st_dev != state.device ||
      st.st_ino != state.inode || static_cast<std::uint64_t>(st.st_size) < state.bytes) {
    throw not_ours();
  }
  if (::flock(file->fd_, LOCK_EX | LOCK_NB) != 0) throw not_ours();
  if (::ftruncate(file->fd_, static_cast<off_t>(state.bytes)) != 0) throw IoError("cannot write output", shown, errno);
  file->temporary_ = state.temporary;
  file->kept_ = true;
  file->device_ = st.st_dev;
  file->inode_ = st.st_ino;
  if (finished) {
    file->finished_ = true;
    file->bytes_written_ = state.bytes;
    return file;
  }
  file->open_writer("/proc/self/fd/" + std::to_string(file->fd_));
  ByteExtents written;
  written.append({file->file_.get(), 0, state.bytes});
  file->writer_->resume(written, state.bytes);
  return file;
}

ResumableOutput OutputFile::checkpoint() {
  if (writer_) writer_->finish();
  // Its name is the journal's from now on: kept when the run fails, and not
  // removed by the signal handlers (a resumed run continues it).
  kept_ = true;
  forget_cleanup_path(cleanup_slot_);
  cleanup_slot_ = -1;
  return {temporary_, device_, inode_, bytes_written()};
}

}  // namespace extshuffle::io
