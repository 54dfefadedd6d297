#include "distributed_verify.hpp"

#include <map>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "extshuffle/dataset/verification.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/io/mapped_bytes.hpp"
#include "extshuffle/mpi/rank_failure.hpp"
#include "inputs/input_reads.hpp"
#include "spread/all_to_all.hpp"

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

namespace {

using Digest = std::pair<std::uint64_t, std::uint64_t>;

// This rank's own view of input file `index`, as stored, and its size as
// the ranks agreed on it before the run.
std::pair<io::BlockFile*, std::uint64_t> own_view(const DistributedInput::State& in, std::size_t index) {
  if (in.source) return {&in.source->data(), in.input_bytes};
  const std::unique_ptr<io::InputSource>& held = in.files->held.at(index);
  if (!held || held->data_offset() != 0) throw std::logic_error("verify: asked for a file this rank does not hold");
  return {&held->data(), in.files->files.at(index).stored_bytes};
}

std::uint64_t agreed_bytes(const DistributedInput::State& in, std::size_t index) {
  return in.source ? in.input_bytes : in.files->files.at(index).stored_bytes;
}

// (file, block) pairs, grouped by the holder asked, with each group's count of words.
std::vector<std::uint64_t> blocks_to_ask(const InputReads& reads, std::vector<int>& words_to) {
  std::vector<std::vector<std::uint64_t>> asked(words_to.size());
  for (const auto& [index, file] : reads.files()) {
    for (const std::uint64_t block : reads.blocks(index)) {
      asked.at(static_cast<std::size_t>(file.holder))
          .insert(asked[static_cast<std::size_t>(file.holder)].end(), {index, block});
    }
  }
  std::vector<std::uint64_t> all;
  for (std::size_t h = 0; h < asked.size(); ++h) {
    words_to[h] = as_count(asked[h].size());
    all.insert(all.end(), asked[h].begin(), asked[h].end());
  }
  return all;
}

}  // namespace

void check_reads_against_holders(const DistributedInput::State& in, Communicator& comm) {
  std::vector<int> words_to(static_cast<std::size_t>(comm.size()));
  const std::vector<std::uint64_t> asked = blocks_to_ask(in.reads, words_to);
  const std::vector<int> words_from = all_to_all(words_to);
  const std::vector<std::uint64_t> asked_of_me = all_to_all(asked, words_to, words_from);
  // The holder's digests, two words for each pair asked, in the order asked.
  std::vector<std::uint64_t> answers(asked_of_me.size());
  std::vector<std::byte> buffer;
  checkpoint(comm, [&] {
    buffer.resize(kCheckedBlockBytes);
    std::map<std::pair<std::uint64_t, std::uint64_t>, Digest> digested;  // each block once, whoever asks
    for (std::size_t at = 0; at + 1 < asked_of_me.size(); at += 2) {
      const auto key = std::make_pair(asked_of_me[at], asked_of_me[at + 1]);
      auto found = digested.find(key);
      if (found == digested.end()) {
        const auto [file, bytes] = own_view(in, static_cast<std::size_t>(key.first));
        found = digested.emplace(key, digest_block(*file, bytes, key.second, buffer)).first;
      }
      answers[at] = found->second.first;
      answers[at + 1] = found->second.second;
    }
  });
  const std::vector<std::uint64_t> theirs = all_to_all(answers, words_from, words_to);
  checkpoint(comm, [&] {
    for (std::size_t at = 0; at + 1 < asked.size(); at += 2) {
      const InputReads::File& file = in.reads.files().at(static_cast<std::size_t>(asked[at]));
      const std::uint64_t bytes = agreed_bytes(in, static_cast<std::size_t>(asked[at]));
      if (digest_block(*file.file, bytes, asked[at + 1], buffer) == Digest{theirs[at], theirs[at + 1]}) continue;
      const std::uint64_t first = std::min(bytes, asked[at + 1] * kCheckedBlockBytes);
      const std::uint64_t last = std::min(bytes, first + kCheckedBlockBytes) - 1;
      throw InputError("input '" + file.path + "': bytes " + std::to_string(first) + "-" + std::to_string(last) +
                       " here differ from rank " + std::to_string(file.holder) +
                       "'s, its holder (the ranks see different files)");
    }
  });
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
