// Ranks that see other bytes under the same names, of the same sizes
// (docs/mpi.md, "Failures"): another mount, a stale cache, a file rewritten
// in place. Each rank runs in a directory of its own (its "view"), where the
// relative input names lead to its own files; the output is on a path every
// rank shares. Before any work the ranks compare each input's fingerprint
// (its size and a digest of sampled blocks: io/file_fingerprint.hpp); with
// --verify, every block a rank read in place is checked against the file's
// holder. Either way: one line naming the rank and the file, exit 1, no
// output. Real mpirun over TCP only, oversubscribed (mpi_support.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "extshuffle/io/file_fingerprint.hpp"
#include "mpi_support.hpp"

namespace extshuffle::testing::mpi_input_bytes_test {
namespace {

namespace fs = std::filesystem;

class MpiInputBytes : public ::testing::Test {
 protected:
  // The view of rank `rank`: a directory of its own.
  fs::path view(int rank) const { return dir_.path() / "views" / ("rank-" + std::to_string(rank)); }
  fs::path output() const { return dir_.path() / "out" / "out.txt"; }

  // `command` run by the shell in every view (for the files of each).
  void in_every_view(int ranks, const std::string& command) const {
    for (int rank = 0; rank < ranks; ++rank) {
      fs::create_directories(view(rank));
      const CommandResult made = run_command("cd " + view(rank).string() + " && " + command);
      ASSERT_EQ(made.exit_code, 0) << command << ": " << made.err;
    }
  }

  // extshuffle-mpi on `ranks` ranks, each in its view (and its own scratch
  // there), with `operands` and `options`, writing output().
  CommandResult run_on_views(int ranks, const std::string& operands, const std::string& options) const {
    fs::create_directories(output().parent_path());
    return run_command(on_ranks(ranks, "sh -c \"cd " + (dir_.path() / "views").string() +
                                           "/rank-\\$OMPI_COMM_WORLD_RANK && exec " + extshuffle_mpi_binary() + " " +
                                           operands + " -o " + output().string() + " --seed 7 -T . " + options + "\""));
  }

  // One line "extshuffle-mpi: rank R: input 'NAME': ... (the ranks see
  // different files)", exit 1, and nothing in the output's directory.
  void expect_refused(const CommandResult& r, int rank, const std::string& name, const std::string& words) const {
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    const std::string start = "extshuffle-mpi: rank " + std::to_string(rank) + ": input '" + name + "': ";
    EXPECT_EQ(r.err.rfind(start, 0), 0u) << r.err;
    EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("(the ranks see different files)\n"), std::string::npos) << r.err;
    EXPECT_TRUE(fs::is_empty(output().parent_path())) << "something was written beside " << output();
  }

  TempDir dir_;
};

// The attacker's case: d2/a.txt on rank 1 is `seq 1 100000 | sed 's/5/6/'`,
// the others plain `seq 1 100000`: the same size, other bytes. It gave one
// output of both, exit 0, and --verify passed.
TEST_F(MpiInputBytes, SameSizesOtherBytesAreFoundBeforeAnyWork) {
  const int ranks = 3;
  in_every_view(ranks, "mkdir -p d1 d2 && seq 1 100000 > d1/a.txt && seq 1 100000 > d2/a.txt");
  ASSERT_EQ(run_command("cd " + view(1).string() + " && seq 1 100000 | sed 's/5/6/' > d2/a.txt").exit_code, 0);
  ASSERT_EQ(fs::file_size(view(0) / "d2" / "a.txt"), fs::file_size(view(1) / "d2" / "a.txt"));
  for (const std::string operands : {"d2/a.txt", "d1/a.txt d2/a.txt"}) {
    for (const std::string options : {"", "--verify"}) {
      SCOPED_TRACE(operands + " " + options);
      expect_refused(run_on_views(ranks, operands, options), 1, "d2/a.txt",
                     "588895 bytes here and on rank 0, but other bytes in the blocks sampled");
    }
  }
  // The same views, each rank's files its own again: the job runs.
  ASSERT_EQ(run_command("cd " + view(1).string() + " && seq 1 100000 > d2/a.txt").exit_code, 0);
  const CommandResult r = run_on_views(ranks, "d1/a.txt d2/a.txt", "--verify");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(fs::file_size(output()), 2 * fs::file_size(view(0) / "d2" / "a.txt"));
}

// A byte of `file` changed (a digit for another: the records keep their
// count) in a block that the fingerprint with `seed` does not sample, past
// three quarters of the file; returns the byte's offset.
std::uint64_t change_an_unsampled_byte(const fs::path& file, std::uint64_t seed) {
  std::string bytes = read_file(file);
  const std::vector<std::uint64_t> sampled = io::fingerprint_block_offsets(bytes.size(), seed);
  // From three quarters of the file on: read in place by the last rank of
  // the one plain file, and by a rank that does not hold the second file.
  std::uint64_t block = bytes.size() * 3 / 4 / io::kFingerprintBlockBytes * io::kFingerprintBlockBytes;
  while (std::find(sampled.begin(), sampled.end(), block) != sampled.end()) block += io::kFingerprintBlockBytes;
  std::uint64_t at = block + 100;
  while (bytes.at(at) == '\n') ++at;
  bytes[at] = bytes[at] == '9' ? '0' : static_cast<char>(bytes[at] + 1);
  EXPECT_LT(at + 1, bytes.size());
  write_file(file, bytes);
  return at;
}

// The bytes X-Y that the message names hold `changed`.
void expect_block_named(const std::string& err, std::uint64_t changed) {
  const std::size_t at = err.find(": bytes ");
  ASSERT_NE(at, std::string::npos) << err;
  std::uint64_t first = 0, last = 0;
  ASSERT_EQ(std::sscanf(err.c_str() + at, ": bytes %" SCNu64 "-%" SCNu64, &first, &last), 2) << err;
  EXPECT_LE(first, changed) << err;
  EXPECT_LE(changed, last) << err;
}

// A change the sampled fingerprint cannot see (outside every sampled
// block): the job runs without --verify (the output mixes the ranks'
// views), and --verify finds it, naming the rank, the file, the bytes and
// the holder whose bytes differ.
TEST_F(MpiInputBytes, VerifyFindsWhatTheSampledFingerprintMisses) {
  const int ranks = 3;
  in_every_view(ranks, "mkdir -p d1 d2 && seq 1 300000 > d1/a.txt && seq 1 300000 > d2/a.txt");
  // One plain file, which rank 0 holds: rank 2 reads its last third in place.
  const std::uint64_t changed = change_an_unsampled_byte(view(2) / "d2" / "a.txt", 7);
  const CommandResult unseen = run_on_views(ranks, "d2/a.txt", "");
  EXPECT_EQ(unseen.exit_code, 0) << "the change was in a sampled block: " << unseen.err;
  fs::remove(output());
  const CommandResult r = run_on_views(ranks, "d2/a.txt", "--verify");
  expect_refused(r, 2, "d2/a.txt", " here differ from rank 0's, its holder");
  expect_block_named(r.err, changed);
  // A dataset of two files of one size: rank 0 holds d1, rank 1 holds d2,
  // and rank 2 reads the last two thirds of d2 in place.
  const CommandResult dataset = run_on_views(ranks, "d1/a.txt d2/a.txt", "--verify");
  expect_refused(dataset, 2, "d2/a.txt", " here differ from rank 1's, its holder");
  expect_block_named(dataset.err, changed);
}

}  // namespace
}  // namespace extshuffle::testing::mpi_input_bytes_test
