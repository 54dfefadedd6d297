#include "generated_run.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_set>

#include "extshuffle/ioperm/fixed_size_shuffle.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/io/aligned_buffer.hpp"
#include "extshuffle/io/block_file.hpp"
#include "extshuffle/io/input_source.hpp"
#include "extshuffle/io/scratch_space.hpp"
#include "order_npy.hpp"
#include "permutation_prefix.hpp"

namespace extshuffle::modes {
namespace {

// One hypergeometric draw of permutation_prefix() (~200 ns,
// bench/hypergeometric_bench) against one index written, shuffled and read
// back by the walk of fixed-size records: bench/permutation_prefix_bench measured
// 17-100 ns per estimated draw (up to 150 for k = 10: fixed costs) and 40-75
// ns per index in RAM, more through disk (docs/benchmarks.md, "-i LO-HI -n K"). The
// prefix is computed alone when its estimated draws times this are fewer
// than N. Both give the same output; this only picks the faster.
constexpr double kIndexRecordsPerDraw = 4;

// Bytes per number a sample beyond the plan holds to refuse repeats (a hash
// set of 64-bit numbers, with its nodes and buckets).
constexpr std::uint64_t kSampleBytesPerNumber = 64;

bool plan_addresses(std::uint64_t last_index, const core::PlanConstants& c) {
  if (last_index == UINT64_MAX) return false;
  try {
    core::check_plan(last_index + 1, c);
    return true;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

// 1. The indices, as 8-byte records in scratch space; 2. their shuffle,
// each index printed as the item it names.
ioperm::WalkStats shuffle_all(const ModeSlices& options, std::uint64_t n, ItemPrinter& printer) {
  const std::string directory = io::scratch_directory(options.run.tmpdir);
  // The indices alone take n x 8 bytes: refused before any is written when
  // the scratch file system cannot hold them.
  io::check_scratch_room(directory, n > UINT64_MAX / 8 ? UINT64_MAX : n * 8,
                         options.mode.echo ? "-e"
                                           : "-i " + std::to_string(options.mode.range_low) + "-" +
                                                 std::to_string(options.mode.range_high));
  auto scratch = io::BlockFile::create_scratch(directory);
  const std::uint64_t piece = std::min<std::uint64_t>(n, std::uint64_t{1} << 20);
  const io::AlignedBuffer buffer = io::allocate_aligned(8 * std::max<std::uint64_t>(piece, 1));
  auto* indices = reinterpret_cast<std::uint64_t*>(buffer.get());
  for (std::uint64_t first = 0; first < n; first += piece) {
    const std::uint64_t count = std::min<std::uint64_t>(piece, n - first);
    for (std::uint64_t k = 0; k < count; ++k) indices[k] = first + k;
    scratch->write_now(indices, first * 8, count * 8);
  }
  ioperm::WalkOptions walk = ioperm::walk_options(options.run, 8);
  walk.output_records = options.output.head_count;
  ioperm::WalkStats e =
      shuffle_fixed_size(*scratch, 0, n, *scratch, n * 8, walk, [&](const std::byte* data, std::size_t bytes) {
        for (std::size_t at = 0; at < bytes; at += 8) {
          std::uint64_t index = 0;
          std::memcpy(&index, data + at, 8);
          printer.print(index);
        }
      });
  e.bytes_written += n * 8;
  return e;
}

// A range beyond the plan: number j of the output is drawn uniformly from
// stream (kRangeSample, j) among the numbers not yet output (redrawn while
// taken), so the first K are a uniform sample in uniform order, and a
// longer -n only appends.
void sample_range(const ModeSlices& options, std::uint64_t last_index, ItemPrinter& printer) {
  const std::uint64_t k = options.output.head_count;
  if (k > options.run.memory_bytes / kSampleBytesPerNumber) {
    throw BudgetError("-n " + std::to_string(k) + " numbers of a range beyond 2^52 take about " +
                      std::to_string(kSampleBytesPerNumber) + " bytes each: more than --memory " +
                      std::to_string(options.run.memory_bytes) + " allows");
  }
  std::unordered_set<std::uint64_t> taken;
  taken.reserve(k);
  for (std::uint64_t j = 0; j < k; ++j) {
    core::Stream stream(options.run.seed, core::sequence_address(core::Purpose::kRangeSample, j));
    std::uint64_t index;
    do {
      index = last_index == UINT64_MAX ? stream.next_u64() : stream.next_below(last_index + 1);
    } while (!taken.insert(index).second);
    printer.print(index);
  }
}

}  // namespace

RunStats run_generated(const ModeSlices& options, dataset::ShardedOutput& output) {
  const bool empty = ItemPrinter::empty(options);
  const std::uint64_t last_index = empty ? 0 : ItemPrinter::last_index(options);
  const bool planned = empty || plan_addresses(last_index, options.run.constants);
  if (!planned && options.output.head_count == UINT64_MAX) {
    throw UsageError("-i " + std::to_string(options.mode.range_low) + "-" + std::to_string(options.mode.range_high) +
                     " holds more than 2^52 numbers, beyond what permutation version " +
                     std::to_string(core::kPermutationVersion) + " orders: give -n K for a sample of K of them");
  }
  const std::uint64_t n = empty ? 0 : last_index + 1;  // 0 also for 2^64 (not planned)
  const bool npy = writes_order_npy(options, output.spec().pattern);
  if (npy) {
    const std::string header = order_npy_header(std::min(n == 0 && !empty ? UINT64_MAX : n, options.output.head_count));
    output.write_stream(header.data(), header.size());
  }
  ItemPrinter printer(options, output, npy);
  RunStats stats;
  if (!planned) {
    sample_range(options, last_index, printer);
  } else if (options.output.head_count < n &&
             permutation_prefix_draws(n, options.output.head_count, options.run.constants) * kIndexRecordsPerDraw <
                 static_cast<double>(n)) {
    for (const std::uint64_t index :
         permutation_prefix(options.run.seed, n, options.output.head_count, options.run.constants)) {
      printer.print(index);
    }
  } else {
    core::check_plan(n, options.run.constants);
    const ioperm::WalkStats e = shuffle_all(options, n, printer);
    stats.passes = e.passes;
    stats.bytes_read = e.bytes_read;
    stats.bytes_written = e.bytes_written;
  }
  printer.flush();
  stats.records = n;
  stats.bytes = n * 8;
  stats.levels = planned ? core::plan_levels(n, options.run.constants) : 0;
  return stats;
}

}  // namespace extshuffle::modes
