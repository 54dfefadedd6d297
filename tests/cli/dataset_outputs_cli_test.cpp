// Black-box tests of sharded and split output (docs/cli.md "Datasets"):
// shards and splits are consecutive pieces of the one permutation (they
// concatenate to the unsharded output, headers aside), each a valid file of
// its format that Python's json, csv and numpy read; split sizes follow the
// documented rounding rule exactly; the manifest's digests match the files;
// and a failure leaves no shard, split or manifest. Deterministic: no test
// here depends on chance.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/command.hpp"
#include "support/dataset_files.hpp"
#include "support/tools.hpp"

namespace extshuffle::testing::dataset_outputs_cli_test {
namespace {

const std::string kBinary = extshuffle_binary();

std::string numbered_jsonl(std::size_t first, std::size_t count) {
  std::string text;
  for (std::size_t i = first; i < first + count; ++i) text += "{\"id\": " + std::to_string(i) + "}\n";
  return text;
}

// Three JSONL inputs (one gzip) of 1001 records in all.
std::string jsonl_inputs(const TempDir& dir) {
  write_compressed(dir / "a.jsonl", numbered_jsonl(0, 400));
  write_compressed(dir / "b.jsonl.gz", numbered_jsonl(400, 500));
  write_compressed(dir / "c.jsonl", numbered_jsonl(900, 101));
  return " " + (dir / "a.jsonl").string() + " " + (dir / "b.jsonl.gz").string() + " " + (dir / "c.jsonl").string();
}

// Reads the files named after KIND and JOINED (decompressing .gz and .zst
// with gzip and the zstd tool), checks that each is a valid file of KIND on
// its own (json.loads every line, csv with its header, numpy.load), prints
// their record counts and writes them, concatenated in order, to JOINED.
const char* const kReadShards = R"(
import csv, gzip, io, json, subprocess, sys, numpy as np
def data(path):
    raw = open(path, 'rb').read()
    if path.endswith('.gz'): return gzip.decompress(raw)
    if path.endswith('.zst'): return subprocess.run(['zstd', '-dc', path], capture_output=True, check=True).stdout
    return raw
kind, joined_path, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
joined, counts = b'', []
for path in paths:
    raw = data(path)
    if kind == 'jsonl':
        lines = raw.decode().splitlines(keepends=True)
        for line in lines: json.loads(line)
        joined += raw; counts.append(len(lines))
    elif kind == 'csv':
        rows = list(csv.reader(io.StringIO(raw.decode(), newline='')))
        assert rows[0] == ['id', 'text'], rows[0]
        header = raw[:raw.index(b'\n') + 1]
        joined += raw if not joined else raw[len(header):]; counts.append(len(rows) - 1)
    else:
        a = np.load(io.BytesIO(raw))
        joined = a if isinstance(joined, bytes) else np.concatenate([joined, a]); counts.append(a.shape[0])
if kind == 'npy': np.save(joined_path, joined)
else: open(joined_path, 'wb').write(joined)
print(' '.join(map(str, counts)))
)";

// Runs `options` on `inputs` into `pattern` (under `dir`) and into one file;
// returns the shards' record counts, after checking that every shard
// parses and that they concatenate to the one file.
std::string check_shards(const TempDir& dir, const std::string& kind, const std::string& inputs,
                         const std::string& options, const std::string& pattern, const std::string& one) {
  const auto whole = run_command(kBinary + " --seed 9" + inputs + " -o " + (dir / one).string());
  EXPECT_EQ(whole.exit_code, 0) << whole.err;
  std::filesystem::remove_all(dir / "shards");
  std::filesystem::create_directories(dir / "shards");
  const auto r = run_command(kBinary + " --seed 9" + inputs + options + " -o '" + (dir / "shards" / pattern).string() + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::string files;
  for (const auto& name : names_in(dir / "shards")) files += " " + (dir / "shards" / name).string();
  const std::string joined = (dir / ("joined." + kind)).string();
  std::string arguments = kind;  // appended piecewise: g++ 12 warns (-Wrestrict) on the chained +
  arguments += " ";
  arguments += joined;
  arguments += files;
  const auto read = run_python(dir, kReadShards, arguments);
  EXPECT_EQ(read.exit_code, 0) << read.err;
  EXPECT_TRUE(read_file(joined) == read_file(dir / one)) << options << ": the shards do not concatenate to " << one;
  return read.out;
}

TEST(DatasetOutputsCli, JsonlShardsAreCompleteFilesThatConcatenateToTheWhole) {
  SKIP_WITHOUT("python3-numpy", "gzip", "zstd");
  TempDir dir;
  const std::string inputs = jsonl_inputs(dir);
  EXPECT_EQ(check_shards(dir, "jsonl", inputs, " --shards 4", "part-{shard}-of-{shards}.jsonl.zst", "one.jsonl"),
            "251 250 250 250\n");
  EXPECT_EQ(names_in(dir / "shards")[3], "part-00003-of-00004.jsonl.zst");
}

TEST(DatasetOutputsCli, ShardSizeCutsBetweenRecordsWithinTheSize) {
  SKIP_WITHOUT("python3-numpy", "gzip", "zstd");
  TempDir dir;
  const std::string inputs = jsonl_inputs(dir);
  // Records of 12 and 13 bytes: 100 bytes hold 7 or 8 of them.
  const std::string counts = check_shards(dir, "jsonl", inputs, " --shard-size 100b", "s-{shard}.jsonl.gz", "one.jsonl");
  const auto names = names_in(dir / "shards");
  for (const auto& name : names) {
    const auto size = run_command("gzip -dc " + (dir / "shards" / name).string() + " | wc -c");
    EXPECT_LE(std::stoul(size.out), 100u) << name;
    // Cut only when the next record would not fit: all but the last are nearly full.
    if (name != names.back()) {
      EXPECT_GE(std::stoul(size.out), 100u - 13) << name;
    }
  }
  EXPECT_GT(names.size(), 120u) << counts;
}

TEST(DatasetOutputsCli, CsvShardsEachHaveTheHeader) {
  SKIP_WITHOUT("python3-numpy", "zstd");
  TempDir dir;
  std::string a = "id,text\n", b = "id,text\n";
  for (int i = 0; i < 300; ++i) (i % 2 ? a : b) += std::to_string(i) + ",\"line\nbreak, \"\"q\"\"\"\n";
  write_compressed(dir / "a.csv.zst", a);
  write_compressed(dir / "b.csv", b);
  const std::string inputs = " " + (dir / "a.csv.zst").string() + " " + (dir / "b.csv").string();
  EXPECT_EQ(check_shards(dir, "csv", inputs, " --shards 7", "s-{shard}.csv", "one.csv"), "43 43 43 43 43 43 42\n");
  check_shards(dir, "csv", inputs, " --shard-size 1K", "t-{shard}.csv", "one.csv");
}

TEST(DatasetOutputsCli, NpyShardsEachHaveTheShapeOfTheirRows) {
  SKIP_WITHOUT("python3-numpy", "gzip");
  TempDir dir;
  ASSERT_EQ(run_python(dir, R"(
import sys, numpy as np
np.save(sys.argv[1] + '/x.npy', np.arange(1000 * 4, dtype='<i4').reshape(1000, 4))
np.save(sys.argv[1] + '/y.npy', np.arange(35 * 4, dtype='<i4').reshape(35, 4))
)", dir.path().string()).exit_code, 0);
  const std::string inputs = " " + (dir / "x.npy").string() + " " + (dir / "y.npy").string();
  EXPECT_EQ(check_shards(dir, "npy", inputs, " --shards 3", "s-{shard}.npy", "one.npy"), "345 345 345\n");
  // Rows of 16 bytes: 4000 bytes hold 250 rows.
  EXPECT_EQ(check_shards(dir, "npy", inputs, " --shard-size 4000b", "t-{shard}.npy.gz", "one.npy"),
            "250 250 250 250 35\n");
}

// Split k ends at floor(N x (f_1 + ... + f_k)) + (c_1 + ... + c_k).
TEST(DatasetOutputsCli, SplitCountsFollowTheRoundingRuleExactly) {
  SKIP_WITHOUT("gzip");
  TempDir dir;
  const std::string inputs = jsonl_inputs(dir);  // N = 1001
  const auto count_lines = [&](const std::string& name) {
    const std::string text = read_file(dir / name);
    return std::count(text.begin(), text.end(), '\n');
  };
  const std::string d = dir.path().string();
  ASSERT_EQ(run_command(kBinary + " --seed 9" + inputs + " -o " + d + "/whole.jsonl").exit_code, 0);
  const auto r = run_command(kBinary + " --seed 9" + inputs + " --split train=0.98,val=0.01,test=0.01 -o '" + d +
                             "/{split}.jsonl'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count_lines("train.jsonl"), 980);  // floor(980.98)
  EXPECT_EQ(count_lines("val.jsonl"), 10);     // floor(990.99) - 980
  EXPECT_EQ(count_lines("test.jsonl"), 11);    // 1001 - 990
  EXPECT_SAME_BYTES(read_file(dir / "train.jsonl") + read_file(dir / "val.jsonl") + read_file(dir / "test.jsonl"),
                    read_file(dir / "whole.jsonl"));
  // A split is stable when only later sizes change; counts and fractions mix.
  const std::string train = read_file(dir / "train.jsonl");
  ASSERT_EQ(run_command(kBinary + " --seed 9" + inputs + " --split train=0.98,rest=0.02 -o '" + d + "/{split}.jsonl'")
                .exit_code, 0);
  EXPECT_SAME_BYTES(read_file(dir / "train.jsonl"), train);
  ASSERT_EQ(run_command(kBinary + " --seed 9" + inputs + " --split val=7,test=5,train=0.5 -o '" + d + "/{split}.jsonl'")
                .exit_code, 0);
  EXPECT_EQ(count_lines("val.jsonl"), 7);
  EXPECT_EQ(count_lines("test.jsonl"), 5);
  EXPECT_EQ(count_lines("train.jsonl"), 500);  // floor(1001 x 0.5) + 12 - 12
  EXPECT_SAME_BYTES(
      read_file(dir / "val.jsonl") + read_file(dir / "test.jsonl") + read_file(dir / "train.jsonl"),
      read_file(dir / "whole.jsonl")
          .substr(
              0,
              (read_file(dir / "val.jsonl") + read_file(dir / "test.jsonl") + read_file(dir / "train.jsonl")).size()));
}

// Splits cut into shards, -n: the shards of the first K records.
TEST(DatasetOutputsCli, SplitsOfShardsAndHeadCount) {
  SKIP_WITHOUT("gzip");
  TempDir dir;
  const std::string inputs = jsonl_inputs(dir);
  const std::string d = dir.path().string();
  ASSERT_EQ(run_command(kBinary + " --seed 9 -n 600" + inputs + " -o " + d + "/head.jsonl").exit_code, 0);
  std::filesystem::create_directories(dir / "s");
  const auto r = run_command(kBinary + " --seed 9 -n 600 --shards 2 --split train=0.5,test=0.5" + inputs + " -o '" +
                             d + "/s/{split}-{shard}-of-{shards}.jsonl'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(names_in(dir / "s"), (std::vector<std::string>{"test-00000-of-00002.jsonl", "test-00001-of-00002.jsonl",
                                                          "train-00000-of-00002.jsonl", "train-00001-of-00002.jsonl"}));
  std::string joined;
  for (const char* name : {"train-00000-of-00002.jsonl", "train-00001-of-00002.jsonl", "test-00000-of-00002.jsonl",
                           "test-00001-of-00002.jsonl"}) {
    const std::string text = read_file(dir / "s" / name);
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 150) << name;
    joined += text;
  }
  EXPECT_SAME_BYTES(joined, read_file(dir / "head.jsonl"));
}

TEST(DatasetOutputsCli, ManifestDigestsMatchTheFiles) {
  SKIP_WITHOUT("python3-numpy", "gzip");
  TempDir dir;
  const std::string inputs = jsonl_inputs(dir);
  const std::string d = dir.path().string();
  std::filesystem::create_directories(dir / "s");
  for (const char* verify : {"", " --verify"}) {
    const auto r = run_command(kBinary + " --seed 9 --shards 3 --split train=0.9,val=0.1" + verify + inputs +
                               " -o '" + d + "/s/{split}-{shard}.jsonl.zst' --manifest " + d + "/m.json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto check = run_python(dir, R"(
import json, os, sys, xxhash
m = json.load(open(sys.argv[1]))
assert m['manifest_version'] == 1 and m['permutation_version'] == 2 and m['seed'] == 9, m
assert m['records'] == 1001 and m['records_written'] == 1001 and m['format'] == 'jsonl'
assert [i['records'] for i in m['inputs']] == [400, 500, 101]
assert all(i['bytes'] == os.path.getsize(i['path']) for i in m['inputs'])
assert m['options']['shards'] == 3 and m['options']['split'] == [{'name': 'train', 'size': '0.9'}, {'name': 'val', 'size': '0.1'}]
for o in m['outputs']:
    data = open(o['path'], 'rb').read()
    assert len(data) == o['bytes'] and xxhash.xxh64(data).hexdigest() == o['xxh64'], o
print(' '.join(str(o['records']) for o in m['outputs']))
)", d + "/m.json");
    EXPECT_EQ(check.exit_code, 0) << check.err;
    EXPECT_EQ(check.out, "300 300 300 34 34 33\n") << verify;  // 900 = floor(1001 x 0.9), then 101
  }
}

// Features and labels sharded alike stay aligned shard by shard.
TEST(DatasetOutputsCli, AlignedInputsShardAlike) {
  SKIP_WITHOUT("python3-numpy");
  TempDir dir;
  const std::string d = dir.path().string();
  ASSERT_EQ(run_python(dir, R"(
import sys, numpy as np
np.save(sys.argv[1] + '/x.npy', np.arange(500 * 4).reshape(500, 4)); np.save(sys.argv[1] + '/y.npy', np.arange(500))
)", d).exit_code, 0);
  const auto r = run_command(kBinary + " --seed 3 --shards 3 " + d + "/x.npy " + d + "/y.npy -o '" + d +
                             "/xs-{shard}.npy' -o '" + d + "/ys-{shard}.npy' --manifest " + d + "/m.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto check = run_python(dir, R"(
import json, sys, numpy as np
d = sys.argv[1]
for k in range(3):
    x, y = np.load(f'{d}/xs-{k:05d}.npy'), np.load(f'{d}/ys-{k:05d}.npy')
    assert len(x) == len(y) and (x[:, 0] == 4 * y).all()
print(len(json.load(open(d + '/m.json'))['outputs']))
)", d);
  EXPECT_EQ(check.exit_code, 0) << check.err;
  EXPECT_EQ(check.out, "6\n");
}

// A shard whose name cannot be created (a directory is in the way) is
// refused by the Job's plan before any work: no shard and no manifest.
TEST(DatasetOutputsCli, FailureLeavesNoShardNoSplitAndNoManifest) {
  SKIP_WITHOUT("gzip");
  TempDir dir;
  const std::string inputs = jsonl_inputs(dir);
  const std::string d = dir.path().string();
  std::filesystem::create_directories(dir / "s" / "p-00002.jsonl");
  const auto r = run_command(kBinary + " --seed 9 --shards 4" + inputs + " -o '" + d + "/s/p-{shard}.jsonl' --manifest " +
                             d + "/s/m.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("cannot write output '" + d + "/s/p-00002.jsonl': Is a directory"), std::string::npos) << r.err;
  EXPECT_EQ(names_in(dir / "s"), std::vector<std::string>{"p-00002.jsonl"});
  const std::vector<std::pair<std::string, std::string>> usage = {
      {" --shards 3 -o " + d + "/s/p.jsonl", "several shards need {shard} in the name"},
      {" --split a=0.5,b=0.5 -o " + d + "/s/p.jsonl", "several splits need {split} in the name"},
      {" --shards 3 -o -", "name them with -o PATTERN, not standard output"},
      {" --split a=2000 -o " + d + "/s/{split}.jsonl", "need 2000 records, but the input holds 1001"},
      {" --split a=0.7,b=0.4 -o " + d + "/s/{split}.jsonl", "fractions add up to more than 1"},
      {" --shards 2 --shard-size 1M -o " + d + "/s/{shard}", "--shards and --shard-size cannot be combined"},
      {" --verify --split a=0.5 -o " + d + "/s/{split}", "cannot be combined with a --split that leaves records out"},
  };
  for (const auto& [options, message] : usage) {
    const auto u = run_command(kBinary + inputs + options + " --manifest " + d + "/s/m.json");
    EXPECT_EQ(u.exit_code, 2) << options << ": " << u.err;
    EXPECT_NE(u.err.find(message), std::string::npos) << u.err;
    EXPECT_EQ(names_in(dir / "s"), std::vector<std::string>{"p-00002.jsonl"}) << options;
  }
}

}  // namespace
}  // namespace extshuffle::testing::dataset_outputs_cli_test
