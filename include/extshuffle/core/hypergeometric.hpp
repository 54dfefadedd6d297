// Exact hypergeometric sampling for 64-bit urns, from an addressed Stream.
//
// hypergeometric(draws, white, black, stream) is the number of white balls
// among `draws` balls drawn without replacement from white + black balls
// (Gustedt's h(t, w, b), section 3). It is the building block of the
// communication matrix (multivariate_hypergeometric.hpp, docs/conventions.md, The canonical plan).
//
// Method (all arithmetic on the reduced parameters n <= N/2, M <= B):
//   small mean  -> inversion: walk the pmf upwards from P(X = 0)
//                  (V. Kachitvichyanukul & B. Schmeiser, "Computer generation
//                  of hypergeometric random variates", J. Statist. Comput.
//                  Simul. 22 (1985), algorithm HIN);
//   otherwise   -> HRUA: Stadlober's ratio-of-uniforms with the "table
//                  mountain" hat (E. Stadlober, "The ratio of uniforms
//                  approach for generating discrete random variates",
//                  J. Comput. Appl. Math. 31 (1990) 181-189; thesis 1989,
//                  Algorithm HRUA), following numpy's hypergeometric_hrua
//                  (numpy/random/src/distributions/random_hypergeometric.c).
// Both differ from their models where 64-bit urns need it: every log-pmf
// ratio is formed from log_factorial_difference pieces rather than
// differences of ~1e13-sized log-factorials, and the ratio-of-uniforms point
// is placed relative to the integer part of the mean, so that K is exact
// even where a double cannot hold the mean to 1 (a mean near 2^61 has ulp 2^9).
//
// Determinism: the result is a function of the arguments and the stream's
// position (and of the libm's log/log1p/exp/sqrt, see log_factorial.hpp);
// the number of words consumed varies (rejections), so a stream should not be
// shared with anything whose addresses must stay fixed.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "extshuffle/core/log_factorial.hpp"
#include "extshuffle/core/stream.hpp"

namespace extshuffle::core {

// Largest urn (white + black) the samplers accept: 2^63, so every reduced
// quantity fits in int64 and every product of two of them in 128 bits.
inline constexpr std::uint64_t kMaxHypergeometricTotal = std::uint64_t{1} << 63;

// Mean below which inversion is used, above which HRUA is.
// Inversion costs a fixed setup (two log-factorial remainders, log1p, exp)
// plus about mean + 1 multiply-divide steps and half a Philox block; HRUA
// costs ~1.4-1.6 iterations of one Philox block and four log-factorial
// remainders, nearly independent of the mean. bench/hypergeometric_bench.cpp
// (regime=inversion vs regime=hrua at the same urns, thread CPU time) measured
// inversion 100 + ~2.5 ns x mean against HRUA ~180 ns: 142 vs 181 ns at mean
// 24, 166 vs 176 at 32, 257 vs 176 at 64. Hence 32.
// The bound also keeps inversion safe: with n <= N/2 and M <= N/2,
// P(X = 0) = prod_{i<n} (1 - M/(N-i)) >= exp(-4 mean) when M <= N/4 (each
// factor >= exp(-2M/(N-i))), and an exhaustive search over all urns with
// N < 700 and mean < 32 finds nothing below e^-85 (at N = 126, n = M = 63),
// so P(X = 0) never underflows; the walk ends within mean + 16 sd + 16 steps
// except with probability < 1e-30 (a restart then, see below).
inline constexpr double kHypergeometricInversionMaxMean = 32.0;

namespace detail {

using u128 = unsigned __int128;
using i128 = __int128;

// HRUA's hat constants: D1 = 2 sqrt(2/e), D2 = 3 - 2 sqrt(3/e) (Stadlober
// 1990, eq. 8; the same values as numpy).
inline constexpr double kHruaD1 = 1.7155277699214135;
inline constexpr double kHruaD2 = 0.8989161620588988;

// Stadlober's (and numpy's) truncation of the hat: 16 standard deviations
// beyond the mean. Values further out have probability < 1e-50.
inline constexpr double kTailStandardDeviations = 16.0;

// Inversion on reduced parameters: 0 < n <= (M + B) / 2, 0 < M <= B, small mean.
// Returns X ~ h(n, M, B).
// 1. log P(X = 0) = log[C(B, n) / C(N, n)] = sum_{i<d} log(1 - e / (N - i))
//    with d = min(n, M), e = max(n, M); as log-factorials:
//    lfd(N-e, N-e-d) - lfd(N, N-d) = d log1p(-e/(N+1)) + remainders, so the
//    two d log z terms cancel exactly and P(X = 0) keeps full relative precision.
// 2. Walk x = 0, 1, ... subtracting P(X = x) from one uniform u, with
//    P(x+1) = P(x) (n-x)(M-x) / ((x+1)(B-n+x+1)).
// 3. Restart with a new u if the walk passes the cap (u left over by rounding
//    of the cumulative sum, or a tail of probability < 1e-30), as numpy's
//    binomial inversion (random_binomial_inversion) does. p == 0 (underflow)
//    cannot happen below the cap for mean < 32 (see the constant above) and
//    restarts too, defensively.
inline std::uint64_t hypergeometric_inversion(std::uint64_t n, std::uint64_t white,
                                              std::uint64_t black, Stream& stream) {
  const std::uint64_t m_white = white;
  const std::uint64_t total = white + black;
  const std::uint64_t d = std::min(n, m_white);
  const std::uint64_t e = std::max(n, m_white);
  // 1.
  const double log_p0 =
      static_cast<double>(d) * std::log1p(-static_cast<double>(e) / (static_cast<double>(total) + 1.0)) +
      log_factorial_difference_remainder(total - e, total - e - d) -
      log_factorial_difference_remainder(total, total - d);
  const double p0 = std::exp(log_p0);
  const double nd = static_cast<double>(n);
  const double mean = nd * static_cast<double>(m_white) / static_cast<double>(total);
  const double variance = mean * (static_cast<double>(black) / static_cast<double>(total)) *
                          (static_cast<double>(total - n) / static_cast<double>(total - 1));
  const double cap_d = std::floor(mean + kTailStandardDeviations * std::sqrt(variance + 0.5)) + 16.0;
  const std::uint64_t cap = cap_d < static_cast<double>(d) ? static_cast<std::uint64_t>(cap_d) : d;
  const double black_minus_n = static_cast<double>(black - n);
  for (;;) {
    // 2.
    double u = stream.next_double_open();
    double p = p0;
    std::uint64_t x = 0;
    for (;;) {
      if (u <= p) return x;
      u -= p;
      if (x == cap || p == 0.0) break;  // 3.
      const double xd = static_cast<double>(x);
      p *= (nd - xd) * (static_cast<double>(m_white - x)) / ((xd + 1.0) * (black_minus_n + xd + 1.0));
      ++x;
    }
  }
}

// HRUA on reduced parameters: 0 < n <= (M + B) / 2, 0 < M <= B.
// Names follow Stadlober's Algorithm HRUA (and numpy): a, c, h, m, b, U, V, X, K, T.
inline std::uint64_t hypergeometric_hrua(std::uint64_t n, std::uint64_t white,
                                         std::uint64_t black, Stream& stream) {
  const std::uint64_t m_white = white;  // Stadlober's M (the smaller colour)
  const std::uint64_t total = white + black;
  // 1. Mean and variance. a = mean + 1/2 is the centre of the hat; it is kept
  //    as mean_int + (frac + 1/2) so that X - mean_int is a small double.
  const u128 n_times_m = static_cast<u128>(n) * m_white;
  const std::uint64_t mean_int = static_cast<std::uint64_t>(n_times_m / total);
  const double frac = static_cast<double>(static_cast<std::uint64_t>(n_times_m % total)) /
                      static_cast<double>(total);
  const double p = static_cast<double>(m_white) / static_cast<double>(total);
  const double q = static_cast<double>(black) / static_cast<double>(total);
  const double variance = static_cast<double>(total - n) * static_cast<double>(n) * p * q /
                          static_cast<double>(total - 1);
  const double c = std::sqrt(variance + 0.5);
  // 2. h = 2 s_hat, the width of the table-mountain hat (Stadlober 1990, eq. 8).
  const double h = kHruaD1 * c + kHruaD2;
  // 3. Mode m = floor((n+1)(M+1)/(N+2)), exact in 128 bits; 0 <= m <= min(n, M).
  const std::uint64_t m =
      static_cast<std::uint64_t>(static_cast<u128>(n + 1) * (m_white + 1) / (static_cast<u128>(total) + 2));
  // 4. T = log P(K) - log P(m) = sum of four log-factorial differences
  //      lfd(m, K) + lfd(M-m, M-K) + lfd(n-m, n-K) + lfd(B-n+m, B-n+K).
  //    Their leading terms d log z add up to (m - K) log R with the integer
  //    ratio R = (m+1)(B-n+m+1) / ((M-m+1)(n-m+1)), close to 1 at the mode, so
  //    log R comes from log1p of an exact 128-bit difference, and the rest from
  //    log_factorial_difference_remainder: T is exact to ~1e-15 however large
  //    the urn (a sum of four plain log_factorial_difference calls would be
  //    off by ~|m - K| 1e-14, i.e. 1e-5 at one sd when N ~ 2^62).
  const u128 ratio_num = static_cast<u128>(m + 1) * (black - n + m + 1);
  const u128 ratio_den = static_cast<u128>(m_white - m + 1) * (n - m + 1);
  const double log_ratio =
      std::log1p(static_cast<double>(static_cast<i128>(ratio_num - ratio_den)) / static_cast<double>(ratio_den));
  // 5. Upper bound b of the hat (exclusive), relative to mean_int:
  //    min(support size, floor(a + 16 c)).
  const std::uint64_t support_end = std::min(n, m_white) + 1 - mean_int;  // >= 1
  const double bound = std::min(static_cast<double>(support_end),
                                std::floor(frac + 0.5 + kTailStandardDeviations * c));
  const double lower = -static_cast<double>(mean_int);
  const std::uint64_t k_max = std::min(n, m_white);
  for (;;) {
    const double u = stream.next_double_open();
    const double v = stream.next_double_open();  // Stadlober's U*
    // 6. X = a + h (V - 1/2) / U, relative to mean_int; fast rejection outside [0, b).
    const double y = std::floor(frac + 0.5 + h * (v - 0.5) / u);
    if (!(y < bound) || y < lower) continue;
    const i128 k_signed = static_cast<i128>(mean_int) + static_cast<i128>(static_cast<std::int64_t>(y));
    if (k_signed < 0 || k_signed > static_cast<i128>(k_max)) continue;  // rounding guard
    const std::uint64_t k = static_cast<std::uint64_t>(k_signed);
    const double t = signed_difference(m, k) * log_ratio +
                     log_factorial_difference_remainder(m, k) +
                     log_factorial_difference_remainder(m_white - m, m_white - k) +
                     log_factorial_difference_remainder(n - m, n - k) +
                     log_factorial_difference_remainder(black - n + m, black - n + k);
    // 7. Squeezes, then the exact test 2 log U <= T (Stadlober 1990).
    if (u * (4.0 - u) - 3.0 <= t) return k;  // fast acceptance
    if (u * (u - t) >= 1.0) continue;        // fast rejection
    if (2.0 * std::log(u) <= t) return k;
  }
}

}  // namespace detail

// Number of white balls among `draws` drawn without replacement from an urn
// of `white` white and `black` black balls: a sample of h(draws, white, black),
// exact for every urn of at most 2^63 balls (up to the documented ~1e-15
// error of log-pmf ratios and the < 1e-30 truncation of far tails).
// Edge cases consume no randomness and return exactly: draws == 0 or
// white == 0 -> 0; black == 0 -> draws; draws == white + black -> white.
// Cost: O(1) expected, 100-200 ns (bench/hypergeometric_bench.cpp), no
// allocation. Throws std::invalid_argument if white + black > 2^63 or
// draws > white + black.
inline std::uint64_t hypergeometric(std::uint64_t draws, std::uint64_t white, std::uint64_t black,
                                    Stream& stream) {
  if (white > kMaxHypergeometricTotal || black > kMaxHypergeometricTotal - white) {
    throw std::invalid_argument("hypergeometric: urn of " + std::to_string(white) + " + " +
                                std::to_string(black) + " balls exceeds 2^63");
  }
  const std::uint64_t total = white + black;
  if (draws > total) {
    throw std::invalid_argument("hypergeometric: " + std::to_string(draws) + " draws from an urn of " +
                                std::to_string(total) + " balls");
  }
  // 1. Symmetries: drawing n or leaving N - n (X = white - X'), and swapping
  //    the colours (X = n - X'), so that n <= N/2 and M <= B. Then the mean
  //    n M / N is at most N/4 and both samplers see their best case.
  const bool complement_draws = draws > total - draws;
  const std::uint64_t n = complement_draws ? total - draws : draws;
  const bool swap_colours = white > black;
  const std::uint64_t m_white = swap_colours ? black : white;
  const std::uint64_t m_black = swap_colours ? white : black;
  // 2. Degenerate urns (covers draws 0, white 0, black 0, draws == total).
  std::uint64_t k = 0;
  if (n != 0 && m_white != 0) {
    // 3. Pick the regime by the mean (kHypergeometricInversionMaxMean).
    const double mean = static_cast<double>(n) * static_cast<double>(m_white) / static_cast<double>(total);
    k = mean < kHypergeometricInversionMaxMean ? detail::hypergeometric_inversion(n, m_white, m_black, stream)
                                               : detail::hypergeometric_hrua(n, m_white, m_black, stream);
  }
  // 4. Undo the symmetries.
  if (swap_colours) k = n - k;
  if (complement_draws) k = white - k;
  return k;
}

}  // namespace extshuffle::core
