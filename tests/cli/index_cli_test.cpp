// Black-box tests of record indexes (docs/cli.md "Record indexes"):
// --index-only writes each input's index beside it or where -o says, and a
// directory holding indexes still reads as the same dataset; --index writes
// each output piece's index beside it, holding exactly the piece's records;
// what cannot be indexed is refused with one line, exit 2, nothing written.
// The indexes are read back with the library's reader (mapped_index.hpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "extshuffle/dataset/mapped_index.hpp"
#include "extshuffle/dataset/record_index.hpp"
#include "support/command.hpp"

namespace extshuffle::testing::index_cli_test {
namespace {

namespace fs = std::filesystem;

const std::string kBinary = extshuffle_binary();

CommandResult run(const std::string& arguments) { return run_command("\"" + kBinary + "\" " + arguments); }

std::string numbered_lines(int first, int count) {
  std::string text;
  for (int k = first; k < first + count; ++k) text += "{\"n\": " + std::to_string(k) + "}\n";
  return text;
}

// The records an index says `path` holds, cut from its bytes.
std::vector<std::string> indexed_records(const std::string& path, const std::string& index_path) {
  const dataset::MappedIndex index(index_path);
  const std::string bytes = read_file(path);
  std::vector<std::string> records;
  for (std::uint64_t k = 0; k < index.header().records; ++k) {
    records.push_back(bytes.substr(index.offsets()[k], index.offsets()[k + 1] - index.offsets()[k]));
  }
  return records;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = text.find('\n', at) + 1;
    lines.push_back(text.substr(at, end - at));
    at = end;
  }
  return lines;
}

bool one_line_error(const CommandResult& r, const std::string& part) {
  return r.exit_code == 2 && r.out.empty() && std::count(r.err.begin(), r.err.end(), '\n') == 1 &&
         r.err.starts_with("extshuffle: ") && r.err.find(part) != std::string::npos;
}

TEST(IndexCli, IndexOnlyWritesEachFilesIndexBesideItAndTheDirectoryReadsAsBefore) {
  TempDir dir;
  fs::create_directory(dir / "d");
  write_file(dir / "d" / "a.jsonl", numbered_lines(0, 300));
  write_file(dir / "d" / "b.jsonl", numbered_lines(300, 200));
  const CommandResult before = run((dir / "d").string() + " -o /dev/stdout --seed 5");
  ASSERT_EQ(before.exit_code, 0) << before.err;
  const CommandResult indexed = run("--index-only " + (dir / "d").string() + " --stats");
  ASSERT_EQ(indexed.exit_code, 0) << indexed.err;
  EXPECT_NE(indexed.err.find("RESULT records=300 bytes=3190 "), std::string::npos) << indexed.err;
  for (const char* name : {"a.jsonl", "b.jsonl"}) {
    const std::string index = (dir / "d" / (std::string(".") + name + ".extshuffle-index")).string();
    ASSERT_TRUE(fs::exists(index));
    EXPECT_EQ(indexed_records((dir / "d" / name).string(), index), lines_of(read_file(dir / "d" / name)));
  }
  // The hidden indexes are no inputs: the same dataset, the same output.
  const CommandResult after = run((dir / "d").string() + " -o /dev/stdout --seed 5");
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(after.out, before.out);
}

TEST(IndexCli, IndexOnlyWithOneOutputPerInput) {
  TempDir dir;
  write_file(dir / "a.csv", "id\n1\n2\n");
  write_file(dir / "b.csv", "id\n3\n");
  const CommandResult pairs = run("--index-only " + (dir / "a.csv").string() + " -o " + (dir / "a.idx").string() + " " +
                                  (dir / "b.csv").string() + " -o " + (dir / "b.idx").string());
  ASSERT_EQ(pairs.exit_code, 0) << pairs.err;
  EXPECT_EQ(indexed_records((dir / "a.csv").string(), (dir / "a.idx").string()),
            (std::vector<std::string>{"1\n", "2\n"}));
  EXPECT_EQ(dataset::MappedIndex((dir / "b.idx").string()).header().data_offset, 3u);
  EXPECT_FALSE(fs::exists(dir / ".a.csv.extshuffle-index"));
  fs::create_directory(dir / "d");
  write_file(dir / "d" / "x.txt", "a\n");
  write_file(dir / "d" / "y.txt", "b\n");
  const CommandResult many = run("--index-only " + (dir / "d").string() + " -o " + (dir / "d.idx").string());
  EXPECT_TRUE(one_line_error(many, "names the index of one file")) << many.err;
  EXPECT_FALSE(fs::exists(dir / "d.idx"));
}

TEST(IndexCli, IndexWritesEachPiecesIndexBesideIt) {
  TempDir dir;
  write_file(dir / "in.csv", "id,text\n" + numbered_lines(0, 1000));
  fs::create_directory(dir / "out");
  const CommandResult r = run((dir / "in.csv").string() + " -o '" + (dir / "out").string() +
                              "/{split}-{shard}.csv' --split train=0.9,val=rest --shards 3 --seed 2 --index");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::size_t records = 0;
  for (const char* split : {"train", "val"}) {
    for (int shard = 0; shard < 3; ++shard) {
      const std::string piece =
          (dir / "out" / (std::string(split) + "-0000" + std::to_string(shard) + ".csv")).string();
      const std::string index = dataset::index_path_beside(piece);
      ASSERT_TRUE(fs::exists(index)) << index;
      const dataset::MappedIndex mapped(index);
      EXPECT_EQ(mapped.header().reading.header_records, 1u);
      EXPECT_EQ(mapped.header().input.bytes, fs::file_size(piece));
      std::vector<std::string> lines = lines_of(read_file(piece));
      lines.erase(lines.begin());  // the header
      EXPECT_EQ(indexed_records(piece, index), lines);
      records += lines.size();
    }
  }
  EXPECT_EQ(records, 1000u);
  // In place (shuf -o): the input replaced by its shuffle, the index beside it.
  write_file(dir / "same.txt", numbered_lines(0, 50));
  const CommandResult in_place =
      run("-o " + (dir / "same.txt").string() + " " + (dir / "same.txt").string() + " --seed 1 --index");
  ASSERT_EQ(in_place.exit_code, 0) << in_place.err;
  EXPECT_EQ(indexed_records((dir / "same.txt").string(), (dir / ".same.txt.extshuffle-index").string()).size(), 50u);
}

TEST(IndexCli, WhatCannotBeIndexedIsRefusedWithOneLine) {
  TempDir dir;
  write_file(dir / "in.txt", "a\nb\n");
  write_file(dir / "in.txt.gz", "not really gzip");
  const std::string in = (dir / "in.txt").string();
  const std::vector<std::pair<std::string, std::string>> cases{
      {"--index-only " + (dir / "in.txt.gz").string(), "is compressed (gzip): its records cannot be read at an offset"},
      {"--index-only - < " + in, "standard input cannot be indexed"},
      {"--index-only", "standard input cannot be indexed"},
      {in + " --index", "give -o FILE, not standard output"},
      {in + " -o " + (dir / "out.txt.zst").string() + " --index", "is compressed: an index gives offsets"},
      {in + " -o /dev/null --index", "is not a regular file"},
      {"--index-only " + in + " --shards 2 -o '" + (dir / "p-{shard}").string() + "'", "--index-only writes indexes"},
      {"--index-only --index " + in, "cannot be combined"},
      {in + " -o " + (dir / "o.txt").string() + " --index -n 0", "not -e, -i, --repeat or -n 0"},
      {"-i 1-5 -o " + (dir / "o.txt").string() + " --index", "not -e, -i, --repeat or -n 0"},
      {"--index-only " + in + " --dry-run", "--index-only writes indexes"},
  };
  for (const auto& [arguments, message] : cases) {
    const CommandResult r = run(arguments);
    EXPECT_TRUE(one_line_error(r, message)) << arguments << ": " << r.exit_code << " " << r.err;
  }
  EXPECT_FALSE(fs::exists(dir / ".in.txt.extshuffle-index"));
  EXPECT_FALSE(fs::exists(dir / "o.txt"));
  const CommandResult help = run("--help");
  EXPECT_NE(help.out.find("--index-only"), std::string::npos);
}

}  // namespace
}  // namespace extshuffle::testing::index_cli_test
