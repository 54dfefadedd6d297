// extshuffle-mpi publishes through extshuffle's one commit (docs/cli.md
// "The commit", docs/reliability.md): its inputs are checked against every
// name the run writes or removes (case 1: --clean; case 8: a name like the
// partial output's), its partial outputs are created 0600 and get their
// final mode at the commit (case 7), an unlocked partial an earlier job
// left under the pattern is removed (case 4), a signal on rank 0 inside
// the publish lets it complete (case 3), and --stats prints extshuffle's
// RESULT fields before its own.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "mpi_support.hpp"

namespace extshuffle::testing {
namespace {

namespace fs = std::filesystem;

std::string lines(int first, int count) {
  std::string text;
  for (int i = first; i < first + count; ++i) text += std::to_string(i) + "\n";
  return text;
}

class MpiCommit : public ::testing::Test {
 protected:
  void SetUp() override { write_file(dir_ / "in.txt", lines(1, 1000)); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // extshuffle-mpi on `ranks` ranks, rank 0's command prefixed by `rank0`
  // (strace), each rank in the test's directory.
  CommandResult mpi(int ranks, const std::string& arguments, const std::string& rank0 = "") {
    const std::string bin = extshuffle_mpi_binary() + " " + arguments;
    const std::string each = rank0.empty() ? "exec " + bin
                                           : "if [ \\$OMPI_COMM_WORLD_RANK = 0 ]; then exec " + rank0 + " " + bin +
                                                 "; else exec " + bin + "; fi";
    return run_command("cd " + dir_.path().string() + " && " + on_ranks(ranks, "sh -c \"" + each + "\""));
  }
  std::string listing() { return run_command("ls -A " + dir_.path().string()).out; }
  TempDir dir_;
};

// The keys of a RESULT line, in order.
std::vector<std::string> result_keys(const std::string& err) {
  std::vector<std::string> keys;
  const std::size_t at = err.find("RESULT ");
  if (at == std::string::npos) return keys;
  std::istringstream line(err.substr(at + 7, err.find('\n', at) - at - 7));
  for (std::string field; line >> field;) keys.push_back(field.substr(0, field.find('=')));
  return keys;
}

TEST_F(MpiCommit, CleanNeverRemovesAnInput) {
  fs::create_directories(dir_ / "out");
  write_file(dir_ / "out" / "p-00009.txt", lines(1, 1000));
  const auto r = mpi(2, "-n 10 out/p-00009.txt -o out/p-{shard}.txt --shards 2 --clean");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(read_file(dir_ / "out" / "p-00009.txt"), lines(1, 1000));
  EXPECT_FALSE(fs::exists(dir_ / "out" / "p-00000.txt"));
  // Variant: without --clean too (the name is the pattern's).
  const auto kept = mpi(2, "out/p-00009.txt -o out/p-{shard}.txt --shard-size 1K");
  EXPECT_EQ(kept.exit_code, 2) << kept.err;
  EXPECT_EQ(read_file(dir_ / "out" / "p-00009.txt"), lines(1, 1000));
}

TEST_F(MpiCommit, AnInputNamedLikeAPartialOutputIsRefused) {
  write_file(dir_ / ".o.txt.extshuffle-mpi-partial", lines(1, 100));
  const auto r = mpi(2, ".o.txt.extshuffle-mpi-partial -o o.txt");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(read_file(dir_ / ".o.txt.extshuffle-mpi-partial"), lines(1, 100));
  EXPECT_FALSE(fs::exists(dir_ / "o.txt"));
  // Variant: a piece's partial name under a pattern.
  write_file(dir_ / ".p-00005.txt.extshuffle-mpi-partial", lines(1, 100));
  const auto piece = mpi(2, ".p-00005.txt.extshuffle-mpi-partial -o p-{shard}.txt --shards 2");
  EXPECT_EQ(piece.exit_code, 2) << piece.err;
  EXPECT_EQ(read_file(dir_ / ".p-00005.txt.extshuffle-mpi-partial"), lines(1, 100));
}

TEST_F(MpiCommit, PartialOutputsAreCreatedOwnerOnly) {
  const auto r = run_command("cd " + dir_.path().string() + " && umask 022 && " +
                             on_ranks(1, "strace -f -qq -o trace -e trace=openat " + extshuffle_mpi_binary() +
                                             " in.txt -o o.txt --seed 3") +
                             " && grep -c \"extshuffle-mpi-partial.*O_CREAT.*0600\" trace");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "1\n");
  struct stat st {};
  ASSERT_EQ(::stat(path("o.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);  // the final mode, at the commit
  // Variant: a replaced file's mode carries over.
  ASSERT_EQ(::chmod(path("o.txt").c_str(), 0640), 0);
  ASSERT_EQ(mpi(2, "in.txt -o o.txt --seed 4").exit_code, 0);
  ASSERT_EQ(::stat(path("o.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}

TEST_F(MpiCommit, LeftPartialsUnderThePatternAreRemoved) {
  write_file(dir_ / ".p-00007.txt.extshuffle-mpi-partial", "a killed job's\n");
  write_file(dir_ / ".q.txt.extshuffle-mpi-partial", "another destination's\n");
  const auto dry = mpi(2, "in.txt -o p-{shard}.txt --shards 2 --dry-run");
  EXPECT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_NE(dry.out.find("leftovers: 1 file(s)"), std::string::npos) << dry.out;
  const auto r = mpi(2, "in.txt -o p-{shard}.txt --shards 2 --seed 1");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(listing(), ".q.txt.extshuffle-mpi-partial\nin.txt\np-00000.txt\np-00001.txt\n");
}

TEST_F(MpiCommit, ASignalOnRankZeroInsideThePublishLetsItComplete) {
  if (run_command("command -v strace").exit_code != 0) GTEST_SKIP() << "strace is not installed";
  ASSERT_EQ(mpi(2, "in.txt -o p-{shard}.txt --shards 3 --manifest m.json --seed 1").exit_code, 0);
  fs::create_directories(dir_ / "new");
  ASSERT_EQ(mpi(2, "in.txt -o new/p-{shard}.txt --shards 3 --seed 2").exit_code, 0);
  for (const std::string signal : {"TERM", "INT"}) {
    const auto r = mpi(2, "in.txt -o p-{shard}.txt --shards 3 --manifest m.json --seed 2",
                       "strace -f -qq -o /dev/null -e trace=renameat -e inject=renameat:signal=" + signal + ":when=2");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("signal SIG" + signal + " came while the output was being published"), std::string::npos)
        << r.err;
    for (const std::string piece : {"p-00000.txt", "p-00001.txt", "p-00002.txt"}) {
      EXPECT_EQ(read_file(dir_ / piece), read_file(dir_ / "new" / piece)) << signal << " " << piece;
    }
    EXPECT_NE(read_file(dir_ / "m.json").find("\"seed\": 2"), std::string::npos);
    ASSERT_EQ(mpi(2, "in.txt -o p-{shard}.txt --shards 3 --manifest m.json --seed 1").exit_code, 0);
  }
}

TEST_F(MpiCommit, BothToolsPrintTheSameResultFields) {
  const auto single = run_command("cd " + dir_.path().string() + " && " + extshuffle_binary() +
                                  " in.txt -o one.txt --stats");
  ASSERT_EQ(single.exit_code, 0) << single.err;
  const auto ranks = mpi(2, "in.txt -o two.txt --stats");
  ASSERT_EQ(ranks.exit_code, 0) << ranks.err;
  const std::vector<std::string> one = result_keys(single.err), two = result_keys(ranks.err);
  ASSERT_GE(one.size(), 12u) << single.err;
  ASSERT_GT(two.size(), one.size()) << ranks.err;
  EXPECT_EQ(std::vector<std::string>(two.begin(), two.begin() + static_cast<long>(one.size())), one);
  EXPECT_EQ(two[one.size()], "routed");
}

}  // namespace
}  // namespace extshuffle::testing
