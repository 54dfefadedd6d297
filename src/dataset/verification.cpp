#include "extshuffle/dataset/verification.hpp"

#include <stdexcept>
#include <algorithm>

#include "extshuffle/errors.hpp"
#include "extshuffle/io/block_file.hpp"

namespace extshuffle::dataset {

RecordDigest digest_fixed_records(io::BlockFile& file, std::uint64_t offset, std::uint64_t bytes,
                                  std::size_t record_size) {
  const std::size_t piece = std::max<std::size_t>(1, (std::size_t{8} << 20) / record_size) * record_size;
  RecordDigest digest;
  io::read_sequentially(file, offset, bytes, piece, [&](const std::byte* data, std::size_t size) {
    digest.add_fixed(data, size, record_size);
  });
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
  throw Error("verify failed: the output is not a permutation of the input (read " + read.to_string() +
                           "; wrote " + written.to_string() + ")");
}

}  // namespace extshuffle::dataset
