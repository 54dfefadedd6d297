// --verify: the run digests the records it reads from the input and the
// records it writes to the output (RecordDigest, an order-independent
// multiset digest) and fails if they differ. On a good run it changes
// nothing: same bytes, nothing extra on stdout or stderr. A byte flipped in
// scratch space (fault shim, EXTSHUFFLE_FAULT=corrupt) goes unnoticed
// without it (the output is silently not a permutation) and is caught with
// it: exit 1, a message naming the verification, no output left.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace extshuffle::testing::verify_cli_test
