// Scratch space is checked, not trusted (docs/reliability.md, "Damaged
// scratch space"): one byte flipped in what the run reads back from scratch
// (the fault shim's `corrupt`, swept over many offsets) either was not used,
// and the output is the undamaged run's byte for byte, or ends the run with
// exit 1 and one line: the scratch check's when a position tag, a length or
// a record count is damaged, --verify's when only a record's bytes are.
// Never a signal (the tags were used unchecked as indices: SIGSEGV), never a
// sanitizer report (scripts/sanitize.sh runs this test against the
// instrumented binary), never an output file or a scratch file left.
//
// The knobs force every path that reads tags back: routed splits (chunks
// larger than memory), leaves placed window by window, buckets routed into
// their leaves' windows, tagged buckets placed in RAM; text and fixed-size
// records; and standard input, spooled to scratch and read from there. Offsets are spread over the bytes each setting reads back, with a
// deterministic jitter so that they fall on tags as well as on records.
#include <gtest/gtest.h>

#include <optional>
#include <random>

#include "reliability_support.hpp"

namespace extshuffle::testing::scratch_damage_test {
namespace {

const std::string kScratchLine = "scratch space holds records that are not what was written";
const std::string kVerifyLine = "verify failed: the output is not a permutation of the input";

struct Setting {
  std::string name;
  std::vector<std::string> args;     // before the input
  std::uint64_t scratch_read_bytes;  // about what the run reads back from scratch
  bool standard_input = false;       // the input spooled to scratch, then counted and read from there
};

struct Tally {
  int unused = 0, scratch = 0, verify = 0;
};

// Lines of 2 to 70 bytes, numbered so that every one differs.
std::string text_lines(std::uint64_t n) {
  std::mt19937_64 random(7);
  std::string text;
  for (std::uint64_t i = 0; i < n; ++i) {
    text += "r" + std::to_string(i) + " " + std::string(random() % 60, 'x') + "\n";
  }
  return text;
}

enum class Outcome { kUnused, kScratchLine, kVerifyLine };

// One damaged run: its outcome checked and returned.
Outcome damaged_run(const Workspace& w, const std::vector<std::string>& args, const std::string& stdin_path,
                    const std::string& reference, std::uint64_t offset) {
  SCOPED_TRACE("byte " + std::to_string(offset) + " of what is read back from scratch flipped");
  std::filesystem::remove(w.marker());
  const auto r = run_binary(args, fault_environment("corrupt", w.tmp_dir.string() + "/", offset, w), stdin_path);
  EXPECT_GE(r.exit_code, 0) << "timed out";
  EXPECT_LT(r.exit_code, 128) << "killed by signal " << r.exit_code - 128 << ": " << r.err;
  EXPECT_EQ(entries(w.tmp_dir), std::vector<std::string>{}) << "scratch left behind";
  if (r.exit_code == 0) {
    EXPECT_EQ(r.err, "");
    EXPECT_TRUE(read_file(w.output()) == reference) << "exit 0 with an output that differs from the undamaged run's";
    std::filesystem::remove(w.output());
    return Outcome::kUnused;
  }
  EXPECT_TRUE(std::filesystem::exists(w.marker())) << "failed without a fault: " << r.err;
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(is_one_line_error(r.err, kScratchLine) || is_one_line_error(r.err, kVerifyLine)) << r.err;
  EXPECT_EQ(entries(w.out_dir), std::vector<std::string>{}) << "an output was left by a failed run";
  std::filesystem::remove_all(w.out_dir);
  std::filesystem::create_directory(w.out_dir);
  return r.err.find(kScratchLine) != std::string::npos ? Outcome::kScratchLine : Outcome::kVerifyLine;
}

// Sweeps `offsets_per_setting` offsets of each setting with --verify;
// returns how many ended each way.
Tally sweep(const Workspace& w, const std::vector<Setting>& settings, int offsets_per_setting) {
  Tally tally;
  std::mt19937_64 jitter(11);
  for (const Setting& s : settings) {
    SCOPED_TRACE(s.name);
    std::vector<std::string> args{"-q", "--seed", "3", "-T", w.tmp_dir.string()};
    args.insert(args.end(), s.args.begin(), s.args.end());
    args.insert(args.end(), {s.standard_input ? "-" : w.input(), "-o", w.output()});
    const std::string stdin_path = s.standard_input ? w.input() : "/dev/null";
    std::vector<std::string> verified = args;
    verified.insert(verified.begin(), "--verify");
    const auto clean = run_binary(verified, {}, stdin_path);
    EXPECT_EQ(clean.exit_code, 0) << clean.err;
    const std::string reference = read_file(w.output());
    std::filesystem::remove(w.output());
    std::vector<std::uint64_t> offsets;
    const std::uint64_t step = s.scratch_read_bytes / offsets_per_setting;
    for (int k = 0; k < offsets_per_setting; ++k) offsets.push_back(k * step + jitter() % step);
    std::optional<std::uint64_t> caught;  // an offset the checks caught
    for (const std::uint64_t offset : offsets) {
      switch (damaged_run(w, verified, stdin_path, reference, offset)) {
        case Outcome::kUnused: ++tally.unused; break;
        case Outcome::kScratchLine:
          ++tally.scratch;
          if (!caught) caught = offset;
          break;
        case Outcome::kVerifyLine: ++tally.verify; break;
      }
      if (::testing::Test::HasFailure()) return tally;
    }
    // The checks do not lean on --verify: what they caught is caught
    // without it, with the same line.
    if (caught) {
      SCOPED_TRACE("without --verify, byte " + std::to_string(*caught));
      std::filesystem::remove(w.marker());
      const auto r =
          run_binary(args, fault_environment("corrupt", w.tmp_dir.string() + "/", *caught, w), stdin_path);
      EXPECT_EQ(r.exit_code, 1) << r.err;
      EXPECT_TRUE(is_one_line_error(r.err, kScratchLine)) << r.err;
      EXPECT_EQ(entries(w.out_dir), std::vector<std::string>{});
    }
  }
  return tally;
}

int offsets_per_setting() { return binary_is_sanitized() ? 10 : 20; }

// The reproduction: a routed split of 8-byte records whose leaves are placed
// window by window; a byte flipped at either offset made a position tag
// index the heap unchecked (SIGSEGV, route_batch.hpp and LeafWindows).
TEST(ScratchDamage, FlippedTagThatCrashedIsOneLine) {
  Workspace w;
  write_file(w.input(), numbered_u64(200000));
  for (const std::uint64_t offset : {2387651, 3377921}) {
    SCOPED_TRACE(offset);
    std::filesystem::remove(w.marker());
    const auto r = run_binary({"-q", "--record-size", "8", "-S", "512K", "--leaf-records", "65536", "--fanout", "4",
                               "--seed", "1", "-T", w.tmp_dir.string(), w.input(), "-o", w.output()},
                              fault_environment("corrupt", w.tmp_dir.string() + "/", offset, w));
    ASSERT_TRUE(std::filesystem::exists(w.marker())) << "the corruption never happened";
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_TRUE(is_one_line_error(r.err, kScratchLine)) << r.err;
    EXPECT_EQ(entries(w.out_dir), std::vector<std::string>{});
    EXPECT_EQ(entries(w.tmp_dir), std::vector<std::string>{});
  }
}

TEST(ScratchDamage, FixedSizeRecordsNeverCrashAndFailWithOneLine) {
  Workspace w;
  write_file(w.input(), numbered_u64(200000));
  const std::vector<std::string> knobs{"--record-size", "8", "--leaf-records", "65536", "--fanout", "4"};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.begin(), knobs.begin(), knobs.end());
    return args;
  };
  const std::vector<Setting> settings = {
      {"routed, leaves in windows", with({"-S", "512K"}), 3400000},
      {"routed, tagged buckets in RAM", with({"-S", "768K"}), 3400000},
  };
  const Tally tally = sweep(w, settings, offsets_per_setting());
  EXPECT_GT(tally.scratch, 0) << "no damaged tag was caught by the checks";
  EXPECT_GT(tally.verify, 0) << "no damaged record was caught by --verify";
}

TEST(ScratchDamage, TextRecordsNeverCrashAndFailWithOneLine) {
  Workspace w;
  write_file(w.input(), text_lines(100000));
  const std::vector<Setting> settings = {
      {"routed into the leaves' windows", {"--leaf-records", "16384", "--fanout", "4", "-S", "512K"}, 8000000},
      {"routed, tagged buckets in RAM", {"--leaf-records", "4096", "--fanout", "8", "-S", "256K"}, 8000000},
      // The spool is read twice (counted, then shuffled): a count that
      // differs is damaged scratch, not a changed input.
      {"standard input spooled", {"--leaf-records", "4096", "--fanout", "8", "-S", "1M"}, 12000000, true},
  };
  const Tally tally = sweep(w, settings, offsets_per_setting());
  EXPECT_GT(tally.scratch, 0) << "no damaged tag or terminator was caught by the checks";
  EXPECT_GT(tally.verify, 0) << "no damaged record was caught by --verify";
}

}  // namespace
}  // namespace extshuffle::testing::scratch_damage_test
