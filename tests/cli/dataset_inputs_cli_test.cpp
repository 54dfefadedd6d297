// Black-box tests of several inputs read as one dataset (docs/cli.md
// "Datasets"): with one -o, the inputs' records concatenated in order and
// shuffled as one permutation, the same bytes as the run of their
// concatenation on standard input, for 1 to 50 inputs of mixed compression
// in every format; directories as inputs; standard input among them; and
// the bad inputs, each a one-line error that leaves nothing behind.
// Deterministic: no test here depends on chance.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include "support/command.hpp"
#include "support/dataset_files.hpp"
#include "support/tools.hpp"

namespace extshuffle::testing::dataset_inputs_cli_test {
namespace {

const std::string kBinary = extshuffle_binary();
// The testing knobs and a small budget, so that big enough runs stream
// through scratch space across the inputs' extents.
const std::string kStreaming = " --leaf-records 256 --fanout 8 -S 2M -j 1 ";
const std::size_t kInputCounts[] = {1, 2, 3, 8, 50};

// Records of input k: a few, none for k = 2 (an input may be empty).
std::size_t records_of(std::size_t k) { return k == 2 ? 0 : 1 + (k * 37) % 23; }

struct Inputs {
  std::string operands;  // the files, in order
  std::string cat;       // what the run must equal: their records, concatenated
};

// Writes `count` inputs from `body(k)` (the plain bytes of input k), with
// `header` on top of each (kept once in `cat`).
template <class Body>
Inputs write_inputs(const TempDir& dir, std::size_t count, const std::string& extension, const std::string& header,
                    Body body) {
  Inputs inputs;
  inputs.cat = header;
  for (std::size_t k = 0; k < count; ++k) {
    const auto path = dir / mixed_name("part-", k, extension);
    write_compressed(path, header + body(k));
    inputs.operands += " " + path.string();
    inputs.cat += body(k);
  }
  return inputs;
}

// The run of `inputs` into OUT and of their concatenation on standard input
// must give the same bytes.
void expect_same_as_cat(const TempDir& dir, const Inputs& inputs, const std::string& options, std::size_t count) {
  write_file(dir / "cat.in", inputs.cat);
  const auto many = run_command(kBinary + options + inputs.operands + " -o " + (dir / "many.out").string());
  ASSERT_EQ(many.exit_code, 0) << count << " inputs: " << many.err;
  const auto one = run_command("cat " + (dir / "cat.in").string() + " | " + kBinary + options + " > " +
                               (dir / "one.out").string());
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_SAME_BYTES(read_file(dir / "many.out"), read_file(dir / "one.out")) << count << " inputs" << options;
  EXPECT_FALSE(read_file(dir / "many.out").empty());
}

TEST(DatasetInputsCli, JsonlConcatenationEqualsTheRunOfItsCat) {
  SKIP_WITHOUT("gzip", "zstd");
  for (const std::size_t count : kInputCounts) {
    TempDir dir;
    const auto inputs = write_inputs(dir, count, ".jsonl", "", [&](std::size_t k) {
      std::string text;
      for (std::size_t i = 0; i < records_of(k) * 40; ++i) {
        text += "{\"file\": " + std::to_string(k) + ", \"line\": " + std::to_string(i) + "}";
        // The last input's last line lacks its newline; the run adds it, as for one file.
        if (k + 1 < count || i + 1 < records_of(k) * 40) text += "\n";
      }
      return text;
    });
    expect_same_as_cat(dir, inputs, " --format jsonl --seed 7 ", count);
    expect_same_as_cat(dir, inputs, " --format jsonl --seed 7 " + kStreaming, count);
  }
}

TEST(DatasetInputsCli, CsvHeadersAreKeptOnceAndQuotedNewlinesStayWhole) {
  SKIP_WITHOUT("gzip", "zstd");
  for (const std::size_t count : kInputCounts) {
    TempDir dir;
    const auto inputs = write_inputs(dir, count, ".csv", "id,text\n", [](std::size_t k) {
      std::string text;
      for (std::size_t i = 0; i < records_of(k) * 20; ++i) {
        text += std::to_string(k) + "-" + std::to_string(i) + ",\"two\nlines, \"\"quoted\"\"\"\n";
      }
      return text;
    });
    expect_same_as_cat(dir, inputs, " --format csv --seed 3 ", count);
  }
}

TEST(DatasetInputsCli, FixedRecordsConcatenationEqualsTheRunOfItsCat) {
  SKIP_WITHOUT("gzip", "zstd");
  for (const std::size_t count : kInputCounts) {
    TempDir dir;
    const auto inputs = write_inputs(dir, count, ".bin", "", [](std::size_t k) {
      std::string text;
      for (std::size_t i = 0; i < records_of(k) * 30; ++i) {
        std::string record(16, static_cast<char>('a' + k % 26));
        record.replace(0, std::to_string(i).size(), std::to_string(i));
        text += record;
      }
      return text;
    });
    expect_same_as_cat(dir, inputs, " --record-size 16 --seed 11 ", count);
    expect_same_as_cat(dir, inputs, " --record-size 16 --seed 11 --leaf-records 256 --fanout 8 -S 12M ", count);
  }
}

// numpy writes the inputs and their concatenation; the run of the inputs
// gives the same bytes as the run of the concatenation (one .npy whose
// shape sums their rows), and numpy reads it back.
TEST(DatasetInputsCli, NpyConcatenationSumsTheRowsAndEqualsTheConcatenatedArray) {
  SKIP_WITHOUT("python3-numpy");
  for (const std::size_t count : {std::size_t{1}, std::size_t{3}, std::size_t{20}}) {
    TempDir dir;
    const auto made = run_python(dir, R"(
import gzip, sys, numpy as np
d, n = sys.argv[1], int(sys.argv[2])
parts = [np.arange(k * 1000, k * 1000 + 3 * (1 + k * 7 % 11)).reshape(-1, 3).astype('<f8') for k in range(n)]
for k, p in enumerate(parts):
    if k % 3 == 1:
        with gzip.open(f'{d}/p{k}.npy.gz', 'wb') as f: np.save(f, p)
    else:
        np.save(f'{d}/p{k}.npy', p)
np.save(f'{d}/all.npy', np.concatenate(parts))
print(' '.join(f'{d}/p{k}.npy' + ('.gz' if k % 3 == 1 else '') for k in range(n)))
)", dir.path().string() + " " + std::to_string(count));
    ASSERT_EQ(made.exit_code, 0) << made.err;
    const std::string operands = made.out.substr(0, made.out.find('\n'));
    const auto many = run_command(kBinary + " --seed 5 " + operands + " -o " + (dir / "many.npy").string());
    ASSERT_EQ(many.exit_code, 0) << many.err;
    ASSERT_EQ(run_command(kBinary + " --seed 5 " + (dir / "all.npy").string() + " " + (dir / "one.npy").string())
                  .exit_code, 0);
    EXPECT_SAME_BYTES(read_file(dir / "many.npy"), read_file(dir / "one.npy")) << count << " inputs";
    const auto loaded = run_python(dir, R"(
import sys, numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
assert a.shape == b.shape and a.dtype == b.dtype and (np.sort(a, axis=0) == np.sort(b, axis=0)).all()
print(a.shape[0])
)", (dir / "many.npy").string() + " " + (dir / "all.npy").string());
    EXPECT_EQ(loaded.exit_code, 0) << loaded.err;
  }
}

// A directory stands for its regular files in byte-wise name order; hidden
// files and subdirectories are left out.
TEST(DatasetInputsCli, DirectoryIsItsFilesInNameOrder) {
  SKIP_WITHOUT("gzip");
  TempDir dir;
  const auto data = dir / "data";
  std::filesystem::create_directories(data / "sub");
  write_compressed(data / "b.jsonl", "{\"b\": 1}\n{\"b\": 2}\n");
  write_compressed(data / "a.jsonl.gz", "{\"a\": 1}\n{\"a\": 2}\n{\"a\": 3}\n");
  write_compressed(data / "B.jsonl", "{\"B\": 1}\n");  // 'B' < 'a' bytewise
  write_file(data / ".hidden.jsonl", "{\"hidden\": 1}\n");
  write_file(data / "sub" / "x.jsonl", "{\"sub\": 1}\n");
  const auto r = run_command(kBinary + " --seed 2 " + data.string() + " -o " + (dir / "d.out").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string listed = " " + (data / "B.jsonl").string() + " " + (data / "a.jsonl.gz").string() + " " +
                             (data / "b.jsonl").string();
  ASSERT_EQ(run_command(kBinary + " --seed 2" + listed + " -o " + (dir / "l.out").string()).exit_code, 0);
  const std::string shuffled = read_file(dir / "d.out");
  EXPECT_SAME_BYTES(shuffled, read_file(dir / "l.out"));
  EXPECT_EQ(std::count(shuffled.begin(), shuffled.end(), '\n'), 6);
  EXPECT_EQ(shuffled.find("hidden"), std::string::npos);
  EXPECT_EQ(shuffled.find("sub"), std::string::npos);
}

// Standard input may be one of several inputs: it is spooled like a pipe.
TEST(DatasetInputsCli, StandardInputAmongTheInputs) {
  TempDir dir;
  write_file(dir / "a.txt", "a1\na2\na3\n");
  write_file(dir / "b.txt", "b1\nb2\n");
  write_file(dir / "c.txt", "c1\n");
  const std::string d = dir.path().string();
  const auto r = run_command("cat " + d + "/b.txt | " + kBinary + " --seed 4 " + d + "/a.txt - " + d + "/c.txt -o " +
                             d + "/piped.out");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(run_command(kBinary + " --seed 4 " + d + "/a.txt " + d + "/b.txt " + d + "/c.txt -o " + d + "/files.out")
                .exit_code, 0);
  EXPECT_SAME_BYTES(read_file(dir / "piped.out"), read_file(dir / "files.out"));
}

struct BadCase {
  const char* name;
  std::string arguments;  // $D: the inputs' directory; outputs go to $D/out, which must stay empty
  int exit_code;
  std::string message;  // a regular expression the one line must match
};

// Every bad input of the issue: a one-line error naming the files, the
// right exit code, and no output file, shard, manifest or temporary left.
TEST(DatasetInputsCli, BadInputsAreOneLineErrorsAndLeaveNothing) {
  SKIP_WITHOUT("python3-numpy");
  const std::string out = " -o '$D/out/s-{shard}.jsonl' --shards 3 --manifest $D/out/m.json";
  const std::vector<BadCase> cases = {
      {"headers differ", "$D/a.csv $D/b.csv -o $D/out/s.csv --manifest $D/out/m.json", 1,
       "inputs differ in their header: '.*a.csv' has 'id,text\\\\n', '.*b.csv' has 'id,txt\\\\n'"},
      {"dtypes differ", "$D/f8.npy $D/f4.npy -o $D/out/s.npy", 1,
       "inputs differ in dtype: '.*f8.npy' holds '<f8', '.*f4.npy' holds '<f4'"},
      {"row shapes differ", "$D/f8.npy $D/f8x4.npy -o $D/out/s.npy", 1,
       "inputs differ in the shape of a row: '.*f8.npy' has rows of shape \\(3,\\), '.*f8x4.npy' of shape \\(4,\\)"},
      {"formats differ", "$D/a.csv $D/x.jsonl" + out, 1, "inputs differ in format: '.*a.csv' is csv, '.*x.jsonl' is jsonl"},
      {"npy and raw records", "$D/f8.npy $D/raw.bin --record-size 24 -o $D/out/s.bin", 1,
       "inputs differ in format: '.*f8.npy' is npy, '.*raw.bin' is binary"},
      {"record size", "$D/raw.bin $D/odd.bin --record-size 24 -o $D/out/s.bin", 1,
       "input '.*odd.bin': its size, 50 bytes, is not a multiple of the record size 24"},
      {"missing shard", "$D/x.jsonl $D/missing.jsonl $D/y.jsonl" + out, 1, "cannot open input '.*missing.jsonl'"},
      {"corrupt gzip", "$D/x.jsonl $D/bad.jsonl.gz" + out, 1, "bad.jsonl.gz' is not valid gzip data"},
      {"stdin twice", "$D/x.jsonl - - " + out, 2, "standard input \\('-'\\) can be read only once"},
      {"empty directory", "$D/x.jsonl $D/empty" + out, 1, "input directory '.*empty': holds no regular file"},
      {"several inputs, no -o", "$D/x.jsonl $D/y.jsonl $D/out/z.jsonl", 2, "too many operands"},
  };
  for (const BadCase& c : cases) {
    TempDir dir;
    const std::string d = dir.path().string();
    std::filesystem::create_directories(dir / "out");
    std::filesystem::create_directories(dir / "empty");
    write_file(dir / "a.csv", "id,text\n1,x\n");
    write_file(dir / "b.csv", "id,txt\n2,y\n");
    write_file(dir / "x.jsonl", "{}\n");
    write_file(dir / "y.jsonl", "[]\n");
    write_file(dir / "raw.bin", std::string(48, 'r'));
    write_file(dir / "odd.bin", std::string(50, 'o'));
    write_file(dir / "bad.jsonl.gz", "\x1f\x8b not really gzip");
    ASSERT_EQ(run_python(dir, R"(
import sys, numpy as np
np.save(sys.argv[1] + '/f8.npy', np.zeros((4, 3), '<f8'))
np.save(sys.argv[1] + '/f4.npy', np.zeros((4, 3), '<f4'))
np.save(sys.argv[1] + '/f8x4.npy', np.zeros((4, 4), '<f8'))
)", d).exit_code, 0);
    const auto r = run_command(kBinary + " " + std::regex_replace(c.arguments, std::regex("\\$D"), d));
    EXPECT_EQ(r.exit_code, c.exit_code) << c.name << ": " << r.err;
    EXPECT_TRUE(std::regex_search(r.err, std::regex("^extshuffle: .*" + c.message + ".*\n$"))) << c.name << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.name << ": " << r.err;
    EXPECT_TRUE(names_in(dir / "out").empty()) << c.name << ":" << joined(names_in(dir / "out"));
  }
}

}  // namespace
}  // namespace extshuffle::testing::dataset_inputs_cli_test
