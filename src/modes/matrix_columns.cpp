// Columns of the communication matrix, walked or descended to
// (matrix_columns.hpp).
#include "matrix_columns.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "extshuffle/core/hypergeometric.hpp"
#include "extshuffle/core/recursive_matrix.hpp"
#include "parallel_tasks.hpp"

namespace extshuffle::modes {
namespace {

// Trees of at least this many rows are walked by subtrees on several threads.
constexpr std::uint64_t kParallelRows = 4096;
constexpr std::uint32_t kSubtreeDepth = 5;  // 32 subtrees for the threads to take in turn

// One colour of a split, as multivariate_hypergeometric() draws it.
std::uint64_t colour_draw(std::uint64_t& draws_left, std::uint64_t& balls_left, std::uint64_t count,
                          core::Stream& stream) {
  std::uint64_t x;
  if (draws_left == 0) {
    x = 0;
  } else if (draws_left == balls_left) {
    x = count;
  } else {
    x = core::hypergeometric(draws_left, count, balls_left - count, stream);
  }
  draws_left -= x;
  balls_left -= count;
  return x;
}

}  // namespace

MatrixColumnWalk::MatrixColumnWalk(std::uint64_t seed, const core::Node& node, const core::PlanConstants& constants)
    : seed_(seed), node_(node), constants_(constants), buckets_(core::bucket_count(node.records, constants)),
      parallel_(core::chunk_count(node.records, constants) >= kParallelRows) {
  const std::uint64_t rows = core::chunk_count(node.records, constants);
  if (rows < 2) throw std::invalid_argument("matrix column walk: a split node has at least two chunks");
  splits_.reserve(rows - 1);
  build(0, rows, 0);
  before_.assign(rows, 0);
  count_.assign(rows, 0);
}

std::uint64_t MatrixColumnWalk::bytes_per_row() { return sizeof(Split) + 2 * sizeof(std::uint64_t); }

// The splits of [lo, hi) in pre-order; returns the range's code.
std::int64_t MatrixColumnWalk::build(std::uint64_t lo, std::uint64_t hi, std::uint32_t depth) {
  if (hi - lo == 1) return ~static_cast<std::int64_t>(lo);
  const std::uint64_t mid = core::row_split(lo, hi);
  const std::size_t index = splits_.size();
  splits_.push_back(Split{core::Stream(seed_, core::StreamAddress{node_.id, core::Purpose::kMatrixSplit, mid}),
                          core::chunk_range_records(node_.records, mid, hi, constants_),
                          core::chunk_range_records(node_.records, lo, hi, constants_)});
  if (!parallel_ || depth < kSubtreeDepth) top_.push_back(index);
  const std::int64_t lower = build(lo, mid, depth + 1);
  const std::int64_t upper = build(mid, hi, depth + 1);
  splits_[index].lower = lower;
  splits_[index].upper = upper;
  if (parallel_ && depth == kSubtreeDepth) subtrees_.emplace_back(index, splits_.size());
  return static_cast<std::int64_t>(index);
}

// Every split back to its first colour.
void MatrixColumnWalk::restart() {
  splits_.clear();
  top_.clear();
  subtrees_.clear();
  build(0, core::chunk_count(node_.records, constants_), 0);
  std::fill(before_.begin(), before_.end(), 0);
  std::fill(count_.begin(), count_.end(), 0);
  column_ = kNoColumn;
  stepping_ = false;
}

void MatrixColumnWalk::give(std::int64_t part, std::uint64_t sum) {
  if (part >= 0) {
    splits_[static_cast<std::size_t>(part)].colour_sum = sum;
    return;
  }
  const auto row = static_cast<std::size_t>(~part);
  before_[row] += count_[row];
  count_[row] = sum;
}

void MatrixColumnWalk::draw(std::size_t s) {
  Split& split = splits_[s];
  const std::uint64_t upper = colour_draw(split.draws_left, split.balls_left, split.colour_sum, split.stream);
  give(split.lower, split.colour_sum - upper);
  give(split.upper, upper);
}

// The next colour: the root's sum is bucket `colour`'s size; each split
// passes its parts' sums down.
void MatrixColumnWalk::step(std::uint64_t colour, int threads) {
  splits_[0].colour_sum = core::bucket_records(node_.records, buckets_, colour);
  for (const std::size_t s : top_) draw(s);
  run_tasks(subtrees_.size(), threads, [&](std::size_t t) {
    for (std::size_t s = subtrees_[t].first; s < subtrees_[t].second; ++s) draw(s);
  });
}

void MatrixColumnWalk::walk_to(std::uint64_t b, int threads, const InterruptPoint& interrupt) {
  if (b >= buckets_) throw std::out_of_range("matrix column walk: bucket " + std::to_string(b));
  if (stepping_ || (column_ != kNoColumn && column_ > b)) restart();
  for (std::uint64_t colour = column_ == kNoColumn ? 0 : column_ + 1; colour <= b; ++colour) {
    if (interrupt) interrupt();
    stepping_ = true;  // a step cut short by an exception leaves the splits between two columns
    step(colour, threads);
    stepping_ = false;
    column_ = colour;
  }
}

double descent_ranges(std::uint64_t rows, std::uint64_t queries) {
  const double r = static_cast<double>(rows), q = static_cast<double>(std::max<std::uint64_t>(queries, 1));
  if (q >= r) return 2 * r;
  return std::min(2 * r, q * (std::log2(r / q) + 2));
}

namespace {

// The descent of locate_in_bucket: colours 0..b of each split on the way,
// the parts' sums kept one row of buffers per depth.
class Descent {
 public:
  Descent(std::uint64_t seed, const core::Node& node, const core::PlanConstants& c, std::uint64_t b,
          std::span<std::uint64_t> offsets, std::span<std::uint64_t> chunk, std::span<std::uint64_t> position,
          const InterruptPoint& interrupt)
      : seed_(seed), node_(node), c_(c), b_(b), offsets_(offsets), chunk_(chunk), position_(position),
        interrupt_(interrupt) {
    const std::uint64_t rows = core::chunk_count(node.records, c);
    const std::size_t depths = core::row_tree_depth(rows) + 2;
    sums_.assign(depths * 2 * (b + 1), 0);
    visits_per_check_ = std::max<std::uint64_t>(1, (std::uint64_t{1} << 16) / (b + 1));
  }

  void run() {
    std::uint64_t* root = sums_.data();
    const std::uint64_t p = core::bucket_count(node_.records, c_);
    for (std::uint64_t j = 0; j <= b_; ++j) root[j] = core::bucket_records(node_.records, p, j);
    descend(0, core::chunk_count(node_.records, c_), root, 0, offsets_.size(), 0);
  }

 private:
  void descend(std::uint64_t lo, std::uint64_t hi, const std::uint64_t* sums, std::size_t first, std::size_t end,
               std::size_t depth) {
    if (hi - lo == 1) {
      const std::uint64_t before = std::accumulate(sums, sums + b_, std::uint64_t{0});
      for (std::size_t q = first; q < end; ++q) {
        chunk_[q] = lo;
        position_[q] = before + offsets_[q];
      }
      return;
    }
    if (interrupt_ && ++visits_ % visits_per_check_ == 0) interrupt_();
    const std::uint64_t mid = core::row_split(lo, hi);
    std::uint64_t* lower = sums_.data() + (2 * depth + 2) * (b_ + 1);
    std::uint64_t* upper = lower + (b_ + 1);
    core::Stream stream(seed_, core::StreamAddress{node_.id, core::Purpose::kMatrixSplit, mid});
    std::uint64_t draws_left = core::chunk_range_records(node_.records, mid, hi, c_);
    std::uint64_t balls_left = core::chunk_range_records(node_.records, lo, hi, c_);
    for (std::uint64_t j = 0; j <= b_; ++j) {
      upper[j] = colour_draw(draws_left, balls_left, sums[j], stream);
      lower[j] = sums[j] - upper[j];
    }
    const std::uint64_t lower_b = lower[b_];
    const std::size_t split = static_cast<std::size_t>(
        std::lower_bound(offsets_.begin() + first, offsets_.begin() + end, lower_b) - offsets_.begin());
    for (std::size_t q = split; q < end; ++q) offsets_[q] -= lower_b;
    if (first < split) descend(lo, mid, lower, first, split, depth + 1);
    if (split < end) descend(mid, hi, upper, split, end, depth + 1);
  }

  std::uint64_t seed_;
  core::Node node_;
  core::PlanConstants c_;
  std::uint64_t b_;
  std::span<std::uint64_t> offsets_, chunk_, position_;
  const InterruptPoint& interrupt_;
  std::vector<std::uint64_t> sums_;  // per depth: the lower and the upper part's colours 0..b
  std::uint64_t visits_ = 0, visits_per_check_ = 1;
};

}  // namespace

void locate_in_bucket(std::uint64_t seed, const core::Node& node, const core::PlanConstants& constants, std::uint64_t b,
                      std::span<const std::uint64_t> queries, std::span<std::uint64_t> chunk,
                      std::span<std::uint64_t> position, const InterruptPoint& interrupt) {
  if (queries.empty()) return;
  std::vector<std::uint64_t> offsets(queries.begin(), queries.end());
  Descent(seed, node, constants, b, offsets, chunk, position, interrupt).run();
}

}  // namespace extshuffle::modes
