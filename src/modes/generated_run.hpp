// shuf's generated inputs (-e ARG..., -i LO-HI): no file is read; the N
// items are printed one per line (-z: one per NUL) in the order P(seed, N)
// that a file of N records takes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "dataset/sharded_output.hpp"
#include "extshuffle/modes/mode_options.hpp"
#include "extshuffle/modes/run_stats.hpp"

namespace extshuffle::modes {

// The items of -e or -i, printed by index into the output, each ended by
// -z's NUL or a newline; staged in pieces of about 1 MiB. With `npy`, -i's
// numbers as little-endian uint64 instead (the rows of a .npy whose header
// the caller writes: order_npy.hpp).
class ItemPrinter {
 public:
  ItemPrinter(const ModeSlices& options, dataset::ShardedOutput& output, bool npy = false)
      : options_(options), output_(output), npy_(npy) {}
  ~ItemPrinter() = default;  // unflushed items are dropped: the run failed

  // The items' count minus one (2^64 - 1 for -i 0-18446744073709551615,
  // which holds 2^64); only when not empty().
  static std::uint64_t last_index(const ModeSlices& options) {
    return options.mode.echo ? options.mode.echo_items.size() - 1 : options.mode.range_high - options.mode.range_low;
  }
  static bool empty(const ModeSlices& options) {
    return options.mode.echo ? options.mode.echo_items.empty() : options.mode.range_low > options.mode.range_high;
  }

  void print(std::uint64_t index) {
    if (npy_) {
      const std::uint64_t number = options_.mode.range_low + index;  // little-endian, as the .npy header says
      text_.append(reinterpret_cast<const char*>(&number), sizeof number);
      if (text_.size() >= kFlushBytes) flush();
      return;
    }
    if (options_.mode.echo) {
      text_ += options_.mode.echo_items[index];
    } else {
      text_ += std::to_string(options_.mode.range_low + index);
    }
    text_ += options_.input.zero_terminated ? '\0' : '\n';
    if (text_.size() >= kFlushBytes) flush();
  }
  void flush() {
    output_.write_stream(text_.data(), text_.size());
    text_.clear();
  }

 private:
  static constexpr std::size_t kFlushBytes = std::size_t{1} << 20;
  const ModeSlices options_;
  dataset::ShardedOutput& output_;
  bool npy_;
  std::string text_;
};

// Shuffles options.mode.echo_items or the integers options.mode.range_low..range_high
// into `output` (a stream: ShardedOutput::start_stream(), finished and
// committed by the caller), or with -n K only the first K of them:
// - when the plan addresses N (N <= 2^52 with the shipped constants) and
//   tracing K positions back through the plan (permutation_prefix.hpp) costs
//   less than shuffling all N, the first K of P(seed, N) are computed alone;
// - otherwise, for such N, the indices 0..N-1 are written as 8-byte records
//   to scratch space (8 N bytes) and shuffled by the walk of fixed-size records;
// - a range beyond the plan (-i over more than 2^52 numbers, up to all 2^64)
//   needs -n K: its first K numbers are a sample without replacement, number
//   j drawn from stream (kRangeSample, j), redrawn while already taken.
// The same output for the same (seed, N, K) either way. An output named
// *.npy gets -i's numbers as a uint64 .npy array (order_npy.hpp). Returns the stats
// but seconds and peak_rss_bytes, which the caller measures. Throws
// UsageError (a range beyond the plan without -n), BudgetError (its -n too
// large for --memory), IoError.
RunStats run_generated(const ModeSlices& options, dataset::ShardedOutput& output);

}  // namespace extshuffle::modes
