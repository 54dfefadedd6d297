// With EXTSHUFFLE_UNBUFFERED_OUTPUT=1 the output of a run in RAM is written
// unbuffered (O_DIRECT: whole pages straight to the disk, the tail through
// the page cache; io/unbuffered_writes.hpp). Run against the real binary
// with the fault shim: the bytes must be the same whether the file system
// takes O_DIRECT, refuses it at the open, or opens with it and refuses the
// first write (both fall back to buffered writes, exit 0); a run without
// the variable, a run through scratch space and standard output stay buffered. Inputs of 8-, 16-, 32- and 13-byte records and of text lines,
// none a whole number of pages. The shim's marker proves each fault fired
// (or, with direct-note, that the run wrote through an O_DIRECT descriptor).
#include <gtest/gtest.h>

#include "reliability_support.hpp"
#include <random>

#include "support/test_values.hpp"

namespace extshuffle::testing::unbuffered_output_test {
namespace {

struct Input {
  std::string name;
  std::size_t record_size;  // 0: text lines
  std::string bytes;
};

// The inputs' names: the test's parameter is an index in this list.
const std::vector<std::string> kInputNames = {"fixed8", "fixed16", "fixed32", "fixed13", "text"};

// The input named kInputNames[k], about 3 MiB: several 1 MiB output buffers
// and a tail that is not a whole page. Made when a test runs, not when the
// tests are registered (every test of the room's executable would pay it).
Input input_at(std::size_t k) {
  if (k < 4) {
    const std::size_t size = std::vector<std::size_t>{8, 16, 32, 13}[k];
    const std::size_t records = (std::size_t{3} << 20) / size + 37;
    return {kInputNames[k], size, random_bytes(records * size, size)};
  }
  std::string text;
  std::mt19937_64 random(7);
  for (int line = 0; text.size() < (std::size_t{3} << 20); ++line) {
    text += "{\"line\": " + std::to_string(line) + ", \"pad\": \"" + std::string(random() % 300, 'x') + "\"}\n";
  }
  return {kInputNames[k], 0, text};
}

struct RunOutcome {
  int exit_code = -1;
  std::string err, output;
  bool fired = false;  // the marker: the fault fired, or (direct-note) an O_DIRECT write happened
};

const Environment kAsked = {{"EXTSHUFFLE_UNBUFFERED_OUTPUT", "1"}};

RunOutcome run_tool(const Input& input, const std::string& fault, const std::string& memory, bool to_stdout = false,
                    const Environment& extra = kAsked) {
  Workspace w;
  write_file(w.input(), input.bytes);
  std::vector<std::string> args{"--seed", "5", "-T", w.tmp_dir.string()};
  if (input.record_size > 0) {
    args.insert(args.end(), {"--record-size", std::to_string(input.record_size)});
  } else {
    args.insert(args.end(), {"--format", "jsonl"});
  }
  if (!memory.empty()) args.insert(args.end(), {"-S", memory});
  args.push_back(w.input());
  if (!to_stdout) args.push_back(w.output());
  Environment environment = fault_environment(fault, w.out_dir.string() + "/", 0, w);
  environment.insert(extra.begin(), extra.end());
  Child child(args, environment, w.capture_dir, "/dev/null", to_stdout ? w.output() : "");
  RunOutcome r;
  r.exit_code = child.wait();
  r.err = child.err();
  r.output = read_file(w.output());
  r.fired = std::filesystem::exists(w.marker());
  if (!to_stdout) {
    EXPECT_EQ(entries(w.out_dir), std::vector<std::string>{"out.bin"}) << "a temporary left";
  }
  return r;
}

class UnbufferedOutput : public ::testing::TestWithParam<std::size_t> {};

TEST_P(UnbufferedOutput, SameBytesWithAndWithoutODirect) {
  const Input input = input_at(GetParam());
  ASSERT_NE(input.bytes.size() % 4096, 0u);
  const RunOutcome unbuffered = run_tool(input, "direct-note", "");
  ASSERT_EQ(unbuffered.exit_code, 0) << unbuffered.err;
  EXPECT_TRUE(unbuffered.fired) << "the run in RAM did not write through O_DIRECT";
  ASSERT_EQ(unbuffered.output.size(), input.bytes.size());
  EXPECT_DIFFERENT_BYTES(unbuffered.output, input.bytes);  // shuffled

  // A file system that refuses O_DIRECT at the open, or at the first write.
  for (const std::string fault : {"direct-open", "direct-write"}) {
    const RunOutcome refused = run_tool(input, fault, "");
    SCOPED_TRACE(fault);
    EXPECT_EQ(refused.exit_code, 0) << refused.err;
    EXPECT_EQ(refused.err, "");
    EXPECT_TRUE(refused.fired) << "the fault never fired";
    EXPECT_TRUE(refused.output == unbuffered.output) << "bytes differ from the unbuffered run's";
  }
  // Through scratch space (-S 2M, below the input): buffered, same bytes.
  const RunOutcome two_pass = run_tool(input, "direct-note", "2M");
  EXPECT_EQ(two_pass.exit_code, 0) << two_pass.err;
  EXPECT_FALSE(two_pass.fired) << "a run through scratch space wrote through O_DIRECT";
  EXPECT_TRUE(two_pass.output == unbuffered.output);
  // Buffered by default.
  const RunOutcome by_default = run_tool(input, "direct-note", "", false, {});
  EXPECT_EQ(by_default.exit_code, 0) << by_default.err;
  EXPECT_FALSE(by_default.fired) << "a run not asked to wrote through O_DIRECT";
  EXPECT_TRUE(by_default.output == unbuffered.output);
  // Standard output (a file behind descriptor 1): written in place, buffered.
  const RunOutcome out = run_tool(input, "direct-note", "", true);
  EXPECT_EQ(out.exit_code, 0) << out.err;
  EXPECT_FALSE(out.fired) << "standard output was written through O_DIRECT";
  EXPECT_TRUE(out.output == unbuffered.output);
}

INSTANTIATE_TEST_SUITE_P(Inputs, UnbufferedOutput, ::testing::Range<std::size_t>(0, 5),
                         [](const ::testing::TestParamInfo<std::size_t>& info) { return kInputNames[info.param]; });

}  // namespace
}  // namespace extshuffle::testing::unbuffered_output_test
