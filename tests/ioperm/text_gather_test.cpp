// The gather of a text node in RAM (src/layouts/text_in_memory.cpp): the
// batches of the plan's order placed in two halves of the staging buffer,
// one gathered while the other is written, and a record larger than a half
// (or than the whole buffer) written alone after those before it. Heavy-
// tailed CRLF lines (lognormal lengths, a few of 1-5 MiB), a header before
// them and the last line unterminated, at budgets whose staging halves are
// about 0.75 to 1.25 MiB, on 1 and 2 threads, whole and with -n K: the output
// must be the records in the independent oracle's order (the order
// fixed-size records take), its first K for -n K. Deterministic inputs:
// false-failure rate 0.
#include "extshuffle/ioperm/text_shuffle.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <random>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "extshuffle/io/block_file.hpp"
#include "support/plan_oracle.hpp"
#include "support/sanitized_cases.hpp"

namespace extshuffle::ioperm::text_gather_test {
namespace {

constexpr std::uint64_t kMiB = 1024 * 1024;

// Numbered CRLF records of lognormal lengths (median ~400 bytes, up to
// 200 KB), with records of 1 to 5 MiB among them: about a staging half,
// about the whole staging buffer, and more.
std::vector<std::string> heavy_records(std::uint64_t n) {
  std::mt19937_64 random(36);
  std::lognormal_distribution<double> length(6.0, 1.3);
  std::vector<std::string> records;
  for (std::uint64_t i = 0; i < n; ++i) {
    std::uint64_t filler = static_cast<std::uint64_t>(std::min(length(random), 200000.0));
    if (i == 17) filler = kMiB;
    if (i == n / 3) filler = 3 * kMiB / 2;
    if (i == n / 2) filler = 2 * kMiB;
    if (i == 2 * n / 3) filler = 3 * kMiB;
    if (i == n - 3) filler = 5 * kMiB;
    std::string record = std::to_string(i) + ":";
    record.append(filler, static_cast<char>('a' + i % 26));
    record.append("\r\n");
    records.push_back(std::move(record));
  }
  return records;
}

// The input file: `header + text` in a block file of its own (made once: the
// runs only read it).
struct InputFile {
  std::unique_ptr<io::BlockFile> source = io::BlockFile::in_memory();
  std::uint64_t header_bytes = 0, text_bytes = 0;
  InputFile(const std::string& header, const std::string& text) : header_bytes(header.size()), text_bytes(text.size()) {
    const std::string file = header + text;
    source->write_now(file.data(), 0, file.size());
  }
};

// shuffle_text on the input's records after its header into `output`
// (cleared first; its capacity is kept from run to run, so the runs do not
// each grow a new string of the input's size); the last record lacks its
// terminator in the input and gets it back in the output.
void run_in_ram(const InputFile& in, std::uint64_t n, std::uint64_t longest, const core::PlanConstants& c,
                std::uint64_t memory, int threads, std::uint64_t head, WalkStats& stats, std::string& output) {
  auto scratch = io::BlockFile::in_memory();
  TextOptions options;
  options.walk.run.seed = 99;
  options.walk.run.device = device::Device::kCpu;
  options.walk.run.constants = c;
  options.walk.run.threads = threads;
  options.walk.run.memory_bytes = memory;
  options.walk.output_records = head;
  options.syntax = formats::RecordSyntax{'\n', false, ','};
  const TextInput input{in.source.get(), in.header_bytes, in.text_bytes, true, longest};
  output.clear();
  stats = shuffle_text(input, n, *scratch, 0, options, [&](const std::byte* data, std::size_t bytes) {
    output.append(reinterpret_cast<const char*>(data), bytes);
  });
}

// The output at budgets whose staging halves differ, on 1 and 2 threads,
// whole and with -n K, against `expected` (`ends`: where each record ends).
void expect_in_ram_output(const InputFile& in, std::uint64_t n, std::uint64_t longest, const core::PlanConstants& c,
                          const std::string& expected, const std::vector<std::uint64_t>& ends,
                          std::size_t combination_offset) {
  // The staging buffer is a 16th of what the node takes in RAM (the input,
  // ~22 MiB, its arrays and the staging the budget gives): about 1.5 to
  // 2.5 MiB here, so the long records are larger than a half, than the
  // whole, or neither; at 512M the halves (~1.2 MiB) take the overlapped
  // way (batches of 1 MiB or more), at 40M they are written and copied in
  // turn.
  // Under the sanitizers (support/sanitized_cases.hpp) each budget and
  // thread count runs the whole output and one cut, the cuts taken in turn
  // (none, one record, within, the last record dropped): every staging way,
  // thread count and cut still reached, 24 runs of 72.
  std::string got;
  got.reserve(expected.size());
  const std::uint64_t cuts[] = {0, 1, 5000, n - 1};
  std::size_t combination = 0;
  for (const std::uint64_t memory : {512 * kMiB, 64 * kMiB, 40 * kMiB}) {
    for (const int threads : {1, 2}) {
      const std::uint64_t cut = cuts[(combination_offset + combination++) % std::size(cuts)];
      for (const std::uint64_t head :
           testing::thinned_under_sanitizers(std::vector<std::uint64_t>{0, 1, 5000, n - 1, n, ~std::uint64_t{0}},
                                             std::vector<std::uint64_t>{cut, ~std::uint64_t{0}})) {
        WalkStats stats;
        run_in_ram(in, n, longest, c, memory, threads, head, stats, got);
        ASSERT_EQ(stats.passes, 1u) << memory;
        const std::uint64_t k = std::min(head, n);
        const std::uint64_t bytes = k == 0 ? 0 : ends[k - 1];
        const std::string where = "L " + std::to_string(c.leaf_records) + " memory " + std::to_string(memory) +
                                  " threads " + std::to_string(threads) + " head " + std::to_string(head);
        ASSERT_EQ(got.size(), bytes) << where;
        ASSERT_TRUE(std::string_view(got) == std::string_view(expected).substr(0, bytes)) << where;
      }
    }
  }
}

TEST(TextGatherInRam, HeavyTailedRecordsComeOutInTheOraclesOrderAtEveryStagingSizeAndThreadCount) {
  const std::uint64_t n = 12000;
  const std::vector<std::string> records = heavy_records(n);
  std::string text;
  std::uint64_t longest = 0;
  for (const std::string& record : records) {
    text += record;
    longest = std::max<std::uint64_t>(longest, record.size());
  }
  text.pop_back();  // the last line unterminated: its '\r' stays, its '\n' comes back
  const InputFile in("id,text\r\n", text);
  // The shipped constants (the node one leaf: the order in one piece) and
  // tiny ones (the order handed on in many pieces, batches across them).
  std::size_t combinations = 0;  // of budget and threads, over both constants: where the cuts' turn is
  for (const core::PlanConstants c : {core::kPlanV2, core::PlanConstants{64, 4}}) {
    std::string expected;
    std::vector<std::uint64_t> ends;  // of each record in `expected`
    for (const std::uint64_t i : testing::oracle_order(n, 99, c)) {
      expected += records[i];
      ends.push_back(expected.size());
    }
    expect_in_ram_output(in, n, longest, c, expected, ends, combinations);
    combinations += 6;
  }
}

}  // namespace
}  // namespace extshuffle::ioperm::text_gather_test
