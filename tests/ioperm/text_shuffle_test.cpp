// The shuffle of variable-size records (ioperm/text_shuffle.hpp) on
// memory-backed files, with tiny plan constants so that 1, 2 and 3 levels
// of the plan go through scratch space within milliseconds. The contract
// (docs/conventions.md, The contract): N text records come out in the order P(seed, N) that N
// fixed-size records take, byte-identical for every memory budget; only the
// way bytes move differs.
#include "extshuffle/ioperm/text_shuffle.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "extshuffle/errors.hpp"
#include "extshuffle/formats/record_syntax.hpp"
#include "extshuffle/io/block_file.hpp"
#include "support/permutations.hpp"
#include "support/plan_oracle.hpp"
#include "support/same_bytes.hpp"
#include "support/text_records.hpp"

namespace extshuffle::ioperm::text_shuffle_test {
namespace {

using core::PlanConstants;
using formats::RecordSyntax;
using extshuffle::testing::split_records;

constexpr std::uint64_t kKiB = 1024;
// More records than any test here has: the minimum budget for them is a
// budget every test's input may use (the minimum grows with the plan's depth).
constexpr std::uint64_t kManyRecords = std::uint64_t{1} << 20;
// Longer than any record here but the ones meant to be too large.
constexpr std::uint64_t kLongest = 64 * 1024;
constexpr std::uint64_t kMiB = 1024 * 1024;
const RecordSyntax kLines{'\n', false, ','};
const RecordSyntax kZeroLines{'\0', false, ','};
const RecordSyntax kCsv{'\n', true, ','};

struct Outcome {
  std::string output;
  WalkStats stats;
};

// One thread by default: the output never depends on it (SameBytesForOneAndTwoThreads
// checks), and with tiny plan constants every node is a parallel step ending in a
// barrier, which on a busy machine costs a scheduler time slice each (10-50x slower).
TextOptions options_for(const PlanConstants& c, std::uint64_t memory_bytes, std::uint64_t seed,
                            const RecordSyntax& syntax = kLines, int threads = 1) {
  TextOptions options;
  options.walk.run.seed = seed;
  options.walk.run.constants = c;
  options.walk.run.device = device::Device::kCpu;
  options.walk.run.threads = threads;
  options.walk.run.memory_bytes = memory_bytes;
  options.syntax = syntax;
  return options;
}

// Runs shuffle_text on `prefix + text`, the records starting after the
// prefix (as after a CSV header), collecting the sink's output.
Outcome run_variable(const std::string& text, std::uint64_t records, const TextOptions& options,
                     bool add_terminator = false, const std::string& prefix = "") {
  auto source = io::BlockFile::in_memory();
  const std::string file = prefix + text;
  if (!file.empty()) source->write_now(file.data(), 0, file.size());
  auto scratch = io::BlockFile::in_memory();
  Outcome outcome;
  // The longest record, as the counting pass finds it.
  std::uint64_t longest = 0;
  for (const char* at = text.data(); at < text.data() + text.size();) {
    const formats::RecordScan scan = formats::scan_record(at, text.data() + text.size(), options.syntax);
    const char* end = scan.end ? scan.end : text.data() + text.size();
    longest = std::max<std::uint64_t>(longest, end - at + (scan.end ? 0 : 1));
    at = end;
  }
  const TextInput input{source.get(), prefix.size(), text.size(), add_terminator, longest};
  outcome.stats = shuffle_text(input, records, *scratch, 0, options, [&](const std::byte* data, std::size_t n) {
    outcome.output.append(reinterpret_cast<const char*>(data), n);
  });
  return outcome;
}

// Record i starts with its decimal index and a colon, then filler of a
// length that varies with i (a multiplicative hash, so long and short
// records are mixed throughout the input).
std::string numbered_record(std::uint64_t i, std::uint64_t max_filler, char terminator = '\n') {
  const std::uint64_t filler = ((i * 2654435761u) >> 5) % (max_filler + 1);
  std::string record = std::to_string(i) + ":";
  for (std::uint64_t k = 0; k < filler; ++k) record += static_cast<char>('a' + (i + k) % 26);
  return record + terminator;
}

std::string numbered_text(std::uint64_t n, std::uint64_t max_filler, char terminator = '\n') {
  std::string text;
  for (std::uint64_t i = 0; i < n; ++i) text += numbered_record(i, max_filler, terminator);
  return text;
}

// The leading index of each record of `text`.
std::vector<std::uint64_t> record_indices(const std::string& text, char terminator = '\n') {
  std::vector<std::uint64_t> indices;
  for (const std::string& record : split_records(text, terminator)) indices.push_back(std::stoull(record));
  return indices;
}

// The order P(seed, N) of the plan, from the independent oracle
// (support/plan_oracle.hpp): the order N fixed-size records take.
std::vector<std::uint64_t> fixed_size_order(std::uint64_t n, std::uint64_t seed, const PlanConstants& c) {
  return testing::oracle_order(n, seed, c);
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(VariableExecutor, OutputIsAPermutationOfTheInputRecords) {
  const PlanConstants c{64, 4};
  const std::string text = numbered_text(5000, 40);
  for (std::uint64_t memory : {minimum_memory_bytes_text(c, kManyRecords, kLongest), 64 * kMiB}) {
    const Outcome out = run_variable(text, 5000, options_for(c, memory, 3));
    EXPECT_EQ(sorted(split_records(out.output)), sorted(split_records(text))) << "memory " << memory;
    EXPECT_DIFFERENT_BYTES(out.output, text);
  }
}

// The same bytes whether the whole input fits in RAM or 1 or 2 further
// levels of the plan stream through scratch space; and the order is the
// one fixed-size records get (the record index is written in each line).
TEST(VariableExecutor, SameBytesAtOneTwoAndThreeLevelsAsFixedSizeRecords) {
  const PlanConstants c{64, 4};
  const std::uint64_t n = 100003;
  const std::string text = numbered_text(n, 50);  // ~3.6 MB with the record offsets
  const std::vector<std::uint64_t> expected_order = fixed_size_order(n, 7, c);
  const std::pair<std::uint64_t, std::uint32_t> budgets[] = {{64 * kMiB, 1}, {2 * kMiB, 2}, {700 * kKiB, 3}};
  std::string first_output;
  for (const auto& [memory, passes] : budgets) {
    const Outcome out = run_variable(text, n, options_for(c, memory, 7));
    EXPECT_EQ(out.stats.passes, passes) << "memory " << memory;
    EXPECT_EQ(out.stats.nodes_on_disk > 0, passes > 1) << "memory " << memory;
    ASSERT_EQ(record_indices(out.output), expected_order) << "memory " << memory;
    if (first_output.empty()) first_output = out.output;
    EXPECT_SAME_BYTES(out.output, first_output) << "memory " << memory;
  }
}

// Three or more levels through scratch space: a larger input at a small
// budget, against the oracle's order, as many passes as the schedule says.
// Deterministic: false-failure rate 0.
TEST(VariableExecutor, SameBytesAtThreeDiskLevels) {
  const PlanConstants c{64, 4};
  const std::uint64_t n = 400003;
  const std::string text = numbered_text(n, 50);
  const TextOptions options = options_for(c, minimum_memory_bytes_text(c, kManyRecords, kLongest), 7);
  const Outcome out = run_variable(text, n, options);
  EXPECT_GE(out.stats.passes, 4u);
  EXPECT_EQ(out.stats.passes, plan_schedule_text(n, text.size(), 63, options).passes);
  ASSERT_EQ(record_indices(out.output), fixed_size_order(n, 7, c));
}

TEST(VariableExecutor, SameBytesForOneAndTwoThreads) {
  const PlanConstants c{256, 8};
  const std::string text = numbered_text(60000, 30);
  EXPECT_SAME_BYTES(run_variable(text, 60000, options_for(c, 700 * kKiB, 5, kLines, 1)).output,
                    run_variable(text, 60000, options_for(c, 700 * kKiB, 5, kLines, 2)).output);
}

// Lines of up to ~24 KiB: a chunk of 64 of them (~0.8 MB) exceeds the chunk
// space of a ~0.5 MiB budget, so chunks are gathered by index in windows;
// with L = 256 a leaf of 200 such lines (~2.4 MB) exceeds the whole budget
// and is gathered in windows straight to the output.
TEST(VariableExecutor, LongLinesAreGatheredInWindows) {
  {
    const PlanConstants c{64, 4};
    const std::uint64_t n = 600;
    const std::string text = numbered_text(n, 24000);
    const std::vector<std::uint64_t> expected_order = fixed_size_order(n, 9, c);
    const Outcome in_ram = run_variable(text, n, options_for(c, 64 * kMiB, 9));
    EXPECT_EQ(in_ram.stats.passes, 1u);
    ASSERT_EQ(record_indices(in_ram.output), expected_order);
    const Outcome windows = run_variable(text, n, options_for(c, minimum_memory_bytes_text(c, kManyRecords, kLongest), 9));
    EXPECT_GT(windows.stats.nodes_on_disk, 0u);
    EXPECT_SAME_BYTES(windows.output, in_ram.output);
  }
  {
    const PlanConstants c{256, 8};
    const std::uint64_t n = 200;
    const std::string text = numbered_text(n, 24000);
    ASSERT_GT(text.size(), 2 * minimum_memory_bytes_text(c, kManyRecords, kLongest));
    const Outcome in_ram = run_variable(text, n, options_for(c, 64 * kMiB, 4));
    ASSERT_EQ(record_indices(in_ram.output), fixed_size_order(n, 4, c));
    const Outcome leaf = run_variable(text, n, options_for(c, minimum_memory_bytes_text(c, kManyRecords, kLongest), 4));
    EXPECT_EQ(leaf.stats.nodes_on_disk, 0u);  // one leaf: nothing to scatter, only windows
    EXPECT_EQ(leaf.stats.nodes_in_windows, 1u);
    EXPECT_SAME_BYTES(leaf.output, in_ram.output);
  }
}

// A leaf of a few records larger than the budget: its index arrays are
// small, so their alignment padding matters (a leaf of 20 lines of 30 KB once
// overran its arrays into the read buffer and crashed; the same with the
// shipped constants: 20 lines of 4 MB at -S 70M).
TEST(VariableExecutor, LeafOfFewRecordsLargerThanMemory) {
  const PlanConstants c{64, 4};
  const std::uint64_t memory = minimum_memory_bytes_text(c, kManyRecords, kLongest);
  for (const std::uint64_t n : {20, 25, 30, 37, 64}) {  // 600 KB to 1.9 MB, each larger than `memory`
    std::string text;
    for (std::uint64_t i = 0; i < n; ++i) text += std::to_string(i) + ":" + std::string(30000, 'a' + i % 26) + "\n";
    const Outcome in_ram = run_variable(text, n, options_for(c, 64 * kMiB, 1));
    ASSERT_EQ(record_indices(in_ram.output), fixed_size_order(n, 1, c)) << "n " << n;
    ASSERT_SAME_BYTES(run_variable(text, n, options_for(c, memory, 1)).output, in_ram.output) << "n " << n;
  }
}

// CSV records whose quoted fields hold newlines, delimiters and escaped
// quotes move whole, in the fixed-size order, through 3 disk levels.
TEST(VariableExecutor, CsvRecordsWithQuotedNewlinesMoveWhole) {
  const PlanConstants c{64, 4};
  const std::uint64_t n = 30000;
  std::vector<std::string> records;
  std::string text;
  for (std::uint64_t i = 0; i < n; ++i) {
    std::string record = std::to_string(i) + ",plain,";
    if (i % 3 == 0) record += "\"two\nlines, \"\"quoted\"\"\n\"";
    if (i % 7 == 0) record += ",\"\n\"";
    record += "\n";
    records.push_back(record);
    text += record;
  }
  const std::vector<std::uint64_t> expected_order = fixed_size_order(n, 11, c);
  std::string first_output;
  for (std::uint64_t memory : {64 * kMiB, 1 * kMiB, minimum_memory_bytes_text(c, kManyRecords, kLongest)}) {
    const Outcome out = run_variable(text, n, options_for(c, memory, 11, kCsv));
    std::string expected;
    for (std::uint64_t index : expected_order) expected += records[index];
    ASSERT_SAME_BYTES(out.output, expected) << "memory " << memory;
  }
}

// -z: records end with NUL and may hold newlines.
TEST(VariableExecutor, NulTerminatedRecordsMayHoldNewlines) {
  const PlanConstants c{64, 4};
  const std::uint64_t n = 20000;
  std::string text;
  for (std::uint64_t i = 0; i < n; ++i) text += std::to_string(i) + ":\nline two\n" + std::string(i % 50, 'z') + '\0';
  const std::vector<std::uint64_t> expected_order = fixed_size_order(n, 2, c);
  for (std::uint64_t memory : {64 * kMiB, minimum_memory_bytes_text(c, kManyRecords, kLongest)}) {
    const Outcome out = run_variable(text, n, options_for(c, memory, 2, kZeroLines));
    ASSERT_EQ(record_indices(out.output, '\0'), expected_order) << "memory " << memory;
    EXPECT_EQ(sorted(split_records(out.output, '\0')), sorted(split_records(text, '\0')));
  }
}

// -n K: exactly the first K records of the full output, at every number of
// disk levels; K beyond N gives all N.
TEST(VariableExecutor, HeadCountIsThePrefixOfTheFullOutput) {
  const PlanConstants c{64, 4};
  const std::uint64_t n = 50001;
  const std::string text = numbered_text(n, 60);
  const std::string full = run_variable(text, n, options_for(c, 64 * kMiB, 5)).output;
  const std::vector<std::string> full_records = split_records(full);
  for (std::uint64_t memory : {64 * kMiB, 2 * kMiB, 700 * kKiB}) {
    for (std::uint64_t k : std::initializer_list<std::uint64_t>{0, 1, 63, 1000, 25001, n - 1, n, n + 9}) {
      TextOptions options = options_for(c, memory, 5);
      options.walk.output_records = k;
      const Outcome head = run_variable(text, n, options);
      std::string expected;
      for (std::uint64_t r = 0; r < std::min(k, n); ++r) expected += full_records[r];
      ASSERT_SAME_BYTES(head.output, expected) << "k " << k << " memory " << memory;
    }
  }
}

// --skip-empty: blank (whitespace-only) records are not records. The output
// is the shuffle of the input with them removed, byte for byte, including
// blank records at the very start and end and between long lines.
TEST(VariableExecutor, SkipBlankShufflesTheOtherRecords) {
  const PlanConstants c{64, 4};
  const char* blanks[] = {"\n", "   \n", "\t\r\n", " \t \n"};
  for (const std::uint64_t max_filler : {std::uint64_t{40}, std::uint64_t{20000}}) {
    const std::uint64_t n = max_filler > 1000 ? 400 : 20000;
    std::string with_blanks = "\n \n", without_blanks;
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::string record = numbered_record(i, max_filler);
      with_blanks += record;
      without_blanks += record;
      if (i % 5 == 0) with_blanks += blanks[i % 4];
      if (i % 11 == 0) with_blanks += std::string(blanks[(i + 1) % 4]) + blanks[(i + 2) % 4];
    }
    with_blanks += "\n\t\n";
    for (std::uint64_t memory : {64 * kMiB, 2 * kMiB, minimum_memory_bytes_text(c, kManyRecords, kLongest)}) {
      TextOptions skipping = options_for(c, memory, 8);
      skipping.skip_blank = true;
      const Outcome skipped = run_variable(with_blanks, n, skipping);
      const Outcome plain = run_variable(without_blanks, n, options_for(c, memory, 8));
      ASSERT_SAME_BYTES(skipped.output, plain.output) << "memory " << memory << " max_filler " << max_filler;
    }
  }
}

// A last record without its terminator gets one (as shuf does): the output
// equals that of the input with the terminator written out.
TEST(VariableExecutor, AddTerminatorCompletesTheLastRecord) {
  const PlanConstants c{64, 4};
  for (const char terminator : {'\n', '\0'}) {
    const RecordSyntax syntax{terminator, false, ','};
    const std::string text = numbered_text(30000, 30, terminator);
    const std::string cut = text.substr(0, text.size() - 1);
    for (std::uint64_t memory : {64 * kMiB, minimum_memory_bytes_text(c, kManyRecords, kLongest)}) {
      const Outcome whole = run_variable(text, 30000, options_for(c, memory, 6, syntax));
      const Outcome added = run_variable(cut, 30000, options_for(c, memory, 6, syntax), true);
      ASSERT_SAME_BYTES(added.output, whole.output) << "memory " << memory;
    }
  }
  EXPECT_EQ(run_variable("only", 1, options_for(c, 64 * kMiB, 1), true).output, "only\n");
}

// The records start at TextInput::offset (after the header lines): nothing
// before it is a record, and it is not output.
TEST(VariableExecutor, RecordsStartAtTheInputOffset) {
  const PlanConstants c{64, 4};
  const std::string text = numbered_text(20000, 30);
  for (std::uint64_t memory : {64 * kMiB, minimum_memory_bytes_text(c, kManyRecords, kLongest)}) {
    const Outcome plain = run_variable(text, 20000, options_for(c, memory, 12));
    const Outcome after_header = run_variable(text, 20000, options_for(c, memory, 12), false, "header,line\n");
    ASSERT_SAME_BYTES(after_header.output, plain.output) << "memory " << memory;
  }
}

TEST(VariableExecutor, NoRecordsGiveNoOutput) {
  const PlanConstants c{64, 4};
  EXPECT_EQ(run_variable("", 0, options_for(c, 64 * kMiB, 1)).output, "");
  TextOptions skipping = options_for(c, 64 * kMiB, 1);
  skipping.skip_blank = true;
  EXPECT_EQ(run_variable("\n  \n\t\n", 0, skipping).output, "");
}

// A record larger than what the budget leaves for one record is refused
// before any work, naming the budget it needs and the record's size (the
// counting pass knows the longest record): in a leaf, in a leaf larger than
// memory and in a split. Not a crash, never a silent truncation. At the
// budget it names, the same input runs. Deterministic: false-failure rate 0.
TEST(VariableExecutor, RecordTooLargeForTheBudgetIsRefusedWithTheBudgetItNeeds) {
  const PlanConstants c{64, 4};
  const std::uint64_t memory = minimum_memory_bytes_text(c, kManyRecords, kLongest);
  const std::string huge = std::string(2 * memory, 'x') + "\n";
  const std::pair<std::string, std::uint64_t> inputs[] = {
      {huge, 1}, {"a\n" + huge + "b\n", 3}, {numbered_text(1000, 20) + huge + numbered_text(1000, 20), 2001}};
  for (const auto& [text, n] : inputs) {
    try {
      run_variable(text, n, options_for(c, memory, 1));
      ADD_FAILURE() << "no error for " << n << " records";
    } catch (const BudgetError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("--memory must be at least "), std::string::npos) << what;
      EXPECT_NE(what.find("the longest of " + std::to_string(huge.size()) + " bytes"), std::string::npos) << what;
      const std::uint64_t needed = std::stoull(what.substr(what.find("at least ") + 9)) * 1024;
      const Outcome out = run_variable(text, n, options_for(c, needed, 1));
      EXPECT_EQ(sorted(split_records(out.output)), sorted(split_records(text))) << n;
    }
  }
}

// If the longest record is not known (0), a record longer than the space the
// budget leaves for reading one is an input error naming its size, raised
// while the records are read, with nothing handed on for it.
TEST(VariableExecutor, RecordTooLargeForAnUnknownLongestIsAnInputError) {
  const PlanConstants c{64, 4};
  const std::uint64_t memory = 2 * minimum_memory_bytes_text(c, kManyRecords, 0);
  const std::string huge = std::string(2 * memory, 'x') + "\n";
  auto source = io::BlockFile::in_memory();
  const std::string text = numbered_text(1000, 20) + huge + numbered_text(1000, 20);
  source->write_now(text.data(), 0, text.size());
  auto scratch = io::BlockFile::in_memory();
  try {
    shuffle_text(TextInput{source.get(), 0, text.size(), false, 0}, 2001, *scratch, 0, options_for(c, memory, 1),
                     [](const std::byte*, std::size_t) {});
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("raise --memory"), std::string::npos) << e.what();
  }
}

// The counting pass and the shuffle see different record counts when the
// input changed in between: fewer or more records than stated are input
// errors, whether the node runs in RAM or streams.
TEST(VariableExecutor, RecordCountOtherThanStatedIsAnInputError) {
  const PlanConstants c{64, 4};
  const std::uint64_t n = 20000;
  const std::string text = numbered_text(n, 30);
  for (std::uint64_t memory : {64 * kMiB, minimum_memory_bytes_text(c, kManyRecords, kLongest)}) {
    EXPECT_THROW(run_variable(text, n + 1, options_for(c, memory, 1)), InputError) << "memory " << memory;
    EXPECT_THROW(run_variable(text, n - 1, options_for(c, memory, 1)), InputError) << "memory " << memory;
    EXPECT_NO_THROW(run_variable(text, n, options_for(c, memory, 1))) << "memory " << memory;
  }
  EXPECT_THROW(run_variable("a\nb\n", 3, options_for(c, 64 * kMiB, 1)), InputError);
  EXPECT_THROW(run_variable("a\nb\nc\n", 2, options_for(c, 64 * kMiB, 1)), InputError);
}

TEST(VariableExecutor, BudgetBelowTheMinimumIsRejected) {
  const PlanConstants c{64, 4};
  const std::uint64_t below = minimum_memory_bytes_text(c, 20000, 64, 0) - 4096;
  const std::string text = numbered_text(20000, 30);
  EXPECT_THROW(run_variable(text, 20000, options_for(c, below, 1)), BudgetError);
  // At the minimum it runs.
  const Outcome at_minimum = run_variable(text, 20000, options_for(c, below + 4096, 1));
  EXPECT_EQ(sorted(split_records(at_minimum.output)), sorted(split_records(text)));
}

// The schedule --dry-run prints agrees with what runs, for evenly sized lines.
TEST(VariableExecutor, ScheduleMatchesWhatRuns) {
  const PlanConstants c{64, 4};
  const std::uint64_t n = 100003;
  std::string text;
  for (std::uint64_t i = 0; i < n; ++i) text += std::to_string(1000000 + i) + "\n";
  for (std::uint64_t memory : {64 * kMiB, 1 * kMiB, 700 * kKiB}) {
    const TextOptions options = options_for(c, memory, 1);
    const Schedule s = plan_schedule_text(n, text.size(), 8, options);
    const Outcome out = run_variable(text, n, options);
    EXPECT_EQ(s.passes, out.stats.passes) << "memory " << memory;
    EXPECT_EQ(s.nodes_on_disk, out.stats.nodes_on_disk) << "memory " << memory;
  }
}

}  // namespace
}  // namespace extshuffle::ioperm::text_shuffle_test
