#include "dataset_cuts.hpp"

#include <algorithm>

#include "extshuffle/mpi/rank_failure.hpp"
#include "distribution.hpp"
#include "record_starts.hpp"
#include "text_split.hpp"

namespace extshuffle::mpi {
namespace {

// Where the samples `wanted` start among an archive's frames (tar_frame_offsets).
std::vector<std::uint64_t> frame_starts(const std::vector<std::uint64_t>& frame_begin,
                                        const std::vector<std::uint64_t>& wanted) {
  std::vector<std::uint64_t> starts;
  for (const std::uint64_t k : wanted) starts.push_back(frame_begin[k]);
  return starts;
}

// The first record of held file `k` that starts at or after each of
// `offsets` (sorted, in its data): its archive's frames, or a scan.
std::vector<RecordStart> first_records_from(DatasetFiles& d, std::size_t k, const std::vector<std::uint64_t>& offsets) {
  const DatasetFile& file = d.files[k];
  if (file.tar()) {
    std::vector<RecordStart> found;
    for (const std::uint64_t at : offsets) {
      const auto frame = std::lower_bound(file.tar_frame_begin.begin(), file.tar_frame_begin.end(), at);
      found.push_back({static_cast<std::uint64_t>(frame - file.tar_frame_begin.begin()), *frame});
    }
    return found;
  }
  io::InputSource& source = *d.held[k];
  return records_starting_at(source.data(), source.data_offset() + file.layout.data_offset,
                             source.bytes() - file.layout.data_offset, file.layout.syntax, offsets);
}

// The file in whose data each rank's first byte, B r / P, lies (none past
// the end: `file_of` keeps d.files.size()), and its offset there.
void cut_files(const DatasetFiles& d, int ranks, std::vector<std::size_t>& file_of,
               std::vector<std::uint64_t>& offset) {
  std::size_t f = 0;
  for (int r = 0; r < ranks; ++r) {
    const std::uint64_t at = range_begin(d.data_bytes, r, ranks);
    while (f < d.files.size() && at >= d.files[f].data_begin + d.files[f].data_bytes()) ++f;
    if (f == d.files.size()) continue;
    file_of[r] = f;
    offset[r] = at - d.files[f].data_begin;
  }
}

// As first_records_from, with the first record of each one's chunk where
// it lies in the same file (record_starts.hpp, chunks_starting_at).
std::vector<ChunkStart> first_chunks_from(DatasetFiles& d, std::size_t k, const std::vector<std::uint64_t>& offsets,
                                          std::uint64_t leaf) {
  const DatasetFile& file = d.files[k];
  if (file.tar()) {
    std::vector<ChunkStart> found;
    for (const RecordStart& first : first_records_from(d, k, offsets)) {
      const std::uint64_t into_chunk = (file.first_record + first.index) % leaf;  // records before it in its chunk
      const bool here = into_chunk <= first.index;
      const std::uint64_t chunk = here ? first.index - into_chunk : 0;
      found.push_back({first, {chunk, file.tar_frame_begin[chunk]}, here});
    }
    return found;
  }
  io::InputSource& source = *d.held[k];
  return chunks_starting_at(source.data(), source.data_offset() + file.layout.data_offset,
                            source.bytes() - file.layout.data_offset, file.layout.syntax, offsets, file.first_record,
                            leaf);
}

// Each rank's first_chunks_from at its cut (file_of, offset: cut_files),
// found by the holders and the same on every rank. Collective.
std::vector<ChunkStart> chunk_starts_at_cuts(DatasetFiles& d, const std::vector<std::size_t>& file_of,
                                             const std::vector<std::uint64_t>& offset, std::uint64_t leaf,
                                             Communicator& comm) {
  const auto ranks = static_cast<int>(file_of.size());
  std::vector<ChunkStart> found(ranks);
  checkpoint(comm, [&] {
    for (std::size_t k = 0; k < d.files.size(); ++k) {
      if (d.files[k].holder != comm.rank()) continue;
      std::vector<std::uint64_t> offsets;
      for (int r = 0; r < ranks; ++r) {
        if (file_of[r] == k) offsets.push_back(offset[r]);
      }
      if (offsets.empty()) continue;
      const std::vector<ChunkStart> here = first_chunks_from(d, k, offsets, leaf);
      for (int r = 0, w = 0; r < ranks; ++r) {
        if (file_of[r] == k) found[r] = here[w++];
      }
    }
  });
  for (int r = 0; r < ranks; ++r) {
    if (file_of[r] == d.files.size()) continue;
    const int holder = d.files[file_of[r]].holder;
    ChunkStart& c = found[r];
    c.first.index = comm.broadcast(c.first.index, holder);
    c.chunk.index = comm.broadcast(c.chunk.index, holder);
    c.chunk.byte = comm.broadcast(c.chunk.byte, holder);
    c.first.byte = comm.broadcast(c.first.byte, holder);
    c.chunk_here = comm.broadcast(c.chunk_here ? 1 : 0, holder) != 0;
  }
  return found;
}

}  // namespace

std::vector<std::uint64_t> record_byte_offsets(DatasetFiles& d, const std::vector<std::uint64_t>& indices,
                                               Communicator& comm) {
  std::vector<std::uint64_t> offsets(indices.size(), d.data_bytes);
  // The file in which each record starts (none for the end).
  std::vector<std::size_t> file_of(indices.size(), d.files.size());
  std::size_t f = 0;
  for (std::size_t i = 0; i < indices.size(); ++i) {
    if (indices[i] >= d.records) continue;
    while (indices[i] >= d.files[f].first_record + d.files[f].layout.records) ++f;
    file_of[i] = f;
    const DatasetFile& file = d.files[f];
    offsets[i] = file.data_begin + (indices[i] - file.first_record) * file.layout.record_size;
  }
  if (!d.files.front().layout.framed()) return offsets;
  // Text: each holder reads its files to the last record asked of them.
  std::vector<std::uint64_t> local(indices.size(), 0);
  checkpoint(comm, [&] {
    for (std::size_t k = 0; k < d.files.size(); ++k) {
      if (d.files[k].holder != comm.rank()) continue;
      std::vector<std::uint64_t> wanted;
      for (std::size_t i = 0; i < indices.size(); ++i) {
        if (file_of[i] == k) wanted.push_back(indices[i] - d.files[k].first_record);
      }
      if (wanted.empty()) continue;
      io::InputSource& source = *d.held[k];
      const dataset::InputLayout& layout = d.files[k].layout;
      const std::vector<std::uint64_t> starts =
          d.files[k].tar() ? frame_starts(d.files[k].tar_frame_begin, wanted)
                           : find_record_starts(source.data(), source.data_offset() + layout.data_offset,
                                                source.bytes() - layout.data_offset, layout.syntax, wanted);
      for (std::size_t i = 0, w = 0; i < indices.size(); ++i) {
        if (file_of[i] == k) local[i] = starts[w++];
      }
    }
  });
  for (std::size_t i = 0; i < indices.size(); ++i) {
    if (file_of[i] == d.files.size()) continue;
    const DatasetFile& file = d.files[file_of[i]];
    offsets[i] = file.data_begin + comm.broadcast(local[i], file.holder);
  }
  return offsets;
}

HeldSplit held_records_by_bytes(DatasetFiles& d, int ranks, Communicator& comm) {
  HeldSplit split;
  split.records.assign(ranks + 1, d.records);
  split.bytes.assign(ranks + 1, d.data_bytes);
  // The file in whose data each rank's first byte lies (none past the end),
  // and the offset there; then the first record from it, in that file.
  std::vector<std::size_t> file_of(ranks, d.files.size());
  std::vector<std::uint64_t> offset(ranks, 0);
  cut_files(d, ranks, file_of, offset);
  std::vector<RecordStart> first(ranks);
  for (int r = 0; r < ranks; ++r) {
    if (file_of[r] == d.files.size()) continue;
    const DatasetFile& file = d.files[file_of[r]];
    first[r].byte = offset[r];
    const std::uint64_t size = file.layout.record_size;
    if (!file.layout.framed()) first[r].index = std::min(file.layout.records, (first[r].byte + size - 1) / size);
  }
  // Text: each holder finds the records in its files.
  const bool text = d.files.front().layout.framed();
  checkpoint(comm, [&] {
    for (std::size_t k = 0; k < d.files.size() && text; ++k) {
      if (d.files[k].holder != comm.rank()) continue;
      std::vector<std::uint64_t> offsets;
      for (int r = 0; r < ranks; ++r) {
        if (file_of[r] == k) offsets.push_back(first[r].byte);
      }
      if (offsets.empty()) continue;
      const std::vector<RecordStart> found = first_records_from(d, k, offsets);
      for (int r = 0, w = 0; r < ranks; ++r) {
        if (file_of[r] == k) first[r] = found[w++];
      }
    }
  });
  for (int r = 0; r < ranks; ++r) {
    if (file_of[r] == d.files.size()) continue;
    const DatasetFile& file = d.files[file_of[r]];
    const std::uint64_t index = text ? comm.broadcast(first[r].index, file.holder) : first[r].index;
    split.records[r] = file.first_record + index;
    // Past the file's last record: the next file's first (after the terminator the last one gets).
    split.bytes[r] = file.data_begin + (index == file.layout.records ? file.data_bytes()
                                        : text                       ? comm.broadcast(first[r].byte, file.holder)
                                                                     : index * file.layout.record_size);
  }
  return split;
}

HeldSplit chunk_split_by_bytes(DatasetFiles& d, const core::PlanConstants& constants, int ranks,
                               std::vector<std::uint64_t>& chunk_begin, Communicator& comm) {
  const std::uint64_t chunks = core::chunk_count(d.records, constants), leaf = constants.leaf_records;
  HeldSplit split;
  if (!d.files.front().layout.framed()) {
    chunk_begin = even_split(chunks, ranks);
    split.records = chunk_first_records(chunk_begin, d.records, constants);
    split.bytes = record_byte_offsets(d, split.records, comm);  // by arithmetic
    return split;
  }
  std::vector<std::size_t> file_of(ranks, d.files.size());
  std::vector<std::uint64_t> offset(ranks, 0);
  cut_files(d, ranks, file_of, offset);
  const std::vector<ChunkStart> found = chunk_starts_at_cuts(d, file_of, offset, leaf, comm);
  chunk_begin.assign(ranks + 1, chunks);
  chunk_begin[0] = 0;
  split.bytes.assign(ranks + 1, d.data_bytes);
  split.bytes[0] = 0;
  split.read_bytes = split.bytes;
  std::vector<int> before;  // ranks whose chunk began in an earlier file
  for (int r = 1; r < ranks; ++r) {
    if (file_of[r] == d.files.size()) continue;
    const DatasetFile& file = d.files[file_of[r]];
    const ChunkStart& c = found[r];
    const std::uint64_t first = file.first_record + c.first.index;
    if (first >= d.records) continue;  // no record starts after the cut
    split.read_bytes[r] = file.data_begin + (c.first.index == file.layout.records ? file.data_bytes() : c.first.byte);
    chunk_begin[r] = first / leaf;
    if (!c.chunk_here) {
      before.push_back(r);
      continue;
    }
    // The end of the file: the next file's first record (after the terminator the last one gets).
    split.bytes[r] = file.data_begin + (c.chunk.index == file.layout.records ? file.data_bytes() : c.chunk.byte);
  }
  split.records = chunk_first_records(chunk_begin, d.records, constants);
  // A chunk that began before the file where its rank's cut falls (small files).
  std::vector<std::uint64_t> indices;
  for (const int r : before) indices.push_back(split.records[r]);
  if (!indices.empty()) {
    const std::vector<std::uint64_t> bytes = record_byte_offsets(d, indices, comm);
    for (std::size_t q = 0; q < before.size(); ++q) split.bytes[before[q]] = bytes[q];
  }
  return split;
}

}  // namespace extshuffle::mpi
