#include "distributed_verify.hpp"

#include <vector>

#include "extshuffle/dataset/verification.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/io/mapped_bytes.hpp"
#include "extshuffle/mpi/rank_failure.hpp"

namespace extshuffle::mpi {

dataset::RecordDigest digest_held_records(const DistributedInput::State& in, int rank,
                                          const core::PlanConstants& constants) {
  dataset::RecordDigest digest;
  const io::ByteExtents held = in.chunk_data(rank, constants);
  if (held.bytes == 0) return digest;
  // The file's bytes, then (text) the terminator the last record lacks, in
  // the byte after the mapping that is this process's own.
  const io::Extent& bytes = held.extents.front();
  std::optional<io::MappedBytes> mapped = io::MappedBytes::map(*bytes.file, bytes.offset, bytes.bytes, "the input");
  if (!mapped) throw IoError("cannot map the input to verify it", in.source->data().path(), EINVAL);
  std::size_t size = static_cast<std::size_t>(bytes.bytes);
  if (held.extents.size() > 1) {
    const_cast<std::byte*>(mapped->data())[size] = *held.extents.back().memory;
    ++size;
  }
  if (in.text) {
    dataset::add_text_records(digest, mapped->data(), size, in.syntax);
  } else {
    digest.add_fixed(mapped->data(), size, in.record_size);
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
