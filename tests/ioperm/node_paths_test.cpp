// Every path the walk can take for a node (src/ioperm/node_path.hpp) gives
// the oracle's bytes, and the schedule (--dry-run) predicts what runs: in
// RAM, chunks in memory (shuffled in groups or through one chunk's index
// permutation), routed record by record (behind position tags, at one and
// several routed levels), and leaves larger than memory through windows;
// for fixed-size records and for heavy-tailed text. Tiny plan constants make
// every path happen in milliseconds. Deterministic: false-failure rate 0.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "extshuffle/ioperm/fixed_size_shuffle.hpp"
#include "extshuffle/ioperm/text_shuffle.hpp"
#include "extshuffle/io/block_file.hpp"
#include "support/permutations.hpp"
#include "support/plan_oracle.hpp"
#include "support/same_bytes.hpp"
#include "support/sanitized_cases.hpp"
#include "support/walk_options.hpp"

namespace extshuffle::ioperm::node_paths_test {
namespace {

using core::PlanConstants;

struct Outcome {
  std::string output;
  WalkStats stats;
};

Outcome run_fixed(const std::vector<std::byte>& input, std::size_t r, const PlanConstants& c, std::uint64_t memory,
                  std::uint64_t head = UINT64_MAX, int threads = 1) {
  auto source = io::BlockFile::in_memory();
  if (!input.empty()) source->write_now(input.data(), 0, input.size());
  auto scratch = io::BlockFile::in_memory();
  WalkOptions options = testing::walk_options(r, 17, c, memory, threads);
  options.output_records = head;
  Outcome out;
  out.stats = shuffle_fixed_size(*source, 0, input.size() / r, *scratch, 0, options,
                               [&](const std::byte* data, std::size_t n) {
                                 out.output.append(reinterpret_cast<const char*>(data), n);
                               });
  return out;
}

std::string as_string(const std::vector<std::byte>& bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

void expect_schedule_is_what_ran(const Schedule& s, const WalkStats& e, const std::string& what) {
  EXPECT_EQ(s.passes, e.passes) << what;
  EXPECT_EQ(s.nodes_on_disk, e.nodes_on_disk) << what;
  EXPECT_EQ(s.nodes_routed, e.nodes_routed) << what;
  EXPECT_EQ(s.nodes_in_windows, e.nodes_in_windows) << what;
  EXPECT_EQ(s.nodes_into_windows, e.nodes_into_windows) << what;
  EXPECT_EQ(s.leaf_orders_on_disk, e.leaf_orders_on_disk) << what;
  EXPECT_EQ(s.bytes_read, e.bytes_read) << what;
  EXPECT_EQ(s.bytes_written, e.bytes_written) << what;
}

// Fixed-size records from 1 to 4096 bytes, budgets from the minimum to
// "fits in RAM": the oracle's bytes, the schedule's IO exactly, and every
// path taken somewhere in the grid.
TEST(NodePaths, FixedRecordsOnEveryPathMatchTheOracleAndTheSchedule) {
  const PlanConstants c{64, 4};
  std::set<std::string> seen;
  for (const std::size_t r : {std::size_t{1}, std::size_t{8}, std::size_t{24}, std::size_t{4096}}) {
    for (const std::uint64_t n : {std::uint64_t{50}, std::uint64_t{256}, std::uint64_t{3000}, std::uint64_t{20011}}) {
      if (n * r > (std::uint64_t{48} << 20)) continue;
      const auto input = testing::numbered_records(n, r);
      const std::string expected = as_string(testing::oracle_shuffle(input, r, 17, c));
      const std::uint64_t minimum = minimum_memory_bytes(c, r, n);
      for (const double factor : {1.0, 1.5, 3.0, 8.0, 40.0, 400.0}) {
        const auto memory = static_cast<std::uint64_t>(factor * static_cast<double>(minimum));
        const std::string what = "r " + std::to_string(r) + " n " + std::to_string(n) + " memory " + std::to_string(memory);
        const Outcome out = run_fixed(input, r, c, memory);
        ASSERT_SAME_BYTES(out.output, expected) << what;
        expect_schedule_is_what_ran(plan_schedule(n, testing::walk_options(r, 17, c, memory, 1)), out.stats, what);
        if (out.stats.nodes_in_memory > 0) seen.insert("in RAM");
        if (out.stats.nodes_routed > 0) seen.insert("routed");
        if (out.stats.nodes_on_disk > out.stats.nodes_routed) seen.insert("chunks in memory");
        if (out.stats.nodes_in_windows > out.stats.nodes_into_windows) seen.insert("leaf in windows");
        if (out.stats.nodes_into_windows > out.stats.leaf_orders_on_disk) seen.insert("routed into windows");
        if (out.stats.passes >= 4 && out.stats.nodes_routed > 0) seen.insert("routed below routed");
      }
    }
  }
  EXPECT_EQ(seen, (std::set<std::string>{"in RAM", "routed", "chunks in memory", "leaf in windows",
                                          "routed into windows", "routed below routed"}));
}

// A plan of several routed levels: each routed level mixes one more chunk
// into its buckets' order (chunk_router.hpp), so the deepest split of a plan
// of eight levels, all routed, holds more chunks open than the first. Records
// of 16 KiB in chunks of 4 at the minimum budget: no chunk fits.
TEST(NodePaths, ManyRoutedLevels) {
  const PlanConstants c{4, 2};
  const std::uint64_t n = 600;
  const auto input = testing::numbered_records(n, 16384);
  const Outcome out = run_fixed(input, 16384, c, minimum_memory_bytes(c, 16384, n));
  EXPECT_GE(out.stats.nodes_routed, 40u);
  EXPECT_GE(out.stats.passes, 6u);
  EXPECT_SAME_BYTES(out.output, as_string(testing::oracle_shuffle(input, 16384, 17, c)));
}

// -n K through routed splits and windows: the first K records of the full
// output, and routed splits write no bucket wholly past K. Under the
// sanitizers (support/sanitized_cases.hpp) two counts that cost a whole run
// each are left out: one within the walk (1000; n - 1 cuts there too) and
// one past its end (n + 5; the whole run's count is past the end too).
TEST(NodePaths, HeadCountThroughRoutedSplitsAndWindows) {
  const PlanConstants c{64, 4};
  // 1500 records of 4 KiB at the minimum budget take the paths 3000 did
  // (5 passes, 21 routed splits, leaves placed in windows) in half the bytes.
  const std::uint64_t n = 1500;
  const auto input = testing::numbered_records(n, 4096);
  const std::uint64_t memory = minimum_memory_bytes(c, 4096, n);
  const Outcome whole = run_fixed(input, 4096, c, memory);
  ASSERT_GT(whole.stats.nodes_routed, 0u);
  for (const std::uint64_t k : testing::thinned_under_sanitizers(
           std::vector<std::uint64_t>{0, 1, 70, 1000, n - 1, n + 5}, std::vector<std::uint64_t>{0, 1, 70, n - 1})) {
    const Outcome head = run_fixed(input, 4096, c, memory, k);
    ASSERT_SAME_BYTES(head.output, whole.output.substr(0, std::min(k, n) * 4096)) << "k " << k;
    if (k < n / 8) {
      EXPECT_LT(head.stats.bytes_written, whole.stats.bytes_written / 2) << "k " << k;
    }
  }
}

TEST(NodePaths, RoutedSplitsAreTheSameOnOneAndTwoThreads) {
  const PlanConstants c{64, 4};
  const auto input = testing::numbered_records(1500, 4096);  // 21 routed splits, as above
  const std::uint64_t memory = minimum_memory_bytes(c, 4096, 1500);
  const Outcome one = run_fixed(input, 4096, c, memory, UINT64_MAX, 1);
  EXPECT_GT(one.stats.nodes_routed, 0u);
  EXPECT_SAME_BYTES(one.output, run_fixed(input, 4096, c, memory, UINT64_MAX, 2).output);
}

TextOptions text_options(const PlanConstants& c, std::uint64_t memory) {
  TextOptions options;
  options.walk.run.seed = 17;
  options.walk.run.constants = c;
  options.walk.run.threads = 1;
  options.walk.run.memory_bytes = memory;
  return options;
}

// Shuffles n text records "I:..." and returns the I of each output record.
std::vector<std::uint64_t> run_numbered_text(io::BlockFile& source, std::uint64_t bytes, std::uint64_t n,
                                             std::uint64_t longest, const TextOptions& options,
                                             WalkStats& stats) {
  auto scratch = io::BlockFile::in_memory();
  std::string output;
  stats = shuffle_text(TextInput{&source, 0, bytes, false, longest}, n, *scratch, 0, options,
                           [&](const std::byte* data, std::size_t size) {
                             output.append(reinterpret_cast<const char*>(data), size);
                           });
  std::vector<std::uint64_t> indices;
  for (std::size_t at = 0; at < output.size();) {
    indices.push_back(std::stoull(output.substr(at, 12)));
    at = output.find('\n', at) + 1;
  }
  return indices;
}

// Text of heavy-tailed (Pareto) record sizes, with a few records far
// longer than the rest, at budgets from the minimum to in RAM: the order of
// fixed-size records, and the schedule's bytes within 5% of what ran (node
// sizes vary: the schedule expects them to, by the records' variance).
TEST(NodePaths, HeavyTailedTextOnEveryPath) {
  const PlanConstants c{64, 4};
  const std::uint64_t n = 6000;
  std::string text;
  std::uint64_t longest = 0;
  double squares = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    // Pareto lengths from a fixed sequence (median ~70 bytes, a tail to 20 KB).
    const double u = (static_cast<double>((i * 2654435761u) % 1000003) + 0.5) / 1000003.0;
    std::uint64_t length = std::min<std::uint64_t>(20000, static_cast<std::uint64_t>(40 / std::pow(u, 0.8)));
    if (i % 997 == 3) length = 20000;
    std::string record = std::to_string(i) + ":" + std::string(length, static_cast<char>('a' + i % 26)) + "\n";
    longest = std::max<std::uint64_t>(longest, record.size());
    squares += static_cast<double>(record.size()) * static_cast<double>(record.size());
    text += record;
  }
  const std::vector<std::uint64_t> order = testing::oracle_order(n, 17, c);
  auto source = io::BlockFile::in_memory();
  source->write_now(text.data(), 0, text.size());
  std::set<std::string> seen;
  const std::uint64_t minimum = minimum_memory_bytes_text(c, n, longest);
  for (const double factor : {1.0, 1.3, 2.0, 4.0, 10.0, 100.0}) {
    const auto memory = static_cast<std::uint64_t>(factor * static_cast<double>(minimum));
    const TextOptions options = text_options(c, memory);
    WalkStats e;
    ASSERT_EQ(run_numbered_text(*source, text.size(), n, longest, options, e), order) << "memory " << memory;
    const double mean = static_cast<double>(text.size()) / n;
    const Schedule s = plan_schedule_text(n, text.size(), longest, options, squares / n - mean * mean);
    EXPECT_NEAR(static_cast<double>(s.bytes_read), static_cast<double>(e.bytes_read), 0.05 * e.bytes_read)
        << "memory " << memory;
    EXPECT_NEAR(static_cast<double>(s.bytes_written), static_cast<double>(e.bytes_written), 0.05 * e.bytes_written)
        << "memory " << memory;
    if (e.nodes_routed > 0) seen.insert("routed");
    if (e.nodes_in_windows > 0) seen.insert("leaf in windows");
    if (e.nodes_in_memory > 0) seen.insert("in RAM");
  }
  EXPECT_EQ(seen, (std::set<std::string>{"routed", "in RAM"}));  // text leaves in windows: text_shuffle_test
}

// Records of 4 KiB in a plan of two levels: two passes, bytes read and
// written within 2.05 times the input (the tags of routed records are 1-3
// bytes). Where the leaves do not fit in memory the routed split writes each
// record straight into its leaf's output window (bucket_windows.hpp), so
// they cost no pass of their own. Only at the very minimum, where the
// windows' write buffers do not fit (a file of more than about budget^2 /
// 1 KiB: 250 windows here), does each leaf go through windows on its own:
// one more write and read, within 3.05 times.
TEST(NodePaths, LargeRecordsReadAndWriteTheirBytesTwice) {
  const PlanConstants c{64, 16};
  const std::uint64_t n = 1000;  // 16 chunks, 16 leaves of 62-63 records
  const auto input = testing::numbered_records(n, 4096);
  const std::string expected = as_string(testing::oracle_shuffle(input, 4096, 17, c));
  const std::uint64_t minimum = minimum_memory_bytes(c, 4096, n);
  const std::uint64_t leaf_bytes = 63 * 4096;
  std::set<std::string> seen;
  for (const std::uint64_t memory : {minimum, leaf_bytes / 2, leaf_bytes, 2 * leaf_bytes, 3 * leaf_bytes, 8 * leaf_bytes}) {
    const Outcome out = run_fixed(input, 4096, c, std::max(memory, minimum));
    ASSERT_SAME_BYTES(out.output, expected) << memory;
    const double bound = memory == minimum ? 3.05 : 2.05;
    if (memory > minimum) {
      EXPECT_EQ(out.stats.passes, 2u) << memory;
    }
    EXPECT_LE(out.stats.bytes_read, bound * static_cast<double>(input.size())) << memory;
    EXPECT_LE(out.stats.bytes_written, bound * static_cast<double>(input.size())) << memory;
    if (out.stats.nodes_in_windows > 0 && out.stats.passes == 2) seen.insert("leaves routed into windows");
    if (out.stats.nodes_in_memory > 0) seen.insert("leaves in RAM");
  }
  EXPECT_EQ(seen, (std::set<std::string>{"leaves routed into windows", "leaves in RAM"}));
}

// A split routing into its leaves' windows whose leaves' orders (4 bytes a
// record of the node) do not fit beside the routing: they go through
// scratch space (leaf_orders.hpp), 4 bytes a record written and read more,
// and the output and the schedule are the same. Leaves of 256 KiB, orders
// of 256 KiB for the root, budgets from the minimum to in RAM.
TEST(NodePaths, LeafOrdersThroughScratchSpace) {
  const PlanConstants c{4096, 16};
  const std::size_t r = 64;
  const std::uint64_t n = 16 * 4096 - 99;
  const auto input = testing::numbered_records(n, r);
  const std::string expected = as_string(testing::oracle_shuffle(input, r, 17, c));
  int on_disk = 0;
  for (std::uint64_t memory = minimum_memory_bytes(c, r, n); memory < n * r; memory += memory / 2) {
    const std::string what = "memory " + std::to_string(memory);
    const Outcome out = run_fixed(input, r, c, memory);
    ASSERT_SAME_BYTES(out.output, expected) << what;
    expect_schedule_is_what_ran(plan_schedule(n, testing::walk_options(r, 17, c, memory, 1)), out.stats, what);
    if (out.stats.leaf_orders_on_disk > 0) {
      ++on_disk;
      EXPECT_EQ(out.stats.passes, 2u) << what;
      EXPECT_LE(out.stats.bytes_read, (2.05 + 8.0 / r) * static_cast<double>(n * r)) << what;
    }
  }
  // (Orders held in memory: FixedRecordsOnEveryPathMatchTheOracleAndTheSchedule.)
  EXPECT_GT(on_disk, 0);
}

// A lognormal factor of median 1 and log-deviation `sigma` for record i,
// from a fixed sequence (Box-Muller on two multiplicative hashes of i).
double lognormal(std::uint64_t i, double sigma) {
  const double u = (static_cast<double>((i * 2654435761u) % 1000003) + 0.5) / 1000003.0;
  const double v = (static_cast<double>((i * 40503u + 7) % 999983) + 0.5) / 999983.0;
  return std::exp(sigma * std::sqrt(-2 * std::log(u)) * std::cos(6.283185307179586 * v));
}

// Heavy-tailed text whose leaves are larger than memory below a routed
// split (lognormal sizes, median ~400 bytes, leaves of ~1000 records): the
// split routes each record into its leaf's output window, so the records'
// bytes are read and written twice (tags of 1-2 bytes aside), and a window
// that turns out larger than memory is cut again on its own.
TEST(NodePaths, HeavyTailedTextRoutedIntoLeafWindows) {
  const PlanConstants c{1024, 8};
  const std::uint64_t n = 8000;
  std::string text;
  std::uint64_t longest = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const auto length = std::min<std::uint64_t>(30000, static_cast<std::uint64_t>(400 * lognormal(i, 1.0)));
    std::string record = std::to_string(i) + ":" + std::string(length, static_cast<char>('a' + i % 26)) + "\n";
    longest = std::max<std::uint64_t>(longest, record.size());
    text += record;
  }
  const std::vector<std::uint64_t> order = testing::oracle_order(n, 17, c);
  auto source = io::BlockFile::in_memory();
  source->write_now(text.data(), 0, text.size());
  int into_windows = 0;
  const std::uint64_t minimum = minimum_memory_bytes_text(c, n, longest);
  for (std::uint64_t memory = minimum; memory < text.size() / 2; memory += memory / 2) {
    WalkStats e;
    ASSERT_EQ(run_numbered_text(*source, text.size(), n, longest, text_options(c, memory), e), order)
        << "memory " << memory;
    if (e.nodes_into_windows > 0) {
      ++into_windows;
      EXPECT_EQ(e.nodes_in_windows, 8u) << "memory " << memory;
      if (e.passes == 2) {
        EXPECT_LE(e.bytes_read, 2.05 * static_cast<double>(text.size())) << "memory " << memory;
        EXPECT_LE(e.bytes_written, 2.05 * static_cast<double>(text.size())) << "memory " << memory;
      }
    }
  }
  EXPECT_GE(into_windows, 2);
}

// Lognormal text (median 30 bytes, sigma 1.1) with one record of 4000
// bytes, a little more than one leaf: at the named minimum the router and
// leaf windows need all but a few stream spaces, and routing the root to its
// buckets needs twice the stream's space (half of what the router leaves
// goes to the buckets' buffers) and batch arrays that grow with the rest.
// The run at exactly the minimum succeeds, the schedule (--dry-run) plans
// what runs, and so does every budget above the minimum.
TEST(NodePaths, HeavyTailedTextAtTheNamedMinimum) {
  const PlanConstants c{4096, 8};
  for (const std::uint64_t n : {4097, 4500}) {
    std::string text;
    std::uint64_t longest = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      std::uint64_t length = std::min<std::uint64_t>(3000, static_cast<std::uint64_t>(30 * lognormal(i, 1.1)));
      if (i == n / 2) length = 4000;
      std::string record = std::to_string(i) + ":" + std::string(length, static_cast<char>('a' + i % 26)) + "\n";
      longest = std::max<std::uint64_t>(longest, record.size());
      text += record;
    }
    const std::uint64_t minimum = minimum_memory_bytes_text(c, n, longest, text.size());
    const std::string what = "n " + std::to_string(n) + ", memory " + std::to_string(minimum);
    ASSERT_GT(text.size(), 2 * minimum) << what;  // the root streams through scratch space
    auto source = io::BlockFile::in_memory();
    source->write_now(text.data(), 0, text.size());
    const TextOptions options = text_options(c, minimum);
    WalkStats e;
    ASSERT_EQ(run_numbered_text(*source, text.size(), n, longest, options, e), testing::oracle_order(n, 17, c)) << what;
    EXPECT_EQ(e.nodes_routed, 1u) << what;
    EXPECT_EQ(plan_schedule_text(n, text.size(), longest, options).passes, e.passes) << what;
    // Every budget above the minimum plans too (the schedule sizes the
    // routed split as the run does): more memory never fails.
    for (std::uint64_t memory = minimum; memory < minimum + 32 * 1024; memory += 64) {
      EXPECT_NO_THROW(plan_schedule_text(n, text.size(), longest, text_options(c, memory))) << "memory " << memory;
    }
  }
}

}  // namespace
}  // namespace extshuffle::ioperm::node_paths_test
