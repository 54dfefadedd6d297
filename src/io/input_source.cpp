#include "extshuffle/io/input_source.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "extshuffle/errors.hpp"
#include "extshuffle/io/aligned_buffer.hpp"
#include "extshuffle/io/compression.hpp"

namespace extshuffle::io {
namespace {

// Copies a stream (standard input, or a compressed file as it is
// decompressed) into the scratch file so that it can be read at random
// offsets; returns its size in bytes. Writes are double-buffered: one piece
// is written behind while the next is read.
std::uint64_t spool(DecompressingReader& reader, BlockFile& scratch) {
  constexpr std::size_t kPiece = std::size_t{8} << 20;
  const AlignedBuffer buffers = allocate_aligned(2 * kPiece);
  PendingIo pending;
  std::uint64_t size = 0;
  for (int current = 0;; current ^= 1) {
    std::byte* buffer = buffers.get() + current * kPiece;
    const std::size_t fill = reader.read(buffer, kPiece);
    if (fill == 0) break;
    pending.wait();
    pending = scratch.write(buffer, size, fill);
    size += fill;
    if (fill < kPiece) break;
  }
  pending.wait();
  return size;
}

}  // namespace

InputSource::InputSource(const std::string& path, const std::string& scratch_directory) : path_(path) {
  const Codec codec = codec_for_path(path);
  const bool from_stdin = path == "-";
  if (!from_stdin) {
    file_ = BlockFile::open_input(path);
    file_bytes_ = file_->size();
  }
  scratch_ = BlockFile::create_scratch(scratch_directory);
  if (!from_stdin && codec == Codec::kNone) {
    data_ = file_.get();
    bytes_ = file_bytes_;
    return;
  }
  int fd = 0;
  if (!from_stdin) {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw IoError("cannot open input", path, errno);
  }
  struct CloseFd {
    int fd;
    ~CloseFd() {
      if (fd > 0) ::close(fd);
    }
  } close_fd{fd};
  DecompressingReader reader(fd, codec, from_stdin ? "standard input" : path);
  bytes_ = spool(reader, *scratch_);
  data_ = scratch_.get();
  scratch_offset_ = (bytes_ + 4095) / 4096 * 4096;
  spooled_ = true;
}

std::string InputSource::read_head(std::uint64_t wanted) {
  std::string head(std::min(bytes_, wanted), '\0');
  data_->read_now(head.data(), 0, head.size());
  return head;
}

void InputSource::check_unchanged() const {
  struct stat now {};
  if (spooled_ || ::stat(path_.c_str(), &now) != 0) return;
  if (static_cast<std::uint64_t>(now.st_size) != file_bytes_) {
    throw InputError("input '" + path_ + "' changed size during the run (" + std::to_string(file_bytes_) +
                     " bytes at the start, " + std::to_string(now.st_size) + " now)");
  }
}

std::string scratch_directory(const std::string& tmpdir) {
  if (!tmpdir.empty()) return tmpdir;
  const char* env = std::getenv("TMPDIR");
  return env && *env ? env : "/tmp";
}

}  // namespace extshuffle::io
