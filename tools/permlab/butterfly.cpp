#include "butterfly.hpp"

#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <utility>

namespace permlab {

ButterflyVariant parse_butterfly_variant(const std::string& name) {
  if (name == "padded") return ButterflyVariant::kPadded;
  if (name == "omitted") return ButterflyVariant::kOmitted;
  throw std::invalid_argument("unknown butterfly variant '" + name + "': expected padded or omitted");
}

std::string to_string(ButterflyVariant variant) {
  return variant == ButterflyVariant::kPadded ? "padded" : "omitted";
}

std::uint64_t butterfly_width(std::uint64_t n) {
  std::uint64_t width = 1;
  while (width < n) width <<= 1;
  return width;
}

std::vector<Exchange> butterfly_exchanges(std::uint64_t n, ButterflyVariant variant) {
  const std::uint64_t width = butterfly_width(n);
  const std::uint64_t limit = variant == ButterflyVariant::kPadded ? width : n;
  std::vector<Exchange> exchanges;
  for (std::uint64_t step = 1; step < width; step <<= 1) {
    for (std::uint64_t i = 0; i < width; ++i) {
      if ((i & step) == 0 && i + step < limit) {
        exchanges.push_back(Exchange{static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(i + step)});
      }
    }
  }
  return exchanges;
}

SquareMatrix identity_matrix(std::size_t n) {
  SquareMatrix m(n);
  for (std::size_t i = 0; i < n; ++i) m.at(i, i) = 1.0;
  return m;
}

SquareMatrix multiply(const SquareMatrix& a, const SquareMatrix& b) {
  if (a.n != b.n) throw std::invalid_argument("multiply: sizes differ");
  const std::size_t n = a.n;
  SquareMatrix c(n);
  // i-k-j order: the inner loop streams through rows of b and c, which the
  // compiler vectorises; the 304x304 and 400x400 shift sweeps need ~10^3 products.
  for (std::size_t i = 0; i < n; ++i) {
    double* __restrict row_c = c.values.data() + i * n;
    for (std::size_t k = 0; k < n; ++k) {
      const double aik = a.values[i * n + k];
      if (aik == 0.0) continue;
      const double* __restrict row_b = b.values.data() + k * n;
      for (std::size_t j = 0; j < n; ++j) row_c[j] += aik * row_b[j];
    }
  }
  return c;
}

SquareMatrix shift_rows(const SquareMatrix& m, std::uint64_t offset) {
  const std::size_t n = m.n;
  SquareMatrix s(n);
  if (n == 0) return s;
  for (std::size_t p = 0; p < n; ++p) {
    const std::size_t to = (p + offset) % n;
    std::copy(m.values.begin() + p * n, m.values.begin() + (p + 1) * n, s.values.begin() + to * n);
  }
  return s;
}

SquareMatrix iterate(const SquareMatrix& m, int iterations, std::uint64_t offset) {
  if (iterations < 1) throw std::invalid_argument("iterate: iterations must be at least 1");
  const SquareMatrix step = shift_rows(m, offset);
  SquareMatrix result = step;
  for (int k = 1; k < iterations; ++k) result = multiply(step, result);
  return result;
}

double bias(const SquareMatrix& m) {
  if (m.n == 0) return 0.0;
  const double uniform = 1.0 / static_cast<double>(m.n);
  double sum = 0.0;
  for (const double v : m.values) sum += std::fabs(v - uniform);
  return sum / static_cast<double>(m.n);
}

namespace {

constexpr std::size_t kMaxEnumeratedExchanges = 20;

// One pass over `slots` (width slots for kPadded, n for kOmitted): exchange
// e swaps its two slots when bit(e) is 1.
template <class BitSource>
void run_pass(const std::vector<Exchange>& exchanges, BitSource&& bit, std::vector<std::uint32_t>& slots) {
  for (std::size_t e = 0; e < exchanges.size(); ++e) {
    if (bit(e)) std::swap(slots[exchanges[e].a], slots[exchanges[e].b]);
  }
}

}  // namespace

SquareMatrix butterfly_position_matrix_enumerated(std::uint64_t n, ButterflyVariant variant) {
  const auto exchanges = butterfly_exchanges(n, variant);
  if (exchanges.size() > kMaxEnumeratedExchanges) {
    throw std::invalid_argument("exact matrix of the " + to_string(variant) + " butterfly for n = " +
                                std::to_string(n) + " needs 2^" + std::to_string(exchanges.size()) +
                                " exchange patterns (at most 2^20 enumerated): use the sampled position test");
  }
  const std::uint64_t slots_count = variant == ButterflyVariant::kPadded ? butterfly_width(n) : n;
  const std::uint64_t patterns = std::uint64_t{1} << exchanges.size();
  std::vector<std::uint64_t> counts(n * n, 0);
  std::vector<std::uint32_t> slots(slots_count);
  for (std::uint64_t pattern = 0; pattern < patterns; ++pattern) {
    std::iota(slots.begin(), slots.end(), 0u);
    run_pass(exchanges, [pattern](std::size_t e) { return (pattern >> e) & 1; }, slots);
    std::uint64_t position = 0;
    for (const std::uint32_t record : slots) {
      if (record < n) ++counts[position++ * n + record];  // padding records (>= n) are dropped
    }
  }
  SquareMatrix m(n);
  for (std::size_t k = 0; k < counts.size(); ++k) m.values[k] = static_cast<double>(counts[k]) / static_cast<double>(patterns);
  return m;
}

SquareMatrix butterfly_position_matrix(std::uint64_t n, ButterflyVariant variant) {
  if (variant == ButterflyVariant::kPadded) return butterfly_position_matrix_enumerated(n, variant);
  // Omitted exchanges: an exchange of positions a and b with a fair coin,
  // independent of everything before, leaves each record at a or b with the
  // mean of the two rows' probabilities (Waechter 3.1, 3.2).
  SquareMatrix m = identity_matrix(n);
  for (const Exchange& x : butterfly_exchanges(n, variant)) {
    for (std::size_t j = 0; j < n; ++j) {
      const double mean = 0.5 * (m.at(x.a, j) + m.at(x.b, j));
      m.at(x.a, j) = mean;
      m.at(x.b, j) = mean;
    }
  }
  return m;
}

std::uint64_t best_shift_offset(const SquareMatrix& m, int iterations) {
  std::uint64_t best = 0;
  double best_bias = std::numeric_limits<double>::infinity();
  for (std::uint64_t l = 0; l < m.n; ++l) {
    const double b = bias(iterate(m, iterations, l));
    if (b < best_bias) {
      best_bias = b;
      best = l;
    }
  }
  return best;
}

ButterflyShuffler::ButterflyShuffler(std::uint64_t n, ButterflyVariant variant, int iterations,
                                     std::uint64_t shift_offset)
    : n_(n),
      width_(butterfly_width(n)),
      variant_(variant),
      iterations_(iterations),
      shift_offset_(n == 0 ? 0 : shift_offset % n),
      exchanges_(butterfly_exchanges(n, variant)),
      slots_(variant == ButterflyVariant::kPadded ? width_ : n),
      shifted_(n) {}

void ButterflyShuffler::shuffle(extshuffle::core::Stream& bits, std::span<std::uint32_t> order) {
  std::uint32_t word = 0;
  auto next_bit = [&bits, &word](std::size_t e) {
    if (e % 32 == 0) word = bits.next_u32();
    return (word >> (e % 32)) & 1u;
  };
  for (int k = 0; k < iterations_; ++k) {
    // 1. One pass of the network. order holds records 0..n-1, so the padding
    //    slots (kPadded) can hold markers n..N-1.
    std::copy(order.begin(), order.end(), slots_.begin());
    for (std::uint64_t p = n_; p < slots_.size(); ++p) slots_[p] = static_cast<std::uint32_t>(p);
    run_pass(exchanges_, next_bit, slots_);
    // 2. Compaction preserving slot order (Waechter 3.2: "e.g. by using
    //    parallel prefix-sum"); a no-op for kOmitted, which has no padding.
    std::uint64_t position = 0;
    for (const std::uint32_t record : slots_) {
      if (record < n_) order[position++] = record;
    }
    // 3. Circular shift (section 5): the record at position p moves to (p + l) mod n.
    if (shift_offset_ != 0) {
      for (std::uint64_t p = 0; p < n_; ++p) shifted_[(p + shift_offset_) % n_] = order[p];
      std::copy(shifted_.begin(), shifted_.end(), order.begin());
    }
  }
}

}  // namespace permlab
