// A root spread over the ranks (src/mpi/spread/spread_root.hpp): a leaf (at most
// L records), and a root of two levels with fewer than 8 chunks a rank.
// The output byte for byte extshuffle's on 1 to 4 ranks (JSONL with
// heavy-tailed lengths, CSV with quoted newlines and a header, .npy, 12-
// and 16-byte records, -n, a budget small enough for many rounds of the
// exchange), and every rank busy: for 200k JSONL records and 100k .npy rows
// (leaves), and for roots of 2 and 9 chunks of 16384 (JSONL and 16-byte
// records) on 2, 3 and 4 ranks, each rank's input bytes read and output
// bytes written (--stats, RANK lines) within 15% of 1/P of the input's
// bytes, and its bytes sent within 15% of 1/P of all the ranks' bytes sent;
// and on 2 and 3 ranks, for 3000 records of lognormal sizes sorted shortest
// first (one JSONL file, three files, a tar archive), each rank's bytes read
// and written within 15% of 1/P of them; and the same for roots of many
// chunks (the two-level path, chunks of 128 and 32 records), whose chunks
// are shared by bytes: 30000 JSONL records of lognormal sizes sorted
// shortest first (one file, three files) and an archive of 6000 samples;
// and roots of many chunks whose last chunk holds over 40% of the bytes
// (30,720 JSONL records, one file and three; an archive of 15,360
// samples, and the same in three archives, one gzipped), whose reads are
// shared apart from the chunks (an archive's frames read in place by their
// readers); and --dry-run's scratch per rank against what a rank writes.
//
// False failures. Bytes read and written are cut by bytes (docs/mpi.md,
// "How the work is shared"): rank r holds the records that start in its
// 1/P of the input's data bytes and writes those that start in its 1/P of
// the output stream's, so each share is off by less than the longest
// record, whatever the seed: at most 1/8 of a share for every input here
// (JSONL records of at most ~250 bytes against shares of over 1 MB, .npy
// rows exact; sorted.*: the generator checks that no record exceeds
// 1/(8P) of the bytes for P <= 3). No false failure there. Bytes sent:
// rank s sends its held bytes H (B/P within a record) less the bytes O_s
// its own output takes from them; the records of a contiguous range of
// the output (m = N/P of them; the bijection taken as a uniformly random
// permutation) are a sample without replacement of the input's, and O_s
// sums x_i = a record's bytes when s holds it, else 0. A stray of 15% from
// the mean of the ranks' bytes sent needs some |O_s - E O_s| >= t = 0.075
// (1 - 1/P) B/P; Bernstein's inequality (which holds without replacement)
// bounds that by 2 exp(-t^2 / (2 (m var(x) + b t / 3))), b the longest
// record. Worst here, chunks2.jsonl (B ~ 4.1 MB, JSONL lengths uniform
// over ~200 bytes around ~126, b ~ 230) on 2 ranks: t ~ 76 KB, m var(x) ~
// 16k x 5.6k, < 1e-12; every other case less (larger B or P). Over the
// 54 + 108 assertions on bytes sent: < 1e-10. Roots of many chunks: reads
// are whole chunks cut by bytes, off by less than the largest chunk and the
// longest record (the generator checks that below 15% of 1/P for P <= 3):
// no false failure. Writes: a rank's buckets, 1/P of them within one of
// 235 (188), hold the records of a contiguous range of about N/P output
// positions, a sample without replacement as above; Bernstein with t =
// 0.15 B/P less the buckets' rounding (< 1.1%): 1.2e-9 for drifted.jsonl
// on 3 ranks (B ~ 5.2 MB, m = 10000, var(x) ~ 4.2e4, b ~ 12 KB), 2.2e-5
// for drifted.tar on 3 (B ~ 38 MB, m = 2000, var(x) ~ 3.4e7, b ~ 118 KB;
// there t is 8 standard deviations of the sum), less elsewhere: < 7e-5 over
// the 15 assertions on bytes written. One heavy chunk: reads are 1/P of
// the bytes within a record, whatever the seed (no false failure); writes
// as above, the buckets shared exactly (30 of them): 6e-8 for
// heavy_chunk.jsonl on 3 ranks (B ~ 8.0 MB, m = 10240, var(x) ~ 3.9e5, b
// = 4522; 1e-11 on 2), 1.5e-4 for heavy_chunk.tar on 3 (B ~ 62 MB, m =
// 5120, its 512 heavy samples of ~55 KB dominate var(x); 1.3e-6 on 2):
// < 5e-4 over the 15 assertions on bytes written (Bernstein, a bound).
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "mpi_suite.hpp"

namespace extshuffle::testing::mpi_balance_test {
namespace {

// Every identity test runs its root as one leaf of at most 4096 records.
const std::string kLeafKnobs = " --leaf-records 4096 --fanout 8 ";
// The few-chunk roots: chunks of 16384 records, up to 64 buckets (two levels).
const std::string kFewChunksKnobs = " --leaf-records 16384 --fanout 64 ";

// Roots of many chunks (8P and more: scattered by whole chunks, not
// spread): chunks of 128 records (the archive's of 32), all of them buckets.
const std::string kManyChunksKnobs = " --leaf-records 128 --fanout 256 ";
const std::string kManyArchiveChunksKnobs = " --leaf-records 32 --fanout 256 ";
// One heavy chunk's roots: 30 chunks of 1024 records (the archive's of 512).
const std::string kHeavyChunkKnobs = " --leaf-records 1024 --fanout 256 ";
const std::string kHeavyArchiveChunkKnobs = " --leaf-records 512 --fanout 256 ";

struct RankBytes {
  std::uint64_t input_read = 0, sent = 0, output = 0, chunks = 0;
};

// The RANK lines of --stats (rank 0 prints every rank's).
std::vector<RankBytes> rank_bytes(const std::string& stats) {
  std::vector<RankBytes> ranks;
  const std::regex line(
      R"(RANK rank=\d+ chunks=(\d+) .* bytes_sent=(\d+) .* input_bytes_read=(\d+) .* output_bytes=(\d+))");
  for (std::sregex_iterator m(stats.begin(), stats.end(), line), end; m != end; ++m) {
    ranks.push_back({std::stoull((*m)[3]), std::stoull((*m)[2]), std::stoull((*m)[4]), std::stoull((*m)[1])});
  }
  return ranks;
}

class MpiBalance : public MpiSuite<MpiBalance> {
 public:
  static constexpr const char* kScript = "make_balance_inputs.py";

 protected:
  // The single-machine output of `name` with `arguments`, then the same on
  // each of `ranks` ranks, byte for byte; returns the last run's stderr.
  std::string expect_same(const std::string& name, const std::string& arguments, std::initializer_list<int> ranks) {
    const std::string reference = (dir_ / "reference").string();
    const auto single = run_single(input(name) + " " + reference + " --seed 11 -q " + arguments);
    EXPECT_EQ(single.exit_code, 0) << single.err;
    std::string err;
    for (const int p : ranks) {
      const std::string output = (dir_ / ("ranks" + std::to_string(p))).string();
      const auto r = run_mpi(p, input(name) + " " + output + " --seed 11 -q -j 1 " + arguments);
      EXPECT_EQ(r.exit_code, 0) << "P = " << p << ": " << r.err;
      EXPECT_TRUE(same_bytes(reference, output)) << name << arguments << " on " << p << " ranks";
      err = r.err;
    }
    return err;
  }

  // Each rank's bytes on `ranks` ranks within 15% of its even share.
  void expect_balanced(const std::string& name, int ranks, const std::string& arguments = "") {
    const std::string err = expect_same(name, "--stats " + arguments, {ranks});
    const std::vector<RankBytes> all = rank_bytes(err);
    ASSERT_EQ(all.size(), static_cast<std::size_t>(ranks)) << err;
    const double share = static_cast<double>(std::filesystem::file_size(input(name))) / ranks;
    double sent = 0;
    for (const RankBytes& r : all) sent += static_cast<double>(r.sent);
    ASSERT_GT(sent, 0.0) << err;
    for (int r = 0; r < ranks; ++r) {
      const std::string where = name + " on " + std::to_string(ranks) + " ranks, rank " + std::to_string(r);
      EXPECT_NEAR(static_cast<double>(all[r].input_read), share, 0.15 * share) << where;
      EXPECT_NEAR(static_cast<double>(all[r].output), share, 0.15 * share) << where;
      EXPECT_NEAR(static_cast<double>(all[r].sent), sent / ranks, 0.15 * sent / ranks) << where;
    }
  }

  // Each rank's input bytes read and output bytes written on `ranks` ranks
  // within 15% of 1/P of all the ranks' (the records' bytes), the output
  // extshuffle's. Returns the ranks' lines.
  std::vector<RankBytes> expect_byte_shares(const std::string& name, int ranks, const std::string& arguments = "") {
    const std::string err = expect_same(name, "--stats " + arguments, {ranks});
    const std::vector<RankBytes> all = rank_bytes(err);
    EXPECT_EQ(all.size(), static_cast<std::size_t>(ranks)) << err;
    if (all.size() != static_cast<std::size_t>(ranks)) return all;
    double read = 0, written = 0;
    for (const RankBytes& r : all) {
      read += static_cast<double>(r.input_read);
      written += static_cast<double>(r.output);
    }
    EXPECT_GT(read, 0.0) << err;
    for (int r = 0; r < ranks; ++r) {
      const std::string where = name + " on " + std::to_string(ranks) + " ranks, rank " + std::to_string(r);
      EXPECT_NEAR(static_cast<double>(all[r].input_read), read / ranks, 0.15 * read / ranks) << where;
      EXPECT_NEAR(static_cast<double>(all[r].output), written / ranks, 0.15 * written / ranks) << where;
    }
    return all;
  }

  // As expect_byte_shares, for a root scattered by whole chunks: every rank
  // scatters some, and the first rank (the shortest records) at least 1.25
  // times as many as the last, where an even split of the chunks would give
  // them the same count (within one).
  // Returns the ranks' lines.
  std::vector<RankBytes> expect_chunks_by_bytes(const std::string& name, int ranks, const std::string& knobs) {
    const std::vector<RankBytes> all = expect_byte_shares(name, ranks, knobs);
    EXPECT_EQ(all.size(), static_cast<std::size_t>(ranks));
    if (all.size() != static_cast<std::size_t>(ranks)) return all;
    for (const RankBytes& r : all) EXPECT_GT(r.chunks, 0u) << name << " on " << ranks << " ranks";
    EXPECT_GE(4 * all.front().chunks, 5 * all.back().chunks) << name << " on " << ranks << " ranks";
    return all;
  }
};

TEST_F(MpiBalance, HeavyTailedJsonlOnOneToFourRanks) { expect_same("heavy.jsonl", kLeafKnobs, {1, 2, 3, 4}); }

TEST_F(MpiBalance, CsvWithQuotedNewlinesAndAHeaderOnOneToFourRanks) {
  expect_same("quoted.csv", kLeafKnobs, {1, 2, 3, 4});
}

TEST_F(MpiBalance, NpyRowsOnOneToFourRanks) { expect_same("rows.npy", kLeafKnobs, {1, 2, 3, 4}); }

TEST_F(MpiBalance, TwelveByteRecordsOnOneToFourRanks) {
  expect_same("records12.bin", "--record-size 12" + kLeafKnobs, {1, 2, 3, 4});
}

TEST_F(MpiBalance, HeadCountCutsTheRanksOutput) {
  // K inside rank 1's range of 3, and inside rank 0's of 4.
  expect_same("heavy.jsonl", "-n 1500" + kLeafKnobs, {3});
  expect_same("records12.bin", "--record-size 12 -n 700" + kLeafKnobs, {4});
}

TEST_F(MpiBalance, ManyRoundsAtASmallBudget) {
  // -S 8M: windows of 1 MiB a rank on 4 ranks, ~6 MB each: several rounds.
  const std::string err = expect_same("balance.jsonl", "-S 8M --stats", {4});
  EXPECT_NE(err.find(" rounds="), std::string::npos);
  EXPECT_EQ(err.find(" rounds=1 "), std::string::npos) << err;
}

TEST_F(MpiBalance, EveryRankBusyOnJsonl) {
  for (const int ranks : {2, 3, 4}) expect_balanced("balance.jsonl", ranks);
}

TEST_F(MpiBalance, EveryRankBusyOnNpy) {
  for (const int ranks : {2, 3, 4}) expect_balanced("balance.npy", ranks);
}

// Roots of two levels with fewer than 8 chunks a rank, spread like a leaf:
// at L = 16384, 2 chunks (before, 2 of 4 ranks idle) and 9 (one of 4 ranks
// a third over its share), each last chunk short.
TEST_F(MpiBalance, EveryRankBusyOnTwoChunksOfJsonl) {
  for (const int ranks : {2, 3, 4}) expect_balanced("chunks2.jsonl", ranks, kFewChunksKnobs);
}

TEST_F(MpiBalance, EveryRankBusyOnNineChunksOfJsonl) {
  for (const int ranks : {2, 3, 4}) expect_balanced("chunks9.jsonl", ranks, kFewChunksKnobs);
}

TEST_F(MpiBalance, EveryRankBusyOnTwoChunksOfFixedSizeRecords) {
  for (const int ranks : {2, 3, 4}) expect_balanced("chunks2.bin", ranks, "--record-size 16" + kFewChunksKnobs);
}

TEST_F(MpiBalance, EveryRankBusyOnNineChunksOfFixedSizeRecords) {
  for (const int ranks : {2, 3, 4}) expect_balanced("chunks9.bin", ranks, "--record-size 16" + kFewChunksKnobs);
}

TEST_F(MpiBalance, HeadCountCutsASpreadRootOfChunks) {
  // K inside rank 1's range of 3 (in the sixth bucket of 9), and inside rank 0's of 4.
  expect_same("chunks9.jsonl", "-n 90000" + kFewChunksKnobs, {3});
  expect_same("chunks2.bin", "--record-size 16 -n 5000" + kFewChunksKnobs, {4});
}

TEST_F(MpiBalance, ManyRoundsOfASpreadRootOfChunksAtASmallBudget) {
  // -S 8M: windows of ~1.4 MB a rank on 3 ranks, ~6 MB each: several rounds.
  const std::string err = expect_same("chunks9.jsonl", "-S 8M --stats" + kFewChunksKnobs, {3});
  EXPECT_NE(err.find(" rounds="), std::string::npos);
  EXPECT_EQ(err.find(" rounds=1 "), std::string::npos) << err;
}

// Balanced by bytes (3000 records of lognormal sizes, shortest first: even
// shares of the records give one rank of 3 2.49 times its share of the bytes).
TEST_F(MpiBalance, EveryRankItsShareOfBytesOnHeavyTailedJsonl) {
  for (const int ranks : {2, 3}) expect_byte_shares("sorted.jsonl", ranks);
}

TEST_F(MpiBalance, EveryRankItsShareOfBytesOnADatasetOfFiles) {
  for (const int ranks : {2, 3}) expect_byte_shares("sorted_parts", ranks);
}

TEST_F(MpiBalance, EveryRankItsShareOfBytesOnATarArchive) {
  for (const int ranks : {2, 3}) expect_byte_shares("sorted.tar", ranks);
}

// Roots of many chunks shared by their bytes (30000 records of lognormal
// sizes shortest first, 235 chunks; an archive of 6000, 188 chunks: even
// shares of the chunks give one rank of 3 about twice its share of the bytes).
TEST_F(MpiBalance, ChunksSharedByBytesOnHeavyTailedJsonl) {
  for (const int ranks : {2, 3}) expect_chunks_by_bytes("drifted.jsonl", ranks, kManyChunksKnobs);
}

TEST_F(MpiBalance, ChunksSharedByBytesOnADatasetOfFiles) {
  for (const int ranks : {2, 3}) expect_chunks_by_bytes("drifted_parts", ranks, kManyChunksKnobs);
}

TEST_F(MpiBalance, ChunksSharedByBytesOnATarArchive) {
  for (const int ranks : {2, 3}) expect_chunks_by_bytes("drifted.tar", ranks, kManyArchiveChunksKnobs);
}

// One chunk holding over 40% of the bytes (the generator checks it): no
// split of whole chunks shares those reads, so each rank reads its 1/P of
// the bytes and sends the part of a chunk it does not scatter to the rank
// that does (docs/mpi.md, "How the work is shared"); a rank may then
// scatter no chunk (one text file on 3 ranks: none starts in the last
// third). The plain files' bytes are each read once: the ranks' reads sum
// to the data's bytes.
TEST_F(MpiBalance, ChunksReadApartOnOneHeavyChunk) {
  for (const int ranks : {2, 3}) {
    std::uint64_t read = 0;
    for (const RankBytes& r : expect_byte_shares("heavy_chunk.jsonl", ranks, kHeavyChunkKnobs)) read += r.input_read;
    EXPECT_EQ(read, std::filesystem::file_size(input("heavy_chunk.jsonl"))) << ranks << " ranks";
  }
}

TEST_F(MpiBalance, ChunksReadApartOnOneHeavyChunkOfADatasetOfFiles) {
  for (const int ranks : {2, 3}) {
    std::uint64_t read = 0, bytes = 0;
    for (const RankBytes& r : expect_byte_shares("heavy_chunk_parts", ranks, kHeavyChunkKnobs)) read += r.input_read;
    for (const auto& file : std::filesystem::directory_iterator(input("heavy_chunk_parts"))) bytes += file.file_size();
    EXPECT_EQ(read, bytes) << ranks << " ranks";
  }
}

// An archive's frames are read in place by the rank in whose 1/P they lie,
// through windows of its holder's index, not by the holder: the ranks'
// reads sum to the frames' bytes (each read once, the holder's included).
TEST_F(MpiBalance, ChunksReadApartOnOneHeavyChunkOfATarArchive) {
  std::ifstream frames_file(input("heavy_chunk.tar.frames"));
  std::uint64_t frames = 0;
  ASSERT_TRUE(frames_file >> frames);
  for (const int ranks : {2, 3}) {
    std::uint64_t read = 0;
    for (const RankBytes& r : expect_byte_shares("heavy_chunk.tar", ranks, kHeavyArchiveChunkKnobs))
      read += r.input_read;
    EXPECT_EQ(read, frames) << ranks << " ranks";
  }
}

// Three archives of the same samples, the middle one gzipped: a plain
// archive's frames read in place by the ranks in whose 1/P they lie, its
// holder sending them windows of its index (to a rank that holds another
// archive too), and the compressed one's sent by its holder straight to
// the ranks that scatter them. The output is extshuffle's on 2 and 3 ranks.
TEST_F(MpiBalance, ChunksReadApartOnOneHeavyChunkOfArchivesOneOfThemCompressed) {
  expect_same("heavy_chunk_tars", kHeavyArchiveChunkKnobs, {2, 3});
}

// --dry-run's scratch per rank counts what a rank receives from other
// ranks' reads (and an archive's frames it copies) besides its buckets:
// on one heavy chunk, each rank's estimate covers what it then writes to
// scratch (the RANK line's bytes written less its output), and stays
// within twice that and 4 MiB (the regions' slack).
TEST_F(MpiBalance, DryRunScratchCoversWhatEachRankWritesOnOneHeavyChunk) {
  const std::regex estimate(R"(rank (\d+): \d+ records, \d+ bytes, scratch up to (\d+) bytes)");
  const std::regex written(R"(RANK rank=(\d+) .* bytes_written=(\d+) output_bytes=(\d+))");
  for (const auto& [name, knobs] :
       {std::pair{"heavy_chunk.jsonl", kHeavyChunkKnobs}, std::pair{"heavy_chunk.tar", kHeavyArchiveChunkKnobs}}) {
    const std::string out = (dir_ / "dry").string();
    const auto dry = run_mpi(3, input(name) + " " + out + " --seed 11 -j 1 --dry-run" + knobs);
    ASSERT_EQ(dry.exit_code, 0) << dry.err;
    std::map<int, std::uint64_t> estimated;
    for (std::sregex_iterator m(dry.out.begin(), dry.out.end(), estimate), end; m != end; ++m) {
      estimated[std::stoi((*m)[1])] = std::stoull((*m)[2]);
    }
    ASSERT_EQ(estimated.size(), 3u) << dry.out;
    const std::string err = expect_same(name, "--stats" + knobs, {3});
    int ranks = 0;
    for (std::sregex_iterator m(err.begin(), err.end(), written), end; m != end; ++m, ++ranks) {
      const std::uint64_t scratch = std::stoull((*m)[2]) - std::stoull((*m)[3]);
      const int rank = std::stoi((*m)[1]);
      EXPECT_GE(estimated[rank], scratch) << name << " rank " << rank;
      EXPECT_LE(estimated[rank], 2 * scratch + (std::uint64_t{4} << 20)) << name << " rank " << rank;
    }
    EXPECT_EQ(ranks, 3) << err;
  }
}

}  // namespace
}  // namespace extshuffle::testing::mpi_balance_test
