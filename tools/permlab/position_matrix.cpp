#include "position_matrix.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "labstats/statistics.hpp"

namespace permlab {

PositionResult position_test_of_counts(std::uint64_t n, std::span<const std::uint64_t> counts, double alpha) {
  if (counts.size() != n * n) throw std::invalid_argument("position_test_of_counts: need n * n counts");
  PositionResult r;
  r.n = n;
  r.alpha = alpha;
  for (std::uint64_t j = 0; j < n; ++j) r.samples += counts[j];  // row 0 sums to S
  if (r.samples < 5 * n) {
    throw std::invalid_argument("position test at n = " + std::to_string(n) + " needs at least " +
                                std::to_string(5 * n) + " samples (5 per cell)");
  }
  const double s = static_cast<double>(r.samples), expected = s / static_cast<double>(n);
  double worst_row_p = 1;
  for (std::uint64_t i = 0; i < n; ++i) {
    double row_chi2 = 0;
    for (std::uint64_t j = 0; j < n; ++j) {
      const double x = static_cast<double>(counts[i * n + j]);
      row_chi2 += (x - expected) * (x - expected) / expected;
      r.bias += std::fabs(x / s - 1.0 / static_cast<double>(n));
    }
    r.chi2 += row_chi2;
    const double row_p = extshuffle::labstats::chi_square_p_value(row_chi2, n - 1);
    if (row_p < worst_row_p) {
      worst_row_p = row_p;
      r.worst_row = i;
    }
  }
  r.bias /= static_cast<double>(n);
  r.dof = (n - 1) * (n - 1);
  r.p_value = extshuffle::labstats::chi_square_p_value(r.chi2, r.dof);
  r.worst_row_p_value = std::min(1.0, worst_row_p * static_cast<double>(n));
  const extshuffle::labstats::BiasNoise noise = extshuffle::labstats::bias_noise(n, r.samples);
  r.expected_bias = noise.mean;
  r.bias_sd = noise.sd;
  r.bias_z = noise.sd > 0 ? (r.bias - noise.mean) / noise.sd : 0;
  r.pass = r.p_value >= alpha / 2 && r.worst_row_p_value >= alpha / 2;
  return r;
}

PositionResult position_test(const GeneratorOptions& options, std::uint64_t n, std::uint64_t samples, int threads,
                             double alpha, std::vector<std::uint64_t>* counts_out) {
  if (n < 2) throw std::invalid_argument("position test needs n >= 2");
  if (samples < 5 * n) {
    throw std::invalid_argument("position test at n = " + std::to_string(n) + " needs at least " +
                                std::to_string(5 * n) + " samples (5 per cell)");
  }
  if (samples > 0xFFFFFFFFull) throw std::invalid_argument("position test takes at most 2^32 - 1 samples");
  const int workers = worker_count(threads, samples);
  // 32-bit counters per worker: n^2 of them (4 MB at n = 1000).
  std::vector<std::vector<std::uint32_t>> counts(workers, std::vector<std::uint32_t>(n * n, 0));
  for_each_sample(options, n, samples, threads,
                  [&counts, n](int worker, std::uint64_t, std::uint64_t, std::span<const std::uint32_t> order) {
                    std::uint32_t* c = counts[worker].data();
                    for (std::uint64_t i = 0; i < n; ++i) ++c[i * n + order[i]];
                  });
  std::vector<std::uint64_t> total(n * n, 0);
  for (const auto& w : counts) {
    for (std::size_t k = 0; k < total.size(); ++k) total[k] += w[k];
  }
  if (counts_out) *counts_out = total;
  return position_test_of_counts(n, total, alpha);
}

}  // namespace permlab
