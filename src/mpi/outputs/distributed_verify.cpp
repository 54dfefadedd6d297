#include "distributed_verify.hpp"

#include <vector>

#include "extshuffle/dataset/verification.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/io/mapped_bytes.hpp"
#include "extshuffle/mpi/rank_failure.hpp"

namespace extshuffle::mpi {

dataset::RecordDigest digest_held_records(const DistributedInput::State& in, const std::string& display_name) {
  dataset::RecordDigest digest;
  const io::ByteExtents held = in.held_data();
  // Each extent holds whole records (the held share starts at a record, and
  // a file's last record ends its extent), but for the terminator a file's
  // last record lacks, the one-byte extent after it: placed in the byte
  // after the mapping, which is this process's own.
  const std::vector<io::Extent>& extents = held.extents;
  for (std::size_t k = 0; k < extents.size(); ++k) {
    const io::Extent& bytes = extents[k];
    if (bytes.file == nullptr || bytes.bytes == 0) continue;
    std::optional<io::MappedBytes> mapped = io::MappedBytes::map(*bytes.file, bytes.offset, bytes.bytes, display_name);
    if (!mapped) throw IoError("cannot map the input to verify it", bytes.file->path(), EINVAL);
    std::size_t size = static_cast<std::size_t>(bytes.bytes);
    if (k + 1 < extents.size() && extents[k + 1].file == nullptr && extents[k + 1].bytes == 1) {
      mapped->after() = *extents[k + 1].memory;
      ++size;
    }
    if (in.framed) {
      dataset::add_text_records(digest, mapped->data(), size, in.syntax);
    } else {
      digest.add_fixed(mapped->data(), size, in.record_size);
    }
  }
  return digest;
}

void check_distributed_digests(const dataset::RecordDigest& read, const dataset::RecordDigest& written,
                               Communicator& comm) {
  const std::vector<dataset::RecordDigest> reads = comm.all_gather(read);
  const std::vector<dataset::RecordDigest> writes = comm.all_gather(written);
  dataset::RecordDigest all_read, all_written;
  for (const auto& d : reads) all_read.merge(d);
  for (const auto& d : writes) all_written.merge(d);
  checkpoint(comm, [&] {
    if (comm.rank() == 0) dataset::check_digests(all_read, all_written);
  });
}

}  // namespace extshuffle::mpi
