// An input that another process changes while extshuffle reads it (a log
// still being appended to, a file being rewritten): the output would hold
// records that never formed one consistent input, so the run must fail with
// exit 1 and "changed size during the run", and leave no output. The fault
// shim pauses the run in the middle of reading the input (through disk) or
// of writing its output (in RAM, the input mapped); the test grows or
// truncates the file, then lets the run go on.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <functional>

#include "reliability_support.hpp"

namespace extshuffle::testing::input_change_test {
namespace {

constexpr std::uint64_t kRecords = std::uint64_t{2} << 20;  // 16 MiB, two passes at -S 16M
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

// Through disk the run pauses after reading 6 MiB of its input. In RAM the
// input is mapped (io/mapped_bytes.hpp) and read without read(): the run
// pauses after writing 2 MiB of its output instead, its records all read.
Outcome run_while_changing(Workspace& w, const std::string& memory, const std::function<void()>& change) {
  const bool in_ram = memory == "1G";
  Child child({"--record-size", "8", "--seed", "9", "-S", memory, "-T", w.tmp_dir.string(), w.input(), w.output()},
              in_ram ? fault_environment("pause-write", w.out_dir.string() + "/", 2 * kMiB, w)
                     : fault_environment("pause-read", w.input(), 6 * kMiB, w),
              w.capture_dir);
  Outcome o;
  if (!wait_for_file(w.marker())) {
    ADD_FAILURE() << "the run never paused while " << (in_ram ? "writing its output" : "reading its input");
    return o;
  }
  change();
  write_file(w.release(), "");
  o.exit_code = child.wait();
  o.err = child.err();
  return o;
}

class InputChange : public ::testing::TestWithParam<std::string> {};  // the --memory: in RAM or through disk

TEST_P(InputChange, GrowingInputFailsTheRun) {
  Workspace w;
  write_file(w.input(), numbered_u64(kRecords));
  const auto o = run_while_changing(w, GetParam(), [&] {
    std::ofstream(w.input(), std::ios::binary | std::ios::app) << numbered_u64(1000);
  });
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_TRUE(is_one_line_error(o.err, "changed size during the run")) << o.err;
  EXPECT_EQ(o.err.find("input: input"), std::string::npos) << o.err;
  EXPECT_EQ(entries(w.out_dir), std::vector<std::string>{}) << "output written from an inconsistent input";
  EXPECT_EQ(entries(w.tmp_dir), std::vector<std::string>{});
}

TEST_P(InputChange, TruncatedInputFailsTheRun) {
  Workspace w;
  write_file(w.input(), numbered_u64(kRecords));
  const auto o = run_while_changing(w, GetParam(), [&] { ASSERT_EQ(::truncate(w.input().c_str(), 4 * kMiB), 0); });
  EXPECT_EQ(o.exit_code, 1) << o.err;
  // Not a stale errno ("No such file or directory" was seen before the
  // detection existed: a read at end of file sets no errno).
  EXPECT_TRUE(is_one_line_error(o.err, "changed size during the run")) << o.err;
  EXPECT_EQ(o.err.find("input: input"), std::string::npos) << o.err;
  EXPECT_EQ(entries(w.out_dir), std::vector<std::string>{});
  EXPECT_EQ(entries(w.tmp_dir), std::vector<std::string>{});
}

// A mapped input truncated to 1 MiB while the run (`options`) writes its
// output: the run fails as its own check would, naming both sizes, and
// leaves nothing behind.
void truncate_while_writing(Workspace& w, std::vector<std::string> options, std::uint64_t bytes) {
  for (const std::string& a : {std::string("--seed"), std::string("9"), std::string("-T"), w.tmp_dir.string(),
                               w.input(), w.output()}) {
    options.push_back(a);
  }
  Child child(options, fault_environment("pause-write", w.out_dir.string() + "/", 2 * kMiB, w), w.capture_dir);
  ASSERT_TRUE(wait_for_file(w.marker())) << "the run never paused while writing its output";
  ASSERT_EQ(::truncate(w.input().c_str(), 1 * kMiB), 0);
  write_file(w.release(), "");
  const int exit_code = child.wait();
  EXPECT_EQ(exit_code, 1) << child.err();
  EXPECT_TRUE(is_one_line_error(child.err(), "changed size during the run")) << child.err();
  EXPECT_NE(child.err().find("(" + std::to_string(bytes) + " bytes at the start, 1048576 now)"), std::string::npos)
      << child.err();
  EXPECT_EQ(entries(w.out_dir), std::vector<std::string>{}) << "output written from an inconsistent input";
  EXPECT_EQ(entries(w.tmp_dir), std::vector<std::string>{});
}

// A text input that fits in RAM is mapped, not read (io/mapped_bytes.hpp):
// truncated under the run, the pages past its new end raise SIGBUS where a
// read would return short. The run pauses while writing its output, after
// the count; the truncation then cuts off most of the records it has still
// to gather, and the handler must end it as the run's own check would.
TEST(InputChangeMapped, TruncatedTextInRamFailsTheRun) {
  Workspace w;
  std::string lines;
  for (int k = 0; lines.size() < 16 * kMiB; ++k) lines += "record " + std::to_string(k) + " of a text input\n";
  write_file(w.input(), lines);
  truncate_while_writing(w, {"--format", "lines", "-S", "1G"}, lines.size());
}

// A fixed-size input in RAM is mapped too. A leaf of 512-byte records at a
// budget that moves them by index is gathered from the mapping while its
// output is written: truncated under the run, the gather meets pages past
// the new end, and the SIGBUS handler ends the run with the run's own words.
TEST(InputChangeMapped, TruncatedFixedInRamFailsTheRun) {
  Workspace w;
  std::string records;
  for (std::uint64_t k = 0; records.size() < 16 * kMiB; ++k) {
    std::string record(512, static_cast<char>('a' + k % 26));
    std::memcpy(record.data(), &k, sizeof k);
    records += record;
  }
  write_file(w.input(), records);
  truncate_while_writing(w, {"--record-size", "512", "-S", "20M"}, records.size());
}

INSTANTIATE_TEST_SUITE_P(Memory, InputChange, ::testing::Values("16M", "1G"),
                         [](const auto& info) { return info.param == "1G" ? "InRam" : "ThroughDisk"; });

}  // namespace
}  // namespace extshuffle::testing::input_change_test
