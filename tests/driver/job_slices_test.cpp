// The rooms' slices of a Job's options (driver/job_slices.hpp,
// driver/mode_options.hpp): every option a room reads reaches it with the
// value the Job holds. Each option is set to a value unlike its default, so
// that one left out of a slice (and so silently at its default below the
// driver) fails here. Deterministic: nothing depends on chance.
#include "extshuffle/driver/job_slices.hpp"

#include <gtest/gtest.h>

#include "driver/mode_options.hpp"
#include "extshuffle/dataset/output_parts.hpp"

namespace extshuffle::driver::job_slices_test {
namespace {

// A Job's options with no field at its default.
JobOptions unusual_options() {
  JobOptions o;
  o.seed = 7;
  o.record_size = 12;
  o.memory_bytes = std::uint64_t{3} << 20;
  o.tmpdir = "/scratch";
  o.threads = 5;
  o.format = formats::Format::kTsv;
  o.zero_terminated = true;
  o.ignore_zeros = true;
  o.header_lines = 2;
  o.skip_empty = true;
  o.constants = core::PlanConstants{1024, 8};
  o.device = device::Device::kCuda;
  o.head_count = 9;
  o.echo = true;
  o.echo_items = {"a", "b"};
  o.integer_range = true;
  o.range_low = 3;
  o.range_high = 11;
  o.repeat = true;
  o.verify = true;
  o.dry_run = true;
  o.shard_count = 4;
  o.shard_bytes = 1000;
  o.splits = dataset::parse_split_spec("train=0.5,test=rest");
  o.manifest_path = "m.json";
  o.clean = true;
  return o;
}

void expect_input_options(const dataset::DatasetOptions& input) {
  EXPECT_EQ(input.format, formats::Format::kTsv);
  EXPECT_EQ(input.record_size, 12u);
  EXPECT_TRUE(input.zero_terminated);
  EXPECT_TRUE(input.ignore_zeros);
  EXPECT_EQ(input.header_lines, 2);
  EXPECT_TRUE(input.skip_empty);
  EXPECT_TRUE(input.verify);
  EXPECT_TRUE(input.repeat);
}

void expect_output_options(const dataset::OutputOptions& output) {
  ASSERT_EQ(output.splits.size(), 2u);
  EXPECT_EQ(output.splits[1].name, "test");
  EXPECT_TRUE(output.splits[1].is_rest);
  EXPECT_EQ(output.shard_count, 4u);
  EXPECT_EQ(output.shard_bytes, 1000u);
  EXPECT_TRUE(output.clean);
}

TEST(JobSlicesTest, TheDatasetSliceHoldsHowInputsAreReadAndOutputsCut) {
  const JobOptions o = unusual_options();
  expect_input_options(dataset_options(o));
  expect_output_options(output_options(o));
}

TEST(JobSlicesTest, TheManifestSliceHoldsWhatDefinesTheOutput) {
  const dataset::ManifestOptions m = manifest_options(unusual_options());
  EXPECT_EQ(m.path, "m.json");
  EXPECT_EQ(m.seed, 7u);
  EXPECT_EQ(m.constants.leaf_records, 1024u);
  EXPECT_EQ(m.constants.max_fanout, 8u);
  EXPECT_EQ(m.head_count, 9u);
  expect_input_options(m.input);
  expect_output_options(m.output);
}

TEST(JobSlicesTest, TheModeSliceHoldsWhatShufsModesRead) {
  const modes::ModeOptions m = mode_options(unusual_options());
  EXPECT_EQ(m.seed, 7u);
  EXPECT_EQ(m.constants.leaf_records, 1024u);
  EXPECT_EQ(m.memory_bytes, std::uint64_t{3} << 20);
  EXPECT_EQ(m.tmpdir, "/scratch");
  EXPECT_EQ(m.threads, 5);
  EXPECT_EQ(m.device, device::Device::kCuda);
  EXPECT_EQ(m.head_count, 9u);
  EXPECT_TRUE(m.echo);
  EXPECT_EQ(m.echo_items, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(m.integer_range);
  EXPECT_EQ(m.range_low, 3u);
  EXPECT_EQ(m.range_high, 11u);
  EXPECT_TRUE(m.repeat);
  EXPECT_TRUE(m.dry_run);
  expect_input_options(m.input);
}

TEST(JobSlicesTest, TheManifestEntryHoldsWhatTheRunReadAndWrote) {
  RunResult run;
  run.inputs = {InputFileInfo{"in.txt", 6, 3}};
  run.format = "lines";
  run.stats.records = 3;
  run.records_written = 2;
  run.outputs = {OutputFileInfo{"out.txt", "", 0, 1, 2, 4, "0123456789abcdef"}};
  run.stale_pieces = {"old-00003.txt"};
  run.warnings = {"not the manifest's"};
  const dataset::ManifestEntry entry = manifest_entry(run);
  ASSERT_EQ(entry.inputs.size(), 1u);
  EXPECT_EQ(entry.inputs[0].path, "in.txt");
  EXPECT_EQ(entry.inputs[0].records, 3u);
  EXPECT_EQ(entry.format, "lines");
  EXPECT_EQ(entry.records, 3u);
  EXPECT_EQ(entry.records_written, 2u);
  ASSERT_EQ(entry.outputs.size(), 1u);
  EXPECT_EQ(entry.outputs[0].xxh64, "0123456789abcdef");
  EXPECT_EQ(entry.stale_pieces, run.stale_pieces);
}

}  // namespace
}  // namespace extshuffle::driver::job_slices_test
