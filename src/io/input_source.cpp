#include "extshuffle/io/input_source.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string>

#include "extshuffle/errors.hpp"
#include "extshuffle/io/aligned_buffer.hpp"
#include "extshuffle/io/compression.hpp"
#include "extshuffle/io/pseudo_files.hpp"
#include "extshuffle/io/scratch_space.hpp"

namespace extshuffle::io {
namespace {

// Copies a stream (standard input, or a compressed file as it is
// decompressed) into the scratch file so that it can be read at random
// offsets; returns its size in bytes. Writes are double-buffered: one piece
// is written behind while the next is read.
// An endless or huge stream (/dev/zero) stops with one line before the
// scratch file system falls below its reserve (scratch_space.hpp), instead
// of filling it.
std::uint64_t spool(DecompressingReader& reader, BlockFile& scratch, std::uint64_t offset, const std::string& name) {
  constexpr std::size_t kPiece = std::size_t{8} << 20;
  const AlignedBuffer buffers = allocate_aligned(2 * kPiece);
  PendingIo pending;
  std::uint64_t size = 0;
  for (int current = 0;; current ^= 1) {
    std::byte* buffer = buffers.get() + current * kPiece;
    const std::size_t fill = reader.read(buffer, kPiece);
    if (fill == 0) break;
    pending.wait();
    if (scratch_room_bytes(scratch.descriptor()) < fill) {
      throw Error("input " + name + ": spooling stopped after " + std::to_string(size) +
                  " bytes: the scratch file system is down to its reserve (1% of it, at most 1 GiB): give -T a "
                  "larger one");
    }
    pending = scratch.write(buffer, offset + size, fill);
    size += fill;
    if (fill < kPiece) break;
  }
  pending.wait();
  return size;
}

// The descriptor that /dev/stdin, /dev/fd/N or /proc/self/fd/N names, else -1.
int descriptor_named(const std::string& path) {
  if (path == "/dev/stdin") return 0;
  for (const std::string prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0 &&
        path.find_first_not_of("0123456789", prefix.size()) == std::string::npos && path.size() - prefix.size() < 9) {
      return std::stoi(path.substr(prefix.size()));
    }
  }
  return -1;
}

}  // namespace

InputSource::InputSource(const std::string& path, const std::string& scratch_directory, std::uint64_t memory_bytes)
    : path_(path), memory_bytes_(memory_bytes) {
  // The scratch file is created after the input is opened, so that a
  // missing input is reported as such before a bad scratch directory.
  open(scratch_directory, 0);
}

InputSource::InputSource(const std::string& path, BlockFile& shared_scratch, std::uint64_t spool_offset,
                         std::uint64_t memory_bytes)
    : path_(path), scratch_(&shared_scratch), memory_bytes_(memory_bytes) {
  open("", spool_offset);
}

void InputSource::open(const std::string& scratch_directory, std::uint64_t spool_offset) {
  const std::string& path = path_;
  const Codec codec = codec_for_path(path);
  // Standard input ("-") and every path that is not a regular file or a
  // block device (a FIFO, /dev/stdin on a pipe, /dev/fd/N from bash's
  // process substitution, a character device, a socket) can be read only
  // once, in order: they are spooled like standard input. fstat, not the
  // name, decides, so /dev/stdin redirected from a file is read in place.
  int fd = 0;
  if (path != "-") {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    // A socket cannot be opened through /dev/stdin or /dev/fd/N (ENXIO):
    // read the descriptor those names stand for instead.
    if (fd < 0 && errno == ENXIO && descriptor_named(path) >= 0) fd = ::dup(descriptor_named(path));
    if (fd < 0) throw IoError("cannot open input", path, errno);
  }
  struct CloseFd {
    int fd;
    ~CloseFd() {
      if (fd > 0) ::close(fd);
    }
  } close_fd{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw IoError("cannot open input", path, errno);
  if (S_ISDIR(st.st_mode)) throw IoError("cannot read input", path, EISDIR);
  const bool in_place = path != "-" && (S_ISBLK(st.st_mode) || (S_ISREG(st.st_mode) && size_is_length(fd, st)));
  if (in_place) {
    file_ = BlockFile::open_input(path);
    file_bytes_ = file_->size();
    stored_bytes_ = file_bytes_;
  }
  if (!scratch_) {
    own_scratch_ = BlockFile::create_scratch(scratch_directory);
    scratch_ = own_scratch_.get();
  }
  scratch_offset_ = spool_offset;  // 0 for a scratch file of its own
  if (in_place && codec == Codec::kNone) {
    data_ = file_.get();
    bytes_ = file_bytes_;
    return;
  }
  DecompressingReader reader(fd, codec, path == "-" ? "standard input" : path, memory_bytes_);
  spool_offset_ = spool_offset;
  bytes_ = spool(reader, *scratch_, spool_offset_, path == "-" ? "standard input" : "'" + path + "'");
  if (!in_place) stored_bytes_ = reader.compressed_bytes_read();
  data_ = scratch_;
  scratch_offset_ = spool_offset_ + (bytes_ + 4095) / 4096 * 4096;
  spooled_ = true;
}

std::string InputSource::read_head(std::uint64_t wanted) {
  std::string head(std::min(bytes_, wanted), '\0');
  data_->read_now(head.data(), data_offset(), head.size());
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
