// Black-box tests of .npy input: shuffled along axis 0, header unchanged,
// the same permutation as the raw rows with --record-size, at any budget;
// and the bad inputs of the formats issue.
#include <gtest/gtest.h>

#include <regex>

#include "support/command.hpp"
#include "support/npy_files.hpp"
#include "support/permutations.hpp"
#include "support/tools.hpp"

namespace extshuffle::testing::npy_cli_test {
namespace {

const std::string kBinary = extshuffle_binary();
const std::string kDict = "{'descr': '<f8', 'fortran_order': False, 'shape': (%ROWS%, 3), }";

std::string rows_of_24_bytes(std::uint64_t rows) {
  const auto data = numbered_records(rows, 24);
  return std::string(reinterpret_cast<const char*>(data.data()), data.size());
}

// Runs `script` with Debian's python3 and its numpy (the python3 on PATH may
// lack numpy), from a file `name` in `dir`.
CommandResult run_python(const TempDir& dir, const std::string& name, const std::string& script) {
  write_file(dir / name, script);
  return run_command("/usr/bin/python3 " + (dir / name).string());
}

std::string dict_for(std::uint64_t rows) { return std::regex_replace(kDict, std::regex("%ROWS%"), std::to_string(rows)); }

TEST(NpyCli, ShufflesRowsAndKeepsTheHeaderForEveryVersion) {
  for (int version : {1, 2, 3}) {
    TempDir dir;
    const std::string data = rows_of_24_bytes(5000);
    const std::string file = npy_file(version, dict_for(5000), data);
    const std::size_t header = file.size() - data.size();
    write_file(dir / "x.npy", file);
    write_file(dir / "rows.bin", data);
    const auto r = run_command(kBinary + " --seed 3 " + (dir / "x.npy").string() + " " + (dir / "y.npy").string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_EQ(run_command(kBinary + " --seed 3 --record-size 24 " + (dir / "rows.bin").string() + " " +
                          (dir / "rows_out.bin").string()).exit_code, 0);
    const std::string out = read_file(dir / "y.npy");
    ASSERT_EQ(out.size(), file.size());
    EXPECT_SAME_BYTES(out.substr(0, header), file.substr(0, header)) << "version " << version;
    // The permutation depends on the seed and the row count only.
    EXPECT_SAME_BYTES(out.substr(header), read_file(dir / "rows_out.bin")) << "version " << version;
    EXPECT_DIFFERENT_BYTES(out.substr(header), data);
  }
}

TEST(NpyCli, SameBytesWhetherInRamOrThroughDisk) {
  TempDir dir;
  const std::uint64_t rows = 200000;  // 4.8 MB of rows
  write_file(dir / "x.npy", npy_file(1, dict_for(rows), rows_of_24_bytes(rows)));
  const std::string base = kBinary + " --seed 9 --leaf-records 256 --fanout 8 -T " + dir.path().string() + " " +
                           (dir / "x.npy").string() + " ";
  const auto ram = run_command(base + (dir / "ram.npy").string() + " -S 64M --stats");
  const auto disk = run_command(base + (dir / "disk.npy").string() + " -S 600K --stats");
  ASSERT_EQ(ram.exit_code, 0) << ram.err;
  ASSERT_EQ(disk.exit_code, 0) << disk.err;
  EXPECT_NE(ram.err.find("passes=1"), std::string::npos) << ram.err;
  EXPECT_NE(disk.err.find("passes=3"), std::string::npos) << disk.err;
  EXPECT_SAME_BYTES(read_file(dir / "ram.npy"), read_file(dir / "disk.npy"));
}

TEST(NpyCli, BadArraysAreOneLineErrorsAndLeaveNothing) {
  const std::string good = npy_file(1, dict_for(10), rows_of_24_bytes(10));
  const std::pair<std::string, std::string> cases[] = {
      {good.substr(0, 30), "truncated .npy header"},
      {good.substr(0, good.size() - 5), "data holds 235 bytes but its shape and dtype need 240"},
      {good + "x", "data holds 241 bytes"},
      {npy_file(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (10, 3), }", rows_of_24_bytes(10)),
       "Fortran-order"},
      {npy_file(1, "{'descr': '|O', 'fortran_order': False, 'shape': (10,), }", std::string(80, '\0')),
       "Python objects"},
  };
  for (const auto& [file, reason] : cases) {
    TempDir dir;
    write_file(dir / "bad.npy", file);
    const auto r = run_command(kBinary + " " + (dir / "bad.npy").string() + " " + (dir / "out.npy").string());
    EXPECT_EQ(r.exit_code, 1) << reason << ": " << r.err;
    EXPECT_NE(r.err.find(reason), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "out.npy")) << reason;
  }
  TempDir dir;
  write_file(dir / "x.npy", good);
  // -n K keeps the first K rows of the permutation, under a header whose shape says K.
  const auto shortened = run_command(kBinary + " -n 3 --seed 5 " + (dir / "x.npy").string() + " " +
                                     (dir / "o.npy").string());
  EXPECT_EQ(shortened.exit_code, 0) << shortened.err;
  ASSERT_EQ(run_command(kBinary + " --seed 5 " + (dir / "x.npy").string() + " " + (dir / "all.npy").string())
                .exit_code, 0);
  const std::string head = read_file(dir / "o.npy");
  const std::string whole = read_file(dir / "all.npy");
  EXPECT_NE(head.find("'shape': (3, 3)"), std::string::npos) << head;
  EXPECT_EQ(head.size() % 24, whole.size() % 24);
  EXPECT_SAME_BYTES(head.substr(head.size() - 72), whole.substr(whole.size() - 240, 72));
  std::filesystem::remove(dir / "o.npy");
  const auto r = run_command(kBinary + " --record-size 8 " + (dir / "x.npy").string() + " " + (dir / "o.npy").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("rows are 24 bytes, not --record-size 8"), std::string::npos) << r.err;
}

// Several aligned inputs, one permutation: features and labels stay aligned,
// each output equals a separate run with the same seed, and different record
// counts are an error before anything is written.
TEST(NpyCli, AlignedInputsShareOnePermutation) {
  TempDir dir;
  const std::uint64_t rows = 3000;
  write_file(dir / "x.npy", npy_file(1, dict_for(rows), rows_of_24_bytes(rows)));
  const auto labels = numbered_records(rows, 8);
  write_file(dir / "y.bin", std::string(reinterpret_cast<const char*>(labels.data()), labels.size()));
  const std::string d = dir.path().string();
  const auto r = run_command(kBinary + " --seed 7 --record-size 24 " + d + "/x.npy " + d + "/x.npy -o " + d +
                             "/bad.npy -o " + d + "/bad2.npy");
  EXPECT_EQ(r.exit_code, 0) << r.err;  // the same file twice: same rows, same permutation
  EXPECT_SAME_BYTES(read_file(dir / "bad.npy"), read_file(dir / "bad2.npy"));
  ASSERT_EQ(run_command(kBinary + " --seed 7 " + d + "/x.npy " + d + "/x_alone.npy").exit_code, 0);
  // Separate runs with the same seed and N are aligned too: rows of 24 bytes in
  // a .npy and raw 8-byte labels (a single --record-size cannot serve both).
  ASSERT_EQ(run_command(kBinary + " --seed 7 --record-size 8 " + d + "/y.bin " + d + "/y_alone.bin").exit_code, 0);
  const std::string x_out = read_file(dir / "x_alone.npy");
  const std::string y_out = read_file(dir / "y_alone.bin");
  const std::size_t header = x_out.size() - rows * 24;
  const auto x_indices = record_indices(std::as_bytes(std::span(x_out.data() + header, rows * 24)), 24);
  const auto y_indices = record_indices(std::as_bytes(std::span(y_out.data(), y_out.size())), 8);
  EXPECT_EQ(x_indices, y_indices);  // separate runs, same seed and N: aligned
  EXPECT_TRUE(is_permutation_of_iota(x_indices));
  EXPECT_SAME_BYTES(read_file(dir / "bad.npy"), x_out);

  write_file(dir / "short.npy", npy_file(1, dict_for(rows - 1), rows_of_24_bytes(rows - 1)));
  const auto mismatch = run_command(kBinary + " --seed 7 " + d + "/x.npy " + d + "/short.npy -o " + d +
                                    "/o1.npy -o " + d + "/o2.npy");
  EXPECT_EQ(mismatch.exit_code, 1);
  EXPECT_NE(mismatch.err.find("inputs differ in record count"), std::string::npos) << mismatch.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "o1.npy"));
  EXPECT_FALSE(std::filesystem::exists(dir / "o2.npy"));
  const auto unpaired = run_command(kBinary + " " + d + "/x.npy " + d + "/short.npy " + d + "/x.npy -o " + d +
                                    "/o1.npy -o " + d + "/o2.npy");
  EXPECT_EQ(unpaired.exit_code, 2);
  EXPECT_NE(unpaired.err.find("give one INPUT per -o"), std::string::npos) << unpaired.err;
}

// Arrays with no rows, or rows of no bytes, come back unchanged.
TEST(NpyCli, EmptyArraysComeBackUnchanged) {
  for (const char* dict : {"{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }",
                           "{'descr': '<f4', 'fortran_order': False, 'shape': (5, 0), }"}) {
    TempDir dir;
    const std::string file = npy_file(1, dict, "");
    write_file(dir / "e.npy", file);
    const auto r = run_command(kBinary + " " + (dir / "e.npy").string() + " " + (dir / "o.npy").string());
    EXPECT_EQ(r.exit_code, 0) << dict << ": " << r.err;
    EXPECT_SAME_BYTES(read_file(dir / "o.npy"), file) << dict;
  }
}

// Files written and read back by numpy itself (Debian's python3-numpy, which
// scripts/install-deps.sh installs): rows of a 2-D float32 array, a
// structured array and a 1-D unicode array come back as permutations of the
// originals, with dtype and shape unchanged.
TEST(NpyCli, RoundTripThroughNumpy) {
  SKIP_WITHOUT("python3-numpy");
  TempDir dir;
  const std::string d = dir.path().string();
  const std::string write = "import numpy as np\n"
                            "np.save('" + d + "/a.npy', np.arange(3000, dtype='<f4').reshape(1000, 3))\n"
                            "s = np.zeros(500, dtype=[('x', '<f8'), ('k', '<i2'), ('v', '<u1', (3,))])\n"
                            "s['x'] = np.arange(500); s['k'] = -np.arange(500); s['v'][:, 1] = np.arange(500) % 251\n"
                            "np.save('" + d + "/s.npy', s)\n"
                            "np.save('" + d + "/u.npy', np.array([str(i) * (i % 5 + 1) for i in range(300)]))\n";
  ASSERT_EQ(run_python(dir, "write.py", write).exit_code, 0);
  for (const char* name : {"a", "s", "u"}) {
    const auto r = run_command(kBinary + " --seed 5 " + d + "/" + name + ".npy " + d + "/" + name + "_out.npy");
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
  }
  const std::string check =
      "import numpy as np\n"
      "for name in 'asu':\n"
      "    a = np.load('" + d + "/' + name + '.npy'); b = np.load('" + d + "/' + name + '_out.npy')\n"
      "    assert a.dtype == b.dtype and a.shape == b.shape, name\n"
      "    assert not np.array_equal(a, b), name\n"
      "    key = lambda x: sorted(bytes(r) for r in (x.view(np.uint8).reshape(len(x), -1)))\n"
      "    assert key(a) == key(b), name\n"
      "print('ok')\n";
  const auto r = run_python(dir, "check.py", check);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "ok\n");
}

// A header with a key given twice, read as NumPy reads it (the last value).
// The file: shape (20, 1) then (10, 2) of int64, 16-byte rows to
// NumPy (it came out cut into 8-byte halves of rows, exit 0); and every key
// repeated (a dtype '<i4' then '<f8', fortran_order True then False).
// numpy loads each input and output: the output holds the input's rows,
// whole, in another order, with its dtype and shape. The first 4 rows (-n)
// and two shards say their own rows in the shape NumPy reads (the last).
TEST(NpyCli, RepeatedHeaderKeysAreReadAsNumpyReadsThem) {
  SKIP_WITHOUT("python3-numpy");
  TempDir dir;
  const std::string d = dir.path().string();
  const std::string write =
      "import numpy as np, struct\n"
      "def save(path, header, data):\n"
      "    text = header + ' ' * (63 - (10 + len(header)) % 64) + '\\n'\n"
      "    open(path, 'wb').write(b'\\x93NUMPY\\x01\\x00' + struct.pack('<H', len(text)) + text.encode() + data)\n"
      "save('" + d + "/shape.npy', \"{'descr': '<i8', 'fortran_order': False, 'shape': (20, 1), 'shape': (10, 2), }\",\n"
      "     np.arange(20, dtype='<i8').tobytes())\n"
      "save('" + d + "/all.npy', \"{'descr': '<i4', 'fortran_order': True, 'shape': (400, 3), 'descr': '<f8', \"\n"
      "     \"'fortran_order': False, }\", np.arange(1200, dtype='<f8').tobytes())\n";
  const auto written = run_python(dir, "write.py", write);
  ASSERT_EQ(written.exit_code, 0) << written.err;
  for (const char* name : {"shape", "all"}) {
    const auto r = run_command(kBinary + " --seed 2 " + d + "/" + name + ".npy -o " + d + "/" + name + "_out.npy");
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
  }
  for (const std::string& extra : {"-n 4 -o " + d + "/head.npy", "--shards 2 -o " + d + "/part-{shard}.npy"}) {
    const auto r = run_command(kBinary + " --seed 2 " + d + "/shape.npy " + extra);
    ASSERT_EQ(r.exit_code, 0) << extra << ": " << r.err;
  }
  const std::string check =
      "import numpy as np\n"
      "head = np.load('" + d + "/head.npy'); out = np.load('" + d + "/shape_out.npy')\n"
      "assert head.shape == (4, 2) and np.array_equal(head, out[:4]), head\n"
      "parts = [np.load('" + d + "/part-%05d.npy' % k) for k in range(2)]\n"
      "assert [p.shape for p in parts] == [(5, 2), (5, 2)] and np.array_equal(np.concatenate(parts), out), parts\n"
      "for name, shape, dtype in (('shape', (10, 2), '<i8'), ('all', (400, 3), '<f8')):\n"
      "    a = np.load('" + d + "/' + name + '.npy'); b = np.load('" + d + "/' + name + '_out.npy')\n"
      "    assert a.shape == b.shape == shape and a.dtype == b.dtype == np.dtype(dtype), (name, a.shape, b.shape)\n"
      "    width = shape[1]\n"
      "    assert all(r[0] % width == 0 and list(r) == list(range(int(r[0]), int(r[0]) + width)) for r in b), name\n"
      "    assert sorted(map(tuple, b.tolist())) == sorted(map(tuple, a.tolist())), name\n"
      "    assert not np.array_equal(a, b), name\n"
      "print('ok')\n";
  const auto r = run_python(dir, "check.py", check);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "ok\n");
}

}  // namespace
}  // namespace extshuffle::testing::npy_cli_test
