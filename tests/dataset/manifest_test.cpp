// The manifest (extshuffle/dataset/manifest.hpp) on its own: what it says of
// a run (the options that define the permutation, every input, every output
// with its digest) parses back as JSON with those values; --verify checks
// the files as they lie against it; it is in place only once committed.
// Deterministic: no test here depends on chance.
#include "extshuffle/dataset/manifest.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "dataset/sharded_output.hpp"
#include "extshuffle/core/plan.hpp"
#include "extshuffle/errors.hpp"
#include "support/command.hpp"

namespace extshuffle::dataset::manifest_test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

class ManifestTest : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // A run's result with two real shards of lines, as the driver reports it.
  ManifestEntry shards_of(const std::string& pattern) {
    OutputSpec spec;
    spec.pattern = path(pattern);
    spec.options.shard_count = 2;
    ShardedOutput out(spec);
    out.start(OutputRecordForm{0, formats::framed_syntax(formats::Format::kLines, false), "", false}, 3);
    const std::string bytes = "x\ny\nz\n";
    out.write(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size());
    out.finish();
    out.prepare_commit();
    out.publish();
    ManifestEntry run;
    run.inputs = {InputFileInfo{"in.txt", 6, 3}};
    run.format = "lines";
    run.records_written = 3;
    run.records = 3;
    run.outputs = out.files();
    return run;
  }

  ManifestOptions options(const std::string& manifest) const {
    ManifestOptions o;
    o.seed = 42;
    o.output.shard_count = 2;
    o.input.format = formats::Format::kTfrecord;  // every --format has a name in the manifest
    o.path = path(manifest);
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
  // Not in place until committed; then exactly the text.
  EXPECT_FALSE(fs::exists(path("m.json")));
  const std::string text = manifest.text();
  manifest.commit();
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

TEST_F(ManifestTest, VerifyReadsTheFilesBackAndRefusesAChangedOne) {
  ManifestOptions o = options("m.json");
  o.verify = true;
  const ManifestEntry run = shards_of("s-{shard}.txt");
  {
    ManifestWriter manifest(o);
    manifest.add(run);
    EXPECT_NO_THROW(manifest.commit());
  }
  std::ofstream(path("s-00001.txt"), std::ios::app) << "w\n";  // changed after the run
  o.path = path("m2.json");
  ManifestWriter manifest(o);
  manifest.add(run);
  try {
    manifest.commit();
    FAIL() << "a changed output passed --verify";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("verify failed: output '" + path("s-00001.txt") + "'"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(path("m2.json")));
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
