// IO faults injected into the real binary (LD_PRELOAD fault shim): a full
// scratch disk, a full destination disk, unreadable input and scratch
// blocks, a failing fsync. Each run must fail loudly (exit 1, one line naming
// the file and errno's text), leave the destination as it was (absent, or
// the previous file intact), the input unmodified, and no scratch or
// temporary file in --tmpdir or beside the destination. The shim's marker
// file proves that the fault really fired (a test that passed because the
// fault never happened would prove nothing).
#include <gtest/gtest.h>

#include <cctype>

#include "reliability_support.hpp"

namespace extshuffle::testing::fault_injection_test {
namespace {

// 16 MiB of 8-byte records with -S 16M: two passes through scratch space
// (the node does not fit in the budget), so scratch is written and read.
constexpr std::uint64_t kRecords = std::uint64_t{2} << 20;
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

enum class Target { kInput, kScratch, kDestination };
enum class Source { kFile, kStdin };
enum class Sink { kFile, kStdout };

struct FaultCase {
  std::string name;
  std::string fault;  // EXTSHUFFLE_FAULT
  Target target;
  std::uint64_t after_bytes;
  std::string message;  // regular expression for the one-line message
  std::string memory = "16M";
  Source source = Source::kFile;
  Sink sink = Sink::kFile;
};

std::string prefix_of(Target target, const Workspace& w) {
  switch (target) {
    case Target::kInput: return w.input();
    case Target::kScratch: return w.tmp_dir.string() + "/";
    case Target::kDestination: return w.out_dir.string() + "/";
  }
  return "";
}

const std::vector<FaultCase>& fault_cases() {
  static const std::vector<FaultCase> cases = {
      {"ENOSPC on the first scratch write", "enospc", Target::kScratch, 0,
       "cannot write scratch file '.*tmp/extshuffle-[0-9]+-[0-9a-f]+\\.scratch': No space left on device"},
      {"ENOSPC after 5 MiB of scratch writes", "enospc", Target::kScratch, 5 * kMiB,
       "cannot write scratch file '.*': No space left on device"},
      {"ENOSPC while spooling standard input", "enospc", Target::kScratch, 3 * kMiB,
       "cannot write scratch file '.*': No space left on device", "16M", Source::kStdin},
      {"ENOSPC on the first output byte", "enospc", Target::kDestination, 0,
       "cannot write output '.*out\\.bin.*': No space left on device"},
      {"ENOSPC after 5 MiB of output", "enospc", Target::kDestination, 5 * kMiB,
       "cannot write output '.*out\\.bin.*': No space left on device"},
      {"ENOSPC on the output of a run in RAM", "enospc", Target::kDestination, 5 * kMiB,
       "cannot write output '.*out\\.bin.*': No space left on device", "1G"},
      {"ENOSPC on standard output redirected to a full disk", "enospc", Target::kDestination, 5 * kMiB,
       "cannot write output 'standard output': No space left on device", "16M", Source::kFile, Sink::kStdout},
      {"EIO on the first input read", "eio", Target::kInput, 0,
       "cannot read input '.*in\\.bin': Input/output error"},
      {"EIO after 6 MiB of input", "eio", Target::kInput, 6 * kMiB,
       "cannot read input '.*in\\.bin': Input/output error"},
      {"EIO reading standard input", "eio", Target::kInput, 6 * kMiB,
       "cannot read input 'standard input': Input/output error", "16M", Source::kStdin},
      {"EIO on the first scratch read", "eio", Target::kScratch, 0,
       "cannot read scratch file '.*': Input/output error"},
      {"EIO after 5 MiB of scratch reads", "eio", Target::kScratch, 5 * kMiB,
       "cannot read scratch file '.*': Input/output error"},
      {"fsync fails on the destination", "fsync-eio", Target::kDestination, 0,
       "cannot write output '.*out\\.bin': Input/output error"},
  };
  return cases;
}

class FaultTest : public ::testing::TestWithParam<std::tuple<std::size_t, bool>> {};

TEST_P(FaultTest, FailsLoudlyAndLeavesNothing) {
  const auto& [index, old_destination] = GetParam();
  const FaultCase& c = fault_cases()[index];
  Workspace w;
  const std::string input = numbered_u64(kRecords);
  write_file(w.input(), input);
  const std::string old = "the previous output, which must survive\n";
  if (old_destination) write_file(w.output(), old);

  std::vector<std::string> args{"--record-size", "8", "--seed", "42", "-S", c.memory, "-T", w.tmp_dir.string()};
  args.push_back(c.source == Source::kStdin ? "-" : w.input());
  if (c.sink == Sink::kFile) args.push_back(w.output());
  // With Sink::kStdout, standard output is a file in the destination's
  // directory, where the shim fails writes: a full disk behind descriptor 1.
  Child child(args, fault_environment(c.fault, prefix_of(c.target, w), c.after_bytes, w), w.capture_dir,
              c.source == Source::kStdin ? w.input() : "/dev/null", c.sink == Sink::kStdout ? w.output() : "");
  Outcome o;
  o.exit_code = child.wait();
  o.err = child.err();
  SCOPED_TRACE(c.name + (old_destination ? ", previous destination" : ", no destination"));

  ASSERT_TRUE(std::filesystem::exists(w.marker())) << "the fault never fired: " << o.err;
  const std::string marker = read_file(w.marker());
  EXPECT_EQ(marker.rfind(c.fault + " " + prefix_of(c.target, w), 0), 0u) << marker;
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_TRUE(is_one_line_error(o.err, c.message)) << o.err;
  EXPECT_EQ(entries(w.tmp_dir), std::vector<std::string>{}) << "scratch left in --tmpdir";
  if (c.sink == Sink::kStdout) {
    EXPECT_EQ(entries(w.out_dir), std::vector<std::string>{"out.bin"});  // the redirection's file, nothing else
  } else if (old_destination) {
    EXPECT_EQ(entries(w.out_dir), std::vector<std::string>{"out.bin"});
    EXPECT_SAME_BYTES(read_file(w.output()), old) << "the previous destination was changed";
  } else {
    EXPECT_EQ(entries(w.out_dir), std::vector<std::string>{}) << "partial or temporary output left";
  }
  EXPECT_SAME_BYTES(read_file(w.input()), input) << "the input was modified";
}

std::string case_name(const ::testing::TestParamInfo<std::tuple<std::size_t, bool>>& info) {
  std::string name = fault_cases()[std::get<0>(info.param)].name;
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name + (std::get<1>(info.param) ? "_over_a_previous_file" : "");
}

INSTANTIATE_TEST_SUITE_P(Faults, FaultTest,
                         ::testing::Combine(::testing::Range<std::size_t>(0, fault_cases().size()), ::testing::Bool()),
                         case_name);

}  // namespace
}  // namespace extshuffle::testing::fault_injection_test
