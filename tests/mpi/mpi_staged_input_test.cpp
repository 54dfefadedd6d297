// A dataset's records gathered where each rank holds them
// (src/mpi/inputs/dataset_files.hpp, src/mpi/inputs/staged_input.hpp): for every split of
// the records among the ranks that held_record_split gives (L from 1 record
// to more than all of them), that held_records_by_bytes gives (rank r
// the records that start in its 1/P of the bytes) and that
// chunk_split_by_bytes gives (rank r the chunks from the one where its 1/P
// of the bytes begins), each rank's bytes are exactly those of its
// records in the files' concatenation, the terminator the one unterminated
// file lacks added, whether they lie in plain files (read in place), in
// compressed files it decompressed itself or in compressed files another
// rank holds (sent over MPI); and all of them gathered on rank 0 in one
// scratch file; and where the records of a file start, and the first
// record from any byte and its chunk's, found in pieces of any size. Files: lines, plain, .gz and .zst (by the real tools), one
// empty, one without its final newline; each rank has a scratch directory
// of its own. Run by ctest under mpirun on 3 and 4 ranks over TCP only;
// every input is deterministic, so there is no false failure.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "extshuffle/formats/tfrecord.hpp"
#include "extshuffle/io/byte_extents.hpp"
#include "extshuffle/mpi/communicator.hpp"
#include "mpi/inputs/dataset_cuts.hpp"
#include "mpi/inputs/dataset_files.hpp"
#include "mpi/inputs/record_starts.hpp"
#include "mpi/distribution.hpp"
#include "mpi/inputs/staged_input.hpp"
#include "mpi/inputs/text_split.hpp"
#include "support/command.hpp"

namespace extshuffle::mpi::mpi_staged_input_test {
namespace {

// The k-th file's lines (a few to a few hundred, of 0 to 60 bytes).
std::string lines_of(int k, int count) {
  std::string text;
  for (int i = 0; i < count; ++i) text += "file" + std::to_string(k) + " line " + std::string((i * 7 + k) % 61, 'x') + "\n";
  return text;
}

std::string read_all(const io::ByteExtents& data) {
  std::string bytes(data.bytes, '\0');
  io::ExtentReader reader(data);
  for (std::uint64_t at = 0; at < data.bytes;) at += reader.read_now(reinterpret_cast<std::byte*>(bytes.data()) + at, data.bytes - at);
  return bytes;
}

// Where each line of `text` (which ends with a newline) starts, and its end as the last entry.
std::vector<std::uint64_t> line_starts(const std::string& text) {
  std::vector<std::uint64_t> starts{0};
  for (std::size_t at = 0; at < text.size(); ++at) {
    if (text[at] == '\n') starts.push_back(at + 1);
  }
  return starts;
}

// Random CSV over its own syntax characters (quoted newlines, "" and
// quotes inside unquoted fields), and TFRecord frames of 0 to 40 bytes.
std::string random_text(std::uint64_t trial, bool frames) {
  std::uint64_t x = trial * 0x9E3779B97F4A7C15ULL + 1;
  const auto next = [&] {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::uint32_t>(x >> 33);
  };
  std::string text;
  if (frames) {
    for (std::uint32_t k = next() % 20; k > 0; --k) formats::append_tfrecord_frame(text, std::string(next() % 41, 'f'));
    return text;
  }
  const char alphabet[] = {'a', 'b', ',', '"', '"', '\n', '\n', 'c'};
  text.resize(next() % 300);
  for (char& c : text) c = alphabet[next() % sizeof alphabet];
  return text;
}

// Every record's start (a last one without its end included), by a plain scan.
std::vector<std::uint64_t> scanned_starts(const std::string& text, const formats::RecordSyntax& syntax) {
  std::vector<std::uint64_t> starts;
  for (const char* p = text.data(); p < text.data() + text.size();) {
    starts.push_back(static_cast<std::uint64_t>(p - text.data()));
    const formats::RecordScan scan = formats::scan_record(p, text.data() + text.size(), syntax);
    p = scan.end ? scan.end : text.data() + text.size();
  }
  return starts;
}

// find_record_starts finds every record where a plain scan finds it, and
// records_starting_at the first record a plain scan finds from every byte,
// in pieces of 1 to 13 bytes (a scan resumed inside quoted fields, between
// the quotes of "", inside frame headers) and of the default size.
TEST(FindRecordStarts, EveryRecordWhereAPlainScanFindsIt) {
  const formats::RecordSyntax csv{'\n', true, ','}, lines{'\n', false, ','};
  const formats::RecordSyntax tfrecord{'\n', false, ',', formats::Framing::kTfrecord};
  for (std::uint64_t trial = 0; trial < 300; ++trial) {
    for (const formats::RecordSyntax& syntax : {csv, lines, tfrecord}) {
      const std::string text = random_text(trial, syntax.framing == formats::Framing::kTfrecord);
      const auto file = io::BlockFile::in_memory();
      const std::uint64_t at = 7;  // the records after a header, say
      file->write_now(std::string(at, 'h').data(), 0, at);
      if (!text.empty()) file->write_now(text.data(), at, text.size());
      const std::vector<std::uint64_t> starts = scanned_starts(text, syntax);
      std::vector<std::uint64_t> wanted(starts.size());
      for (std::size_t k = 0; k < wanted.size(); ++k) wanted[k] = k;
      // The first record from every offset (the end included): the record count past the last start.
      std::vector<std::uint64_t> offsets, first_index, first_byte;
      for (std::uint64_t b = 0; b <= text.size(); ++b) {
        offsets.push_back(b);
        first_index.push_back(
            static_cast<std::uint64_t>(std::lower_bound(starts.begin(), starts.end(), b) - starts.begin()));
        first_byte.push_back(first_index.back() < starts.size() ? starts[first_index.back()] : text.size());
      }
      for (const std::size_t piece : {std::size_t{1} + trial % 13, kStartScanPieceBytes}) {
        const std::string where = "trial " + std::to_string(trial) + " framing " +
                                  std::to_string(static_cast<int>(syntax.framing)) + " quoted " +
                                  std::to_string(syntax.quoted) + " piece " + std::to_string(piece);
        EXPECT_EQ(find_record_starts(*file, at, text.size(), syntax, wanted, piece), starts) << where;
        std::vector<std::uint64_t> found_index, found_byte;
        for (const RecordStart& f : records_starting_at(*file, at, text.size(), syntax, offsets, piece)) {
          found_index.push_back(f.index);
          found_byte.push_back(f.byte);
        }
        EXPECT_EQ(found_index, first_index) << where;
        EXPECT_EQ(found_byte, first_byte) << where;
        // And the first record of its chunk, chunks of `leaf` records
        // counted from record `base` of the whole data (the end a record).
        const std::uint64_t base = trial % 7, leaf = 1 + trial % 5;
        const std::vector<ChunkStart> chunks =
            chunks_starting_at(*file, at, text.size(), syntax, offsets, base, leaf, piece);
        ASSERT_EQ(chunks.size(), offsets.size()) << where;
        for (std::size_t q = 0; q < offsets.size(); ++q) {
          EXPECT_EQ(chunks[q].first.index, first_index[q]) << where;
          EXPECT_EQ(chunks[q].first.byte, first_byte[q]) << where;
          const std::uint64_t into = (base + first_index[q]) % leaf;
          ASSERT_EQ(chunks[q].chunk_here, into <= first_index[q]) << where << " offset " << q;
          if (!chunks[q].chunk_here) continue;
          const std::uint64_t chunk = first_index[q] - into;
          EXPECT_EQ(chunks[q].chunk.index, chunk) << where;
          EXPECT_EQ(chunks[q].chunk.byte, chunk < starts.size() ? starts[chunk] : text.size()) << where;
        }
      }
    }
  }
}

TEST(StagedInput, EachRankHoldsExactlyItsRecordsBytes) {
  Communicator comm;
  std::unique_ptr<testing::TempDir> dir;
  if (comm.rank() == 0) dir = std::make_unique<testing::TempDir>();
  const std::string root = comm.broadcast(dir ? dir->path().string() : std::string(), 0);
  const std::vector<std::string> names = {"a.txt", "b.txt.gz", "c.txt.zst", "d.txt", "e.txt.gz", "f.txt", "g.txt.zst"};
  const std::vector<int> counts = {120, 300, 7, 0, 55, 33, 410};
  std::string expected;  // the dataset's data: every file's lines, in order
  for (std::size_t k = 0; k < names.size(); ++k) {
    std::string text = lines_of(static_cast<int>(k), counts[k]);
    if (k == 5) text.pop_back();  // f.txt lacks its final newline: the dataset adds it
    expected += k == 5 ? text + "\n" : text;
    if (comm.rank() != 0) continue;
    const std::string plain = root + "/" + names[k].substr(0, 5);
    testing::write_file(plain, text);
    if (names[k].ends_with(".gz")) {
      ASSERT_EQ(testing::run_command("gzip " + plain).exit_code, 0);
    }
    if (names[k].ends_with(".zst")) {
      ASSERT_EQ(testing::run_command("zstd -q --rm " + plain).exit_code, 0);
    }
  }
  const std::string scratch = root + "/rank-" + std::to_string(comm.rank());
  if (comm.rank() == 0) {
    for (int r = 0; r < comm.size(); ++r) std::filesystem::create_directories(root + "/rank-" + std::to_string(r));
  }
  comm.barrier();
  std::vector<std::string> paths;
  for (const std::string& name : names) paths.push_back(root + "/" + name);
  JobOptions options;
  DatasetFiles files = lay_out_dataset(options, paths, scratch, comm);
  const std::vector<std::uint64_t> starts = line_starts(expected);
  ASSERT_EQ(files.records, starts.size() - 1);
  ASSERT_EQ(files.data_bytes, expected.size());
  for (const std::uint64_t leaf : {1, 5, 64, 300, 5000}) {
    core::PlanConstants constants = options.run.constants;
    constants.leaf_records = leaf;
    const std::vector<std::uint64_t> held = held_record_split(files.records, constants, comm.size());
    const std::vector<std::uint64_t> bytes = record_byte_offsets(files, held, comm);
    for (int r = 0; r <= comm.size(); ++r) EXPECT_EQ(bytes[r], starts[held[r]]) << "leaf " << leaf << " rank " << r;
    const StagedInput staged = stage_input(files, bytes, false, scratch, comm);
    const std::uint64_t first = bytes[comm.rank()], end = bytes[comm.rank() + 1];
    EXPECT_SAME_BYTES(read_all(staged.data), expected.substr(first, end - first)) << "leaf " << leaf;
  }
  // Held by bytes: rank r the records that start in bytes [B r / P, B (r + 1) / P)
  // of the data, wherever in the files those bytes lie; then staged as above.
  const HeldSplit by_bytes = held_records_by_bytes(files, comm.size(), comm);
  for (int r = 0; r <= comm.size(); ++r) {
    const std::uint64_t from = r == comm.size() ? expected.size() : range_begin(expected.size(), r, comm.size());
    const auto first_start = std::lower_bound(starts.begin(), starts.end(), from);
    EXPECT_EQ(by_bytes.records[r], static_cast<std::uint64_t>(first_start - starts.begin())) << "rank " << r;
    EXPECT_EQ(by_bytes.bytes[r], *first_start) << "rank " << r;
  }
  const StagedInput staged = stage_input(files, by_bytes.bytes, false, scratch, comm);
  const std::uint64_t first = by_bytes.bytes[comm.rank()], end = by_bytes.bytes[comm.rank() + 1];
  EXPECT_SAME_BYTES(read_all(staged.data), expected.substr(first, end - first)) << "held by bytes";
  // Chunks shared by bytes: rank r's from the chunk of the first record
  // that starts at or after byte B r / P (none when no record does),
  // wherever that chunk began (in an earlier file too, for small files).
  for (const std::uint64_t leaf : {1, 5, 64, 300, 5000}) {
    core::PlanConstants constants = options.run.constants;
    constants.leaf_records = leaf;
    std::vector<std::uint64_t> chunk_begin;
    const HeldSplit split = chunk_split_by_bytes(files, constants, comm.size(), chunk_begin, comm);
    const std::uint64_t chunks = core::chunk_count(files.records, constants);
    ASSERT_EQ(chunk_begin.size(), static_cast<std::size_t>(comm.size() + 1));
    EXPECT_EQ(chunk_begin.front(), 0u);
    EXPECT_EQ(chunk_begin.back(), chunks);
    for (int r = 0; r <= comm.size(); ++r) {
      const std::string where = "leaf " + std::to_string(leaf) + " rank " + std::to_string(r);
      const std::uint64_t cut = r == comm.size() ? expected.size() : range_begin(expected.size(), r, comm.size());
      const auto first_start =
          static_cast<std::uint64_t>(std::lower_bound(starts.begin(), starts.end(), cut) - starts.begin());
      const std::uint64_t chunk = first_start >= files.records ? chunks : first_start / leaf;
      EXPECT_EQ(chunk_begin[r], r == 0 ? 0 : chunk) << where;
      EXPECT_EQ(split.records[r], std::min(files.records, chunk_begin[r] * leaf)) << where;
      EXPECT_EQ(split.bytes[r], starts[split.records[r]]) << where;
    }
    const StagedInput chunked = stage_input(files, split.bytes, false, scratch, comm);
    const std::uint64_t from = split.bytes[comm.rank()], to = split.bytes[comm.rank() + 1];
    EXPECT_SAME_BYTES(read_all(chunked.data), expected.substr(from, to - from)) << "chunks by bytes, leaf " << leaf;
  }
  std::vector<std::uint64_t> all_on_first(comm.size() + 1, expected.size());
  all_on_first[0] = 0;
  const StagedInput whole = stage_input(files, all_on_first, true, scratch, comm);
  EXPECT_SAME_BYTES(read_all(whole.data), comm.rank() == 0 ? expected : std::string());
  EXPECT_EQ(whole.file_bytes, comm.rank() == 0 ? expected.size() : 0u);
  if (comm.rank() == 0) {
    ASSERT_EQ(whole.data.extents.size(), 1u) << "one range of one file";
    EXPECT_EQ(whole.data.extents[0].file, whole.file.get());
  }
  comm.barrier();  // rank 0 removes the files once every rank is done with them
}

}  // namespace
}  // namespace extshuffle::mpi::mpi_staged_input_test
