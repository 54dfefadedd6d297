// The Job's plan (src/driver/job_files.cpp) on its own, in a directory of
// real files: the names it expands (every shard and split with --shards, one
// per split with --shard-size, the manifest last), the inputs it reads
// (directories expanded), the descriptors it counts, and what it refuses
// before any work, with the words it refuses them in: two writes to one
// file (however the file is named), a write to an input beyond shuf's
// in-place -o, an output inside an input directory, and a pattern that
// cannot name its pieces. Nothing here is written: the plan only looks.
#include "extshuffle/driver/job_files.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "extshuffle/dataset/output_parts.hpp"
#include "extshuffle/errors.hpp"
#include "support/command.hpp"

namespace extshuffle::driver::job_files_test {
namespace {

namespace fs = std::filesystem;

class JobFilesTest : public ::testing::Test {
 protected:
  JobFilesTest() {
    testing::write_file(path("a.txt"), "a1\na2\n");
    testing::write_file(path("b.txt"), "b1\n");
    fs::create_directory(path("in"));
    testing::write_file(path("in/x.txt"), "x\n");
    testing::write_file(path("in/y.txt"), "y\n");
  }

  std::string path(const std::string& name) const { return (dir_.path() / name).string(); }

  // A Job of `datasets` (inputs, output) with `options`, as make_job builds it.
  static Job job(std::vector<JobDataset> datasets, JobOptions options = {}) {
    return make_job(std::move(options), std::move(datasets));
  }

  // The message the Job of `datasets` and `options` is refused with
  // (UsageError, from make_job or check_job_files), or "" when it is planned.
  static std::string refusal(std::vector<JobDataset> datasets, JobOptions options = {}) {
    try {
      check_job_files(job(std::move(datasets), std::move(options)));
    } catch (const UsageError& e) {
      return e.what();
    }
    return "";
  }

  testing::TempDir dir_;
};

TEST_F(JobFilesTest, OneFileToOneFileReadsAndWritesThoseNames) {
  const JobFiles plan = check_job_files(job({{{path("a.txt")}, path("out.txt")}}));
  EXPECT_EQ(plan.reads, std::vector<std::string>{path("a.txt")});
  EXPECT_EQ(plan.writes, std::vector<std::string>{path("out.txt")});
  ASSERT_EQ(plan.read_files.size(), 1u);
  struct stat st {};
  ASSERT_EQ(::stat(path("a.txt").c_str(), &st), 0);
  EXPECT_EQ(plan.read_files[0].first, st.st_dev);
  EXPECT_EQ(plan.read_files[0].second, st.st_ino);
  EXPECT_EQ(plan.output_files, 1u);
  struct rlimit limit {};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &limit), 0);
  if (limit.rlim_cur != RLIM_INFINITY) {
    EXPECT_GT(plan.descriptors, plan.output_files + plan.reads.size());
  }
}

TEST_F(JobFilesTest, MoreOutputFilesThanTheProcessMayOpenAreRefusedBeforeTheirNamesAreMade) {
  struct rlimit limit {};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &limit), 0);
  if (limit.rlim_max == RLIM_INFINITY) GTEST_SKIP() << "no limit on open files";
  JobOptions options;
  options.output.shard_count = std::uint64_t{1} << 40;  // names that would take terabytes to list
  EXPECT_NE(refusal({{{path("a.txt")}, path("o-{shard}.txt")}}, options).find("ulimit -n"), std::string::npos);
}

TEST_F(JobFilesTest, StandardOutputIsNoWriteAndAnInputDirectoryStandsForItsFilesInNameOrder) {
  const JobFiles plan = check_job_files(job({{{path("in"), path("a.txt")}, "-"}}));
  EXPECT_EQ(plan.reads, (std::vector<std::string>{path("in/x.txt"), path("in/y.txt"), path("a.txt")}));
  EXPECT_TRUE(plan.writes.empty());
  EXPECT_EQ(plan.read_files.size(), 3u);
}

TEST_F(JobFilesTest, ShardsAndSplitsExpandToEveryNameAndTheManifestComesLast) {
  JobOptions options;
  options.output.shard_count = 2;
  options.output.splits = dataset::parse_split_spec("train=0.5,test=rest");
  options.run.manifest_path = path("m.json");
  const JobFiles plan = check_job_files(job({{{path("a.txt")}, path("{split}-{shard}-of-{shards}.txt")}}, options));
  EXPECT_EQ(plan.writes, (std::vector<std::string>{path("train-00000-of-00002.txt"), path("train-00001-of-00002.txt"),
                                                   path("test-00000-of-00002.txt"), path("test-00001-of-00002.txt"),
                                                   path("m.json")}));
  EXPECT_EQ(plan.output_files, 4u);
}

TEST_F(JobFilesTest, WithAShardSizeTheCountIsKnownOnlyAtTheEnd) {
  JobOptions options;
  options.output.shard_bytes = 1000;
  options.output.splits = dataset::parse_split_spec("train=0.5,test=rest");
  const JobFiles plan = check_job_files(job({{{path("a.txt")}, path("{split}-{shard}.txt")}}, options));
  // One name per split stands for its pieces in the checks.
  EXPECT_EQ(plan.writes, (std::vector<std::string>{path("train-00000.txt"), path("test-00000.txt")}));
  EXPECT_EQ(plan.output_files, 0u);
}

TEST_F(JobFilesTest, AlignedDatasetsGetTheirOwnNamesEach) {
  JobOptions options;
  options.output.shard_count = 3;
  const JobFiles plan = check_job_files(
      job({{{path("a.txt")}, path("xs-{shard}.txt")}, {{path("b.txt")}, path("ys-{shard}.txt")}}, options));
  EXPECT_EQ(plan.reads, (std::vector<std::string>{path("a.txt"), path("b.txt")}));
  ASSERT_EQ(plan.writes.size(), 6u);
  EXPECT_EQ(plan.writes[2], path("xs-00002.txt"));
  EXPECT_EQ(plan.writes[3], path("ys-00000.txt"));
  EXPECT_EQ(plan.output_files, 6u);
}

TEST_F(JobFilesTest, PatternsThatCannotNameTheirPiecesAreRefused) {
  JobOptions shards;
  shards.output.shard_count = 2;
  EXPECT_NE(refusal({{{path("a.txt")}, path("out.txt")}}, shards), "");            // no {shard}
  EXPECT_NE(refusal({{{path("a.txt")}, "-"}}, shards), "");                        // standard output
  EXPECT_NE(refusal({{{path("a.txt")}, path("o-{shard}-{x}.txt")}}, shards), "");  // a stray placeholder
  JobOptions splits;
  splits.output.splits = dataset::parse_split_spec("train=0.5,test=rest");
  EXPECT_NE(refusal({{{path("a.txt")}, path("out.txt")}}, splits), "");  // no {split}
  EXPECT_EQ(refusal({{{path("a.txt")}, path("{split}.txt")}}, splits), "");
}

TEST_F(JobFilesTest, TwoWritesToOneFileAreRefusedHoweverItIsNamed) {
  const std::string out = path("out.txt");
  EXPECT_NE(refusal({{{path("a.txt")}, out}, {{path("b.txt")}, out}}).find("two writes to one file"),
            std::string::npos);
  // ./x and x, and a file that does not exist yet: compared by directory and name.
  const std::string dotted = (dir_.path() / "." / "out.txt").string();
  EXPECT_NE(refusal({{{path("a.txt")}, out}, {{path("b.txt")}, dotted}}).find("two writes to one file"),
            std::string::npos);
  // A hard link to an existing output.
  testing::write_file(out, "old\n");
  ASSERT_EQ(::link(out.c_str(), path("link.txt").c_str()), 0);
  EXPECT_NE(refusal({{{path("a.txt")}, out}, {{path("b.txt")}, path("link.txt")}}).find("two writes to one file"),
            std::string::npos);
  // The manifest named as an output.
  JobOptions options;
  options.run.manifest_path = out;
  EXPECT_NE(refusal({{{path("a.txt")}, out}}, options).find("two writes to one file"), std::string::npos);
  // Writes into a character device are harmless: /dev/null twice is allowed.
  EXPECT_EQ(refusal({{{path("a.txt")}, "/dev/null"}, {{path("b.txt")}, "/dev/null"}}), "");
}

TEST_F(JobFilesTest, AWriteToAnInputIsRefusedButShufsInPlaceForm) {
  // -o of a single dataset naming its input: shuffled in place, as shuf -o.
  const JobFiles in_place = check_job_files(job({{{path("a.txt")}, path("a.txt")}}));
  EXPECT_EQ(in_place.writes, std::vector<std::string>{path("a.txt")});
  // Not for aligned datasets, nor for one dataset's other input.
  EXPECT_NE(refusal({{{path("a.txt")}, path("b.txt")}, {{path("b.txt")}, path("o.txt")}}).find("is the input"),
            std::string::npos);
  JobOptions options;
  options.run.manifest_path = path("b.txt");
  EXPECT_NE(refusal({{{path("a.txt"), path("b.txt")}, path("o.txt")}}, options).find("is the input"),
            std::string::npos);
}

TEST_F(JobFilesTest, AnOutputInsideAnInputDirectoryIsRefused) {
  EXPECT_NE(refusal({{{path("in")}, path("in/out.txt")}}).find("lies in the input directory"), std::string::npos);
  EXPECT_EQ(refusal({{{path("in")}, path("out.txt")}}), "");
}

TEST_F(JobFilesTest, ANameThatCannotBeCreatedIsRefusedBeforeAnyWork) {
  for (const std::string& name :
       {path("missing/out.txt"), path("a.txt/out.txt"), path("in"), path(std::string(300, 'n'))}) {
    EXPECT_NE(refusal({{{path("b.txt")}, name}}).find("cannot write output"), std::string::npos) << name;
    std::error_code error;
    EXPECT_FALSE(fs::is_regular_file(name, error)) << name;  // nothing made
  }
}

}  // namespace
}  // namespace extshuffle::driver::job_files_test
