// The manifest (extshuffle/dataset/manifest.hpp) on its own: what it says of
// a run (the options that define the permutation, every input, every output
// with its digest) parses back as JSON with those values, each digest the
// file's in place; it is in place only once committed.
// Deterministic: no test here depends on chance.
#include "extshuffle/dataset/manifest.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "dataset/sharded_output.hpp"
#include "extshuffle/core/plan.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/io/file_digest.hpp"
#include "extshuffle/io/publication.hpp"
#include "support/command.hpp"
#include "support/commit_steps.hpp"

namespace extshuffle::dataset::manifest_test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

class ManifestTest : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Two real shards of lines ("x\ny\n", "z\n"), finished, not committed.
  std::unique_ptr<ShardedOutput> finished_shards(const std::string& pattern) const {
    OutputSpec spec;
    spec.pattern = path(pattern);
    spec.options.shard_count = 2;
    auto out = std::make_unique<ShardedOutput>(spec);
    OutputRecordForm lines;  // set, not designated: GCC 12 warns of each member left out
    lines.syntax = formats::framed_syntax(formats::Format::kLines, false);
    out->start(lines, 3);
    const std::string bytes = "x\ny\nz\n";
    out->write(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size());
    out->finish();
    return out;
  }

  // A run's result with two real shards of lines, as the driver reports it.
  ManifestEntry shards_of(const std::string& pattern) {
    const std::unique_ptr<ShardedOutput> out = finished_shards(pattern);
    testing::commit_outputs({out.get()});
    ManifestEntry run;
    run.inputs = {InputFileInfo{"in.txt", 6, 3}};
    run.format = "lines";
    run.records_written = 3;
    run.records = 3;
    run.outputs = out->files();
    return run;
  }

  ManifestOptions options(const std::string& manifest) const {
    ManifestOptions o;
    o.run.seed = 42;
    o.output.shard_count = 2;
    o.input.format = formats::Format::kTfrecord;  // every --format has a name in the manifest
    o.run.manifest_path = path(manifest);
    return o;
  }

  testing::TempDir dir_;
};

TEST_F(ManifestTest, SaysWhatWasReadHowAndWhatWasWritten) {
  ManifestWriter manifest(options("m.json"));
  manifest.add(shards_of("s-{shard}.txt"));
  const json m = json::parse(manifest.text());
  EXPECT_EQ(m.at("seed"), 42);
  EXPECT_EQ(m.at("permutation_version"), core::kPermutationVersion);
  EXPECT_EQ(m.at("options").at("format"), "tfrecord");
  EXPECT_EQ(m.at("options").at("shards"), 2);
  EXPECT_EQ(m.at("records"), 3);
  ASSERT_EQ(m.at("inputs").size(), 1u);
  EXPECT_EQ(m.at("inputs")[0].at("records"), 3);
  ASSERT_EQ(m.at("outputs").size(), 2u);
  EXPECT_EQ(m.at("outputs")[0].at("path"), path("s-00000.txt"));
  EXPECT_EQ(m.at("outputs")[0].at("records"), 2);
  EXPECT_EQ(m.at("outputs")[1].at("bytes"), 2);
  EXPECT_EQ(m.at("outputs")[1].at("xxh64").get<std::string>().size(), 16u);
  // Not in place until its rename, the commit's last (output_commit.hpp);
  // then exactly the text.
  const std::string text = manifest.text();
  manifest.prepare();
  EXPECT_FALSE(fs::exists(path("m.json")));
  const std::optional<io::PendingRename> rename = manifest.pending_rename();
  ASSERT_TRUE(rename.has_value());
  io::Publication publication({*rename});
  publication.prepare();
  publication.publish();
  manifest.published();
  std::ifstream in(path("m.json"));
  EXPECT_SAME_BYTES(std::string(std::istreambuf_iterator<char>(in), {}), text);
}

TEST_F(ManifestTest, AlignedDatasetsAreNumbered) {
  ManifestWriter manifest(options("m.json"));
  manifest.add(shards_of("a-{shard}.txt"));
  manifest.add(shards_of("b-{shard}.txt"));
  const json m = json::parse(manifest.text());
  ASSERT_EQ(m.at("outputs").size(), 4u);
  EXPECT_EQ(m.at("outputs")[0].at("dataset"), 0);
  EXPECT_EQ(m.at("outputs")[3].at("dataset"), 1);
  EXPECT_EQ(m.at("inputs")[1].at("dataset"), 1);
}

// The commit fills each dataset's files into the manifest from its output,
// with the sizes and digests taken as the bytes went to them: a reader's
// xxh64 of each file in place is the manifest's.
TEST_F(ManifestTest, TheCommitWritesEachOutputsDigestAsTheFileInPlaceHasIt) {
  const std::unique_ptr<ShardedOutput> out = finished_shards("c-{shard}.txt");
  ManifestEntry entry;
  entry.records = entry.records_written = 3;
  testing::commit_outputs({out.get()}, options("m.json"), {entry});
  const json m = json::parse(testing::read_file(path("m.json")));
  ASSERT_EQ(m.at("outputs").size(), 2u);
  for (const json& output : m.at("outputs")) {
    const std::string file = output.at("path").get<std::string>();
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0) << file;
    const io::FileDigest digest = io::read_back_digest(fd, file);
    ::close(fd);
    EXPECT_EQ(output.at("bytes"), digest.bytes) << file;
    EXPECT_EQ(output.at("xxh64"), io::xxh64_hex(digest.xxh64)) << file;
  }
  // xxh64 (seed 0) of "x\ny\n" and of "z\n", as xxh64sum prints them.
  EXPECT_EQ(m.at("outputs")[0].at("xxh64"), "47fff4c1f08f793b");
}

TEST_F(ManifestTest, AnUncommittedManifestLeavesNothing) {
  {
    ManifestWriter manifest(options("m.json"));
    manifest.add(shards_of("s-{shard}.txt"));
  }
  for (const auto& entry : fs::directory_iterator(dir_.path())) {
    EXPECT_EQ(entry.path().filename().string().rfind("s-0000", 0), 0u) << entry.path();
  }
}

}  // namespace
}  // namespace extshuffle::dataset::manifest_test
