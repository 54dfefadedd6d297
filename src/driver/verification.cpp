#include "verification.hpp"

#include <stdexcept>
#include <vector>

#include "extshuffle/io/aligned_buffer.hpp"
#include "extshuffle/io/block_file.hpp"

namespace extshuffle::driver {

RecordDigest digest_fixed_records(io::BlockFile& file, std::uint64_t offset, std::uint64_t bytes,
                                  std::size_t record_size) {
  const std::size_t piece = std::max<std::size_t>(1, (std::size_t{8} << 20) / record_size) * record_size;
  const io::AlignedBuffer buffers = io::allocate_aligned(2 * piece);
  RecordDigest digest;
  io::PendingIo pending;
  std::uint64_t next = 0;
  auto start = [&](int which) {
    const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(piece, bytes - next));
    pending = file.read(buffers.get() + which * piece, offset + next, take);
    next += take;
    return take;
  };
  std::size_t size = bytes > 0 ? start(0) : 0;
  for (int current = 0; size > 0; current ^= 1) {
    pending.wait();
    const std::size_t this_size = size;
    size = next < bytes ? start(current ^ 1) : 0;
    digest.add_fixed(buffers.get() + current * piece, this_size, record_size);
  }
  return digest;
}

void add_text_records(RecordDigest& digest, const std::byte* data, std::size_t bytes,
                      const formats::RecordSyntax& syntax) {
  const char* at = reinterpret_cast<const char*>(data);
  const char* end = at + bytes;
  while (at < end) {
    const char* stop = formats::scan_record(at, end, syntax).end;
    if (!stop) stop = end;  // cannot happen for whole records; count the rest as one
    digest.add(reinterpret_cast<const std::byte*>(at), static_cast<std::size_t>(stop - at));
    at = stop;
  }
}

void check_digests(const RecordDigest& read, const RecordDigest& written) {
  if (read == written) return;
  throw std::runtime_error("verify failed: the output is not a permutation of the input (read " + read.to_string() +
                           "; wrote " + written.to_string() + ")");
}

}  // namespace extshuffle::driver
