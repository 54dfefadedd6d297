// Black-box tests of what a tar archive can hold beyond samples of regular
// members (docs/cli.md, "Tar archives"), with archives written by GNU tar
// and Python's tarfile, outputs read back by Python's tarfile:
// - archives concatenated with cat: the data after the first end-of-archive
//   marker is refused with one line naming its byte (never dropped, with or
//   without --verify), and --ignore-zeros reads every archive of it;
// - GNU sparse members in pax form (GNU.sparse.* records, formats 0.0, 0.1
//   and 1.0) are refused like the old 'S' form;
// - hard-link members skipped, and a sample cut across two archives, are a
//   warning with the count at the default verbosity; with --verify a cut
//   sample is an error.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "support/command.hpp"
#include "support/tools.hpp"

namespace extshuffle::testing::tar_edges_cli_test {
namespace {

const std::string kBinary = extshuffle_binary();

// Two archives of 40 samples (keys a0.. and b0..), each of a .txt and a
// .json member, written by Python's tarfile (padded to 10240 bytes, as GNU
// tar pads), then concatenated; a sparse file archived by GNU tar in each
// pax sparse format and in the GNU one; an archive with a hard link; two
// archives that cut sample 'cut' in two.
const char* const kMake = R"SH(
set -e
/usr/bin/python3 - <<'PY'
import io, tarfile
for prefix in "ab":
    with tarfile.open(prefix + ".tar", "w", format=tarfile.PAX_FORMAT) as t:
        for i in range(40):
            for ext in ("txt", "json"):
                data = ("%s%d.%s " % (prefix, i, ext) * (i + 1)).encode()
                info = tarfile.TarInfo("%s%d.%s" % (prefix, i, ext)); info.size = len(data)
                t.addfile(info, io.BytesIO(data))
def archive(name, members):
    with tarfile.open(name, "w") as t:
        for member, data in members:
            info = tarfile.TarInfo(member); info.size = len(data)
            t.addfile(info, io.BytesIO(data))
archive("cut1.tar", [("x.txt", b"x"), ("cut.jpg", b"jpeg")])
archive("cut2.tar", [("cut.txt", b"caption"), ("y.txt", b"y")])
PY
cat a.tar b.tar > ab.tar
mkdir sparse && cd sparse
truncate -s 2M f.bin && printf xyz | dd of=f.bin bs=1 seek=1000000 conv=notrunc 2>/dev/null && echo hi > f.txt
for v in 0.0 0.1 1.0; do tar --sparse --sparse-version=$v --format=posix -cf ../sparse-$v.tar f.bin f.txt; done
tar --sparse --format=gnu -cf ../sparse-gnu.tar f.bin f.txt
cd .. && mkdir links && cd links && echo one > s1.txt && echo two > s2.txt && ln s1.txt s3.txt
tar --format=gnu -cf ../links.tar s1.txt s2.txt s3.txt
)SH";

// Every regular member of the archives after "--" read by tarfile: the
// same members, by name and bytes, as the archives before it (concatenated
// ones read with ignore_zeros). Prints their count.
const char* const kSameMembers = R"PY(
import sys, tarfile
def members(paths):
    out = []
    for p in paths:
        with tarfile.open(p, ignore_zeros=True) as t:
            out += [(m.name, t.extractfile(m).read()) for m in t if m.isreg()]
    return out
split = sys.argv.index("--")
inputs, outputs = members(sys.argv[1:split]), members(sys.argv[split + 1:])
if sorted(inputs) != sorted(outputs): sys.exit("members differ: %d in, %d out" % (len(inputs), len(outputs)))
print(len(outputs))
)PY";

class TarEdgesCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    write_file(*dir_ / "make.sh", kMake);
    write_file(*dir_ / "same.py", kSameMembers);
    const auto r = run_command(in_dir("sh make.sh"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string in_dir(const std::string& command) { return "cd " + dir_->path().string() + " && " + command; }
  static CommandResult shuffle(const std::string& options) { return run_command(in_dir(kBinary + " " + options)); }
  static std::size_t lines(const std::string& text) { return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')); }
  static TempDir* dir_;
};
TempDir* TarEdgesCli::dir_ = nullptr;

TEST_F(TarEdgesCli, ConcatenatedArchivesAreRefusedNamingTheByteOrReadWhole) {
  SKIP_WITHOUT("python3", "tar");
  const std::string at = std::to_string(std::filesystem::file_size(*dir_ / "a.tar"));
  for (const std::string verify : {"", " --verify"}) {
    const auto r = shuffle("--seed 1 ab.tar -o out.tar" + verify);
    EXPECT_EQ(r.exit_code, 1) << verify << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find("input 'ab.tar': data at byte " + at + " after the end-of-archive marker"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("--ignore-zeros"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(*dir_ / "out.tar"));
  }
  const auto r = shuffle("--seed 1 --ignore-zeros --verify ab.tar -o out.tar");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto same = run_command(in_dir("/usr/bin/python3 same.py a.tar b.tar -- out.tar"));
  EXPECT_EQ(same.exit_code, 0) << same.err;
  EXPECT_EQ(same.out, "160\n");
  // The same samples as the two archives named one by one, in the same order.
  ASSERT_EQ(shuffle("--seed 1 a.tar b.tar -o two.tar").exit_code, 0);
  EXPECT_SAME_BYTES(read_file(*dir_ / "out.tar"), read_file(*dir_ / "two.tar"));
}

TEST_F(TarEdgesCli, SparseMembersInEveryFormAreRefused) {
  SKIP_WITHOUT("tar");
  for (const std::string version : {"0.0", "0.1", "1.0", "gnu"}) {
    const auto r = shuffle("--seed 1 sparse-" + version + ".tar -o out.tar");
    EXPECT_EQ(r.exit_code, 1) << version << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find("sparse file"), std::string::npos) << version << ": " << r.err;
    EXPECT_FALSE(std::filesystem::exists(*dir_ / "out.tar"));
  }
}

TEST_F(TarEdgesCli, HardLinksAndCutSamplesAreWarnedOfAndCutSamplesFailVerify) {
  SKIP_WITHOUT("python3", "tar");
  auto r = shuffle("--seed 1 links.tar -o out.tar");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: tar: 1 hard-link members skipped"), std::string::npos) << r.err;
  r = shuffle("--seed 1 cut1.tar cut2.tar -o out.tar");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: tar: 1 samples cut across two archives"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'cut'"), std::string::npos) << r.err;
  const auto same = run_command(in_dir("/usr/bin/python3 same.py cut1.tar cut2.tar -- out.tar"));
  EXPECT_EQ(same.out, "4\n") << same.err;
  r = shuffle("--seed 1 --verify cut1.tar cut2.tar -o cut.tar");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("sample 'cut' is cut across 'cut1.tar' and 'cut2.tar'"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(*dir_ / "cut.tar"));
}

// Compressions extshuffle does not read are named, with the pipe that reads
// them (by the real tools); a directory of data files with files of other
// kinds beside them is refused, listing those, never read as records.
TEST_F(TarEdgesCli, OtherCompressionsAndMixedDirectoriesAreNamed) {
  SKIP_WITHOUT("tar", "gzip", "xz", "bzip2", "lz4", "zstd");
  for (const std::string tool : {"xz", "bzip2", "lz4"}) {
    const std::string extension = tool == "bzip2" ? "bz2" : tool;
    ASSERT_EQ(run_command(in_dir(tool + " -q -c a.tar > a.tar." + extension)).exit_code, 0) << tool;
    ASSERT_EQ(run_command(in_dir("cp a.tar." + extension + " mystery")).exit_code, 0);
    for (const std::string& input : {"a.tar." + extension, std::string("mystery")}) {
      const auto r = shuffle("--seed 1 " + input + " -o out.tar");
      EXPECT_EQ(r.exit_code, 2) << input << ": " << r.err;
      EXPECT_EQ(lines(r.err), 1u) << r.err;
      const std::string format = input == "mystery" ? "FORMAT" : "tar";
      EXPECT_NE(r.err.find("-compressed, which is not read (gzip and zstd are): decompress it through a pipe, " +
                           tool + " -dc '" + input + "' | extshuffle --format " + format + " - -o OUT"),
                std::string::npos)
          << r.err;
    }
  }
  ASSERT_EQ(run_command(in_dir("mkdir mixed && cp a.tar b.tar mixed/ && echo hi > mixed/README.md && "
                               "echo {} > mixed/dataset_info.json")).exit_code, 0);
  const auto r = shuffle("--seed 1 mixed -o out.tar");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("input directory 'mixed': holds files that are not tar data beside its tar files "
                       "(README.md, dataset_info.json): name the data files instead (e.g. mixed/*.tar*)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("--format"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(*dir_ / "out.tar"));
}

// --progress into a file (a log, mpirun's pipe): plain lines, each whole,
// never a carriage return or an escape code.
TEST_F(TarEdgesCli, ProgressIntoAFileIsPlainLines) {
  ASSERT_EQ(run_command(in_dir("seq 1 3000000 > lines.txt")).exit_code, 0);
  const auto r = shuffle("--seed 1 --progress -S 8M lines.txt -o lines.out 2> progress.log");
  ASSERT_EQ(r.exit_code, 0);
  const std::string log = read_file(*dir_ / "progress.log");
  EXPECT_EQ(log.find('\r'), std::string::npos) << log;
  EXPECT_EQ(log.find('\033'), std::string::npos) << log;
  EXPECT_NE(log.find("%), "), std::string::npos) << "no progress line: " << log;
  EXPECT_TRUE(log.empty() || log.back() == '\n') << log;
  EXPECT_LE(lines(log), 11u) << log;
}

// A run without --seed that writes a dataset says the seed it drew (the
// only way to write the same dataset again), at the default verbosity; the
// RESULT line always holds the seed.
TEST_F(TarEdgesCli, ADrawnSeedIsSaidForADatasetAndIsInTheResultLine) {
  SKIP_WITHOUT("tar");
  auto r = shuffle("a.tar -o 'drawn-{shard}.tar' --shards 2 --stats");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::size_t at = r.err.find("extshuffle: seed ");
  ASSERT_NE(at, std::string::npos) << r.err;
  const std::string seed = r.err.substr(at + 17, r.err.find(' ', at + 17) - at - 17);
  EXPECT_NE(r.err.find("drawn for this dataset (repeat the run with --seed " + seed + ")"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" seed=" + seed + "\n"), std::string::npos) << r.err;
  ASSERT_EQ(shuffle("a.tar -o 'again-{shard}.tar' --shards 2 --seed " + seed).exit_code, 0);
  EXPECT_SAME_BYTES(read_file(*dir_ / "drawn-00000.tar"), read_file(*dir_ / "again-00000.tar"));
  r = shuffle("a.tar -o plain.tar");  // one output file, as shuf: the seed with -v only
  EXPECT_EQ(r.err, "");
}

}  // namespace
}  // namespace extshuffle::testing::tar_edges_cli_test
