// --verify: the run digests the records it reads from the input and the
// records it writes to the output (RecordDigest, an order-independent
// multiset digest) and fails if they differ. On a good run it changes
// nothing: same bytes, nothing extra on stdout or stderr. A byte flipped in
// scratch space (fault shim, EXTSHUFFLE_FAULT=corrupt) goes unnoticed
// without it (the output is silently not a permutation) and is caught with
// it: exit 1, a message naming the verification, no output left. Each
// output file is read back once, through its temporary's descriptor, before
// the commit renames anything (io/file_digest.hpp): a byte flipped in that
// read fails the run with every old file in place; --manifest alone reads
// nothing back (its digests are taken as the bytes stream to the files).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "reliability_support.hpp"

namespace extshuffle::testing::verify_cli_test {
namespace {

constexpr std::uint64_t kRecords = std::uint64_t{2} << 20;  // 16 MiB
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

TEST(VerifyCli, GoodRunsGiveTheSameBytesAndSayNothing) {
  Workspace w;
  write_file(w.input(), numbered_u64(kRecords));
  struct Setting {
    std::string name;
    std::vector<std::string> args;
    std::string stdin_path = "/dev/null";
  };
  const std::vector<Setting> settings = {
      {"in RAM", {"-S", "1G", w.input()}},
      {"through disk", {"-S", "16M", w.input()}},
      {"three levels", {"-S", "1M", "--leaf-records", "4096", "--fanout", "8", w.input()}},
      {"standard input", {"-S", "16M", "-"}, w.input()},
  };
  for (const Setting& s : settings) {
    SCOPED_TRACE(s.name);
    std::vector<std::string> base{"--record-size", "8", "--seed", "5", "-T", w.tmp_dir.string()};
    base.insert(base.end(), s.args.begin(), s.args.end());
    const auto plain = run_binary(base, {}, s.stdin_path);
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    base.push_back("--verify");
    const auto verified = run_binary(base, {}, s.stdin_path);
    ASSERT_EQ(verified.exit_code, 0) << verified.err;
    EXPECT_EQ(verified.err, plain.err) << "--verify printed something on a good run";
    EXPECT_EQ(verified.out.size(), kRecords * 8);
    EXPECT_TRUE(verified.out == plain.out) << "--verify changed the output";
    EXPECT_EQ(entries(w.tmp_dir), std::vector<std::string>{});
  }
  // To a file as well: the output is renamed into place only after the check.
  const auto r = run_binary({"--record-size", "8", "--seed", "5", "-S", "16M", "-T", w.tmp_dir.string(), "--verify",
                             w.input(), w.output()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(is_permutation_of_iota(u64_indices(read_file(w.output()))));
  EXPECT_EQ(entries(w.out_dir), std::vector<std::string>{"out.bin"});
}

TEST(VerifyCli, CatchesAByteFlippedInScratchSpace) {
  Workspace w;
  write_file(w.input(), numbered_u64(kRecords));
  const std::vector<std::string> base{"--record-size", "8", "--seed", "5", "-S", "16M", "-T", w.tmp_dir.string(),
                                      w.input(), w.output()};
  const auto corrupt = fault_environment("corrupt", w.tmp_dir.string() + "/", 5 * kMiB, w);

  // Without --verify the corruption passes unnoticed: this proves the fault
  // is real and that only the verification can catch it.
  auto r = run_binary(base, corrupt);
  ASSERT_TRUE(std::filesystem::exists(w.marker())) << "the corruption never happened";
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(is_permutation_of_iota(u64_indices(read_file(w.output()))));

  const std::string old = "the previous output, which must survive\n";
  write_file(w.output(), old);
  std::filesystem::remove(w.marker());
  std::vector<std::string> verified = base;
  verified.insert(verified.begin(), "--verify");
  r = run_binary(verified, corrupt);
  ASSERT_TRUE(std::filesystem::exists(w.marker())) << "the corruption never happened";
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(is_one_line_error(r.err, "verif")) << r.err;
  EXPECT_SAME_BYTES(read_file(w.output()), old) << "a run that failed verification replaced the destination";
  EXPECT_EQ(entries(w.out_dir), std::vector<std::string>{"out.bin"});
  EXPECT_EQ(entries(w.tmp_dir), std::vector<std::string>{});
}

// The outputs of a sharded run with a manifest, over old files of the same
// names: the byte flipped in a read of the output directory.
TEST(VerifyCli, EachOutputIsReadBackThroughItsTemporaryAndAFlippedByteLeavesEveryOldFile) {
  Workspace w;
  write_file(w.input(), numbered_u64(kRecords));
  const std::string pattern = (w.out_dir / "part-{shard}.bin").string();
  const std::string manifest = (w.out_dir / "m.json").string();
  const std::vector<std::string> base{"--record-size", "8",      "--seed",           "5",        "-S",
                                      "16M",           "-T",     w.tmp_dir.string(), "--shards", "2",
                                      "--manifest",    manifest, w.input(),          "-o",       pattern};
  const auto corrupt = fault_environment("corrupt", w.out_dir.string() + "/", 5 * kMiB, w);
  const std::vector<std::string> names = {"m.json", "part-00000.bin", "part-00001.bin"};
  for (const std::string& name : names) write_file((w.out_dir / name).string(), "old " + name + "\n");

  // --manifest alone reads no output back: the fault never fires.
  auto r = run_binary(base, corrupt);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(std::filesystem::exists(w.marker())) << "an output was read back without --verify";
  EXPECT_EQ(entries(w.out_dir), names);

  for (const std::string& name : names) write_file((w.out_dir / name).string(), "old " + name + "\n");
  std::vector<std::string> verified = base;
  verified.insert(verified.begin(), "--verify");
  r = run_binary(verified, corrupt);
  ASSERT_TRUE(std::filesystem::exists(w.marker())) << "the read back never happened";
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(is_one_line_error(r.err, "verify failed: output '" + w.out_dir.string() + "/part-0000")) << r.err;
  for (const std::string& name : names) {
    EXPECT_SAME_BYTES(read_file((w.out_dir / name).string()), "old " + name + "\n") << name;
  }
  EXPECT_EQ(entries(w.out_dir), names);
  EXPECT_EQ(entries(w.tmp_dir), std::vector<std::string>{});
}

// --verify --manifest, traced: every read of the output directory is a
// pread of a temporary, all of them before the first rename, and together
// they read each output's bytes once.
TEST(VerifyCli, VerifyAndManifestReadEachOutputOnceBeforeTheFirstRename) {
  if (run_command("command -v strace").exit_code != 0) GTEST_SKIP() << "strace is not installed (the test needs it)";
  Workspace w;
  write_file(w.input(), numbered_u64(kRecords));
  const std::string pattern = (w.out_dir / "part-{shard}.bin").string();
  const std::string log = (w.capture_dir / "strace.log").string();
  const std::string command = strace_command() + " -f -qq -s 0 -y -e trace=read,pread64,openat,rename,renameat," +
                              "renameat2 -o " + log + " " + kBinary + " --verify --record-size 8 --seed 5 -S 16M -T " +
                              w.tmp_dir.string() + " --shards 3 --manifest " + (w.out_dir / "m.json").string() +
                              " -o " + pattern + " " + w.input();
  const CommandResult r = run_command(command);
  if (r.exit_code != 0 && r.err.find("ptrace") != std::string::npos)
    GTEST_SKIP() << "strace cannot trace here: " << r.err;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // A call another thread's interrupts is logged in two lines, by thread.
  const std::regex read_call(R"(^(\d+) +p?read(64)?\(\d+<([^>]*)>.*= (\d+)$)");
  const std::regex read_begun(R"(^(\d+) +p?read(64)?\(\d+<([^>]*)>.*<unfinished \.\.\.>$)");
  const std::regex read_ended(R"(^(\d+) +<\.\.\. p?read(64)? resumed>.*= (\d+)$)");
  const std::regex rename_call(R"(^\d+ +rename(at2?)?\()");
  const std::string out_prefix = w.out_dir.string() + "/";
  std::map<std::string, std::string> unfinished;  // thread: the file its read began on
  std::uint64_t bytes_read_back = 0;
  bool renamed = false;
  const auto count = [&](const std::string& file, const std::string& bytes, const std::string& line) {
    if (file.rfind(out_prefix, 0) != 0) return;
    EXPECT_FALSE(renamed) << "an output read after the first rename: " << line;
    bytes_read_back += std::stoull(bytes);
  };
  std::istringstream lines(read_file(log));
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, rename_call)) renamed = true;
    if (std::regex_search(line, m, read_call)) count(m[3].str(), m[4].str(), line);
    if (std::regex_search(line, m, read_begun)) unfinished[m[1].str()] = m[3].str();
    if (std::regex_search(line, m, read_ended)) count(unfinished[m[1].str()], m[3].str(), line);
  }
  EXPECT_TRUE(renamed) << "no rename traced: the log is not what the test reads";
  EXPECT_EQ(bytes_read_back, kRecords * 8) << "the outputs were not read back exactly once";
  EXPECT_EQ(entries(w.out_dir),
            (std::vector<std::string>{"m.json", "part-00000.bin", "part-00001.bin", "part-00002.bin"}));
}

}  // namespace
}  // namespace extshuffle::testing::verify_cli_test
