// A checkpointed walk (ioperm/walk_checkpoint.hpp) killed at every one of
// its points and resumed from the last durable one gives the bytes of an
// uninterrupted walk, for fixed-size and framed records, chunks in memory
// and routed, at two and three levels of the plan (tiny plan constants).
// The kill is an exception thrown by the checkpoint itself, just before or
// just after a point is made durable; the scratch file (in memory) and the
// output up to the durable point are what a killed process leaves. A
// damaged bucket read back by the resumed walk is found by its checksum.
#include "extshuffle/ioperm/walk_checkpoint.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "extshuffle/errors.hpp"
#include "extshuffle/io/block_file.hpp"
#include "extshuffle/io/scratch_damage.hpp"
#include "extshuffle/ioperm/fixed_size_shuffle.hpp"
#include "extshuffle/ioperm/text_shuffle.hpp"
#include "support/permutations.hpp"
#include "support/text_records.hpp"

namespace extshuffle::ioperm::walk_checkpoint_test {
namespace {

using core::PlanConstants;

struct Killed {};

// Every point durable at once; the run dies at point `kill_at`, before or
// after it is durable. Pass 2's points are due at every `emit_due_every`-th
// ask only (a busy syncer's): the walk skips the others.
class MemoryCheckpoint final : public WalkCheckpoint {
 public:
  MemoryCheckpoint(const std::string& output, WalkResume start, int kill_at, bool after, int emit_due_every)
      : output_(output), start_(std::move(start)), durable_(start_), kill_at_(kill_at), after_(after),
        emit_due_every_(emit_due_every) {}

  const WalkResume& resume() const override { return start_; }
  bool scatter_point_due(std::uint64_t, std::size_t) override { return true; }
  void scattered(const WalkResume& point) override { reached(point); }
  void scatter_done(const io::SplitState& buckets) override {
    WalkResume point;
    point.phase = WalkResume::Phase::kBuckets;
    point.buckets = buckets;
    reached(point);
  }
  void emitted(const WalkResume& point, std::function<void()> release) override {
    WalkResume kept = point;
    kept.buckets = durable_.buckets;  // the scatter's, which a point of pass 2 does not repeat
    reached(kept);
    release();
  }
  bool emit_point_due() override { return emit_asks_++ % emit_due_every_ == 0; }
  void settle() override {}

  int points() const { return points_; }
  const WalkResume& durable() const { return durable_; }
  std::size_t durable_output() const { return durable_output_; }

 private:
  void reached(const WalkResume& point) {
    const bool kill = points_++ == kill_at_;
    if (kill && !after_) throw Killed{};
    durable_ = point;
    durable_output_ = output_.size();
    if (kill) throw Killed{};
  }
  const std::string& output_;
  WalkResume start_, durable_;
  std::size_t durable_output_ = 0;
  int kill_at_;
  bool after_;
  int emit_due_every_, emit_asks_ = 0;
  int points_ = 0;
};

// One walk of `input` (fixed-size records when record_size > 0, else lines)
// into `output`, on `scratch`, checkpointed by `checkpoint` when given.
WalkStats walk(const std::string& input, std::uint64_t records, std::size_t record_size, std::uint64_t memory,
               io::BlockFile& scratch, std::string& output, WalkCheckpoint* checkpoint) {
  auto source = io::BlockFile::in_memory();
  source->write_now(input.data(), 0, input.size());
  io::ByteExtents data;
  data.append({source.get(), 0, input.size()});
  const OutputSink sink = [&](const std::byte* bytes, std::size_t n) {
    output.append(reinterpret_cast<const char*>(bytes), n);
  };
  WalkOptions o;
  o.record_size = record_size;
  o.run.seed = 17;
  o.run.constants = PlanConstants{64, 4};
  o.run.memory_bytes = memory;
  o.checkpoint = checkpoint;
  if (record_size > 0) return shuffle_fixed_size(data, records, scratch, 0, o, sink);
  TextOptions text;
  text.walk = o;
  text.syntax = formats::RecordSyntax{'\n', false, ','};
  std::uint64_t longest = 0;
  for (std::size_t at = 0; at < input.size();) {
    const std::size_t end = input.find('\n', at) + 1;
    longest = std::max<std::uint64_t>(longest, end - at);
    at = end;
  }
  return shuffle_text(data, records, longest, scratch, 0, text, sink);
}

struct Case {
  std::string name;
  std::string input;
  std::uint64_t records;
  std::size_t record_size;
  std::uint64_t memory;
  int emit_due_every = 1;
};

// Kills the walk at each point (before and after it is durable), resumes
// it from the durable one, and compares with the walk never killed.
void kill_at_every_point(const Case& c) {
  SCOPED_TRACE(c.name);
  std::string expected;
  auto plain_scratch = io::BlockFile::in_memory();
  const WalkStats stats = walk(c.input, c.records, c.record_size, c.memory, *plain_scratch, expected, nullptr);
  ASSERT_GT(stats.nodes_on_disk, 0u) << c.name << ": the root must go through scratch space";
  int points = 0;
  {
    std::string output;
    auto scratch = io::BlockFile::in_memory();
    MemoryCheckpoint counter(output, {}, -1, false, c.emit_due_every);
    walk(c.input, c.records, c.record_size, c.memory, *scratch, output, &counter);
    ASSERT_EQ(output, expected) << c.name << ": checkpointed, never killed";
    // Pass 2's last point is made, skipped or not: the walk ends durable.
    ASSERT_EQ(counter.durable().phase, WalkResume::Phase::kBuckets) << c.name;
    ASSERT_EQ(counter.durable().records_emitted, c.records) << c.name;
    points = counter.points();
  }
  ASSERT_GT(points, 3) << c.name;
  ::testing::Test::RecordProperty(c.name, points);
  // Every point where there are few; otherwise 12 spread over both passes
  // (each kill is a whole walk and its resume).
  std::vector<int> kills;
  for (int i = 0; i < std::min(points, 12); ++i) kills.push_back(points <= 12 ? i : i * (points - 1) / 11);
  for (const int k : kills) {
    for (const bool after : {false, true}) {
      std::string output;
      auto scratch = io::BlockFile::in_memory();
      MemoryCheckpoint killed(output, {}, k, after, c.emit_due_every);
      EXPECT_THROW(walk(c.input, c.records, c.record_size, c.memory, *scratch, output, &killed), Killed);
      output.resize(killed.durable_output());  // what the output's checkpoint kept
      MemoryCheckpoint resumed(output, killed.durable(), -1, false, c.emit_due_every);
      walk(c.input, c.records, c.record_size, c.memory, *scratch, output, &resumed);
      ASSERT_EQ(output.size(), expected.size()) << c.name << " killed at point " << k << (after ? " after" : " before");
      ASSERT_TRUE(output == expected) << c.name << " killed at point " << k << (after ? " after" : " before");
    }
  }
}

std::string fixed_input(std::uint64_t n, std::size_t r) {
  const auto bytes = testing::numbered_records(n, r);
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

// Lines of 1 to about 3000 bytes, a few much longer: heavy-tailed.
std::string lines_input(std::uint64_t n) {
  std::string text;
  std::uint64_t state = 88172645463325252ull;
  for (std::uint64_t i = 0; i < n; ++i) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    const std::uint64_t length = (state % 97 == 0) ? 2000 + state % 1000 : 1 + state % 200;
    text += std::to_string(i) + ":" + std::string(length, static_cast<char>('a' + i % 26)) + "\n";
  }
  return text;
}

TEST(WalkCheckpoint, FixedRecordsChunksInMemoryTwoAndThreeLevels) {
  const PlanConstants c{64, 4};
  kill_at_every_point({"fixed 2 levels", fixed_input(200, 64), 200, 64, minimum_memory_bytes(c, 64, 200)});
  kill_at_every_point({"fixed 3 levels", fixed_input(1000, 64), 1000, 64, minimum_memory_bytes(c, 64, 1000)});
}

TEST(WalkCheckpoint, LargeFixedRecordsRouted) {
  const std::uint64_t n = 250;
  const std::uint64_t minimum = minimum_memory_bytes(PlanConstants{64, 4}, 4096, n);
  kill_at_every_point({"4 KiB records routed", fixed_input(n, 4096), n, 4096, minimum});
}

TEST(WalkCheckpoint, HeavyTailedLinesRoutedAndInMemoryChunks) {
  const std::string two = lines_input(200), three = lines_input(1000);
  kill_at_every_point({"lines 2 levels, chunks in memory", two, 200, 0, two.size() / 2});
  kill_at_every_point({"lines 3 levels, chunks in memory", three, 1000, 0, three.size() / 2});
  const std::uint64_t minimum = minimum_memory_bytes_text(PlanConstants{64, 4}, 1000, 3100, three.size());
  kill_at_every_point({"lines 3 levels, routed", three, 1000, 0, minimum});
}

// A busy syncer: pass 2 makes a point at every other destination only,
// each carrying the releases of those it skipped, and always its last.
TEST(WalkCheckpoint, SkippedPointsOfPass2) {
  const std::string lines = lines_input(1000);
  kill_at_every_point({"lines 3 levels, 1 point in 2", lines, 1000, 0, lines.size() / 2, 2});
  kill_at_every_point({"fixed 2 levels, 1 point in 2", fixed_input(200, 64), 200, 64,
                       minimum_memory_bytes(PlanConstants{64, 4}, 64, 200), 2});
}

// A bucket of the killed run changed in scratch: the resumed walk reads it
// back and stops at its checksum, never trusting it.
TEST(WalkCheckpoint, DamagedBucketIsFoundByItsChecksum) {
  const std::string input = fixed_input(1000, 64);
  std::string output;
  auto scratch = io::BlockFile::in_memory();
  MemoryCheckpoint killed(output, {}, 2, true, 1);
  const std::uint64_t memory = minimum_memory_bytes(PlanConstants{64, 4}, 64, 1000);
  EXPECT_THROW(walk(input, 1000, 64, memory, *scratch, output, &killed), Killed);
  ASSERT_EQ(killed.durable().phase, WalkResume::Phase::kScatter);
  const io::StoredStream& bucket = killed.durable().buckets.streams.back();
  ASSERT_FALSE(bucket.extents.empty());
  char byte = 0;
  scratch->read_now(&byte, bucket.extents[0].first, 1);
  byte = static_cast<char>(byte ^ 0x40);
  scratch->write_now(&byte, bucket.extents[0].first, 1);
  output.resize(killed.durable_output());
  MemoryCheckpoint resumed(output, killed.durable(), -1, false, 1);
  try {
    walk(input, 1000, 64, memory, *scratch, output, &resumed);
    FAIL() << "a damaged bucket was trusted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), io::kCheckpointRegionDamaged);
  }
}

}  // namespace
}  // namespace extshuffle::ioperm::walk_checkpoint_test
