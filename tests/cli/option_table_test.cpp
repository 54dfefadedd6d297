// The options' one table (tools/cli/option_table.hpp) is what the parser,
// make_job and Python's keywords read: every row reaches the parser under
// its own names, once, in the table's order; every keyword is a long
// option's; and a row's value lands where its row says. Deterministic.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "cli/make_job.hpp"
#include "cli/option_table.hpp"
#include "cli/options.hpp"

namespace extshuffle::testing::option_table_test {
namespace {

TEST(OptionTable, EveryRowIsAnOptionOfTheParserOnceInOrder) {
  std::vector<std::string> rows;
  for (const cli::OptionRow& row : cli::option_table()) {
    const std::string name = cli::long_name(row);
    if (!name.empty()) rows.push_back(name);
    // One way into the command line as typed: a text, a flag or its own adder.
    EXPECT_EQ((row.text != nullptr) + (row.flag != nullptr) + (row.add != nullptr), 1) << row.names;
    EXPECT_FALSE(row.flag != nullptr && row.keyword != cli::Keyword::kNone && row.keyword != cli::Keyword::kFlag)
        << row.names << ": a flag is a keyword flag";
  }
  std::vector<std::string> parsed;
  for (const cli::OptionNames& names : cli::option_names()) {
    if (names.long_name != "version" && names.long_name != "help") parsed.push_back(names.long_name);
  }
  EXPECT_EQ(parsed, rows);
  EXPECT_EQ(std::set<std::string>(rows.begin(), rows.end()).size(), rows.size()) << "a long name twice";
}

TEST(OptionTable, KeywordsAreLongOptions) {
  for (const cli::OptionRow& row : cli::option_table()) {
    if (row.keyword != cli::Keyword::kNone) {
      EXPECT_FALSE(cli::long_name(row).empty()) << row.names;
    }
  }
}

// A Job made from `words` by the CLI's parser and make_job.
Job job_of(const std::vector<std::string>& words) {
  cli::Options options;
  EXPECT_FALSE(cli::parse_words(words, options));
  return cli::make_job(options);
}

TEST(OptionTable, ValuesLandWhereTheirRowsSay) {
  const Job job =
      job_of({"--seed", "7",  "-T", "/scratch",  "--checkpoint", "/journal", "--record-size",  "4K", "-S",
              "64M",    "-j", "3",  "--format",  "binary",       "--verify", "--shards",       "4",  "--manifest",
              "m.json", "-n", "9",  "--dry-run", "in.bin",       "-o",       "out-{shard}.bin"});
  const JobOptions& o = job.options;
  EXPECT_EQ(o.run.seed, 7u);
  EXPECT_EQ(o.run.tmpdir, "/scratch");
  EXPECT_EQ(o.run.checkpoint_dir, "/journal");
  EXPECT_EQ(o.input.record_size, 4096u);
  EXPECT_EQ(o.run.memory_bytes, 64u << 20);
  EXPECT_EQ(o.run.threads, 3);
  EXPECT_EQ(o.input.format, formats::Format::kBinary);
  EXPECT_TRUE(o.input.verify);
  EXPECT_EQ(o.output.shard_count, 4u);
  EXPECT_EQ(o.run.manifest_path, "m.json");
  EXPECT_EQ(o.output.head_count, 9u);
  EXPECT_TRUE(o.run.dry_run);
  EXPECT_FALSE(o.input.zero_terminated);
  EXPECT_FALSE(o.output.clean);
}

}  // namespace
}  // namespace extshuffle::testing::option_table_test
